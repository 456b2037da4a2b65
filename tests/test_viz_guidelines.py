"""Tests of dwlib.viz.guidelines: the advisor's Vega port of the Newton solver against the
Python one, the real-models chart, the advisor chart, its HTML answer and live widget."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dwlib.core.fit import AUTHORS_FIT, Fit, nearby_shapes, optimal_depth, optimal_width, practical_shape, verdict
from dwlib.errors import InputError
from dwlib.experiments.catalogue import gpt3_table, load_models
from dwlib.viz import guidelines as vg
from dwlib.viz.layout import narrow_offsets
from dwlib.viz import render
from test_viz_bounds import _objects  # tests/test_viz_bounds.py: every object of a spec

# ------------------------------------------------------------------------------------------
# The Vega port of Newton's method, evaluated against dwlib.core.fit
# ------------------------------------------------------------------------------------------


class _Datum:
    """Attribute access to a dict, as ``datum.x`` in a Vega expression."""

    def __init__(self, values):
        self.__dict__["values"] = values

    def __getattr__(self, name):
        return self.values[name]


def _eval_vega(exprs, param, value):
    """Evaluate the advisor's (field, expression) pairs as Vega would, in Python. The
    expressions use only log, exp, pow, sqrt, min, max, round and arithmetic, which read the
    same in both languages."""
    datum = {}
    ns = {"datum": _Datum(datum), param: value, "log": math.log, "exp": math.exp,
          "pow": math.pow, "sqrt": math.sqrt, "min": min, "max": max,
          "round": lambda x: math.floor(x + 0.5)}  # JavaScript's Math.round
    for field, expr in exprs:
        datum[field] = eval(expr, {"__builtins__": {}}, ns)  # noqa: S307 (our own strings)
    return datum


@pytest.mark.parametrize("fit", [AUTHORS_FIT, Fit(4.0, 0.08), Fit(6.5, 0.03)])
@pytest.mark.parametrize("head_size", [64, 128])
def test_advisor_expressions_match_the_library(fit, head_size):
    exprs = vg.advisor_expressions(fit, head_size=head_size)
    for log_n in np.arange(6.0, 13.01, 0.37):
        d = _eval_vega(exprs, "log10_budget", log_n)
        N = 10 ** log_n
        assert d["budget"] == pytest.approx(N, rel=1e-12)
        assert d["depth"] == pytest.approx(optimal_depth(N, fit), rel=1e-10)
        assert d["width"] == pytest.approx(optimal_width(d["depth"], fit), rel=1e-10)
        p = practical_shape(N, head_size=head_size, fit=fit)
        assert (d["practical_depth"], d["practical_width"], d["heads"]) == (
            p["depth"], p["width"], p["heads"])


def test_advisor_expressions_take_constants_from_the_fit():
    fit = Fit(4.25, 0.0625)
    text = " ".join(e for _, e in vg.advisor_expressions(fit, head_size=64, param="p"))
    assert repr(4.25) in text and repr(0.0625) in text and "64 *" in text
    assert "5.039" not in text and "0.0555" not in text
    assert "pow(10, p)" in text
    with pytest.raises(InputError, match="steps"):
        vg.advisor_expressions(steps=0)
    with pytest.raises(InputError, match="head_size"):
        vg.advisor_expressions(head_size=0)


# ------------------------------------------------------------------------------------------
# Charts
# ------------------------------------------------------------------------------------------


def _points(spec: dict) -> list[dict]:
    """The models' points in a chart's spec: the data set whose rows carry a verdict."""
    return next(d for d in spec["datasets"].values() if "verdict" in d[0])


def test_models_chart_draws_every_model_once():
    models = load_models() + gpt3_table()
    chart = vg.models_chart(models)
    assert render.spec_json(vg.models_chart(models)) == render.spec_json(chart)  # deterministic
    points = _points(chart.to_dict())
    names = " / ".join(p["name"] for p in points)
    for m in models:  # every model drawn (same shapes merged into one point)
        assert m["name"] in names
    # one point per shape, and one more for each model whose verdict the catalogue calls not
    # meaningful (T5-11B): drawn apart, in grey, with no verdict
    apart = [m for m in models if m.get("verdict_meaningful") is False]
    assert [m["name"] for m in apart] == ["T5-11B"]
    assert len(points) == len({(m["depth"], m["width"]) for m in models}) + len(apart)
    t5 = next(p for p in points if p["name"] == "T5-11B")
    assert t5["verdict"] == vg.NO_VERDICT and (t5["depth"], t5["width"]) == (24, 1024)
    assert all("T5-11B" not in p["name"] for p in points if p is not t5)
    merged = next(p for p in points if (p["depth"], p["width"]) == (96, 12288))
    assert merged["name"] == "OPT-175B / GPT-3 175B" and merged["verdict"] == "too deep"
    assert "zhang2022opt" in merged["source"] and "brown2020language" in merged["source"]
    # labels: one name per point and how many more (a phone's plot is narrow), beside, above
    # or below its point
    assert all(" / " not in p["label"] and p["align"] in ("left", "right", "center") for p in points)
    assert next(p for p in points if p["depth"] == 12)["label"] == "BERT-base +2"


def _curve_through_labels(spec: dict, rows: list[dict], width: float) -> list[str]:
    """The labels the fit's curve passes through when the plot is ``width`` px wide (the curve
    sampled at its stored points, labels measured as the placement measures them)."""
    curve = next(d for d in spec["datasets"].values() if "depth_low" in d[0])
    lo, hi = (math.log10(v) for v in (3e7, 3e12))
    ytop = next(v["encoding"]["y"]["scale"]["domain"][1] for v in spec["layer"]
                if v["encoding"].get("y", {}).get("scale", {}).get("domain"))

    def px(budget, depth):
        return (math.log10(budget) - lo) / (hi - lo) * width, (1 - depth / ytop) * spec["height"]
    out = []
    for r in rows:
        box = render.label_box(*px(r["budget"], r["depth"]), r["label"], (r["align"], r["dx"], r["dy"]), 9)
        if r["label"] and any(box[0] <= cx <= box[2] and box[1] <= cy <= box[3]
                              for cx, cy in (px(c["budget"], c["depth"]) for c in curve)):
            out.append(r["label"])
    return out


def test_models_chart_labels_keep_off_the_curve_and_far_ones_are_tied_to_their_points():
    spec = vg.models_chart(load_models() + gpt3_table()).to_dict()
    rows = _points(spec)
    # (tests/test_viz_layout.py checks every label at every width: its own point nearest, no
    # curve through it); here: labels set apart are tied to their points by one layer of lines
    rules = [v for v in spec["layer"] if v["mark"]["type"] == "rule"]
    assert len(rules) == 1 and any(r["leader"] for r in rows) and any(r["leader_phone"] for r in rows)
    # one mark, one label: GPT-3 13B and LLaMA-13B (depth 40, widths 5,140 and 5,120) coincide
    forty = [r for r in rows if r["depth"] == 40]
    assert len(forty) == 2 and sorted(r["label"] for r in forty)[0] == "" and sorted(r["label"] for r in forty)[1].endswith(" +1")
    for width in (600, 300):
        assert _curve_through_labels(spec, rows, width) == []
    # the check tells: placed without regard to the curve, labels are crossed by it
    ytop = rules[0]["encoding"]["y"]["scale"]["domain"][1]
    shown = [r for r in rows if r["label"]]
    fx = [(math.log10(r["budget"]) - math.log10(3e7)) / 5 for r in shown]
    places = narrow_offsets(fx, [(1 - r["depth"] / ytop) * spec["height"] for r in shown],
                            [r["label"] for r in shown], spec["height"], font_size=9, lo=300, hi=600)
    plain = [dict(r, align=a, dx=dx, dy=dy) for r, (a, dx, dy) in zip(shown, places)]
    assert any(_curve_through_labels(spec, plain, w) for w in (300, 450, 600))


def test_models_chart_colours_follow_the_fit_passed_in():
    assert any(p["name"] == "PaLM-540B" for p in _points(vg.models_chart().to_dict()))
    # (a fit whose curve leaves every label a place that obeys the placer's rule; with some
    # others the placer names a label it cannot place: tests/test_viz_layout.py)
    other = Fit(6.0, 0.05)
    points = _points(vg.models_chart(load_models(), fit=other).to_dict())
    for p in points:
        if p["verdict"] != vg.NO_VERDICT:
            assert p["verdict"] == verdict(p["depth"], p["width"], fit=other)["verdict"]
    assert {p["verdict"] for p in points} != {m["verdict"] for m in load_models()}


def test_place_labels_avoids_overlaps():
    # three points in a row, close together: the labels must not overlap each other
    xs, ys = [100, 104, 108], [100, 100, 100]
    places = render.place_labels(xs, ys, ["aaaaaaaa"] * 3, 400, 300)
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
    assert render.place_labels([395], [150], ["a long label"], 400, 300)[0][0] == "right"


def test_advisor_chart_computes_in_the_page():
    fit = Fit(4.5, 0.06)
    chart = vg.advisor_chart(fit=fit, models=load_models(), budget=1e9)
    spec = chart.to_dict()
    again = vg.advisor_chart(fit=fit, models=load_models(), budget=1e9)
    assert render.spec_json(chart) == render.spec_json(again)  # deterministic
    (param,) = spec["params"]
    assert param["name"] == "log10_budget" and param["value"] == 9.0
    assert param["bind"]["input"] == "range"
    assert (param["bind"]["min"], param["bind"]["max"]) == (6.0, 13.0)
    text = json.dumps(spec)
    for _, expr in vg.advisor_expressions(fit, 128, "log10_budget"):
        assert json.dumps(expr)[1:-1] in text  # the computation is in the page
    assert "5.039" not in text  # constants from the fit passed in, not the authors'
    with pytest.raises(InputError, match="budget_range"):
        vg.advisor_chart(budget=1e14)


def _tooltips(spec):
    """Every tooltip entry of a spec's layers (nested concatenations and layers included)."""
    out = []
    for node in _objects(spec):
        tip = node.get("encoding", {}).get("tooltip")
        out.extend(tip if isinstance(tip, list) else [tip] if tip else [])
    return out


def test_the_charts_tooltips_name_their_values_and_cite_as_the_book_does():
    """A reader hovering a mark reads a title for each value (no field name such as 'depth' or
    'source' shown raw) and a model's source as the book cites it, not its bibliography key."""
    from dwlib.book.references import author_year
    models = load_models() + gpt3_table()
    charts = [vg.models_chart(models, cite=author_year).to_dict(),
              vg.advisor_chart(models=models, budget=175e9).to_dict()]
    for spec in charts:
        for tip in _tooltips(spec):
            assert isinstance(tip, dict) and tip.get("title"), tip
    sources = {r["source"] for d in charts[0]["datasets"].values() for r in d if r.get("source")}
    keys = {m["source"] for m in models}
    assert sources and not sources & keys and "Radford et al., 2019" in sources
    (param,) = charts[1]["params"]
    assert param["bind"]["name"].strip() == vg.SLIDER_LABEL and "power" not in vg.SLIDER_LABEL


@pytest.mark.parametrize("budget", [175e9, 1e12, 3.3e7])
def test_advisor_chart_starts_at_the_budget_asked_for(budget):
    """The chart's first answer rounds as the advisor's text does (one rounding for both)."""
    (param,) = vg.advisor_chart(budget=budget).to_dict()["params"]
    d = _eval_vega(vg.advisor_expressions(), "log10_budget", param["value"])
    best = practical_shape(budget)
    assert f"{d['width']:,.0f}" == f"{best['optimal_width']:,.0f}"
    assert f"{d['depth']:.1f}" == f"{best['optimal_depth']:.1f}"
    assert param["bind"]["step"] == 10.0 ** -vg.ADVISOR_DIGITS
    # a 0.001 step would start at 174.98B, whose optimal width reads 13,458 against the text's 13,459
    coarse = _eval_vega(vg.advisor_expressions(), "log10_budget", round(math.log10(175e9), 3))
    assert f"{coarse['width']:,.0f}" != f"{practical_shape(175e9)['optimal_width']:,.0f}"


# ------------------------------------------------------------------------------------------
# The advisor's HTML answer and live widget
# ------------------------------------------------------------------------------------------


def test_advisor_html():
    html = vg.advisor_html(175e9)
    best = practical_shape(175e9)
    assert f"<b>{best['depth']} layers of width {best['width']:,}</b>" in html
    assert html.count("<tr>") == 1 + len(nearby_shapes(175e9))
    assert f"<td><b>{best['depth']}</b></td>" in html
    assert "near optimal" in html
    small = vg.advisor_html(1e6, head_size=64)
    assert "64" in small and "<table" in small
    err = vg.advisor_html(1e3)
    assert 'class="dw-advisor-error"' in err and "12 * head_size^2" in err
    assert vg.advisor_html(175e9, fit=Fit(4.0, 0.08)) != html


def test_advisor_widget_updates():
    w = vg.advisor_widget(budget=1e9, head_size=128)
    (slider, head), panel = w.children[0].children, w.children[1]
    assert panel.value == vg.advisor_html(slider.value, 128)
    slider.value = 1e12
    assert panel.value == vg.advisor_html(1e12, 128)
    head.value = 64
    assert panel.value == vg.advisor_html(1e12, 64)
    assert (slider.min, slider.max) == (6, 13)


def test_models_chart_verdicts_are_told_by_shape_and_colour_blind_safe_colour():
    """Each verdict has its own point shape (not colour alone) and a colour of Okabe and Ito's
    palette (no red against green); a model with no verdict is grey."""
    okabe_ito = {"#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"}
    assert set(vg.VERDICT_COLORS.values()) <= okabe_ito
    spec = vg.models_chart(load_models()).to_dict()
    dots = next(v for v in spec["layer"] if isinstance(v["mark"], dict) and v["mark"]["type"] == "point")
    color, shape = dots["encoding"]["color"], dots["encoding"]["shape"]
    assert color["field"] == shape["field"] == "verdict"
    assert color["scale"]["domain"] == shape["scale"]["domain"] == [*vg.VERDICT_COLORS, vg.NO_VERDICT]
    assert len(set(shape["scale"]["range"])) == len(shape["scale"]["domain"])
    assert color["scale"]["range"][-1] == vg.NO_VERDICT_COLOR


def test_a_model_without_verdict_never_hides_one_with_a_verdict():
    """T5-11B (no verdict) has BERT-large's shape, 24 x 1024: its mark is drawn first and larger,
    so the verdict's mark shows on top of it."""
    spec = vg.models_chart(load_models()).to_dict()
    points = [(i, v) for i, v in enumerate(spec["layer"]) if isinstance(v["mark"], dict) and v["mark"]["type"] == "point"]
    rows = {i: spec["datasets"][v["data"]["name"]] for i, v in points}
    undecided = [(i, v) for i, v in points if {r["verdict"] for r in rows[i]} == {vg.NO_VERDICT}]
    decided = [(i, v) for i, v in points if vg.NO_VERDICT not in {r["verdict"] for r in rows[i]}]
    assert len(undecided) == 1 and len(decided) == 1
    (iu, u), (iv, v) = undecided[0], decided[0]
    shared = {(r["depth"], r["width"]) for r in rows[iu]} & {(r["depth"], r["width"]) for r in rows[iv]}
    assert shared  # the case this guards: T5-11B on BERT-large's point
    assert iu < iv and u["mark"]["size"] > v["mark"]["size"]


def test_a_fit_that_leaves_a_label_no_room_draws_the_point_and_names_it_under_the_title():
    """With the fit (9.0, 0.01) the curve leaves LLaMA-7B's label no place that obeys the placer's
    rule: the chart is still drawn, every model keeps its point and tooltip, and the label left
    off is named under the title; the book's fit leaves none off."""
    from dwlib.core.fit import Fit
    models = load_models()
    spec = vg.models_chart(models, fit=Fit(9.0, 0.01)).to_dict()
    subtitle = spec["title"]["subtitle"]
    assert subtitle[0] == "band: near optimal" and subtitle[1].startswith("no room to label: "), subtitle
    left_off = [subtitle[1].removeprefix("no room to label: "), *subtitle[2:]]
    rows = [r for d in spec["datasets"].values() for r in d if "label" in r and "name" in r]
    assert {n for r in rows for n in r["name"].split(" / ")} >= {m["name"] for m in models}
    assert not {r["label"] for r in rows} & set(left_off)
    assert vg.models_chart(models).to_dict()["title"]["subtitle"] == "band: near optimal"
