"""Transition budgets from sweep records: the rule, its uncertainty and the fit over depth."""

import math

import numpy as np
import pytest

from dwlib.experiments import transition as tr
from dwlib.viz import experiments as vx
from dwlib.viz import render as plots
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


def test_spread_across_depths_compares_depth_with_a_doubling_of_size():
    # Same loss curve for depths 2 and 4 (Kaplan's picture), depth 1 worse by 0.3 everywhere.
    f = lambda x: 5 - 0.5 * x  # noqa: E731  (0.5 nats per decade = 0.5 log10(2) = 0.1505 per doubling)
    recs = records({1: lambda x: f(x) + 0.3, 2: f, 4: f})
    deep_only = tr.spread_across_depths(recs, depths=[2, 4], points=3)
    assert all(r["spread"] == pytest.approx(0.0, abs=1e-12) for r in deep_only)
    assert deep_only[1]["per_doubling"] == pytest.approx(0.5 * math.log10(2))
    every = tr.spread_across_depths(recs, points=3)
    assert all(r["spread"] == pytest.approx(0.3) and r["best_depth"] in (2, 4) for r in every)


def test_charts_carry_the_pairs_and_transitions_for_the_static_page():

    f = {1: lambda x: 5 - 0.5 * x, 2: lambda x: 5 - 0.5 * x + 0.25 * (5.5 - x),
         4: lambda x: 5 - 0.5 * x + 0.25 * (5.5 - x) + 0.25 * (6.0 - x)}
    recs = records(f)
    results = tr.transitions(recs, n_boot=10)
    assert [t["status"] for t in results] == ["crossing", "crossing"]
    spec = plots.spec_json(vx.loss_chart(recs, results))
    assert '"name": "pair"' in spec and "[[1, 2], [2, 4]]" in spec
    assert f"{results[0]['budget']}" in spec  # the crossing the slider marks comes from transition()
    fit_spec = plots.spec_json(vx.transition_chart(results))
    assert '"mark": {"color": "black"' in fit_spec or "strokeDash" in fit_spec  # the fitted line is drawn
    no_fit = plots.spec_json(vx.transition_chart(results[:1]))
    assert "strokeDash" not in no_fit


def test_gap_trend_measures_the_closing_rate_and_extrapolates_it():
    # Gap 0.3 - 0.05 log2(N / 1e4): closes by 0.05 per doubling, reaches zero at N = 1e4 * 2^6.
    g = lambda x: 0.3 - 0.05 * (x - 4) / math.log10(2)  # noqa: E731
    recs = records({1: lambda x: 4.0, 2: lambda x: 4.0 + g(x)}, seeds=3)
    recs = [r for r in recs if r["budget"] <= 1e5]  # gap still positive at the largest budget
    t = tr.gap_trend(recs, 1, 2, n_boot=20)
    assert t["slope"] == pytest.approx(-0.05)
    assert t["slope_p16"] == pytest.approx(-0.05) and t["slope_p84"] == pytest.approx(-0.05)  # no seed noise
    assert t["closing_budget"] == pytest.approx(1e4 * 2 ** 6, rel=1e-6)
    assert t["seed_std"] == 0.0 and t["gap_in_se"] == float("inf")


def test_gap_trend_reports_noise_and_no_closing_for_a_growing_gap():
    growing = records({1: lambda x: 4.0, 2: lambda x: 4.0 + 0.1 * x}, seeds=4, noise=0.02)
    t = tr.gap_trend(growing, 1, 2, n_boot=50)
    assert t["slope"] > 0 and t["closing_budget"] is None
    assert 0.005 < t["seed_std"] < 0.05  # the injected seed noise, 0.02
    assert t["gap_in_se"] > 10  # a gap of about 0.55 against a standard error of about 0.014
    assert t["slope_p16"] < t["slope"] < t["slope_p84"]
    with pytest.raises(InputError, match="shallow depth must be below"):
        tr.gap_trend(growing, 2, 1)


def test_learning_rate_check_compares_the_gap_at_one_rate_and_at_each_depths_best():
    def rec(depth, lr, loss, seed=0):
        return {"depth": depth, "width": 8, "budget": 1e5, "seed": seed, "status": "completed",
                "eval_loss": loss, "config": {"lr": lr}}

    # depth 2 is best at 2e-3, depth 8 at 8e-3 (the edge of the range); at 2e-3 the gap is 0.3,
    # at each depth's best it is 0.05.
    recs = [rec(2, 1e-3, 3.9), rec(2, 2e-3, 3.70), rec(2, 2e-3, 3.72, seed=1), rec(2, 8e-3, 3.8),
            rec(8, 1e-3, 4.3), rec(8, 2e-3, 4.01), rec(8, 8e-3, 3.76)]
    t = tr.learning_rate_check(recs, 2, 8, reference_lr=2e-3)
    assert t["best_lr"] == {2: 2e-3, 8: 8e-3}
    assert t["losses"][2][2e-3] == pytest.approx(3.71)  # the mean over seeds
    assert t["gap_at_reference"] == pytest.approx(0.30) and t["gap_at_best"] == pytest.approx(0.05)
    assert t["best_at_edge"] == {2: False, 8: True}
    with pytest.raises(InputError, match="no completed run at learning rate 0.004"):
        tr.learning_rate_check(recs, 2, 8, reference_lr=4e-3)


def test_size_limited_drops_each_depths_budgets_from_its_first_rise():
    # depth 1 improves throughout; depth 2 gets worse at the largest budget (training-limited)
    recs = records({1: lambda x: 5 - 0.5 * x, 2: lambda x: 5 - 0.4 * x + (2.0 if x > 6.5 else 0.0)}, seeds=2)
    kept = tr.size_limited(recs)
    assert {(r["depth"], r["budget"]) for r in kept} == \
        {(1, b) for b in BUDGETS} | {(2, b) for b in BUDGETS[:-1]}
    assert tr.size_limited(kept) == kept  # nothing left to drop


def test_size_limited_ends_at_a_rise_in_the_middle_and_at_a_budget_with_no_finished_run():
    # a rise at 10^5, a fall after it: the rule ends the depth at the first rise
    bump = records({1: lambda x: 5 - 0.5 * x + (1.0 if 4.5 < x < 5.5 else 0.0)}, seeds=2)
    assert sorted({r["budget"] for r in tr.size_limited(bump)}) == BUDGETS[:1]
    # every seed diverged at 10^6: that budget and the next are left out
    hole = records({1: lambda x: 5 - 0.5 * x}, seeds=2)
    for r in hole:
        if r["budget"] == 1e6:
            r.update(status="diverged", eval_loss=None)
    assert sorted({r["budget"] for r in tr.size_limited(hole)}) == BUDGETS[:2]


def test_size_limited_tolerates_a_rise_within_seed_noise():
    # seeds spread by 0.07 at each budget; the mean rises by 0.01 from 10^4 to 10^5: noise, kept
    losses = {1e4: (3.00, 3.10), 1e5: (3.01, 3.11)}
    recs = [{"depth": 1, "width": 8 + i, "budget": n, "seed": s, "status": "completed", "eval_loss": v}
            for i, (n, vs) in enumerate(losses.items()) for s, v in enumerate(vs)]
    assert tr.size_limited(recs) == recs
    assert [r["budget"] for r in tr.size_limited(recs, tolerance=0.0)] == [1e4, 1e4]  # any rise ends it


def test_paired_gaps_compare_depths_within_a_seed():
    recs = [{"depth": L, "width": 8, "budget": n, "target_budget": n, "seed": s, "status": "completed",
             "eval_loss": 3.0 + 0.1 * (L == 2) + 0.01 * s - 0.2 * (n == 2e6)}
            for L in (1, 2) for n in (1e6, 2e6) for s in (0, 1)]
    recs.append({**recs[0], "seed": 5})  # a seed only the shallow depth has is left out
    rows = tr.paired_gaps(recs, 1, 2)
    assert [r["target_budget"] for r in rows] == [1e6, 2e6]
    assert all(set(r["gaps"]) == {0, 1} and r["mean"] == pytest.approx(0.1) for r in rows)
    assert rows[0]["budgets"] == {1: 1e6, 2: 1e6}


def test_late_improvement_reads_the_last_fifth_of_the_eval_curve():
    rec = {"eval_curve": [[0, 7.0], [40, 4.0], [80, 3.5], [90, 3.3], [100, 3.2]]}
    assert tr.late_improvement(rec) == pytest.approx(0.3)  # from step 80 to step 100
    assert tr.late_improvement(rec, fraction=0.5) == pytest.approx(0.3)  # first eval at or after step 50
