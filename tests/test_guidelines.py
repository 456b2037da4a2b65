"""Tests of dwlib.core.fit: the depth-to-width fit, practical shapes, verdicts, fits from
transitions, the GPT-3 table, real-model shapes and the ``dwlib advise`` command."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import dwlib.cli as cli
from dwlib.core import fit as g
from dwlib.viz import render as plots
from dwlib.errors import InputError

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"

# ------------------------------------------------------------------------------------------
# The fit: hand-derived values, round trips, monotonicity
# ------------------------------------------------------------------------------------------


def test_fit_constants_are_the_authors():
    assert g.AUTHORS_FIT == g.Fit(5.039, 0.0555)
    assert g.Fit().log_width_intercept == 5.039 and g.Fit().depth_slope == 0.0555


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


def test_verdict_tolerance_rule():
    L_star = g.optimal_depth(1e11)
    # at a fixed budget N, depth L has width sqrt(N / 12L)
    def at(L):
        return g.verdict(L, math.sqrt(1e11 / (12 * L)))
    assert at(L_star * 1.09)["verdict"] == "near optimal"
    assert at(L_star * 1.11)["verdict"] == "too deep"
    assert at(L_star * 0.91)["verdict"] == "near optimal"
    assert at(L_star * 0.89)["verdict"] == "too shallow"
    assert g.verdict(L_star * 1.11, math.sqrt(1e11 / (12 * L_star * 1.11)),
                     rel_tol=0.2)["verdict"] == "near optimal"
    # one-layer floor: small models are not judged on fractions of a layer
    L_small = g.optimal_depth(1e6)
    assert L_small < 10
    L = L_small + 0.9
    assert g.verdict(L, math.sqrt(1e6 / (12 * L)))["verdict"] == "near optimal"


def test_verdict_heads():
    v = g.verdict(96, 12288, head_size=128)
    assert v["heads"] == 96 and v["head_size"] == 128
    with pytest.raises(InputError, match="not divisible by head_size 128"):
        g.verdict(40, 5140, head_size=128)


# ------------------------------------------------------------------------------------------
# Fit from transitions
# ------------------------------------------------------------------------------------------


def test_fit_from_transitions_recovers_exact_fit():
    true = g.Fit(4.2, 0.071)
    depths = np.array([6, 12, 18, 24, 30, 36, 48], dtype=float)
    tf = g.fit_from_transitions(depths, g.budget_for_depth(depths, fit=true))
    assert tf.fit.log_width_intercept == pytest.approx(4.2, abs=1e-9)
    assert tf.fit.depth_slope == pytest.approx(0.071, abs=1e-11)
    assert tf.depth_slope_se == pytest.approx(0, abs=1e-9)
    # the log-budget slope is ~ 2b + 1/L over the range (the log L term)
    assert 2 * 0.071 < tf.beta < 2 * 0.071 + 1 / 6
    # usable everywhere a Fit is
    assert g.optimal_depth(g.budget_for_depth(30, fit=true), fit=tf.fit) == pytest.approx(30)
    assert set(tf.to_dict()) >= {"alpha", "beta", "alpha_se", "beta_se", "fit"}


def test_fit_from_transitions_with_noise():
    rng = np.random.default_rng(0)
    true = g.AUTHORS_FIT
    depths = np.repeat([6.0, 12, 18, 24, 30, 36, 48], 3)
    noisy = g.budget_for_depth(depths, fit=true) * np.exp(rng.normal(0, 0.1, depths.size))
    tf = g.fit_from_transitions(depths, noisy)
    assert abs(tf.fit.depth_slope - 0.0555) < 4 * tf.depth_slope_se
    assert abs(tf.fit.log_width_intercept - 5.039) < 4 * tf.log_width_intercept_se
    assert 0 < tf.depth_slope_se < 0.01


def test_fit_from_transitions_two_points_no_se():
    tf = g.fit_from_transitions([12, 24], [1e8, 1e9])
    assert math.isnan(tf.beta_se) and tf.n == 2


@pytest.mark.parametrize("depths, budgets, message", [
    ([12], [1e8], "at least 2 transitions"),
    ([12, 24], [1e8], "same length"),
    ([12, 12], [1e8, 2e8], "2 distinct depths"),
    ([12, -24], [1e8, 1e9], "depths must be > 0"),
    ([12, 24], [1e8, 0], "transition_budgets must be > 0"),
    ([12, 24], [1e8, float("nan")], "transition_budgets must be finite"),
    ([12, 24], [1e10, 1e8], "depth slope must be > 0"),
])
def test_fit_from_transitions_bad_input(depths, budgets, message):
    with pytest.raises(InputError, match=re.escape(message)):
        g.fit_from_transitions(depths, budgets)


# ------------------------------------------------------------------------------------------
# Bad input
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
    (lambda: g.practical_shape(1e9, head_size=0), "head_size must be > 0, got 0"),
    (lambda: g.practical_shape(1e9, head_size=-64), "head_size must be > 0"),
    (lambda: g.practical_shape(1e9, head_size=1.5), "head_size must be an integer"),
    (lambda: g.practical_shape(1e3), "below 12 * head_size^2 = 196608"),
    (lambda: g.Fit(5.0, 0.0), "depth_slope must be finite and > 0"),
    (lambda: g.Fit(float("nan"), 0.05), "log_width_intercept must be finite"),
    (lambda: g.parse_budget("-5"), "budget must be > 0"),
])
def test_bad_input(call, message):
    with pytest.raises(InputError, match=re.escape(message)) as err:
        call()
    assert "\n" not in str(err.value)


def test_parse_budget():
    assert g.parse_budget("175e9") == 175e9
    assert g.parse_budget("175B") == 175e9
    assert g.parse_budget("1T") == 1e12
    assert g.parse_budget("350M") == 350e6


# ------------------------------------------------------------------------------------------
# GPT-3, 1T projection, real models
# ------------------------------------------------------------------------------------------


def test_gpt3_table():
    rows = g.gpt3_table()
    assert [r["name"].removeprefix("GPT-3 ") for r in rows] == [
        "Small", "Medium", "Large", "XL", "2.7B", "6.7B", "13B", "175B"]
    for r in rows:
        assert r["budget"] == 12 * r["depth"] * r["width"] ** 2
        assert r["suggested_width"] % 128 == 0
        # the non-embedding count 12 L d^2 is below the nominal size, and close to it at scale
        assert 0.6 * r["params"] < r["budget"] < 1.05 * r["params"]
    # the authors' summary: up to ~10B too shallow, 175B too deep
    assert [r["verdict"] for r in rows[:-1]] == ["too shallow"] * 7
    assert rows[-1]["verdict"] == "too deep"
    assert (rows[0]["suggested_depth"], round(rows[0]["optimal_width"])) == (23, 554)
    assert rows[-1]["suggested_depth"] == 80


def test_trillion_projection():
    p = g.trillion_projection()
    assert 94 < p["optimal_depth"] < 95.5
    assert 29_000 < p["optimal_width"] < 30_500  # "30K"
    assert p["authors_budget"] == 12 * 92 * 30_000 ** 2
    assert p["authors_verdict"] == "near optimal"
    assert 0.95 < p["authors_depth_ratio"] < 1.0
    # counting a 50K-token embedding in the 1T changes the optimal depth by < 0.1 layer
    assert abs(p["if_total_with_embedding"]["optimal_depth"] - p["optimal_depth"]) < 0.1


def test_models_json_and_bibliography():
    models = g.load_models()
    bib = BIB.read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    assert {"kaplan2020scaling", "levine2020depth", "brown2020language"} <= keys
    names = [m["name"] for m in models]
    assert len(names) == len(set(names)) >= 20
    for m in models:
        assert m["source"] in keys, m["name"]
        assert isinstance(m["depth"], int) and isinstance(m["width"], int) and m["heads"] > 0
        assert m["budget"] == 12 * m["depth"] * m["width"] ** 2
        assert m["verdict"] in {"too shallow", "near optimal", "too deep"}
    by = {m["name"]: m for m in models}
    assert "note" in by["T5-11B"] and "poor description" in by["T5-11B"]["note"]
    assert (by["PaLM-540B"]["depth"], by["PaLM-540B"]["width"]) == (118, 18432)
    # designed with the fit: near optimal
    assert by["BloombergGPT"]["verdict"] == "near optimal"
    assert by["Jurassic-1 Jumbo"]["verdict"] == "near optimal"
    assert by["OPT-175B"]["verdict"] == "too deep"


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------


@pytest.fixture
def advise(monkeypatch, capsys):
    """Run ``dwlib advise ARGS`` through dwlib.cli.main with only this module's commands (so
    the test does not depend on other modules' subcommands); return (status, out, err)."""
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("dwlib.core.fit",))

    def run(*argv):
        try:
            status = cli.main(["advise", *argv])
        except SystemExit as exit_:  # argparse errors
            status = exit_.code
        out, err = capsys.readouterr()
        return status, out, err
    return run


def test_cli_budget(advise):
    status, out, err = advise("175e9")
    assert status == 0 and err == ""
    assert "depth 81, width 13440 (105 heads of 128)" in out
    assert "nearby practical shapes" in out
    status, out, _ = advise("175e9", "--json", "--head-size", "64")
    data = json.loads(out)
    assert status == 0 and data["suggested"]["width"] % 64 == 0
    assert len(data["nearby"]) == 5


def test_cli_depth(advise):
    status, out, _ = advise("--depth", "70")
    assert status == 0 and "optimal width 7510" in out
    status, out, _ = advise("--depth", "70", "--json")
    assert json.loads(out)["optimal_width"] == pytest.approx(7510.07, abs=0.01)


def test_cli_verdict(advise):
    status, out, _ = advise("--depth", "96", "--width", "12288")
    assert status == 0 and "too deep" in out
    status, out, _ = advise("--depth", "96", "--width", "12288", "--head-size", "128", "--json")
    data = json.loads(out)
    assert data["verdict"] == "too deep" and data["heads"] == 96


@pytest.mark.parametrize("argv, message", [
    (("-5",), "budget must be > 0"),
    (("0",), "budget must be > 0"),
    (("lots",), "budget must be a number"),
    (("nan",), "budget must be finite"),
    (("--width", "100"), "--width needs --depth"),
    ((), "give a budget"),
    (("1e9", "--depth", "12"), "not both"),
    (("--depth", "0"), "depth must be > 0"),
    (("--depth", "40", "--width", "5140", "--head-size", "128"), "not divisible by head_size"),
    (("1e9", "--head-size", "0"), "--head-size must be > 0"),
    (("--depth", "2.5"), "invalid int value"),
])
def test_cli_errors(advise, argv, message):
    status, out, err = advise(*argv)
    assert status == 2
    assert out == ""
    assert err.startswith("dwlib advise: error: ") and message in err
    assert err.count("\n") == 1


# ------------------------------------------------------------------------------------------
# Charts, the advisor and its widget (the book's "Optimal depth and width" chapter)
# ------------------------------------------------------------------------------------------

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "guidelines.ipynb"


class _Datum:
    """Attribute access to a dict, as ``datum.x`` in a Vega expression."""

    def __init__(self, values):
        self.__dict__["values"] = values

    def __getattr__(self, name):
        return self.values[name]


def _eval_vega(exprs, param, value):
    """Evaluate the advisor's (field, expression) pairs as Vega would, in Python."""
    datum = {}
    ns = {"datum": _Datum(datum), param: value, "log": math.log, "exp": math.exp,
          "pow": math.pow, "sqrt": math.sqrt, "min": min, "max": max,
          "round": lambda x: math.floor(x + 0.5)}  # JavaScript's Math.round
    for field, expr in exprs:
        datum[field] = eval(expr, {"__builtins__": {}}, ns)  # noqa: S307 (our own strings)
    return datum


@pytest.mark.parametrize("fit", [g.AUTHORS_FIT, g.Fit(4.0, 0.08), g.Fit(6.5, 0.03)])
def test_advisor_expressions_match_the_library(fit):
    exprs = g.advisor_expressions(fit, head_size=128)
    assert [f for f, _ in exprs][:3] == ["budget", "c", "u0"]
    for log_n in np.arange(6.0, 13.01, 0.37):
        d = _eval_vega(exprs, "log10_budget", log_n)
        N = 10 ** log_n
        assert d["budget"] == pytest.approx(N, rel=1e-12)
        assert d["depth"] == pytest.approx(g.optimal_depth(N, fit), rel=1e-10)
        assert d["width"] == pytest.approx(g.optimal_width(d["depth"], fit), rel=1e-10)
        p = g.practical_shape(N, head_size=128, fit=fit)
        assert (d["practical_depth"], d["practical_width"], d["heads"]) == (
            p["depth"], p["width"], p["heads"])


def test_advisor_expressions_take_constants_from_the_fit():
    fit = g.Fit(4.25, 0.0625)
    text = " ".join(e for _, e in g.advisor_expressions(fit, head_size=64, param="p"))
    assert repr(4.25) in text and repr(0.0625) in text and "64 *" in text
    assert "5.039" not in text and "0.0555" not in text
    assert "pow(10, p)" in text
    assert len(g.advisor_expressions(steps=3)) == len(g.advisor_expressions(steps=8)) - 5
    with pytest.raises(InputError, match="steps"):
        g.advisor_expressions(steps=0)
    with pytest.raises(InputError, match="head_size"):
        g.advisor_expressions(head_size=0)


def test_optimal_curve():
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
    with pytest.raises(InputError, match="increasing"):
        g.optimal_curve((1e9, 1e6))
    with pytest.raises(InputError, match="points"):
        g.optimal_curve((1e6, 1e9), 1)


def test_models_chart():
    from dwlib.viz import render as plots

    models = g.load_models() + g.gpt3_table()
    chart = g.models_chart(models)
    spec = chart.to_dict()
    assert plots.spec_json(g.models_chart(models)) == plots.spec_json(chart)  # deterministic
    layers = spec["layer"]
    assert [lay["mark"]["type"] for lay in layers] == ["area", "line", "point", "text", "text"]
    points = spec["datasets"][layers[2]["data"]["name"]]
    names = " / ".join(p["name"] for p in points)
    for m in models:  # every model drawn (same shapes merged into one point)
        assert m["name"] in names
    assert len(points) == len({(m["depth"], m["width"]) for m in models})
    merged = next(p for p in points if (p["depth"], p["width"]) == (96, 12288))
    assert merged["name"] == "OPT-175B / GPT-3 175B" and merged["verdict"] == "too deep"
    assert "zhang2022opt" in merged["source"] and "brown2020language" in merged["source"]
    color = layers[2]["encoding"]["color"]
    assert color["scale"]["domain"] == ["too shallow", "near optimal", "too deep"]
    assert {t["field"] for t in layers[2]["encoding"]["tooltip"]} >= {
        "name", "depth", "width", "size", "optimal_depth", "verdict", "source"}
    assert layers[2]["encoding"]["x"]["scale"]["type"] == "log"
    # labels: at most two names per point, each left or right of its point
    assert all(p["label"].count(" / ") <= 1 and p["align"] in ("left", "right") for p in points)
    assert next(p for p in points if p["depth"] == 12)["label"] == "BERT-base / GPT-2 Small +1"


def test_place_labels_avoids_overlaps():
    # three points in a row, close together: the labels must not overlap each other
    xs, ys = [100, 104, 108], [100, 100, 100]
    places = plots.place_labels(xs, ys, ["aaaaaaaa"] * 3, 400, 300)
    boxes = []
    for x, y, (align, dx, dy) in zip(xs, ys, places):
        w = 0.56 * 9 * 8
        x0 = x + dx if align == "left" else x + dx - w
        boxes.append((x0, y + dy - 5.5, x0 + w, y + dy + 5.5))
    for i in range(3):
        for j in range(i):
            a, b = boxes[i], boxes[j]
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])
    # a point at the right edge gets its label on the left
    assert plots.place_labels([395], [150], ["a long label"], 400, 300)[0][0] == "right"


def test_models_chart_default_models_and_other_fit():
    chart = g.models_chart()  # load_models()
    points = [d for d in chart.to_dict()["datasets"].values() if "verdict" in d[0]][0]
    assert any(p["name"] == "PaLM-540B" for p in points)
    # the colours follow the fit passed in, not the verdicts load_models() computed
    other = g.Fit(9.0, 0.01)
    flat = g.models_chart(g.load_models(), fit=other).to_dict()
    points = [d for d in flat["datasets"].values() if "verdict" in d[0]][0]
    for p in points:
        assert p["verdict"] == g.verdict(p["depth"], p["width"], fit=other)["verdict"]
    assert {p["verdict"] for p in points} != {m["verdict"] for m in g.load_models()}


def test_advisor_chart_spec():
    from dwlib.viz import render as plots

    fit = g.Fit(4.5, 0.06)
    chart = g.advisor_chart(fit=fit, models=g.load_models(), budget=1e9)
    spec = chart.to_dict()
    again = g.advisor_chart(fit=fit, models=g.load_models(), budget=1e9)
    assert plots.spec_json(chart) == plots.spec_json(again)  # deterministic
    (param,) = spec["params"]
    assert param["name"] == "log10_budget" and param["value"] == 9.0
    assert param["bind"]["input"] == "range"
    assert (param["bind"]["min"], param["bind"]["max"]) == (6.0, 13.0)
    text = json.dumps(spec)
    for _, expr in g.advisor_expressions(fit, 128, "log10_budget"):
        assert json.dumps(expr)[1:-1] in text  # the computation is in the page
    assert "5.039" not in text  # constants from the fit passed in, not the authors'
    assert len(spec["vconcat"]) == 2
    with pytest.raises(InputError, match="budget_range"):
        g.advisor_chart(budget=1e14)


def test_advisor_html():
    html = g.advisor_html(175e9)
    best = g.practical_shape(175e9)
    assert f"<b>{best['depth']} layers of width {best['width']:,}</b>" in html
    assert html.count("<tr>") == 1 + len(g.nearby_shapes(175e9))
    assert f"<td><b>{best['depth']}</b></td>" in html
    assert "near optimal" in html
    small = g.advisor_html(1e6, head_size=64)
    assert "64" in small and "<table" in small
    err = g.advisor_html(1e3)
    assert 'class="dw-advisor-error"' in err and "12 * head_size^2" in err
    assert g.advisor_html(175e9, fit=g.Fit(4.0, 0.08)) != html


def test_advisor_widget_updates():
    w = g.advisor_widget(budget=1e9, head_size=128)
    (slider, head), panel = w.children[0].children, w.children[1]
    assert panel.value == g.advisor_html(slider.value, 128)
    slider.value = 1e12
    assert panel.value == g.advisor_html(1e12, 128)
    head.value = 64
    assert panel.value == g.advisor_html(1e12, 64)
    assert (slider.min, slider.max) == (6, 13)


def test_guidelines_import_needs_no_plotting_or_widgets():
    import subprocess
    import sys

    code = ("import sys, dwlib.core.fit; "
            "print([m for m in ('altair', 'ipywidgets', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_chapter_cites_every_model_source():
    """The guidelines chapter cites the source of every model shape it draws."""
    if not NOTEBOOK.exists():
        pytest.skip("book/guidelines.ipynb not written")
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    cited = set(re.findall(r"\{cite\}`([^`]+)`", prose))
    cited = {k.strip() for group in cited for k in group.split(",")}
    needed = {m["source"] for m in g.load_models()} | {"brown2020language", "levine2020depth"}
    assert needed <= cited, sorted(needed - cited)
