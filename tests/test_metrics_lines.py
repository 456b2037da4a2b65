"""A metrics line is strict JSON whatever the numbers (a learning rate past float32's range
included), and a peak rate that float32 cannot hold is refused before any work."""

import json
import math

import pytest

from dwlib.errors import InputError
from dwlib.train.checkpoint import metric_line, parse_metric
from dwlib.train.config import TrainConfig


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
