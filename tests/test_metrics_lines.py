"""A metrics line is strict JSON whatever the numbers (a learning rate past float32's range
included), and a peak rate that float32 cannot hold is refused before any work."""

import json
import math

import pytest

from dwlib.errors import InputError
from dwlib.train.config import TrainConfig
from dwlib.train.rundir import metric_line, parse_metric


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_rate_or_loss_is_written_as_strict_json(value):
    line = metric_line({"step": 3, "loss": value, "lr": value})
    rec = json.loads(line)  # strict: no Infinity or NaN tokens
    assert rec["lr"] is None and rec["loss"] is None and rec["nonfinite"] == str(value)
    back = parse_metric(line)
    assert math.isnan(back["loss"]) if math.isnan(value) else back["loss"] == value


def test_a_peak_rate_past_float32_is_refused_in_one_line():
    with pytest.raises(InputError, match=r"lr must be at most 3.403e\+38 .* got 1e\+39"):
        TrainConfig.from_dict({"lr": 1e39})
    assert TrainConfig.from_dict({"lr": 3e38}).optim.lr == 3e38  # large, finite in float32: trains and diverges


def _run_dir(tmp_path, eval_loss=4.5, train_loss=None):
    from dwlib.train.rundir import metric_line as line
    d = tmp_path / "run"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"depth": 1, "width": 16, "heads": 2, "seed": 0, "steps": 2,
                                               "eval_interval": 1}))
    (d / "metrics.jsonl").write_text("\n".join(line(r) for r in (
        {"step": 0, "eval_loss": 6.9}, {"step": 1, "loss": 6.0}, {"step": 1, "eval_loss": 5.0},
        {"step": 2, "loss": 5.0}, {"step": 2, "eval_loss": 4.5})) + "\n")
    (d / "result.json").write_text(json.dumps({
        "status": "completed", "diverged_step": None, "steps_done": 2, "eval_loss": eval_loss,
        "train_loss": 5.5 if train_loss is None else train_loss, "parameters": {"non_embedding": 3072},
        "tokens_seen": 10, "tokens_per_s": 1.0}))
    return d


@pytest.mark.parametrize("edit, field", [({"eval_loss": 1.234}, "eval_loss"), ({"train_loss": 5.4}, "train_loss")])
def test_a_summary_that_is_not_what_its_metrics_hold_is_not_a_result(tmp_path, edit, field):
    from dwlib.errors import StateError
    from dwlib.experiments.records import record
    assert record(_run_dir(tmp_path))["eval_loss"] == 4.5  # as written: mean of the last losses 6.0, 5.0 is 5.5
    with pytest.raises(StateError, match=f"result.json's {field} .* is not the .* its metrics.jsonl holds"):
        record(_run_dir(tmp_path, **edit))
