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


def _bundle(chart) -> tuple[dict, dict]:
    out = chart._repr_mimebundle_()
    return out if isinstance(out, tuple) else (out, {})


def test_a_chart_saves_the_same_output_when_its_numbers_differ_in_the_last_bit():
    # One width computed on two CPUs (seen: this book's threshold chart on AVX2 and AVX-512
    # machines); nbval compares saved outputs strictly, so the saved chart must not differ.
    a, b = 5058.386514860644, 5058.386514860643
    assert a != b

    def chart(x):
        frame = pd.DataFrame({"width": [x, 2 * x], "depth": [1, 2]})
        return alt.Chart(frame).mark_line().encode(x="width", y="depth").properties(title="t", width=x / 10)

    render.enable()
    saved = _bundle(chart(a))[0][render.MIMETYPE]
    assert saved == _bundle(chart(b))[0][render.MIMETYPE]  # the data, its hashed name, the width
    assert next(iter(saved["datasets"].values()))[0]["width"] == 5058.386515  # ten significant digits
    assert saved["width"] == 505.8386515


def test_chart_output_is_the_spec_as_data_under_the_mimetype_jupyterlab_draws():
    render.enable()
    chart = _chart()
    data, meta = _bundle(chart)
    # The spec itself, once: no HTML, no script, nothing a front end must fetch; the same
    # output on every run (nbval compares it strictly).
    assert set(data) == {render.MIMETYPE, "text/plain"}
    assert render.MIMETYPE == "application/vnd.vegalite.v5+json"  # what JupyterLab 4 ships
    # The spec Altair wrote, but declared Vega-Lite 5 as the MIME type says (vega-embed in
    # JupyterLab warns on a $schema of another major version than the Vega-Lite it runs).
    assert data[render.MIMETYPE] == {**chart.to_dict(), "$schema": render.MIME_SCHEMA}
    assert chart.to_dict()["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")
    assert meta[render.MIMETYPE]["embed_options"] == {"actions": False, "renderer": "svg"}
    assert _bundle(_chart()) == (data, meta)


def test_book_html_draws_with_the_pages_own_vega_embed_and_loads_nothing():
    spec = _chart().to_dict()
    spec["title"] = "a </script> in the data"
    html = render.chart_html(spec, {"actions": False})
    assert html.startswith('<div class="dw-chart"></div>')
    assert 'typeof vegaEmbed === "undefined"' in html
    code = html.split("})(", 1)[0]  # the code before the spec (the spec's $schema is only an id)
    assert "http" not in code and "createElement" not in code and ".src" not in code
    assert "require" not in html  # no require.js branch (it would fetch vega from a CDN)
    assert html.count("</script>") == 1  # the spec's own "</script>" is escaped
    args = html.split("})(", 1)[1].rsplit(");", 1)[0]
    assert json.loads("[" + args.replace("<\\/", "</") + "]") == [spec, {"actions": False}]


def test_book_plugin_turns_a_chart_output_into_the_book_html():
    import dataclasses

    from dwlib.book.charts import VegaLiteHTML

    @dataclasses.dataclass
    class Data:  # the fields of myst_nb's MimeData that the plugin reads
        mime_type: str
        content: object
        output_metadata: dict

    class Renderer:
        def render_text_html(self, data):
            return [(data.mime_type, data.content)]

    spec = _chart().to_dict()
    saved = {**spec, "$schema": render.MIME_SCHEMA}  # as a notebook holds it
    meta = {render.MIMETYPE: {"embed_options": {"actions": False}}}
    out = VegaLiteHTML.handle_mime(Renderer(), Data(render.MIMETYPE, saved, meta), False)
    # The book's pages run Altair's Vega-Lite (6): the spec gets Altair's $schema back.
    assert out == [("text/html", render.chart_html(spec, {"actions": False}))]
    assert VegaLiteHTML.handle_mime(Renderer(), Data("text/plain", "x", {}), False) is None
    assert ("*", render.MIMETYPE, 1) in VegaLiteHTML.mime_priority_overrides


def test_colab_renderer_is_altairs_offline_widget():
    render.enable(live=True)
    try:
        data, _ = _bundle(_chart())
        assert "application/vnd.jupyter.widget-view+json" in data
        # Its JavaScript is the bundle vl-convert-python ships: no import from any URL.
        esm = alt.JupyterChart._esm
        assert len(esm) > 100_000 and not re.search(r"""import[^;]*from\s*["']https?:""", esm)
    finally:
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


def test_explorer_offers_a_static_snapshot_beside_its_widget_view():
    a, b = widgets.int_slider("depth L", 6, 1, 24), widgets.log_slider("width", 1024.0, 1, 6)
    box = widgets.explorer(lambda a, b: f"<p>L={a}, d={b:g}</p>", a=a, b=b)
    data = box._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data  # the live widget, when trusted
    assert "depth L = 6, width = 1,024" in data["text/html"] and "<p>L=6, d=1024</p>" in data["text/html"]
    a.value = 7
    assert "depth L = 7" in box._repr_mimebundle_()["text/html"]


def test_explorer_carries_its_static_chart_for_the_book():
    """An explorer given a static chart saves the chart's Vega-Lite spec beside the widget view
    (the book draws it instead of the widget; _config.yml ranks the widget view last for HTML),
    with the book's embed options; without one, its output is as before."""
    a = widgets.int_slider("depth L", 6, 1, 24)
    chart = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")
    data, metadata = widgets.explorer(lambda a: f"<p>{a}</p>", static=chart, a=a)._repr_mimebundle_()
    assert {render.MIMETYPE, "application/vnd.jupyter.widget-view+json", "text/html", "text/plain"} == set(data)
    assert data[render.MIMETYPE]["mark"]["type"] == "point" and data["text/plain"].startswith(("VBox", "Explorer"))
    assert metadata[render.MIMETYPE]["embed_options"] == {"actions": False, "renderer": "svg"}
    assert render.MIMETYPE not in widgets.explorer(lambda a: "<p></p>", a=a)._repr_mimebundle_()
