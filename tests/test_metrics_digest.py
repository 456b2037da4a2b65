"""An edited line of a run's metrics.jsonl, or an edited value of its result.json, is found when
the run is read (an edited loss in metrics.jsonl must not go unnoticed): by the trainer,
which completes the run again from a checkpoint whose metrics are intact (bit-identical to the
run never edited), and by a sweep's records, which refuse the run in one line naming the file.
Results and checkpoints written before the digests existed are read as before. Property-based:
bytes changed at random offsets of a finished run's files never give a record or a summary
other than the one written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlib.errors import StateError
from dwlib.experiments.records import record
from dwlib.train import rundir
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train
from dwlib.train.rundir import DIGEST, SEAL, TIMINGS, read_json

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TINY = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=8, lr=3e-3,
            eval_interval=4, eval_batches=2, checkpoint_interval=4)
TIMED = ("tokens_per_s", "seconds_this_session")  # differ from session to session


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A corpus and its cache, a finished reference run, and a run stopped at step 6 (its
    checkpoint at step 4, its metrics to step 6)."""
    root = tmp_path_factory.mktemp("digest")
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    train(config(root, "reference"), progress=False, verbose=False)
    assert train(config(root, "stopped"), progress=False, verbose=False, stop_after=6)["status"] == "stopped"
    return root


def config(root: Path, name: str, **kw) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "corpus": str(root / "corpus.txt"), "cache_dir": str(root / "cache"),
                                  "out_dir": str(root / name), **kw})


def copy_of(root: Path, source: str, name: str) -> Path:
    shutil.copytree(root / source, root / name, symlinks=True)
    return root / name


def edit_loss(run: Path, step: int, field: str = "loss") -> None:
    """Change the training loss (or the evaluation, ``field="eval_loss"``) of ``step`` in place:
    still a well-formed, finite line."""
    lines = (run / "metrics.jsonl").read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("step") == step and field in json.loads(line))
    rec = json.loads(lines[i])
    lines[i] = json.dumps({**rec, field: rec[field] - 0.5})
    (run / "metrics.jsonl").write_text("".join(line + "\n" for line in lines))


def untimed(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in TIMED}


def same_as_reference(world: Path, run: Path) -> None:
    assert (run / "metrics.jsonl").read_bytes() == (world / "reference" / "metrics.jsonl").read_bytes()
    done, ref = (json.loads((d / "result.json").read_text()) for d in (run, world / "reference"))
    assert untimed(done) == untimed(ref)
    assert done[DIGEST] == rundir.metrics_digest(run) and done[SEAL] == rundir.seal(done)


def test_a_finished_run_stores_the_digests_of_its_files(world):
    ref = world / "reference"
    result = json.loads((ref / "result.json").read_text())
    assert result[DIGEST] == rundir.metrics_digest(ref) and result[SEAL] == rundir.seal(result)
    assert record(ref)["eval_loss"] == result["eval_loss"]


@pytest.mark.parametrize("step, field, message", [
    (4, "eval_loss", r"^run edited-eval_loss: metrics.jsonl is not the file its result.json was written with "
                     r"\(SHA-256 [0-9a-f]{12}\.\.\., result.json records [0-9a-f]{12}\.\.\.\): it was edited"),
    (3, "loss", r"^run edited-loss: result.json's train_loss .* is not the .* its metrics.jsonl holds")])
def test_an_edited_intermediate_loss_is_no_record(world, step, field, message):
    """The evaluation at step 4 of 8 enters no summary: only the digest finds it. A training loss
    of the last 20 steps is found by the summary's training loss first."""
    run = copy_of(world, "reference", f"edited-{field}")
    edit_loss(run, step, field)
    with pytest.raises(StateError, match=message) as err:
        record(run)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("field", ["tokens_seen", "corpus", "parameters"])
def test_an_edited_value_of_result_json_is_no_record(world, field):
    """Values no other file of the run confirms are checked by result.json's seal."""
    run = copy_of(world, "reference", f"edited-{field}")
    result = json.loads((run / "result.json").read_text())
    value = result[field] + 1 if field == "tokens_seen" else {**result[field], "x": 1}
    (run / "result.json").write_text(json.dumps({**result, field: value}))
    with pytest.raises(StateError, match=f"run edited-{field}: result.json is not as it was written"):
        record(run)
    assert TIMINGS == TIMED  # the timings alone are outside the seal: two runs differ in them


def test_the_trainer_completes_a_run_with_an_edited_loss_again(world, capsys):
    """Both checkpoints (steps 4 and 8) cover the evaluation at step 4: the run is computed again
    from step 0 and is the reference run, byte for byte."""
    run = copy_of(world, "reference", "edited-train")
    edit_loss(run, 4, "eval_loss")
    capsys.readouterr()
    train(config(world, run.name), progress=False, verbose=False)
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 2, printed
    assert "metrics.jsonl is not the file its result.json was written with" in printed[0]
    assert "completing the run again from its checkpoints" in printed[0]
    assert "metrics.jsonl up to step 8 is not what it was when the checkpoint at step 8 was written" in printed[1]
    assert "checkpoint at step 4" in printed[1] and printed[1].endswith("starting again from step 0")
    same_as_reference(world, run)


def test_an_edit_after_the_last_checkpoint_but_one_resumes_from_it(world, capsys):
    run = copy_of(world, "reference", "edited-late")
    edit_loss(run, 6)  # after the checkpoint at step 4: that one is intact
    capsys.readouterr()
    train(config(world, run.name), progress=False, verbose=False)
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 2 and "completing the run again from its checkpoints" in printed[0], printed
    assert "checkpoint at step 8 was written" in printed[1] and printed[1].endswith("resuming from step 4")
    same_as_reference(world, run)


@pytest.mark.parametrize("step, note", [(2, "starting again from step 0"), (5, None)])
def test_a_partial_run_edited_before_or_after_its_checkpoint_resumes_to_the_reference(world, capsys, step, note):
    """Before the checkpoint: the checkpoint's digest finds the edit and the run starts again;
    after it: the lines past the checkpoint are computed again anyway, the edit with them."""
    run = copy_of(world, "stopped", f"partial-{step}")
    edit_loss(run, step)
    capsys.readouterr()
    train(config(world, run.name), progress=False, verbose=False)
    printed = capsys.readouterr().err.strip().splitlines()
    if note is None:
        assert printed == []
    else:
        assert len(printed) == 1 and "metrics.jsonl up to step 4 is not what it was" in printed[0], printed
        assert printed[0].endswith(note)
    same_as_reference(world, run)


def test_a_result_written_before_digests_is_read_as_before(world):
    """The runs behind the published sweeps have no digests: read, not retrained; a result that
    has lost only one of the two is no result."""
    run = copy_of(world, "reference", "old-result")
    result = json.loads((run / "result.json").read_text())
    old = {k: v for k, v in result.items() if k not in (DIGEST, SEAL)}
    (run / "result.json").write_text(json.dumps(old, indent=2) + "\n")
    stamp = (run / "result.json").stat().st_mtime_ns
    assert record(run)["eval_loss"] == result["eval_loss"]
    assert train(config(world, run.name), progress=False, verbose=False) == old
    assert (run / "result.json").stat().st_mtime_ns == stamp
    (run / "result.json").write_text(json.dumps({**old, DIGEST: result[DIGEST]}))
    with pytest.raises(StateError, match="result.json is not as it was written"):
        record(run)


# --- bytes changed at random offsets ----------------------------------------------------------

CORRUPT = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _changed(data: bytes, offset: int, value: int, how: str) -> bytes:
    i = offset % len(data)
    if how == "replace":
        return data[:i] + bytes([value]) + data[i + 1:]
    if how == "insert":
        return data[:i] + bytes([value]) + data[i:]
    return data[:i] + data[i + 1:]  # delete


@CORRUPT
@given(name=st.sampled_from(["metrics.jsonl", "result.json"]), offset=st.integers(0, 1 << 20),
       value=st.one_of(st.sampled_from(list(b"0123456789.-e\"{}[],: \nnul")), st.integers(0, 255)),
       how=st.sampled_from(["replace", "insert", "delete"]))
def test_a_changed_byte_never_gives_another_record_or_summary(world, tmp_path_factory, name, offset, value, how):
    """Whatever byte is changed, inserted or deleted in metrics.jsonl or result.json, the
    sweep's record is the original one or a one-line StateError naming the run, and the
    trainer's check of the stored summary finds a problem or returns the summary as written: but
    for the timings (throughput, seconds), which no check can confirm and no analysis uses as a
    result."""
    ref = world / "reference"
    cfg = config(world, "reference")
    original, summary = record(ref), json.loads((ref / "result.json").read_text())
    run = tmp_path_factory.mktemp("bytes") / "run"
    shutil.copytree(ref, run, ignore=shutil.ignore_patterns("checkpoints"))
    before = (run / name).read_bytes()
    after = _changed(before, offset, value, how)
    (run / name).write_bytes(after)
    try:
        got = record(run)
    except StateError as err:
        assert str(err).startswith("run run: ") and "\n" not in str(err)
    else:
        assert untimed({**got, "key": "reference"}) == untimed(original), (before, after)
    try:
        done = read_json(run / "result.json")
    except StateError as err:
        assert "\n" not in str(err)
        return
    if rundir.result_problem(run, done, cfg.steps, cfg.eval_interval) is None:
        assert untimed(done) == untimed(summary)
