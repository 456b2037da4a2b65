"""dwlib.viz.render and dwlib.viz.widgets: charts render offline and deterministically, and an
explorer's panel follows its controls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import pandas as pd

from dwlib.viz import render, widgets

ROOT = Path(__file__).resolve().parents[1]


def _chart():
    return alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})).mark_line().encode(x="x", y="y")


def _html(chart) -> str:
    bundle = chart._repr_mimebundle_()
    return (bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"]


def test_renderer_is_offline_first_and_deterministic():
    render.enable()
    html1, html2 = _html(_chart()), _html(_chart())
    # numbered ids, not random ones: a fresh kernel reproduces the same output
    n1 = int(re.search(r'id="dw-chart-(\d+)"', html1).group(1))
    n2 = int(re.search(r'id="dw-chart-(\d+)"', html2).group(1))
    assert n2 == n1 + 1
    assert html1.replace(f"dw-chart-{n1}", "X") == html2.replace(f"dw-chart-{n2}", "X")
    # the page's own vegaEmbed draws; nothing is ever fetched (no URL, no script loading)
    assert 'if (typeof vegaEmbed !== "undefined") { draw(); return; }' in html1
    script = html1.split("})({", 1)[0]  # the code around the spec (the spec's $schema is only an id)
    assert "http" not in script and "createElement" not in script and ".src" not in script
    assert "require" not in html1  # no require.js branch (it would fetch vega from a CDN)
    render.enable(live=True)
    assert alt.renderers.active == "default"
    render.enable()
    assert alt.renderers.active == render.RENDERER


def test_npm_pins_match_what_altair_writes():
    pins = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert pins["vega-lite"] == alt.VEGALITE_VERSION
    assert pins["vega-embed"].split(".")[0] == alt.VEGAEMBED_VERSION.split(".")[0]
    assert pins["vega"].split(".")[0] == alt.VEGA_VERSION.split(".")[0]


def test_explorer_panel_is_filled_at_once_and_follows_the_controls():
    a, b = widgets.int_slider("a", 2, 0, 10), widgets.log_slider("b", 100, 0, 4)
    panel = widgets.explorer(lambda a, b: f"<p>{a * b:g}</p>", a=a, b=b).children[1]
    assert panel.value == "<p>200</p>"
    a.value = 5
    assert panel.value == "<p>500</p>"
    b.value = 1000
    assert panel.value == "<p>5000</p>"
