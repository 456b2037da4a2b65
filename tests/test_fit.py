"""Tests of dwlib.core.fit: the authors' fit of the optimal width in depth, the optimal depth
for a budget (Newton's method), practical shapes, verdicts and their one-line input errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dwlib.core import fit as g
from dwlib.errors import InputError

# ------------------------------------------------------------------------------------------
# The fit: hand-derived values, round trips, the Newton solver
# ------------------------------------------------------------------------------------------


def test_optimal_width_hand_derived():
    # d_x(L) = exp(5.039) * exp(0.0555 L)
    assert g.optimal_width(0) == pytest.approx(math.exp(5.039), rel=1e-12)  # ~154.3
    assert g.optimal_width(100) == pytest.approx(math.exp(5.039) * math.exp(5.55), rel=1e-12)
    assert 39_695 < g.optimal_width(100) < 39_696
    # BloombergGPT's stated use of the fit: L = 70 -> D = 7510 (Wu et al. 2023)
    assert round(g.optimal_width(70)) == 7510


def test_budget_for_depth_hand_derived():
    L = 80
    d = math.exp(5.039 + 0.0555 * L)
    assert g.budget_for_depth(L) == pytest.approx(12 * L * d * d, rel=1e-12)
    assert g.budget_for_depth(0) == 0.0


def test_budget_shape_budget_round_trip():
    budgets = np.logspace(6, 15, 40)
    shape = g.optimal_shape(budgets)
    back = 12 * shape["depth"] * shape["width"] ** 2
    np.testing.assert_allclose(back, budgets, rtol=1e-10)
    np.testing.assert_allclose(g.budget_for_depth(shape["depth"]), budgets, rtol=1e-10)


def test_depth_width_depth_round_trip():
    depths = np.linspace(0.5, 300, 50)
    np.testing.assert_allclose(g.depth_for_width(g.optimal_width(depths)), depths, rtol=1e-12)
    for L in (1, 12, 96, 118):  # and depth -> budget -> depth
        assert g.optimal_depth(g.budget_for_depth(L)) == pytest.approx(L, rel=1e-10)


@pytest.mark.parametrize("fit", [g.AUTHORS_FIT, g.Fit(4.0, 0.08), g.Fit(6.5, 0.03)])
def test_newton_solver_matches_lambert_w(fit):
    """L* = W(2b N e^(-2a) / 12) / (2b), the closed form through the Lambert function, computed
    independently of the Newton iteration (from N = 12 L e^(2a + 2bL))."""
    special = pytest.importorskip("scipy.special")
    a, b = fit.log_width_intercept, fit.depth_slope
    budgets = np.logspace(0, 16, 161)
    closed = special.lambertw(2 * b * budgets * math.exp(-2 * a) / 12).real / (2 * b)
    np.testing.assert_allclose(g.optimal_depth(budgets, fit), closed, rtol=1e-12)


def test_optimal_depth_vectorised_and_extreme_budgets():
    out = g.optimal_depth([1.0, 1e3, 1e12, 1e30])
    assert isinstance(out, np.ndarray) and out.shape == (4,)
    assert np.all(np.isfinite(out)) and np.all(out > 0)
    np.testing.assert_allclose(g.budget_for_depth(out), [1.0, 1e3, 1e12, 1e30], rtol=1e-9)
    assert isinstance(g.optimal_depth(1e9), float)


def test_monotone_in_budget():
    budgets = np.logspace(5, 14, 200)
    shape = g.optimal_shape(budgets)
    assert np.all(np.diff(shape["depth"]) > 0)
    assert np.all(np.diff(shape["width"]) > 0)
    # logarithmic in size: from 1e9 to 1e12 (x1000) depth grows by far less than x2
    assert g.optimal_depth(1e12) / g.optimal_depth(1e9) < 2.5


def test_other_fit_is_used():
    fit = g.Fit(4.0, 0.1)
    assert g.optimal_width(10, fit=fit) == pytest.approx(math.exp(5.0))
    assert g.optimal_depth(g.budget_for_depth(30, fit=fit), fit=fit) == pytest.approx(30)


def test_optimal_curve_band_is_the_verdicts_rule():
    c = g.optimal_curve((1e6, 1e13), 50)
    assert c["budget"][0] == pytest.approx(1e6) and c["budget"][-1] == pytest.approx(1e13)
    np.testing.assert_allclose(12 * c["depth"] * c["width"] ** 2, c["budget"], rtol=1e-10)
    tol = np.maximum(0.1 * c["depth"], 1.0)
    np.testing.assert_allclose(c["depth_high"] - c["depth"], tol)
    assert np.all(c["depth_low"] >= 0) and np.all(np.diff(c["depth"]) > 0)
    # the band is exactly the verdict's "near optimal": its edges sit on the rule's boundary
    for N, hi in zip(c["budget"][::10], c["depth_high"][::10]):
        assert g.verdict(hi * 0.999, math.sqrt(N / (12 * hi * 0.999)))["verdict"] == "near optimal"
        assert g.verdict(hi * 1.01, math.sqrt(N / (12 * hi * 1.01)))["verdict"] == "too deep"


# ------------------------------------------------------------------------------------------
# Practical shapes
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("head_size", [64, 128, 256])
def test_practical_shape_valid_and_close(head_size):
    for N in np.logspace(8, 13, 26):
        s = g.practical_shape(N, head_size=head_size)
        L_star = g.optimal_depth(N)
        assert s["width"] % head_size == 0 and s["heads"] == s["width"] // head_size
        assert s["budget"] == 12 * s["depth"] * s["width"] ** 2
        assert abs(s["depth"] - L_star) <= 0.5
        # width rounded to the nearest head multiple: |d - d_c| <= h/2, so the budget is within
        # a factor (1 +- h/(2 d_c))^2 of N, where d_c spends N exactly at this depth.
        d_c = math.sqrt(N / (12 * s["depth"]))
        assert d_c >= head_size / 2
        lo, hi = (1 - head_size / (2 * d_c)) ** 2, (1 + head_size / (2 * d_c)) ** 2
        assert lo <= s["budget"] / N <= hi
        assert s["verdict"] == "near optimal"


def test_practical_shape_at_gpt3_scale():
    s = g.practical_shape(175e9)
    assert (s["depth"], s["width"], s["heads"]) == (81, 13440, 105)
    assert s["budget"] / 175e9 == pytest.approx(1, abs=0.01)


def test_nearby_shapes():
    near = g.nearby_shapes(175e9, head_size=128, span=2)
    assert [s["depth"] for s in near] == [79, 80, 81, 82, 83]
    for s in near:
        assert s["width"] % 128 == 0
        assert abs(s["budget"] / 175e9 - 1) < 0.02
    # widths shrink (weakly) as depth grows at a fixed budget
    assert all(a["width"] >= b["width"] for a, b in zip(near, near[1:]))


def test_nearby_shapes_small_budget_keeps_half_a_head():
    N, h = 2e5, 128
    near = g.nearby_shapes(N, head_size=h, span=5)
    # depth L is listed only while d_c = sqrt(N / 12L) >= h/2: L <= N / (12 (h/2)^2) = 4.07
    assert [s["depth"] for s in near] == [1, 2, 3, 4]
    for s in near:
        d_c = math.sqrt(N / (12 * s["depth"]))
        assert s["budget"] / N <= (1 + h / (2 * d_c)) ** 2 <= 4


def test_width_for_depth():
    r = g.width_for_depth(70, head_size=128)
    assert r["optimal_width"] == pytest.approx(math.exp(5.039 + 0.0555 * 70))
    assert r["width"] == 7552 and r["heads"] == 59
    assert r["budget"] == pytest.approx(12 * 70 * r["optimal_width"] ** 2)


# ------------------------------------------------------------------------------------------
# Verdicts
# ------------------------------------------------------------------------------------------


def test_verdict_clear_cases():
    v = g.verdict(96, 12288)  # GPT-3 175B
    assert v["verdict"] == "too deep"
    assert v["budget"] == 12 * 96 * 12288 ** 2
    assert 80 < v["optimal_depth"] < 81 and v["depth_ratio"] > 1.15 and v["width_ratio"] < 1
    v = g.verdict(24, 2048)  # GPT-3 XL
    assert v["verdict"] == "too shallow" and v["depth_ratio"] < 0.65 and v["width_ratio"] > 1
    for N in (1e8, 1e10, 1e12):  # the fit's own optimum
        L = g.optimal_depth(N)
        v = g.verdict(L, g.optimal_width(L))
        assert v["verdict"] == "near optimal"
        assert v["depth_ratio"] == pytest.approx(1) and v["width_ratio"] == pytest.approx(1)


def _at_budget(N, L, **kw):
    """The verdict on depth L at a fixed budget N (width sqrt(N / 12L))."""
    return g.verdict(L, math.sqrt(N / (12 * L)), **kw)["verdict"]


def test_verdict_tolerance_boundaries():
    L_star = g.optimal_depth(1e11)
    assert _at_budget(1e11, L_star * 1.09) == "near optimal"
    assert _at_budget(1e11, L_star * 1.11) == "too deep"
    assert _at_budget(1e11, L_star * 0.91) == "near optimal"
    assert _at_budget(1e11, L_star * 0.89) == "too shallow"
    assert _at_budget(1e11, L_star * 1.11, rel_tol=0.2) == "near optimal"
    # one-layer floor: small models are not judged on fractions of a layer
    L_small = g.optimal_depth(1e6)
    assert L_small < 10
    assert _at_budget(1e6, L_small + 0.9) == "near optimal"
    assert _at_budget(1e6, L_small + 1.1) == "too deep"


def test_verdict_heads():
    v = g.verdict(96, 12288, head_size=128)
    assert v["heads"] == 96 and v["head_size"] == 128


# ------------------------------------------------------------------------------------------
# Bad input: one line naming the failed condition
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: g.optimal_depth(-5), "budget must be > 0, got -5"),
    (lambda: g.optimal_depth(0), "budget must be > 0, got 0"),
    (lambda: g.optimal_depth(float("inf")), "budget must be finite"),
    (lambda: g.optimal_depth([1e9, float("nan")]), "budget must be finite, got nan"),
    (lambda: g.optimal_depth("many"), "budget must be a number"),
    (lambda: g.optimal_width(-1), "depth must be >= 0, got -1"),
    (lambda: g.budget_for_depth(float("nan")), "depth must be finite"),
    (lambda: g.depth_for_width(100), "width must be >= 154.3"),
    (lambda: g.verdict(0, 1024), "depth must be > 0, got 0"),
    (lambda: g.verdict(12, -768), "width must be > 0, got -768"),
    (lambda: g.verdict(12, 770, head_size=64), "width 770 is not divisible by head_size 64"),
    (lambda: g.verdict(40, 5140, head_size=128), "not divisible by head_size 128"),
    (lambda: g.practical_shape(1e9, head_size=0), "head_size must be > 0, got 0"),
    (lambda: g.practical_shape(1e9, head_size=-64), "head_size must be > 0"),
    (lambda: g.practical_shape(1e9, head_size=1.5), "head_size must be an integer"),
    (lambda: g.practical_shape(1e3), "below 12 * head_size^2 = 196608"),
    (lambda: g.nearby_shapes(1e9, span=-1), "span must be an integer from 0 to 1000"),
    (lambda: g.optimal_curve((1e9, 1e6)), "budget_range must be increasing"),
    (lambda: g.optimal_curve((1e6, 1e9), 1), "points must be an integer >= 2"),
    (lambda: g.Fit(5.0, 0.0), "depth_slope must be a number > 0"),
    (lambda: g.Fit(float("nan"), 0.05), "log_width_intercept must be a number from -50"),
])
def test_bad_input(call, message):
    with pytest.raises(InputError, match=re.escape(message)) as err:
        call()
    assert "\n" not in str(err.value)


# ------------------------------------------------------------------------------------------
# How precisely the fit is known (dwlib.core.fit_uncertainty)
# ------------------------------------------------------------------------------------------

from dwlib.core import fit_uncertainty as fu  # noqa: E402


def test_printed_constants_are_the_fit():
    assert float(fu.PRINTED["intercept"]) == g.AUTHORS_FIT.log_width_intercept
    assert float(fu.PRINTED["slope"]) == g.AUTHORS_FIT.depth_slope


@pytest.mark.parametrize("text,lo,hi", [("0.0555", 0.05545, 0.05555), ("5.039", 5.0385, 5.0395),
                                         ("92", 91.5, 92.5), ("1.2e3", 1150.0, 1250.0)])
def test_printed_interval_is_half_a_unit_in_the_last_digit(text, lo, hi):
    assert fu.printed_interval(text) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_printed_interval_rejects_non_numbers():
    for bad in ("abc", "nan", "inf"):
        with pytest.raises(InputError):
            fu.printed_interval(bad)


def test_rounding_box_brackets_every_fit_in_the_box():
    box = fu.rounding_box((1e9, 1e12))
    rng = np.random.default_rng(0)
    for _ in range(20):  # any constants the printing allows give an optimum inside the range
        a, b = rng.uniform(*box["intercept"]), rng.uniform(*box["slope"])
        for N, (lo, hi) in zip(box["budgets"], box["optimal_depth_range"]):
            assert lo <= float(g.optimal_depth(N, g.Fit(a, b))) <= hi
    assert box["width_factor"][0] < math.exp(0.0555) < box["width_factor"][1]


def test_slope_for_optimum_round_trips_through_optimal_depth():
    b = fu.slope_for_optimum(1e12, 92)
    assert float(g.optimal_depth(1e12, g.Fit(g.LOG_WIDTH_INTERCEPT, b))) == pytest.approx(92, rel=1e-10)
    assert fu.slope_for_optimum(float(g.budget_for_depth(50)), 50) == pytest.approx(g.DEPTH_SLOPE, rel=1e-12)
    assert 0.0572 < b < 0.0574  # the authors' 92 layers at 1e12 need a steeper slope than 0.0555


def test_threshold_against_fit():
    t = fu.threshold_against_fit([1, 4, 5, 6, 48, 1e4])
    np.testing.assert_allclose(t["log3_width"], np.log(g.optimal_width(t["depth"])) / math.log(3), rtol=1e-12)
    L = t["crossing_depth"]
    assert L == pytest.approx(math.log(float(g.optimal_width(L))) / math.log(3), rel=1e-12)  # L = log3 d_x(L)
    assert list(t["above_threshold"]) == [False, False, True, True, True, True]
    assert t["ratio"][-1] == pytest.approx(t["limit_ratio"], rel=1e-2)  # tends to ln 3 / b
    with pytest.raises(InputError):
        fu.threshold_against_fit([6], g.Fit(5.0, 1.2))
