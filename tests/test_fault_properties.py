"""Fault injection from a generator: whichever entry of a partial run's
directory is replaced by something of the wrong kind (a folder, an empty file, a FIFO, a link to
nothing), down to the files inside its checkpoints, and whichever byte of the tokenizer cache is
changed, a run ends in the result of a run never damaged, or in one line (a StateError or
InputError, or an OSError of the machine) — never in another result, a traceback or a hang."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlib.errors import InputError, environment_problem
from dwlib.train import data
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TINY = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=8, lr=3e-3,
            eval_interval=4, eval_batches=2, checkpoint_interval=4)
TIMINGS = ("tokens_per_s", "seconds_this_session")
KINDS = ("a directory", "an empty file", "a FIFO", "a link to nothing")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A corpus, its cache, the finished reference run, and a run stopped at step 6 (checkpoint at 4)."""
    root = tmp_path_factory.mktemp("faults")
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    train(config(root, "reference"), progress=False, verbose=False)
    train(config(root, "stopped"), progress=False, verbose=False, stop_after=6)
    entries = sorted(str(p.relative_to(root / "stopped")) for p in (root / "stopped").rglob("*"))
    return root, entries


def config(root: Path, name: str, **kw) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "corpus": str(root / "corpus.txt"), "cache_dir": str(root / "cache"),
                                  "out_dir": str(root / name), **kw})


def _replace(path: Path, kind: str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    {"a directory": path.mkdir, "an empty file": path.touch, "a FIFO": lambda: os.mkfifo(path),
     "a link to nothing": lambda: path.symlink_to(path.parent / "nowhere")}[kind]()


class Hang(BaseException):
    """Not an Exception: no handler of the code under test may take it for a torn file."""


def _alarm(signum, frame):
    raise Hang("no answer in 120 s")


def one_line(err: BaseException) -> bool:
    """Whether the command line shows this error as one line (exit status 2)."""
    if isinstance(err, InputError):
        return "\n" not in str(err)
    return isinstance(err, OSError) and environment_problem(err) is not None


def untimed(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in TIMINGS}


FAULTS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.slow
@FAULTS
@given(pick=st.integers(0, 10 ** 6), kind=st.sampled_from(KINDS))
def test_any_entry_of_a_run_of_the_wrong_kind_ends_in_the_result_or_one_line(world, pick, kind):
    root, entries = world
    entry = entries[pick % len(entries)]
    name = f"kind-{pick % len(entries)}-{KINDS.index(kind)}"
    run = root / name
    if run.exists():
        return  # this case was tried already
    shutil.copytree(root / "stopped", run, symlinks=True)
    _replace(run / entry, kind)
    was = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(120)
    try:
        result = train(config(root, name), progress=False, verbose=False)
    except (InputError, OSError) as err:
        assert one_line(err), (entry, kind, err)
        return
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, was)
    reference = root / "reference"
    assert untimed(result) == untimed(json.loads((reference / "result.json").read_text())), (entry, kind)
    assert (run / "metrics.jsonl").read_bytes() == (reference / "metrics.jsonl").read_bytes(), (entry, kind)


CACHE = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@CACHE
@given(name=st.sampled_from(["train.npy", "valid.npy", "meta.json", "tokenizer.json"]),
       offset=st.integers(0, 1 << 20), value=st.integers(0, 255), how=st.sampled_from(["replace", "insert", "delete"]))
def test_a_changed_byte_of_the_cache_never_gives_other_tokens(world, tmp_path_factory, name, offset, value, how):
    """The cache's tokens and fingerprint come back as they were (the cache intact, or rebuilt
    with one line), or loading stops in one line."""
    root, _ = world
    original = data.load_corpus(str(root / "corpus.txt"), 300, root / "cache")
    cache = tmp_path_factory.mktemp("cache")
    shutil.copytree(root / "cache", cache, dirs_exist_ok=True)
    target = next(cache.rglob(name))
    raw = target.read_bytes()
    i = offset % len(raw)
    changed = {"replace": raw[:i] + bytes([value]) + raw[i + 1:], "insert": raw[:i] + bytes([value]) + raw[i:],
               "delete": raw[:i] + raw[i + 1:]}[how]
    target.write_bytes(changed)
    try:
        got = data.load_corpus(str(root / "corpus.txt"), 300, cache)
    except (InputError, OSError) as err:
        assert one_line(err), err
        return
    np.testing.assert_array_equal(got.train, original.train)
    np.testing.assert_array_equal(got.valid, original.valid)
    assert got.meta["fingerprint"] == original.meta["fingerprint"]
    assert got.meta["tokens"] == original.meta["tokens"]



def test_a_corpus_file_past_the_memory_limit_is_one_line(tmp_path):
    """A 40 GB sparse corpus under a memory limit was a 34-line MemoryError traceback; here 3 GB
    under ``ulimit -v`` of 2 GB (reading the tokenizer cache code needs no more)."""
    corpus = tmp_path / "sparse.txt"
    with open(corpus, "wb") as f:
        f.truncate(3 * 10 ** 9)  # sparse: no disk used
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
              "from dwlib.train import data\n"
              "from dwlib.errors import InputError\n"
              "try:\n    data.load_corpus(sys.argv[1], 300, sys.argv[2])\n"
              "except InputError as err:\n    print(err)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(corpus), str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("(3.0 GB) does not fit in the memory this process may use (MemoryError): "
                                        "give a smaller corpus or raise the limit"), proc.stdout
    assert not list(tmp_path.rglob("meta.json"))
