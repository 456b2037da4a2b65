"""The vocabulary chapter's Figure 9.2 (rank and bounds against depth): its legend draws line
swatches in the colours and dashes the caption names, and the caption's equation is a link."""

from __future__ import annotations

import json
from pathlib import Path

from dwlib.book import vocabulary
from dwlib.experiments import vocab_sweep
from dwlib.viz import vocab as charts

ROOT = Path(__file__).resolve().parents[1]


def _layers(spec: dict) -> list[dict]:
    return spec["spec"]["layer"]


def test_the_depth_charts_legend_shows_lines_with_their_dashes():
    spec = charts.depth_chart(vocabulary.depth_frame(vocab_sweep.load())).to_dict()
    with_legend = [v for v in _layers(spec) if "color" in v.get("encoding", {}) and "field" in v["encoding"]["color"]]
    assert len(with_legend) == 1 and with_legend[0]["mark"]["type"] == "line"  # only the lines make the legend
    enc = with_legend[0]["encoding"]
    assert enc["color"]["legend"] == enc["strokeDash"]["legend"]
    assert enc["color"]["legend"]["symbolType"] == "stroke"
    assert enc["strokeDash"]["scale"]["domain"] == charts.DEPTH_QUANTITIES
    dashes = dict(zip(charts.DEPTH_QUANTITIES, enc["strokeDash"]["scale"]["range"]))
    assert dashes["measured grid rank"] == [1, 0] and all(dashes[q] != [1, 0] for q in charts.DEPTH_QUANTITIES[1:])


def test_the_depth_figures_caption_links_its_equation():
    nb = json.loads((ROOT / "book" / "vocabulary.ipynb").read_text())
    caption = next(c["metadata"]["mystnb"]["figure"]["caption"] for c in nb["cells"]
                   if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-vocab-depth")
    assert "eq. (" not in caption and "eq. {ref}`(8) <eq-8>`" in caption
    for word in ("grey dotted", "orange dashed", "blue dash-dotted"):
        assert word in caption


def test_the_width_charts_series_differ_in_shape_as_well_as_colour():
    """Figure 9.1: each embedding rank a colour and a point shape, both in its one legend."""
    spec = charts.width_chart(vocabulary.width_frame(vocab_sweep.load())).to_dict()
    enc = {**spec["spec"].get("encoding", {}), **_layers(spec)[1]["encoding"]}
    assert enc["shape"]["field"] == enc["color"]["field"] == "series"
    assert enc["shape"]["legend"] == enc["color"]["legend"]
    shapes = enc["shape"]["scale"]["range"]
    assert len(set(shapes)) == len(shapes) == len(charts.RANK_ORDER)
    assert "d_x" not in json.dumps(spec)  # the legend writes dₓ


def test_the_depth_charts_upper_bounds_differ_in_dash_as_well_as_colour():
    dashes = [tuple(d) for d in charts.DEPTH_DASH.range]
    assert len(set(dashes)) == len(dashes)
