"""Property-based fuzzing of the command line: whatever arguments and ``DWLIB_*``
variables a careless or hostile user gives, every subcommand ends with exit status 0 or 2, and
with 2 exactly one line on stderr and no traceback, in bounded time.

Most examples call :func:`dwlib.cli.main` in this process (fast); the work behind a valid
``seprank`` measurement, ``train`` or ``sweep`` is replaced by a stub once every check has passed
(those runs are tested beside their code), so what is fuzzed is the validation. A few examples
run ``python -m dwlib`` as a real process, for the environment variables and for the real "no
traceback" promise. The profile is fixed (derandomised, no example database) so that CI sees
the same examples every time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlib import cli
from dwlib.experiments import seprank_sweep
from dwlib.experiments import sweep as sweeps
from dwlib.train import data as data_lib
from dwlib.train import loop
from dwlib.train import pack as pack_lib

settings.register_profile("dwlib-fuzz", max_examples=100, deadline=10_000, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FUZZ = settings.get_profile("dwlib-fuzz")

HUGE = [0, 1, 2, 3, -1, 2 ** 31, 2 ** 32, 2 ** 63, 10 ** 20, 10 ** 100, 10 ** 400, -(10 ** 400)]
GARBAGE = ["", "abc", "1.5", "1e3", "nan", "inf", "-0", " 3", "0x10", "1,", "a,b", "\u0661", "1_000", "--"]
FLOATS = ["0", "-1", "0.1", "1e308", "-1e308", "inf", "nan", "1e-320", "5.039", "abc", "1e400"]


def ints(lo: int = -2, hi: int = 40):
    """An integer option's text: small, extreme, or not an integer at all."""
    return st.one_of(st.integers(lo, hi).map(str), st.sampled_from(HUGE).map(str), st.sampled_from(GARBAGE))


DROP = object()  # a mutation that removes the option
FLAG = st.sampled_from([None, DROP])  # a flag given or not


def fuzz(base: dict, **choices):
    """argv: the valid ``base`` (option -> value, None for a flag, "" key for a positional) with up
    to four of its options changed, added or dropped, each drawn from ``choices``."""
    def build(changes):
        merged = {**base, **dict(changes)}
        argv = [merged.pop("")] if merged.get("") not in (None, DROP) else []
        merged.pop("", None)
        for name, value in merged.items():
            if value is not DROP:
                argv += [f"--{name.replace('_', '-')}"] + ([] if value is None else [value])
        return argv
    names = st.lists(st.sampled_from(sorted(choices)), max_size=4, unique=True)
    return names.flatmap(lambda ns: st.tuples(*[choices[n].map(lambda v, n=n: (n, v)) for n in ns])).map(build)


def opt(strategy):
    """An option's value, or the option dropped."""
    return st.one_of(strategy, st.just(DROP))


PATHS = st.sampled_from(["", "/proc/dwlib-fuzz", "/dev/null", "/etc/passwd/x", "{tmp}/out", "{tmp}/a/b/c", "{tmp}"])

COMMANDS = {
    "env": fuzz({}, json=FLAG),
    "bounds": fuzz({"width": "100", "heads": "4", "depth": "2"}, width=opt(ints()), heads=opt(ints()),
                   depth=opt(ints()), json=FLAG),
    "corollary1": fuzz({"width": "1000", "heads": "16", "depth": "6", "shallow_depth": "2"},
                       width=opt(ints(1, 10 ** 6)), heads=opt(ints()), depth=opt(ints()), shallow_depth=opt(ints()),
                       json=FLAG),
    "advise": fuzz({"": "175e9"}, **{"": opt(st.sampled_from(FLOATS + ["175B", "1T", "350M", "12e9", "K"]))},
                   depth=opt(ints(-1, 200)), width=opt(ints(-1, 10 ** 5)), head_size=opt(ints(0, 256)),
                   span=opt(ints()), tolerance=opt(st.sampled_from(FLOATS)), intercept=opt(st.sampled_from(FLOATS)),
                   slope=opt(st.sampled_from(FLOATS)), json=FLAG),
    "seprank": fuzz({"depth": "1", "width": "2", "heads": "1", "templates": "4"},
                    depth=opt(ints(0, 20)), width=opt(ints(0, 6)), heads=opt(ints(0, 3)), positions=ints(0, 8),
                    part_a=st.sampled_from(GARBAGE + ["1", "1,2", "2,3", "0", "5", "1,1", "1,2,3,4"]),
                    position=ints(), entry=ints(), templates=opt(ints(0, 20)), residual=FLAG,
                    primes=st.sampled_from(["1", "2", "3", "4", "x"]), draws=ints(0, 5), allow_slow=FLAG,
                    sweep=FLAG, quick=FLAG, out=PATHS, json=FLAG),
    "train": fuzz({"depth": "1", "width": "32", "steps": "2", "out": "{tmp}/run", "no_progress": None},
                  depth=ints(0, 3), width=st.sampled_from(["32", "64", "33", "0", "-5", str(10 ** 9), "x"]),
                  heads=ints(0, 4), steps=opt(ints(0, 5)), seed=ints(), batch_size=ints(0, 8), seq_len=ints(0, 64),
                  lr=st.sampled_from(FLOATS), vocab_size=ints(0, 400), dtype=st.sampled_from(["float32", "x"]),
                  eval_interval=ints(), checkpoint_interval=ints(),
                  corpus=st.sampled_from(["sotu", "", "/nonexistent.txt", "/dev/null", "wikitext-9"]),
                  out=opt(PATHS), cache_dir=PATHS, json=FLAG),
    "pack": fuzz({"corpus": "{tmp}/texts", "vocab_size": "300", "out": "{tmp}/c.dwpack"},
                 corpus=st.sampled_from(["{tmp}/texts", "", "/nonexistent.txt", "/dev/null", "wikitext-9"]),
                 vocab_size=opt(ints(0, 70000)), splits=st.sampled_from(["train", "train,valid", "select", "", ",", "x"]),
                 validation_split=FLAG, out=opt(PATHS), max_mib=st.sampled_from(FLOATS + ["4096", "60"]),
                 cache_dir=PATHS, json=FLAG),
    "install-pack": fuzz({"": "{tmp}/good.dwpack"}, **{"": opt(st.sampled_from(
                         ["{tmp}/good.dwpack", "{tmp}/train.dwpack", "{tmp}/texts/d0.txt", "/dev/null", "{tmp}",
                          "/nonexistent.dwpack", ""]))}, cache_dir=PATHS, json=FLAG),
    "sweep": fuzz({"dry_run": None, "out": "{tmp}/sweep"}, preset=st.sampled_from(["mini", "nope", ""]),
                  shard=st.sampled_from(["0/1", "1/2", "3/3", "-1/2", "a", "0/0", "1/" + "9" * 400]),
                  out=opt(PATHS), limit=ints(), dry_run=FLAG, no_progress=FLAG, json=FLAG),
}


@pytest.fixture
def stubbed(monkeypatch, tmp_path):
    """Replace the work behind a fully validated seprank, train, sweep or pack with a record of the
    call; write the files the pack commands read (a corpus folder, a whole pack and a training-split
    pack)."""
    calls = []
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))  # install-pack's default: never the home
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "d0.txt").write_text("A few words. " * 20)
    arrays = {"train": np.arange(1, 200, dtype=np.uint16) % 300, "valid": np.arange(1, 50, dtype=np.uint16)}
    meta = {"corpus": "texts", "corpus_key": "texts-0", "vocab_size": 300, "tokenizer_json": "{}",
            "tokenizer_sha256": "0" * 64}
    pack_lib.pack(arrays, tmp_path / "good.dwpack", meta)
    pack_lib.pack({"train": arrays["train"]}, tmp_path / "train.dwpack", meta)

    def pack_corpus(corpus, path, splits=("train",), max_bytes=None):
        calls.append(("pack", splits))
        return {"corpus_key": "texts-0", "arrays": [{"name": s, "tokens": 1} for s in splits], "prefix": False,
                "bytes": 1}

    monkeypatch.setattr(data_lib, "load_corpus", lambda *a, **kw: None)
    monkeypatch.setattr(pack_lib, "pack_corpus", pack_corpus)

    def measure(*args, **kw):
        calls.append(("measure", args))
        return {"depth": args[0], "width": args[1], "heads": args[2], "positions": args[3], "templates": 4,
                "A": list(kw["part_a"]), "B": [], "rank": 1, "ranks": [1], "matrix_shape": [1, 1], "poly_dim": 1}

    def train(cfg, **kw):
        calls.append(("train", cfg.validate()))
        return {"status": "completed", "steps_done": cfg.steps, "eval_loss": 1.0, "tokens_per_s": 1}

    monkeypatch.setattr(seprank_sweep, "timed_measure", measure)
    monkeypatch.setattr(seprank_sweep, "timed_saturate", measure)
    monkeypatch.setattr(seprank_sweep, "sweep", lambda **kw: {"timing": {"sweep_seconds": 0, "largest": {}}})
    monkeypatch.setattr(loop, "train", train)
    monkeypatch.setattr(sweeps, "run", lambda *a, **kw: calls.append(("sweep", a)) or sweeps.Outcome(
        [], dict.fromkeys(sweeps.OUTCOMES, 0), 0, "sweep"))
    return calls


def check(argv, capsys, tmp_path, refused, limit_s: float = 10.0):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    t0 = time.perf_counter()
    try:
        status = cli.main(argv)
    except SystemExit as exit_:  # argparse
        status = exit_.code
    seconds = time.perf_counter() - t0
    out, err = capsys.readouterr()
    assert status in (0, 2), (argv, status, err)
    assert "Traceback" not in err, (argv, err)
    if status == 2:
        refused(status, err, ": error: ", out)
    assert seconds < limit_s, (argv, seconds)
    return status


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_exits_0_or_2_with_one_line(command, capsys, tmp_path, stubbed, monkeypatch, refused):
    monkeypatch.chdir(tmp_path)  # a default --out (runs/..., results/...) lands here

    seen = set()

    @FUZZ
    @given(COMMANDS[command])
    def run(argv):
        seen.add(check([command, *argv], capsys, tmp_path, refused))

    run()
    # honest: the examples reach both outcomes (env has no bad arguments to give)
    assert seen == ({0} if command == "env" else {0, 2}), seen
    if command in ("seprank", "train", "sweep", "pack"):
        assert any(kind == {"seprank": "measure"}.get(command, command) for kind, _ in stubbed)


ENV = {
    "DWLIB_CPU_DEVICES": st.sampled_from(["1", "2", "abc", "0", "-3", "64", "65", "", "1e3", str(10 ** 400)]),
    "DWLIB_DISTRIBUTED": st.sampled_from(["0", "1", "yes", ""]),
    "DWLIB_HOST_MEMORY": st.sampled_from(["keep", "system", "never", ""]),
    "DWLIB_ATTENTION": st.sampled_from(["auto", "dwlib", "cudnn", ""]),
    "DWLIB_CACHE": st.sampled_from(["{tmp}/cache", "/proc/dwlib-cache", "/etc/passwd", ""]),
    "JAX_PLATFORMS": st.sampled_from(["cpu", "nope", "cpu,nope", ""]),
}
ENV_SETS = st.fixed_dictionaries({}, optional=ENV)
ENV_COMMANDS = st.sampled_from([["env"], ["env", "--json"], ["seprank", "--depth", "1", "--width", "2", "--heads", "1"],
                                ["train", "--steps", "2", "--depth", "1", "--width", "32", "--out", "{tmp}/run"],
                                ["sweep", "--out", "{tmp}/sweep", "--limit", "0"]])


def test_environment_variables_in_process(capsys, tmp_path, stubbed, monkeypatch, refused):
    """Every DWLIB_* value, checked before any work: exit 0 or 2 with one line."""
    seen = set()

    @FUZZ
    @given(ENV_SETS, ENV_COMMANDS)
    def run(env, argv):
        with monkeypatch.context() as m:
            for name in ENV:
                m.delenv(name, raising=False)
            for name, value in env.items():
                m.setenv(name, value.replace("{tmp}", str(tmp_path)))
            seen.add(check(argv, capsys, tmp_path, refused))

    run()
    assert seen == {0, 2}, seen


@pytest.mark.slow
def test_environment_variables_as_real_processes(tmp_path, refused):
    """The real thing, a few times: ``python -m dwlib`` with hostile variables never prints a
    traceback, and a refusal is one line with exit 2 (also for a backend JAX lacks here)."""
    cases = [({"DWLIB_CPU_DEVICES": "abc"}, ["env"]), ({"JAX_PLATFORMS": "tpu"}, ["env"]),
             ({"DWLIB_DISTRIBUTED": "1"}, ["train", "--steps", "2", "--depth", "1", "--width", "32"]),
             ({"DWLIB_CACHE": "/proc/dwlib-cache"}, ["sweep", "--limit", "0"]),
             ({}, ["seprank", "--depth", "1", "--width", "2", "--heads", "1", "--part-a", "a,b"])]
    for env, argv in cases:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "dwlib", *argv], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, env={**os.environ, **env})
        refused(r.returncode, r.stderr, ": error: ", r.stdout)
        assert time.perf_counter() - t0 < 60
    assert not any(tmp_path.iterdir())  # nothing written by a refused command
