"""Choosing each shape's learning rate on the validation split, and the bootstrap interval of a
transition budget over seeds (pure functions, synthetic records)."""

import math

import numpy as np
import pytest

from dwlib.errors import InputError
from dwlib.experiments import selection
from dwlib.experiments import transition as tr


def run(depth, width, seed, lr, select_loss, status="completed", eval_loss=None):
    return {"depth": depth, "width": width, "seed": seed, "status": status, "config": {"lr": lr},
            "select_loss": select_loss if status == "completed" else None,
            "eval_loss": (select_loss + 0.5 if eval_loss is None else eval_loss) if status == "completed" else None}


def test_the_rate_with_the_lowest_mean_validation_loss_over_the_grid_seeds_is_chosen():
    recs = [run(2, 64, s, lr, v + 0.01 * s) for s in (0, 1) for lr, v in ((1e-3, 3.0), (2e-3, 2.9), (4e-3, 2.95))]
    recs.append(run(2, 64, 2, 1e-3, 1.0))  # a seed outside the grid seeds: it does not vote
    choice = selection.choose(recs, grid_seeds=(0, 1))
    assert choice[(2, 64)]["lr"] == 2e-3 and not choice[(2, 64)]["at_edge"]
    assert choice[(2, 64)]["losses"][1e-3] == pytest.approx(3.005)
    marked = selection.mark(recs, choice)
    assert [r["chosen"] for r in marked] == [False, True, False, False, True, False, False]
    assert {r["chosen_lr"] for r in marked} == {2e-3}
    assert len(selection.chosen_records(marked)) == 2
    # The comparisons read the held-out loss of the chosen rate's runs only.
    row = tr.loss_table([{**r, "budget": 12 * 2 * 64 ** 2} for r in marked])[0]
    assert row["seeds"] == 2 and row["mean"] == pytest.approx(np.mean([2.9 + 0.5, 2.91 + 0.5]))
    # The held-out loss plays no part: a rate that is best on the held-out split is not chosen for it.
    recs = [run(2, 64, 0, 1e-3, 3.0, eval_loss=1.0), run(2, 64, 0, 2e-3, 2.9, eval_loss=9.0)]
    assert selection.choose(recs, grid_seeds=(0,))[(2, 64)]["lr"] == 2e-3


def test_exclusion_rules_apply_to_every_shape_and_unfinished_grids_wait():
    recs = [run(1, 32, 0, 1e-3, 3.0), run(1, 32, 0, 2e-3, 2.5), run(1, 32, 1, 1e-3, 3.0),
            run(1, 32, 1, 2e-3, None, status="diverged")]
    assert selection.choose(recs, (0, 1))[(1, 32)]["lr"] == 1e-3  # 2e-3 has a diverged seed: no mean
    barred = selection.choose(recs, (0, 1), exclude=("diverged-rate",))[(1, 32)]
    assert barred["barred"] == [2e-3] and barred["lr"] == 1e-3 and barred["at_edge"]
    assert selection.choose(recs[:3], (0, 1)) == {}  # seed 1 has not finished at 2e-3: no choice yet
    all_bad = [run(1, 32, 0, lr, None, status="diverged") for lr in (1e-3, 2e-3)]
    assert selection.choose(all_bad, (0,), exclude=("diverged-rate",))[(1, 32)]["lr"] is None
    with pytest.raises(InputError, match="unknown exclusion rule"):
        selection.choose(recs, (0,), exclude=("looks-bad",))


BUDGETS = [1e4, 1e5, 1e6, 1e7]


def synthetic(seeds, noise, rng_seed=0):
    """Depth 1 and 2 losses whose deep-minus-shallow gap crosses zero at 10^5.5 exactly."""
    rng = np.random.default_rng(rng_seed)
    out = []
    for depth, loss in ((1, lambda x: 5 - 0.5 * x), (2, lambda x: 5 - 0.5 * x + 0.1 * (5.5 - x))):
        for n in BUDGETS:
            for s in range(seeds):
                out.append({"depth": depth, "width": round(math.sqrt(n / (12 * depth))), "budget": n, "seed": s,
                            "status": "completed", "eval_loss": loss(math.log10(n)) + noise * rng.standard_normal()})
    return out


def test_the_bootstrap_interval_covers_a_known_crossing_and_is_reproducible():
    recs = synthetic(seeds=4, noise=0.02)
    a = tr.transition_interval(recs, 1, 2, level=0.9, n_boot=400, seed=3)
    assert a == tr.transition_interval(recs, 1, 2, level=0.9, n_boot=400, seed=3)  # deterministic
    assert a["status"] == "crossing" and a["low"] < 10 ** 5.5 < a["high"] and a["min_seeds"] == 4
    assert a["low"] <= a["budget"] <= a["high"] and a["p_crossing"] > 0.9
    wider = tr.transition_interval(synthetic(seeds=4, noise=0.08), 1, 2, n_boot=400, seed=3)
    assert math.log(wider["high"] / wider["low"]) > 2 * math.log(a["high"] / a["low"])
    narrower = tr.transition_interval(recs, 1, 2, level=0.5, n_boot=400, seed=3)
    assert a["low"] <= narrower["low"] <= narrower["high"] <= a["high"]
    one_seed = tr.transition_interval(synthetic(seeds=1, noise=0.02), 1, 2, n_boot=50)
    assert one_seed["min_seeds"] == 1 and one_seed["low"] == one_seed["high"]  # no spread to resample
    with pytest.raises(InputError, match="level"):
        tr.transition_interval(recs, 1, 2, level=1.0)
