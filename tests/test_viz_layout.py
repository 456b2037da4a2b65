"""Chart layout that holds at every width (dwlib.viz.layout) and the chart specs' fixes for the
book's narrow columns and for JupyterLab's Vega-Lite 5: in every labelled chart of the book,
at every width it is drawn at, each label belongs to its point (its nearest point, with a
margin, or tied to it by a leader line) and no curve runs through a label; bands are unstacked,
wrapped panels, one legend per field, the transition chart with no crossing."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dwlib.book import intro, two_regimes
from dwlib.errors import InputError
from dwlib.experiments.catalogue import gpt3_table, load_models
from dwlib.viz import bounds as vb
from dwlib.viz import context as vc
from dwlib.viz import experiments as vx
from dwlib.viz import guidelines as vg
from dwlib.viz import seprank as vs
from dwlib.core.fit import AUTHORS_FIT, optimal_curve
from dwlib.viz.layout import NARROW_WIDTH, PHONE_PLOT, narrow_offsets
from dwlib.viz.render import place_labels, text_width


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


#: the margin of the rule "a label belongs to its point": every other point at least this many
#: times as far from the label's box as its own point (a label tied by a leader line counts its
#: own point at LEADER_FROM px)
MARGIN, LEADER_FROM, SAME_MARK = 1.5, 10.0, 5.0


def _place(row, width):
    """A label's (align, dx, dy) for a plot ``width`` px wide: its phone placement up to
    PHONE_PLOT px, the other beyond."""
    sfx = "_phone" if width <= PHONE_PLOT and "dx_phone" in row else ""
    return row["align" + sfx], row["dx" + sfx], row["dy" + sfx]


def _box(x, y, text, place, font_size):
    """A label's box in pixels (y down), drawn at ``place`` from its point, baseline middle,
    its width measured in the book's font (dwlib.viz.render.text_width)."""
    align, dx, dy = place
    w, h = text_width(text, font_size), font_size + 2
    x0 = x + dx - {"left": 0, "center": w / 2, "right": w}[align]
    return (x0, y + dy - h / 2, x0 + w, y + dy + h / 2)


def _dist(b, x, y) -> float:
    return math.hypot(max(b[0] - x, 0, x - b[2]), max(b[1] - y, 0, y - b[3]))


def _cross(b, p, q) -> bool:
    """Whether the segment p-q meets box b (sampled every 0.25 px)."""
    n = max(2, int(math.hypot(q[0] - p[0], q[1] - p[1]) * 4))
    return any(b[0] <= p[0] + t * (q[0] - p[0]) <= b[2] and b[1] <= p[1] + t * (q[1] - p[1]) <= b[3]
               for t in np.linspace(0, 1, n))


def _problems(rows, fractions, ys, font_size, curves, widths) -> list[str]:
    """Where the chart's labels break "a label belongs to its point" at the plot widths given:
    another point nearer a label's box than MARGIN times its own (a point whose mark covers the
    own point is the same mark), a curve through a box (curves: lists of (fraction, y)), a label
    over another, or a label set apart from its point (further than LEADER_FROM) with no leader."""
    out = []
    for width in widths:
        xs = [f * width for f in fractions]
        boxes = {}
        for i, r in rows.iterrows():
            if not r["label"]:
                continue
            place = _place(r, width)
            b = boxes[i] = _box(xs[i], ys[i], r["label"], place, font_size)
            own = _dist(b, xs[i], ys[i])
            sfx = "_phone" if width <= PHONE_PLOT and "dx_phone" in r else ""
            if own > LEADER_FROM and not r.get("leader" + sfx, abs(place[2]) > font_size + 2):
                out.append(f"{width} px: '{r['label']}' {own:.0f} px from its point, with no leader")
            others = [_dist(b, x, y) for j, (x, y) in enumerate(zip(xs, ys))
                      if j != i and math.hypot(x - xs[i], y - ys[i]) >= SAME_MARK]
            if others and min(others) < MARGIN * min(own, LEADER_FROM):
                out.append(f"{width} px: '{r['label']}' as near another point ({min(others):.1f} px)"
                           f" as its own ({own:.1f} px)")
            for curve in curves:
                pts = [(f * width, y) for f, y in curve]
                if any(_cross(b, p, q) for p, q in zip(pts[:-1], pts[1:])
                       if min(p[0], q[0]) <= b[2] and max(p[0], q[0]) >= b[0]):
                    out.append(f"{width} px: a curve through '{r['label']}'")
        keys = list(boxes)
        for a, i in enumerate(keys):
            for j in keys[a + 1:]:
                p, q = boxes[i], boxes[j]
                if min(p[2], q[2]) - max(p[0], q[0]) > 0 and min(p[3], q[3]) - max(p[1], q[1]) > 0:
                    out.append(f"{width} px: '{rows['label'][i]}' over '{rows['label'][j]}'")
    return out


#: the plot widths checked: the narrowest the chart is drawn at (a 320 px phone's, which the
#: chart states), a 390 px phone's (291 px, measured in Chromium), both sides of PHONE_PLOT,
#: then every 15 px to the chart's own width
def _widths(spec):
    narrow = _narrow(spec)
    return sorted({narrow, 291, PHONE_PLOT, PHONE_PLOT + 1, *range(narrow, spec["width"], 15), spec["width"]})


def _narrow(spec) -> int:
    """The plot width the chart says a 320 px phone draws it at (dwlib.viz.layout)."""
    return spec["usermeta"]["narrow_plot"]


def _threshold_case(models, width_range=(10, 2e5), depth_range=(1, 128)):
    spec = vb.threshold_chart(models, width_range=width_range, depth_range=depth_range).to_dict()
    rows = _labels(spec)
    (lo, hi), (d0, d1) = width_range, depth_range

    def frac(w):
        return (math.log10(w) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    def y_px(L):
        return (1 - (math.log10(L) - math.log10(d0)) / (math.log10(d1) - math.log10(d0))) * spec["height"]

    curve = [(frac(w), y_px(math.log(w, 3))) for w in np.geomspace(lo, hi, 600)]
    return spec, rows, [frac(w) for w in rows["width"]], [y_px(L) for L in rows["depth"]], [curve]


def _models_case(models):
    spec = vg.models_chart(models).to_dict()
    rows = _labels(spec)
    lo, hi = 3e7, 3e12
    ytop = next(v["encoding"]["y"]["scale"]["domain"][1] for v in _layers(spec)
                if v["encoding"].get("y", {}).get("scale", {}).get("domain"))

    def frac(b):
        return (math.log10(b) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    fit = pd.DataFrame(optimal_curve((lo, hi), 600, AUTHORS_FIT))
    curve = [(frac(b), (1 - d / ytop) * spec["height"]) for b, d in zip(fit["budget"], fit["depth"])]
    return spec, rows, [frac(b) for b in rows["budget"]], [(1 - d / ytop) * spec["height"] for d in rows["depth"]], [curve]


# every labelled chart of the book, built as its chapter builds it
BOOK_CHARTS = {
    "introduction: the threshold map": lambda: _threshold_case(intro.models_table().to_dict("records")),
    "two regimes: the regime map": lambda: _threshold_case(two_regimes.placed_models().to_dict("records"),
                                                           width_range=(300, 3e4)),
    "guidelines: the models chart": lambda: _models_case(load_models() + gpt3_table()),
}


@pytest.mark.parametrize("chart", list(BOOK_CHARTS))
def test_every_label_belongs_to_its_point_at_every_width(chart):
    spec, rows, fractions, ys, curves = BOOK_CHARTS[chart]()
    font = 9 if chart.startswith("guidelines") else 10
    assert rows["label"].str.len().gt(0).sum() >= 5
    assert _problems(rows, fractions, ys, font, curves, _widths(spec)) == []


#: the longest leader line (px), the clearance (px) between a label and the plot's edges (its
#: axes), and the chart column of a 320 px phone (the screen less the theme's margins, measured
#: in Chromium)
LONGEST_LEADER, EDGE, PHONE_COLUMN = 40.0, 2.0, 272


def _leader_lines(rows, fractions, ys, width):
    """(label, (x0, y0, x1, y1)) of every leader line drawn at a plot ``width`` px wide."""
    out = []
    for i, r in rows.iterrows():
        sfx = "_phone" if width <= PHONE_PLOT and "dx_phone" in r else ""
        if r["label"] and r["leader" + sfx]:
            x, y = fractions[i] * width, ys[i]
            out.append((r["label"], (x + r["lx0" + sfx], y + r["ly0" + sfx], x + r["lx1" + sfx], y + r["ly1" + sfx])))
    return out


def _segments_cross(a, b) -> bool:
    def turn(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    p, q, r, s = a[:2], a[2:], b[:2], b[2:]
    return turn(p, q, r) * turn(p, q, s) < 0 and turn(r, s, p) * turn(r, s, q) < 0


def _leader_problems(rows, fractions, ys, widths) -> list[str]:
    """Leader lines longer than LONGEST_LEADER, and pairs of leader lines that cross, at the
    plot widths given."""
    out = []
    for width in widths:
        lines = _leader_lines(rows, fractions, ys, width)
        out += [f"{width} px: the leader of '{t}' is {math.hypot(l[2] - l[0], l[3] - l[1]):.0f} px long"
                for t, l in lines if math.hypot(l[2] - l[0], l[3] - l[1]) > LONGEST_LEADER]
        out += [f"{width} px: the leaders of '{a}' and '{b}' cross" for k, (a, la) in enumerate(lines)
                for b, lb in lines[k + 1:] if _segments_cross(la, lb)]
    return out


def _edge_problems(rows, fractions, ys, font_size, height, widths) -> list[str]:
    """Labels whose box comes nearer than EDGE px to the plot's edges (its axes), or leaves it."""
    out = []
    for width in widths:
        for i, r in rows.iterrows():
            if r["label"]:
                b = _box(fractions[i] * width, ys[i], r["label"], _place(r, width), font_size)
                if b[0] < EDGE or b[1] < EDGE or b[2] > width - EDGE or b[3] > height - EDGE:
                    out.append(f"{width} px: '{r['label']}' at ({b[0]:.1f}, {b[1]:.1f}, {b[2]:.1f}, {b[3]:.1f})"
                               f" touches or leaves the plot (0, 0, {width}, {height})")
    return out


@pytest.mark.parametrize("chart", list(BOOK_CHARTS))
def test_leader_lines_are_short_and_never_cross(chart):
    spec, rows, fractions, ys, _ = BOOK_CHARTS[chart]()
    assert _leader_problems(rows, fractions, ys, _widths(spec)) == []


@pytest.mark.parametrize("chart", list(BOOK_CHARTS))
def test_labels_keep_inside_the_plot_clear_of_its_axes(chart):
    spec, rows, fractions, ys, _ = BOOK_CHARTS[chart]()
    font = 9 if chart.startswith("guidelines") else 10
    assert _edge_problems(rows, fractions, ys, font, spec["height"], _widths(spec)) == []


def test_the_leader_and_edge_checks_fail_on_bad_placements():
    rows = pd.DataFrame([{"label": "aaaa", "align": "left", "dx": 60.0, "dy": 0.0, "leader": True,
                          "lx0": 5.0, "ly0": 0.0, "lx1": 60.0, "ly1": 0.0},
                         {"label": "bbbb", "align": "right", "dx": -20.0, "dy": -30.0, "leader": True,
                          "lx0": -3.0, "ly0": -4.0, "lx1": -20.0, "ly1": -25.0},
                         {"label": "cccc", "align": "right", "dx": 2.0, "dy": 0.0, "leader": False,
                          "lx0": 0.0, "ly0": 0.0, "lx1": 0.0, "ly1": 0.0}])
    fractions, ys = [0.3, 0.5, 0.05], [100.0, 120.0, 50.0]
    got = _leader_problems(rows, fractions, ys, [200])
    assert any("'aaaa' is 55 px long" in p for p in got)
    assert any("'aaaa' and 'bbbb' cross" in p for p in got)
    assert any("'cccc'" in p for p in _edge_problems(rows, fractions, ys, 10, 300, [200]))


def _fits(text: str, font_size: float, room: float, bold: bool = False) -> bool:
    return text_width(text, font_size) * (1.1 if bold else 1.0) <= room


def test_the_narrow_plot_is_the_one_the_phone_draws():
    # The book narrows a chart to its column by narrowing the plot (book/assets/dwcharts.js): the
    # plot a 320 px phone draws is the column less the axes' room, provided that nothing else
    # (a title, an axis title, a note) is wider than the plot. Each chart says which width it
    # placed its labels for: the column less its axes' room, and its titles fit it.
    for name, chart in BOOK_CHARTS.items():
        spec = chart()[0]
        narrow = _narrow(spec)
        ylabels = spec["usermeta"]["y_labels"]
        # Vega's axis: 5 px tick, 2 px to its labels, 4 px to its title of 11 px; 5 px padding each side
        left = 5 + 5 + 2 + max(text_width(t, 10) for t in ylabels) + 4 + 11
        assert abs(narrow - (PHONE_COLUMN - left - 5 - spec["usermeta"]["x_overhang"])) < 1, name
        title = spec.get("title", {})
        lines = title.get("text", []) if isinstance(title, dict) else title
        for line in [lines] if isinstance(lines, str) else lines:
            assert _fits(line, 13, narrow + 5, bold=True), (name, line)
        for view in _layers(spec):
            xt = view.get("encoding", {}).get("x", {}).get("title")
            for line in ([xt] if isinstance(xt, str) else xt or []):
                assert _fits(line, 11, narrow, bold=True), (name, line)


def test_the_label_check_fails_on_ambiguous_labels():
    # a label between two points, as near the other as its own (GPT-2 XL and GPT-2 Large on
    # the regime map); a label the curve runs through; a label far from its point with no leader
    rows = pd.DataFrame([{"label": "aaaa", "align": "left", "dx": 6.0, "dy": 0.0, "leader": False},
                         {"label": "bbbb", "align": "right", "dx": -6.0, "dy": -30.0, "leader": False}])
    fractions, ys = [0.5, 0.5 + 30 / NARROW_WIDTH], [100.0, 100.0]
    got = _problems(rows, fractions, ys, 10, [], [NARROW_WIDTH])
    assert any("'aaaa' as near another point" in p for p in got)
    assert any("'bbbb'" in p and "no leader" in p for p in got)
    curve = [[(0.0, 100.0), (1.0, 100.0)]]
    assert any("curve through 'aaaa'" in p for p in _problems(rows, fractions, ys, 10, curve, [NARROW_WIDTH]))


def test_labels_set_apart_are_drawn_with_a_leader_line():
    for name, chart in BOOK_CHARTS.items():
        spec, rows, *_ = chart()
        font = 9 if name.startswith("guidelines") else 10
        rules = [v for v in _layers(spec) if _mark(v) == "rule" and "x2Offset" in v["mark"]]
        assert len(rules) == 1 and "leader" in json.dumps(rules[0]["mark"]["strokeOpacity"])
        for sfx in ("", "_phone"):
            for _, r in rows[rows["leader" + sfx]].iterrows():
                b = _box(0.0, 0.0, r["label"], (r["align" + sfx], r["dx" + sfx], r["dy" + sfx]), font)
                # the line ends on the box's edge nearest the point
                assert b[0] - 0.01 <= r["lx1" + sfx] <= b[2] + 0.01 and b[1] - 0.01 <= r["ly1" + sfx] <= b[3] + 0.01


def test_the_placer_fails_loudly_where_no_place_obeys_the_rule():
    # a label wider than the plot has no place inside it: one line naming it, not a label drawn
    # over the axis
    with pytest.raises(InputError, match="no place for the label 'a label far too wide for this plot'"):
        place_labels([50.0], [50.0], ["a label far too wide for this plot"], 100, 100)
    # three points on top of one another, each labelled: no leader may cross another, none may be long
    with pytest.raises(InputError, match="no place for the label"):
        place_labels([50.0 + k for k in range(12)], [50.0] * 12, [f"model {k}" for k in range(12)], 100, 100)


def test_the_check_fails_for_labels_that_cross():
    # two close points whose labels point at each other (the left one's to the right, the right
    # one's to the left) collide once the points spread; the check tells
    fractions, ys = [0.5, 0.5 + 10 / NARROW_WIDTH], [100.0, 100.0]
    rows = pd.DataFrame([{"label": "abcd", "align": "left", "dx": 7.0, "dy": 0.0},
                         {"label": "efgh", "align": "right", "dx": -7.0, "dy": 0.0}])
    assert any("'abcd' over 'efgh'" in p for p in _problems(rows, fractions, ys, 9, [], [2 * NARROW_WIDTH]))
    places = narrow_offsets(fractions, ys, rows["label"], 200, 9, hi=2 * NARROW_WIDTH)
    placed = rows.assign(align=[p[0] for p in places], dx=[p[1] for p in places], dy=[p[2] for p in places])
    assert not [p for p in _problems(placed, fractions, ys, 9, [], [NARROW_WIDTH, 2 * NARROW_WIDTH]) if "over" in p]


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
            rows.append({"depth": depth, "width": width, "heads": 1, "positions": 4, "rank": 3 ** depth,
                         "poly_dim": 9 ** depth, "theorem": th, "log3_lower": depth - 1.0, "log3_upper": depth + 1.0})
    return pd.DataFrame(rows)


def test_rank_chart_is_a_wrapped_facet_with_one_legend(ranks):
    spec = vs.rank_chart(ranks).to_dict()
    assert spec["columns"] == 3 and "facet" in spec
    views = list(_layers(spec))
    assert len(views) == 2
    encs = [{**spec["spec"].get("encoding", {}), **v.get("encoding", {})} for v in views]
    # the lines' colour and dash of one field share one legend (no "conflicting legend property"),
    # drawn as line swatches that show the dash; the points' colour is under the same legend
    lines = [e for e in encs if "strokeDash" in e]
    assert len(lines) == 1 and lines[0]["color"]["legend"] == lines[0]["strokeDash"]["legend"]
    assert lines[0]["color"]["legend"]["orient"] == "bottom" and lines[0]["color"]["legend"]["symbolType"] == "stroke"
    assert all(e["color"]["legend"] == lines[0]["color"]["legend"] for e in encs)


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
