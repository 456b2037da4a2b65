"""A sweep's state on disk: its limit, its results directory, corrupt runs set aside, locks, kills."""

import errno
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jax
import pytest
from conftest import TEXT

from dwlib import cli
from dwlib.errors import InputError, StateError
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.experiments import group_sweep as gs
from dwlib.experiments import sweep as sw
from dwlib.experiments import sweep_state
from dwlib.store import exclusive

UNSTABLE = ("wall_seconds", "tokens_per_s", "hardware", "git_commit")  # what a repeat may change


def small_sweep(corpus: str, name: str = "small", steps: int = 12) -> ps.Sweep:
    """Three runs of one shape (seeds 0-2), so that one compilation serves them all."""
    return ps.Sweep(name=name, depths=(1,), budgets=(12 * 32 * 32,), seeds=(0, 1, 2), head_size=16,
                    tokens_per_run=8 * 16 * steps,
                    train={"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "lr": 3e-3,
                           "eval_interval": 4, "eval_batches": 2, "checkpoint_interval": 4})


def stable(records: list[dict]) -> dict:
    return {r["key"]: {k: v for k, v in r.items() if k not in UNSTABLE} for r in records}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A small sweep trained once: (sweep, its results directory, cache dir, its records). Copy before changing."""
    root = tmp_path_factory.mktemp("trained")
    corpus = root / "corpus.txt"
    corpus.write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    sweep, out = small_sweep(str(corpus)), root / "out"
    records = sw.run(sweep, out, cache_dir=str(root / "cache"), progress=False)
    assert len(records) == 3 and records.counts["completed"] == 3
    return sweep, out, str(root / "cache"), stable(records)


def copy_of(trained, tmp_path) -> Path:
    shutil.copytree(trained[1], tmp_path / "out")
    return tmp_path / "out"


def test_a_limit_below_zero_is_refused_before_anything_is_written(trained, tmp_path):
    sweep = trained[0]
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match="limit must be an integer >= 0"):
            sw.run(sweep, tmp_path / "new", limit=bad, progress=False)
    assert not (tmp_path / "new").exists()
    nothing = sw.run(sweep, tmp_path / "new", limit=0, progress=False)  # 0: claim the directory, train nothing
    assert list(nothing) == [] and nothing.counts["left"] == 3 and nothing.counts["completed"] == 0
    assert json.loads((tmp_path / "new" / "sweep.json").read_text())["name"] == sweep.name
    assert nothing.line() == f"sweep {sweep.name} shard 0/1: 0 of 3 runs finished (0 completed and 0 diverged " \
                             "now, 0 before); 3 left (limit)"


def test_the_summary_counts_what_the_call_did(trained, tmp_path):
    out = copy_of(trained, tmp_path)
    key, other, _ = sorted(trained[3])
    (out / "runs" / key / "result.json").unlink()  # killed before its result: resumed from its checkpoint
    (out / "runs" / other / "sweep_meta.json").unlink()  # killed after its result, before the sweep's file
    again = sw.run(trained[0], out, cache_dir=trained[2], progress=False)
    meta = json.loads((out / "runs" / other / "sweep_meta.json").read_text())
    assert meta["wall_seconds"] is None and meta["key"] == other and meta["sweep"] == "small"
    assert again.counts == {"completed": 1, "diverged": 0, "before": 2, "set_aside": 0, "failed": 0, "busy": 0,
                            "left": 0}
    assert again.line().endswith("3 of 3 runs finished (1 completed and 0 diverged now, 2 before)")
    assert stable(again) == trained[3]


def test_a_results_directory_belongs_to_one_sweep(trained, tmp_path, capsys, refused):
    sweep, out = trained[0], copy_of(trained, tmp_path)
    other = ps.Sweep(**{**sweep.__dict__, "name": "other", "seeds": (7,)})
    for call in (lambda: sw.run(other, out, limit=0, progress=False), lambda: sw.plan(other, out)):
        with pytest.raises(StateError, match=f"{out} belongs to sweep 'small' .*not 'other'"):
            call()
    assert json.loads((out / "sweep.json").read_text())["name"] == "small" and len(list((out / "runs").glob("[!.]*"))) == 3
    # The same sweep redefined (a seed more) may go on there; its sweep.json follows.
    more = ps.Sweep(**{**sweep.__dict__, "seeds": (0, 1, 2, 3)})
    assert sw.run(more, out, limit=0, progress=False).counts["left"] == 1
    assert json.loads((out / "sweep.json").read_text())["seeds"] == [0, 1, 2, 3]
    # A directory with other files and no sweep.json, or a sweep.json that is garbage.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(StateError, match="not empty and has no sweep.json"):
        sw.run(sweep, tmp_path / "mine", limit=0, progress=False)
    (out / "sweep.json").write_text('{"name": "sm')
    with pytest.raises(StateError, match="is not a sweep's description"):
        sw.plan(sweep, out)
    # On the command line: one line, exit 2, also for --dry-run.
    sw.claim(ps.get_preset("mini"), tmp_path / "mini")
    status = cli.main(["sweep", "--preset", "mini-lr", "--out", str(tmp_path / "mini"), "--dry-run"])
    printed = capsys.readouterr()
    refused(status, printed.err, "belongs to sweep 'mini'", printed.out)


def test_two_sweeps_claiming_one_new_directory_at_once_one_is_refused(trained, tmp_path, monkeypatch):
    sweep, out = trained[0], tmp_path / "new"
    other = ps.Sweep(**{**sweep.__dict__, "name": "other"})
    real, calls = sweep_state.check_owner, []

    def late(sw_, where):  # `other` claims the directory just after this process looked
        calls.append(sw_.name)
        if len(calls) == 1:
            sw.claim(other, where)
            return False
        return real(sw_, where)

    monkeypatch.setattr(sweep_state, "check_owner", late)
    with pytest.raises(StateError, match="belongs to sweep 'other'"):
        sw.claim(sweep, out)
    assert json.loads((out / "sweep.json").read_text())["name"] == "other"  # not overwritten
    assert [p.name for p in out.iterdir()] == ["sweep.json"]  # no temporary file left


def _corrupt(run: Path, kind: str) -> str:
    """Damage one finished run's files; return the file the report must name."""
    metrics = run / "metrics.jsonl"
    if kind == "metrics-garbage":
        metrics.write_text(metrics.read_text() + "\x00\x17garbage\n")
    elif kind == "metrics-torn":
        metrics.write_bytes(metrics.read_bytes()[:-9])
    elif kind == "metrics-missing":
        metrics.unlink()
    elif kind == "no-evals":
        metrics.write_text("".join(line + "\n" for line in metrics.read_text().splitlines() if "eval_loss" not in line))
        return "result.json"
    elif kind in ("result-garbage", "config-garbage"):
        (run / f"{kind.split('-')[0]}.json").write_text("{[")
        return f"{kind.split('-')[0]}.json"
    elif kind == "config-other":  # a config of another run of the sweep
        texts = [p.read_text() for p in run.parent.glob("[!.]*/config.json") if p.parent != run]
        (run / "config.json").write_text(next(t for t in texts if t.startswith("{\n")))  # not one made garbage
        return "config of another run"
    elif kind == "result-incomplete":
        result = json.loads((run / "result.json").read_text())
        del result["parameters"]
        (run / "result.json").write_text(json.dumps(result))
        return "result.json"
    return "metrics.jsonl"


KINDS = ("metrics-garbage", "metrics-torn", "metrics-missing", "no-evals", "result-garbage", "config-garbage",
         "result-incomplete", "config-other")


@pytest.mark.parametrize("kinds", [KINDS[:3], KINDS[3:5], KINDS[5:]], ids=["metrics", "result", "config"])
def test_corrupt_runs_are_set_aside_and_trained_anew_while_the_sweep_goes_on(trained, tmp_path, kinds):
    sweep, out = trained[0], copy_of(trained, tmp_path)
    keys = sorted(trained[3])
    named = {key: _corrupt(out / "runs" / key, kind) for key, kind in zip(keys, kinds, strict=False)}
    before = {key: sorted(p.name for p in (out / "runs" / key).iterdir()) for key in named}
    states = {r["key"]: r for r in sw.plan(sweep, out)}
    for key, name in named.items():
        assert states[key]["state"] == "corrupt" and key in states[key]["reason"] and name in states[key]["reason"]
    with pytest.raises(StateError, match=f"run ({'|'.join(named)})"):
        rc.collect(out)  # no records from a corrupt run
    lines = []
    again = sw.run(sweep, out, cache_dir=trained[2], progress=False, log=lines.append)
    assert again.counts["set_aside"] == again.counts["completed"] == len(named) and again.counts["failed"] == 0
    assert stable(again) == trained[3]  # trained anew from scratch: the same losses, bit for bit
    assert len(lines) == len(named)
    for key, name in named.items():
        line = next(line for line in lines if f"run {key}:" in line)  # not a line naming it as the other run
        assert name in line and "set aside in" in line and "\n" not in line
        kept = out / "set-aside" / f"{key}-1"
        assert sorted(p.name for p in kept.iterdir()) == sorted(before[key] + ["set_aside.json"])  # nothing lost
        assert name in json.loads((kept / "set_aside.json").read_text())["reason"]


def test_a_run_that_fails_again_is_skipped_and_other_errors_propagate(trained, tmp_path, monkeypatch):
    sweep, out = trained[0], copy_of(trained, tmp_path)
    bad, *good = sorted(trained[3])
    for key in trained[3]:
        (out / "runs" / key / "result.json").unlink()  # all three resume from their last checkpoint
    real = gs.train

    def train(fields, **kw):
        if Path(fields["out_dir"]).name == bad:
            raise StateError(f"checkpoint 6 in {fields['out_dir']} is corrupt\n(and a second line)")
        return real(fields, **kw)

    monkeypatch.setattr(gs, "train", train)
    lines = []
    res = sw.run(sweep, out, cache_dir=trained[2], progress=False, log=lines.append)
    assert res.counts["failed"] == 1 and res.counts["set_aside"] == 1 and res.counts["completed"] == 2
    assert sorted(r["key"] for r in res) == sorted(good) and "1 set aside, 1 failed" in res.line()
    assert all(line.endswith(e) for line, e in zip(lines, ("training it anew", "after being set aside)"), strict=True))
    assert all(bad in line and "second line" not in line for line in lines)
    assert (out / "set-aside" / f"{bad}-1").is_dir() and (out / "runs" / bad).is_dir() is False
    # A bug (any other exception) and a full disk stop the sweep.
    for exc in (RuntimeError("a bug"), OSError(errno.ENOSPC, "No space left on device")):
        def broken(fields, exc=exc, **kw):
            raise exc
        monkeypatch.setattr(gs, "train", broken)
        with pytest.raises(type(exc)):
            sw.run(sweep, out, cache_dir=trained[2], progress=False, log=lines.append)
    assert not (out / "set-aside" / f"{bad}-2").exists()


def test_runs_held_by_another_process_are_skipped_not_set_aside(trained, tmp_path, monkeypatch):
    sweep, out = trained[0], copy_of(trained, tmp_path)
    first, second, _ = sorted(trained[3])
    for key in (first, second):
        (out / "runs" / key / "result.json").unlink()
    monkeypatch.setattr(gs, "train", lambda fields, **kw: (_ for _ in ()).throw(
        StateError(f"run directory {fields['out_dir']} is in use by another process (pid 1): wait")))
    lines = []
    # first: another sweep process holds its sweep lock; second: a `dwlib train` holds the run directory.
    with exclusive(out / "runs" / f".{first}.lock", f"run {first}"), \
            exclusive(out / "runs" / second / ".lock", f"run directory {out / 'runs' / second}"):
        res = sw.run(sweep, out, cache_dir=trained[2], progress=False, log=lines.append)
    assert res.counts["busy"] == 2 and res.counts["set_aside"] == 0 and len(res) == 1
    assert res.line().endswith("2 skipped (in use by another process)")
    held, outside = (next(line for line in lines if key in line) for key in (first, second))
    assert len(lines) == 2 and "in use by another process" in held and "skipped here" in held
    assert "not set aside" in outside and "in use by another process" in outside
    assert not (out / "set-aside").exists() and (out / "runs" / second / "config.json").exists()


def _logged(out: Path) -> int:
    """Bytes of metrics written so far (a file replaced meanwhile counts 0)."""
    total = 0
    for path in out.glob("runs/*/metrics.jsonl"):
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            pass
    return total


SCRIPT = """
import json, sys
from dwlib.experiments import presets, sweep
res = sweep.run(presets.Sweep(**json.loads(sys.argv[1])), sys.argv[2], cache_dir=sys.argv[3], progress=False)
print(res.line(), file=sys.stderr)
"""


@pytest.mark.slow
def test_a_sweep_killed_at_random_moments_ends_as_one_never_interrupted(trained, tmp_path):
    """SIGKILL the small sweep a few times at random moments of its training, start it again each
    time, finish with two processes on the shard at once: every run finishes once, none is redone
    after it finished, and the records equal those of the sweep trained uninterrupted (``trained``)."""
    sweep, out = trained[0], tmp_path / "out"
    env = {**os.environ, "DWLIB_CPU_DEVICES": str(jax.device_count()),  # as the uninterrupted sweep had
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "xla"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
           "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    argv = [sys.executable, "-c", SCRIPT, json.dumps(sweep.__dict__), str(out), trained[2]]
    rng, finished, kills = random.Random(21), {}, 0
    while kills < 3 and len(finished) < 3:
        logged, proc = _logged(out), subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None and _logged(out) <= logged:
            time.sleep(0.01)  # until this process trains (its imports take seconds)
        time.sleep(rng.uniform(0.0, 1.0))
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.communicate(timeout=300)
        for result in out.glob("runs/*/result.json"):
            finished.setdefault(result.parent.name, result.stat().st_mtime_ns)
    assert kills >= 1  # at least one kill landed while the sweep trained
    pair = [subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errs = [p.communicate(timeout=300)[1] for p in pair]
    assert [p.returncode for p in pair] == [0, 0], errs
    assert all("set aside" not in e and "failed" not in e for e in errs), errs
    assert any("3 of 3 runs finished" in e for e in errs), errs  # the other may have skipped a run in use
    assert not (out / "set-aside").exists()
    for key, stamp in finished.items():
        assert (out / "runs" / key / "result.json").stat().st_mtime_ns == stamp, key  # not redone
    assert stable(rc.collect(out)) == trained[3]
