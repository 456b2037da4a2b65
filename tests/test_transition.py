"""Transition budgets from sweep records: the rule, its uncertainty and the fit over depth."""

import math

import numpy as np
import pytest

from dwlib import transition as tr
from dwlib.errors import InputError

BUDGETS = [1e4, 1e5, 1e6, 1e7]


def records(losses_by_depth, seeds=3, noise=0.0, rng_seed=0):
    """Synthetic sweep records: loss(depth, budget) from a function, plus seed noise."""
    rng = np.random.default_rng(rng_seed)
    out = []
    for depth, loss in losses_by_depth.items():
        for n in BUDGETS:
            width = round(math.sqrt(n / (12 * depth)))
            for s in range(seeds):
                out.append({"depth": depth, "width": width, "budget": n, "seed": s, "status": "completed",
                            "eval_loss": loss(math.log10(n)) + noise * rng.standard_normal()})
    return out


def test_crossing_is_located_by_linear_interpolation_in_log_budget():
    # x = log10 N. Deep = shallow + 0.25 (5.5 - x): worse below N = 10^5.5, better above.
    recs = records({1: lambda x: 5 - 0.5 * x, 2: lambda x: 5 - 0.5 * x + 0.25 * (5.5 - x)})
    t = tr.transition(recs, 1, 2, n_boot=50)
    assert t["status"] == "crossing"
    assert math.log10(t["budget"]) == pytest.approx(5.5, abs=1e-9)  # both curves are linear in log N
    assert t["p_crossing"] == 1.0 and t["budget_p50"] == pytest.approx(t["budget"])  # no seed noise
    assert t["gap_at_low"] > 0 > t["gap_at_high"]


def test_one_sided_and_reversed_pairs_give_no_budget():
    shallow_always = records({1: lambda x: 3.0, 2: lambda x: 3.1})
    assert tr.transition(shallow_always, 1, 2, n_boot=10)["status"] == "shallow wins"
    deep_always = records({1: lambda x: 3.0, 2: lambda x: 2.9})
    t = tr.transition(deep_always, 1, 2, n_boot=10)
    assert t["status"] == "deep wins" and t["budget"] is None and t["p_crossing"] == 0.0
    reversed_order = records({1: lambda x: 3.0, 2: lambda x: 3.0 + 0.1 * (x - 5.5)})
    assert tr.transition(reversed_order, 1, 2, n_boot=10)["status"] == "reversed"


def test_seed_noise_widens_the_bootstrap_interval():
    f = {1: lambda x: 5 - 0.5 * x, 2: lambda x: 5 - 0.5 * x + 0.1 * (5.5 - x)}
    quiet = tr.transition(records(f, seeds=4, noise=0.005), 1, 2, n_boot=300)
    noisy = tr.transition(records(f, seeds=4, noise=0.05), 1, 2, n_boot=300)
    width = lambda t: math.log10(t["budget_p84"]) - math.log10(t["budget_p16"])  # noqa: E731
    assert quiet["budget_p16"] <= quiet["budget"] <= quiet["budget_p84"]
    assert width(noisy) > 3 * width(quiet)
    assert noisy["p_crossing"] <= 1.0


def test_loss_table_leaves_diverged_runs_out_of_the_mean():
    recs = records({1: lambda x: 4.0}, seeds=2)
    recs.append({**recs[0], "seed": 9, "status": "diverged", "eval_loss": None})
    row = tr.loss_table(recs)[0]
    assert row["seeds"] == 2 and row["diverged"] == 1 and row["mean"] == pytest.approx(4.0)


def test_fit_recovers_an_exponential_transition_law():
    # Transition of pair (L, 2L) at N_t = exp(alpha + beta * midpoint): build curves that cross there.
    alpha, beta = math.log(1e4), 0.4
    depths = [1, 2, 4, 8]
    def crossing_x(s, d):
        return (alpha + beta * (s + d) / 2) / math.log(10)
    # Each deeper curve is its shallower neighbour plus 0.2 (x_c - x), crossing it at x_c.
    funcs, base = {}, lambda x: 4 - 0.3 * x
    funcs[1] = base
    for s, d in zip(depths, depths[1:]):
        xc, prev = crossing_x(s, d), funcs[s]
        funcs[d] = lambda x, prev=prev, xc=xc: prev(x) + 0.2 * (xc - x)
    global BUDGETS
    old, BUDGETS = BUDGETS, list(np.logspace(3, 8, 21))
    try:
        recs = records(funcs, seeds=1)
    finally:
        BUDGETS = old
    results = tr.transitions(recs, n_boot=5)
    assert [t["status"] for t in results] == ["crossing"] * 3
    fit = tr.fit_transitions(results)
    assert fit.beta == pytest.approx(beta, rel=1e-6) and fit.alpha == pytest.approx(alpha, rel=1e-6)
    assert tr.fit_transitions(results[:1]) is None


def test_bad_pairs_are_input_errors():
    recs = records({1: lambda x: 3.0, 2: lambda x: 3.0})
    with pytest.raises(InputError, match="shallow depth must be below"):
        tr.transition(recs, 2, 1)
    with pytest.raises(InputError, match="at least two measured budgets"):
        tr.transition(recs, 1, 4)
