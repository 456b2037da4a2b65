"""Chart layout that holds at every width (dwlib.viz.layout) and the chart specs' fixes for the
book's narrow columns and for JupyterLab's Vega-Lite 5: labels placed at the narrowest width
stay clear at wider ones, bands are unstacked, wrapped panels, one legend per field, the
transition chart with no crossing."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dwlib.book import intro
from dwlib.errors import InputError
from dwlib.experiments.catalogue import gpt3_table, load_models
from dwlib.viz import bounds as vb
from dwlib.viz import context as vc
from dwlib.viz import experiments as vx
from dwlib.viz import guidelines as vg
from dwlib.viz import seprank as vs
from dwlib.viz.layout import NARROW_WIDTH, narrow_offsets


def _layers(spec: dict):
    """Every single view of a spec (layers, concatenations, facets), depth first."""
    for key in ("layer", "concat", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            yield from _layers(sub)
    if "spec" in spec:
        yield from _layers(spec["spec"])
    if "mark" in spec:
        yield spec


def _mark(view: dict) -> str:
    return view["mark"]["type"] if isinstance(view["mark"], dict) else view["mark"]


def _labels(spec: dict) -> pd.DataFrame:
    """The rows of the chart's labelled points (the dataset with align, dx and dy)."""
    for values in spec["datasets"].values():
        if values and {"align", "dx", "dy", "label"} <= set(values[0]):
            return pd.DataFrame(values)
    raise AssertionError("no labelled points in the chart")


def _boxes(xs, ys, rows, font_size):
    """Label boxes in pixels, as dwlib.viz.render.place_labels measures them."""
    char_w, box_h = 0.56 * font_size, font_size + 2
    out = []
    for x, y, (_, r) in zip(xs, ys, rows.iterrows()):
        w = char_w * len(r["label"])
        x0 = x + r["dx"] if r["align"] == "left" else x + r["dx"] - w
        out.append((x0, y + r["dy"] - box_h / 2, x0 + w, y + r["dy"] + box_h / 2))
    return out


def _overlap(boxes, dots) -> float:
    def area(a, b):
        w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
        return w * h if w > 0 and h > 0 else 0.0
    return (sum(area(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
            + sum(area(a, d) for i, a in enumerate(boxes) for j, d in enumerate(dots) if i != j))


def _outside(boxes, width, height) -> float:
    return sum(max(0, -b[0]) + max(0, b[2] - width) + max(0, -b[1]) + max(0, b[3] - height) for b in boxes)


def _check_wider_is_no_worse(fractions, ys, rows, height, font_size, widths):
    narrow = None
    for width in (NARROW_WIDTH, *widths):
        xs = [f * width for f in fractions]
        boxes = _boxes(xs, ys, rows, font_size)
        dots = [(x - 4, y - 4, x + 4, y + 4) for x, y in zip(xs, ys)]
        got = (_overlap(boxes, dots), _outside(boxes, width, height))
        if narrow is None:
            narrow = got
        assert got[0] <= narrow[0] + 1e-6, f"labels overlap more at {width} px than at {NARROW_WIDTH} px"
        assert got[1] <= narrow[1] + 1e-6, f"labels leave the plot at {width} px"


def test_threshold_chart_labels_stay_clear_when_the_chart_widens():
    models = intro.models_table().to_dict("records")
    spec = vb.threshold_chart(models).to_dict()
    rows = _labels(spec)
    lo, hi, d0, d1 = 10, 2e5, 1, 128
    fractions = [(math.log10(w) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) for w in rows["width"]]
    ys = [(1 - (math.log10(L) - math.log10(d0)) / (math.log10(d1) - math.log10(d0))) * spec["height"]
          for L in rows["depth"]]
    assert (rows["dx"] != 0).all()  # offsets in pixels, drawn from the point itself
    _check_wider_is_no_worse(fractions, ys, rows, spec["height"], 10, [358, 450, spec["width"], 900])


def test_models_chart_labels_stay_clear_when_the_chart_widens():
    spec = vg.models_chart(load_models() + gpt3_table()).to_dict()
    rows = _labels(spec)
    lo, hi = 3e7, 3e12
    ytop = next(v["encoding"]["y"]["scale"]["domain"][1] for v in _layers(spec)
                if v["encoding"].get("y", {}).get("scale", {}).get("domain"))
    fractions = [(math.log10(b) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) for b in rows["budget"]]
    ys = [(1 - d / ytop) * spec["height"] for d in rows["depth"]]
    _check_wider_is_no_worse(fractions, ys, rows, spec["height"], 9, [358, 450, spec["width"], 900])


def test_the_check_fails_for_labels_that_cross():
    # The one way widening can hurt: two close points whose labels point at each other (the
    # left one's to the right, the right one's to the left) collide once the points spread.
    # The check above tells, so a placement like this in a book chart would fail it.
    fractions, ys = [0.5, 0.5 + 10 / NARROW_WIDTH], [100.0, 100.0]
    rows = pd.DataFrame([{"label": "abcd", "align": "left", "dx": 7.0, "dy": 0.0},
                         {"label": "efgh", "align": "right", "dx": -7.0, "dy": 0.0}])
    with pytest.raises(AssertionError, match="overlap more"):
        _check_wider_is_no_worse(fractions, ys, rows, 200, 9, [2 * NARROW_WIDTH])
    places = narrow_offsets(fractions, ys, rows["label"], 200, 9)
    assert len(places) == 2


def test_bands_are_unstacked_for_jupyterlab():
    charts = [vb.threshold_chart([{"name": "BERT-large", "depth": 24, "width": 1024}]),
              vb.bounds_explorer_chart(), vg.models_chart(load_models())]
    areas = [v for c in charts for v in _layers(c.to_dict()) if _mark(v) == "area"]
    assert len(areas) == 5
    for v in areas:
        assert "y2" in v["encoding"]
        assert v["encoding"]["x"]["stack"] is None and v["encoding"]["y"]["stack"] is None


def test_text_panels_are_limited_to_the_plot():
    # Text anchored inside the plot never widens the chart beyond it (it is cut with an ellipsis).
    for chart in (vb.bounds_explorer_chart(), vg.advisor_chart(budget=175e9)):
        texts = [v for v in _layers(chart.to_dict()) if _mark(v) == "text" and "x" in v["encoding"]
                 and "value" in v["encoding"]["x"]]
        assert texts and all("limit" in v["mark"] for v in texts)


def test_positions_follow_the_plot_width():
    rows = [{"variant": v, "layer": l, "residual": 0.5 ** l, "width": 64, "heads": 4}
            for v in ("pure attention", "attention + residual") for l in range(4)]
    text = json.dumps(vc.collapse_chart(rows).to_dict())
    assert '"x": {"expr": "width - 4"}' in text and '"x": 540' not in text


def test_heatmaps_are_a_wrapped_concat():
    runs = [{"depth": d, "induction_head": {"layer": d, "head": 0},
             "example": {"pattern": np.tril(np.ones((6, 6))).tolist()}} for d in (1, 2)]
    spec = vc.attention_heatmap({"runs": runs}).to_dict()
    assert spec["columns"] == 2 and len(spec["concat"]) == 2
    assert all(v["width"] <= 240 for v in spec["concat"])


@pytest.fixture(scope="module")
def ranks():
    rows = []
    for depth in (1, 2, 3):
        for width in (1, 2, 3):
            th = 1 if depth < math.log(width + 1e-9, 3) else 2
            rows.append({"depth": depth, "width": width, "rank": 3 ** depth, "poly_dim": 9 ** depth,
                         "theorem": th, "log3_lower": depth - 1.0, "log3_upper": depth + 1.0})
    return pd.DataFrame(rows)


def test_rank_chart_is_a_wrapped_facet_with_one_legend(ranks):
    spec = vs.rank_chart(ranks).to_dict()
    assert spec["columns"] == 3 and "facet" in spec
    views = list(_layers(spec))
    assert len(views) == 2
    for v in views:  # colour and dash of one field share one legend: no "conflicting legend property"
        enc = {**spec["spec"].get("encoding", {}), **v.get("encoding", {})}
        assert enc["color"]["legend"] == enc["strokeDash"]["legend"] and enc["color"]["legend"]["orient"] == "bottom"


def test_transition_chart_without_crossings_spans_every_pair():
    results = [{"shallow": s, "deep": d, "status": "shallow wins", "budget": None,
                "budget_p16": None, "budget_p84": None, "p_crossing": 0.0, "range": [3e4, 8e5]}
               for s, d in ((1, 2), (2, 4), (4, 8))]
    spec = vx.transition_chart(results).to_dict()
    views = list(_layers(spec))
    # no empty dataset (Vega warns "Infinite extent" on one) and explicit domains
    assert all(spec["datasets"][v.get("data", spec.get("data"))["name"]] for v in views)
    assert all(v["encoding"]["x"]["scale"]["domain"] == [1.0, 6.5] for v in views)
    y = next(v["encoding"]["y"] for v in views if v["encoding"]["y"]["field"] == "range_low")
    assert y["scale"]["domain"] == pytest.approx([3e4 / 1.25, 8e5 * 1.25])
    assert "shallow wins" in json.dumps(spec)
    with pytest.raises(InputError):
        vx.transition_chart([])


def test_legends_sit_below_the_plot():
    # Right-hand legends would eat the plot's width on a phone: these charts put them below.
    brown = pd.DataFrame({"attention": ["a", "a"], "task": ["t1", "t2"], "deep": [50.0, 60.0], "wide": [55.0, 58.0]})
    spec = vc.wide_deep_chart(brown).to_dict()
    assert all(v["encoding"]["color"]["legend"]["orient"] == "bottom" for v in _layers(spec)
               if "color" in v["encoding"])
    spec = vb.bounds_chart(widths=(64, 256), heads=8, depth_range=(1, 12)).to_dict()
    legends = [v["encoding"][c].get("legend") for v in _layers(spec) for c in ("color", "strokeDash")
               if c in v["encoding"]]
    assert legends and all(g and g["orient"] == "bottom" for g in legends)
