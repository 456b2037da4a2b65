"""Issue 39, tried as a hostile user would: each case ends in a correct result, or in one line
(exit status 2) with nothing half-written. The resume of a run with the other implementation,
orbax's log lines on resume, misleading messages, the environment JAX reads at import, and
paths and files of the wrong kind (property-based where the input space is open)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlib import cli
from dwlib.errors import StateError
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TINY = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=8, lr=3e-3,
            eval_interval=4, eval_batches=2, checkpoint_interval=4)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A corpus and its cache, and a run stopped after its checkpoint at step 4."""
    root = tmp_path_factory.mktemp("reliability")
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    assert train(config(root, "stopped"), progress=False, verbose=False, stop_after=4)["status"] == "stopped"
    return root


def config(root: Path, name: str, **kw) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "corpus": str(root / "corpus.txt"), "cache_dir": str(root / "cache"),
                                  "out_dir": str(root / name), **kw})


def copy_of(root: Path, name: str) -> Path:
    subprocess.run(["cp", "-r", str(root / "stopped"), str(root / name)], check=True)
    return root / name


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


# --- a run resumed with the other --ops --------------------------------------------------------


def test_a_run_resumed_with_the_other_ops_is_refused(world):
    run = copy_of(world, "other-ops")
    before = (run / "config.json").read_text()
    with pytest.raises(StateError, match="trained with --ops plain up to its checkpoint at step 4.*--ops fast"):
        train(config(world, "other-ops", ops="fast"), progress=False, verbose=False)
    assert (run / "config.json").read_text() == before  # still names the implementation that trained it
    done = train(config(world, "other-ops"), progress=False, verbose=False)  # with its own ops it resumes
    assert done["status"] == "completed" and done["steps_done"] == 8


def test_a_run_without_a_checkpoint_starts_again_with_either_ops(world):
    train(config(world, "no-checkpoint"), progress=False, verbose=False, stop_after=2)
    done = train(config(world, "no-checkpoint", ops="fast"), progress=False, verbose=False)
    assert done["status"] == "completed"
    assert '"ops": "fast"' in (world / "no-checkpoint" / "config.json").read_text()


def test_orbax_log_lines_do_not_leak_on_resume(world, capfd):
    """A torn ``_CHECKPOINT_METADATA`` (orbax reads the checkpoint all the same) logged three lines
    through absl: WARNING or ERROR with the file's content."""
    run = copy_of(world, "absl")
    (run / "checkpoints" / "4" / "_CHECKPOINT_METADATA").write_text("x\n")
    logging.getLogger("absl").addHandler(handler := logging.StreamHandler(sys.stderr))
    try:
        capfd.readouterr()
        assert train(config(world, "absl"), progress=False, verbose=False)["status"] == "completed"
    finally:
        logging.getLogger("absl").removeHandler(handler)
    err = capfd.readouterr().err
    assert "absl" not in err and "Metadata file" not in err, err
