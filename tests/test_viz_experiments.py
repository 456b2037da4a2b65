"""The experiments chapter's charts (dwlib.viz.experiments) and the bounds chart's width labels:
what each draws comes from the records, the points left out of an analysis are marked, the
pair picker names its pairs, the gap chart shows the gaps (and a crossing when there is one)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dwlib.errors import InputError
from dwlib.experiments import transition as tr
from dwlib.viz import bounds as vb
from dwlib.viz import experiments as vx

BUDGETS = [1e4, 1e5, 1e6, 1e7]


def records(losses_by_depth, seeds=2):
    """Synthetic sweep records: loss(depth, log10 budget) plus 0.01 per seed."""
    out = []
    for depth, loss in losses_by_depth.items():
        for n in BUDGETS:
            for s in range(seeds):
                out.append({"depth": depth, "width": round(math.sqrt(n / (12 * depth))), "budget": n,
                            "target_budget": n, "seed": s, "status": "completed",
                            "eval_loss": loss(math.log10(n)) + 0.01 * s})
    return out


def _views(spec: dict):
    for key in ("layer", "concat", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            yield from _views(sub)
    if "mark" in spec:
        yield spec


def _data(spec: dict, view: dict) -> list[dict]:
    return spec["datasets"][view.get("data", spec.get("data", {})).get("name")]


# deep worse by 0.2 everywhere (no crossing), and a pair that crosses at N = 10^5.5
NO_CROSSING = {2: lambda x: 5 - 0.5 * x, 4: lambda x: 5.2 - 0.5 * x}
CROSSING = {1: lambda x: 5 - 0.5 * x, 2: lambda x: 5 - 0.5 * x + 0.25 * (5.5 - x)}


def test_loss_chart_picks_a_pair_by_its_name():
    recs = records({**CROSSING, 4: lambda x: 4.0})
    results = tr.transitions(recs, n_boot=5)
    spec = vx.loss_chart(recs, results).to_dict()
    (pick,) = [p for p in spec["params"] if p["name"] == "pair"]
    assert pick["bind"]["input"] == "radio"
    assert pick["bind"]["options"] == [0, 1] and pick["bind"]["labels"] == ["1 vs 2", "2 vs 4"]
    assert "[[1, 2], [2, 4]]" in json.dumps(spec)  # the expressions index the same pairs


def test_loss_chart_marks_the_points_left_out_of_the_analysis():
    recs = records(NO_CROSSING)
    used = [r for r in recs if r["budget"] < 1e7]
    spec = vx.loss_chart(recs, tr.transitions(used, n_boot=5), used=used).to_dict()
    views = list(_views(spec))
    (points,) = [v for v in views if v["mark"]["type"] == "point"]
    rows = _data(spec, points)
    assert {(r["depth"], r["budget"]) for r in rows if r["point"] == vx.LEFT_OUT} == {(2, 1e7), (4, 1e7)}
    assert sum(r["point"] == vx.USED for r in rows) == 6
    shape = points["encoding"]["shape"]
    assert shape["legend"] is not None and shape["scale"]["domain"] == [vx.USED, vx.LEFT_OUT]
    assert shape["scale"]["range"][0] != shape["scale"]["range"][1]
    dashed = [v for v in views if v["mark"]["type"] == "line" and v["mark"].get("strokeDash")]
    assert len(dashed) == 1  # the segments to the points left out
    # without ``used`` every point is in the analysis: no shape legend, no dashed segments
    plain = vx.loss_chart(recs, tr.transitions(recs, n_boot=5)).to_dict()
    (points,) = [v for v in _views(plain) if v["mark"]["type"] == "point"]
    assert points["encoding"]["shape"]["legend"] is None
    assert {r["point"] for r in _data(plain, points)} == {vx.USED}
    assert not [v for v in _views(plain) if v["mark"]["type"] == "line" and v["mark"].get("strokeDash")]


def test_gap_chart_draws_the_paired_gaps_and_marks_a_crossing():
    recs = records(NO_CROSSING)
    results = tr.transitions(recs, n_boot=5)
    spec = vx.gap_chart(recs, results).to_dict()
    views = list(_views(spec))
    lines = [v for v in views if v["mark"]["type"] == "line"]
    (means,) = [_data(spec, v) for v in lines]
    expected = tr.paired_gaps(recs, 2, 4)
    assert [m["gap"] for m in means] == pytest.approx([row["mean"] for row in expected])
    assert all(m["gap"] == pytest.approx(0.2) and m["pair"] == "2 vs 4" for m in means)
    assert not [v for v in views if v["mark"].get("shape") == "diamond"]  # no crossing, no marker
    assert min(spec_y(views)) < 0 < max(spec_y(views))  # zero, where a crossing would be, is in view

    recs = records(CROSSING)
    results = tr.transitions(recs, n_boot=20)
    spec = vx.gap_chart(recs, results).to_dict()
    (marker,) = [v for v in _views(spec) if v["mark"].get("shape") == "diamond"]
    (row,) = _data(spec, marker)
    assert row["budget"] == pytest.approx(results[0]["budget"]) and row["gap"] == 0.0
    assert math.log10(row["budget"]) == pytest.approx(5.5, abs=1e-6)
    with pytest.raises(InputError):
        vx.gap_chart(recs, [])


def spec_y(views) -> list[float]:
    (domain,) = {tuple(v["encoding"]["y"]["scale"]["domain"]) for v in views
                 if "scale" in v["encoding"].get("y", {})}
    return list(domain)


def test_bounds_chart_names_each_width_at_the_end_of_its_upper_bound():
    widths = (64, 1024)
    spec = vb.bounds_chart(widths=widths, heads=8, depth_range=(1, 12)).to_dict()
    views = list(_views(spec))
    (names,) = [v for v in views if v["mark"]["type"] == "text"]
    rows = _data(spec, names)
    assert [r["width"] for r in rows] == [f"{w:,}" for w in widths]
    (lines,) = [v for v in views if v["mark"]["type"] == "line"]
    every = _data(spec, lines)
    for r in rows:
        upper = [x for x in every if x["width"] == r["width"] and x["bound"] == "upper"]
        top = max(upper, key=lambda x: x["depth"])
        assert (r["depth"], r["log3_sep"]) == (top["depth"], top["log3_sep"])
    # one colour legend for all layers: no layer turns it off (that would remove it for all)
    colors = [v["encoding"]["color"] for v in views if "color" in v["encoding"]]
    assert len(colors) == 3 and all(c.get("legend", {}) is not None for c in colors)
    assert np.all([c["field"] == "width" for c in colors])


def test_narrow_points_are_hollow_in_the_loss_and_the_gap_chart():
    """Issue 17: a point narrower than 200 is drawn hollow (white inside), and the chart says so."""
    recs = records(NO_CROSSING)  # widths 16 to 645: below 200 up to 1e5, and depth 4 (144) at 1e6
    spec = vx.loss_chart(recs, tr.transitions(recs, n_boot=5)).to_dict()
    (points,) = [v for v in _views(spec) if v["mark"]["type"] == "point"]
    rows = _data(spec, points)
    assert {(r["depth"], r["budget"]) for r in rows if r["narrow"]} == {(2, 1e4), (2, 1e5), (4, 1e4), (4, 1e5), (4, 1e6)}
    fill = points["encoding"]["fill"]
    assert fill["condition"] == {"test": "datum.narrow", "value": "white"} and fill["field"] == "depth"
    assert vx.NARROW_NOTE in spec["title"]["subtitle"]
    gaps = vx.gap_chart(recs, tr.transitions(recs, n_boot=5)).to_dict()
    (means,) = [v for v in _views(gaps) if v["mark"]["type"] == "point" and v["mark"].get("filled")]
    assert [r["narrow"] for r in _data(gaps, means)] == [True, True, True, False]
    assert means["encoding"]["fill"]["condition"]["value"] == "white"
    assert any("width under 200" in line for line in gaps["title"]["subtitle"])
    assert max(len(line) for line in gaps["title"]["subtitle"] + spec["title"]["subtitle"]) <= 40  # fits a phone
    wide = [{**r, "width": r["width"] + 300} for r in recs]  # no narrow point: no note
    assert not any("hollow" in line for line in
                   vx.loss_chart(wide, tr.transitions(wide, n_boot=5)).to_dict()["title"]["subtitle"])
