"""A group's checkpoint (dwlib.train.checkpoint.GroupCheckpoint): the stacked state of a group
of runs with their curves, restored exactly; one that cannot be read or was computed from other
data is dropped with a note, and the group starts from step 0."""

import math

import numpy as np
import pytest

from dwlib.train.checkpoint import GroupCheckpoint

DATA = {"runs": ["a1", "b2"], "corpus": "f00d", "devices": {"backend": "cpu", "count": 1, "processes": 1}}


def _state(scale=1.0, step=0):
    return {"params": {"w": np.arange(6, dtype=np.float32).reshape(2, 3) * scale},
            "opt_state": {"count": np.asarray([step, step], np.int32), "mu": np.full((2, 3), scale, np.float32)},
            "step": step}


def _curves():  # one run diverged: its last loss is not finite, and JSON must carry it
    return [{"seed": 0, "lr": 0.001, "losses": [5.25, 4.0], "evals": [{"step": 0, "eval_loss": 6.5}],
             "diverged_step": None},
            {"seed": 1, "lr": 0.004, "losses": [5.5, math.inf], "evals": [{"step": 0, "eval_loss": 6.25}],
             "diverged_step": 2}]


def test_a_saved_state_comes_back_exactly_with_its_curves_and_seconds(tmp_path):
    ckpt = GroupCheckpoint(tmp_path / ".group-x", DATA)
    state, curves, seconds = ckpt.restore(_state())
    assert curves is None and seconds == 0.0 and state["step"] == 0  # nothing saved: the initial state
    ckpt.save(2, _state(1.5, 2), _curves(), 12.5)
    ckpt.save(4, _state(2.5, 4), _curves(), 20.0)
    assert sorted(p.name for p in (tmp_path / ".group-x").iterdir() if p.name.isdigit()) == ["4"]  # the newest kept
    state, curves, seconds = GroupCheckpoint(tmp_path / ".group-x", DATA).restore(_state())
    assert state["step"] == 4 and seconds == 20.0 and curves == _curves()
    np.testing.assert_array_equal(np.asarray(state["params"]["w"]), _state(2.5)["params"]["w"])
    np.testing.assert_array_equal(np.asarray(state["opt_state"]["count"]), [4, 4])
    GroupCheckpoint(tmp_path / ".group-x", DATA).remove()
    assert not (tmp_path / ".group-x").exists()


@pytest.mark.parametrize("damage", ["other data", "a damaged file"])
def test_a_checkpoint_that_cannot_be_used_is_dropped_and_the_group_starts_again(tmp_path, capsys, damage):
    GroupCheckpoint(tmp_path / "g", DATA).save(3, _state(2.0, 3), _curves(), 5.0)
    data = DATA
    if damage == "other data":
        data = {**DATA, "corpus": "beef"}
    else:
        victim = next(p for p in (tmp_path / "g" / "3").rglob("*") if p.is_file() and p.stat().st_size > 0
                      and p.name not in ("dwlib_files.json", "_CHECKPOINT_METADATA"))
        victim.write_bytes(b"\0" * victim.stat().st_size)
    state, curves, seconds = GroupCheckpoint(tmp_path / "g", data).restore(_state())
    assert (state["step"], curves, seconds) == (0, None, 0.0)
    np.testing.assert_array_equal(state["params"]["w"], _state()["params"]["w"])
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the group starts again from step 0" in err
    assert ("other data" in err) == (damage == "other data") and not (tmp_path / "g" / "3").exists()
