"""Altair charts that work in the offline book and in a live kernel, with no network.

A chart's output is its Vega-Lite spec as data, under the MIME type that front ends render
with the Vega they ship (JupyterLab, Jupyter Notebook 7 and VS Code render
``application/vnd.vegalite.v5+json`` with their bundled Vega-Lite 5; none ships Vega-Lite 6,
Altair's own MIME type; the payload's ``$schema`` says Vega-Lite 5 accordingly, and the live
test draws every chapter's charts there). Nothing is fetched: no CDN, no require.js. A notebook saved with
outputs shows its charts when opened, before it runs (the spec is data, not a script, so an
untrusted notebook draws it too).

- The offline book turns that output into HTML at build time (:func:`chart_html`, hooked into
  myst-nb by :class:`dwlib.book.charts.VegaLiteHTML`): a container and a script calling the
  ``vegaEmbed`` that the book's pages load from their own static files (Vega-Lite 6, the
  version Altair writes for: :func:`book_spec` gives the spec Altair's ``$schema`` back).
- Colab renders no Vega MIME type: there :func:`enable` uses Altair's JupyterChart widget in
  its offline mode, whose JavaScript comes from the installed ``vl-convert-python`` package
  (``pip install dwlib[colab]``).

Use :func:`enable` once per notebook (the chapters do it through :func:`dwlib.book.setup`),
then display charts as usual. Static interactivity uses Altair parameters bound to HTML
inputs (:func:`slider`), which work in the rendered page without a kernel. Also here: the
helpers that charts share (:func:`spec_json`, :func:`short_label`, :func:`place_labels`); the
charts themselves live beside their subject (:mod:`dwlib.viz.bounds`, ...).
"""

from __future__ import annotations

import html
import json

import altair as alt

from dwlib import fmt
from dwlib.env import on_colab

RENDERER = "dwbook"
MIMETYPE = "application/vnd.vegalite.v5+json"
# The $schema of a chart under MIMETYPE: vega-embed compares it with the Vega-Lite it runs and
# warns on a different major version.
MIME_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

# The chart's container, then a script that finds it as its previous sibling (no id needed).
_SCRIPT = """\
<div class="dw-chart"></div>
<script type="text/javascript">
(function(spec, embedOpt) {
  const el = document.currentScript.previousElementSibling;
  if (typeof vegaEmbed === "undefined") {  // never fetched: the book's pages bring vegaEmbed
    el.innerHTML = '<pre class="dw-chart-error">Vega-Embed is not on this page.</pre>';
    return;
  }
  vegaEmbed(el, spec, embedOpt).catch(function(err) {
    el.innerHTML = '<pre class="dw-chart-error">' + err + '</pre>';
    console.error(err);
  });
})(%s, %s);
</script>
"""


def chart_html(spec: dict, embed_options: dict | None = None) -> str:
    """The book's HTML for a chart: its container and a script drawing ``spec`` with the
    page's own ``vegaEmbed``. Loads nothing; ``</`` in the spec is escaped for the script."""
    def js(value) -> str:
        return json.dumps(value, sort_keys=True).replace("</", "<\\/")
    return _SCRIPT % (js(spec), js(embed_options or {}))


def book_spec(spec: dict) -> dict:
    """A chart's spec as saved under :data:`MIMETYPE`, for the book's pages: with the ``$schema``
    Altair wrote (the Vega-Lite version the book loads)."""
    return {**spec, "$schema": alt.SCHEMA_URL}


def _renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    spec = fmt.stable(spec)  # every number the output saves, not only the data's (see _inline_values)
    title = spec.get("title")
    text = f"<Altair chart{': ' + html.escape(str(title)) if isinstance(title, str) else ''}>"
    embed = {"embed_options": metadata.get("embed_options") or {}}
    return {MIMETYPE: {**spec, "$schema": MIME_SCHEMA}, "text/plain": text}, {MIMETYPE: embed}


alt.renderers.register(RENDERER, _renderer)


def mime_bundle(chart: alt.TopLevelMixin) -> tuple[dict, dict]:
    """A chart's output as the book's renderer writes it (data, metadata), whichever renderer is
    enabled: for a chart shown inside another output (an explorer's static form)."""
    options = {"actions": False, "renderer": "svg"}
    return _renderer(chart.to_dict(), embed_options=options)


def _inline_values(data) -> dict:
    """Altair's data transformer for dwlib's charts: the data inline in the spec (the book has no
    server to fetch data files from; no row limit), real numbers to
    :data:`dwlib.fmt.STABLE_DIGITS` significant digits (:func:`dwlib.fmt.stable`), so that a
    chart's saved data, and the dataset name Altair hashes from it, are the same on every CPU."""
    values = alt.utils.data.to_values(data)
    return {**values, "values": fmt.stable(values["values"])} if "values" in values else values


alt.data_transformers.register(RENDERER, _inline_values)


def enable(actions: bool = False, live: bool | None = None) -> None:
    """Render Altair charts as Vega-Lite data (``live=False``: JupyterLab, Notebook, VS Code,
    the book), or with Altair's offline JupyterChart widget (``live=True``; default: only on
    Colab, which renders no Vega MIME type).

    ``actions`` shows vega-embed's export menu (off by default: it links to an online editor).
    """
    if on_colab() if live is None else live:
        alt.renderers.enable("jupyter", offline=True, embed_options={"actions": actions})
    else:
        alt.renderers.enable(RENDERER, embed_options={"actions": actions, "renderer": "svg"})
    alt.data_transformers.enable(RENDERER)


def slider(name: str, min: float, max: float, step: float, value: float, label: str | None = None):
    """An Altair parameter bound to a range input: static interactivity with no kernel."""
    return alt.param(name=name, value=value,
                     bind=alt.binding_range(min=min, max=max, step=step, name=(label or name) + " "))


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The chart's Vega-Lite spec as canonical JSON (stable across runs; used by tests)."""
    return json.dumps(chart.to_dict(), sort_keys=True)


def short_label(names: list[str], most: int = 2) -> str:
    """A point's label: at most ``most`` names (size suffixes in parentheses dropped), then +k."""
    short = [n.split(" (")[0] for n in names]
    return " / ".join(short[:most]) + (f" +{len(short) - most}" if len(short) > most else "")


def place_labels(xs, ys, texts, width: int, height: int, font_size: float = 9.0, obstacles=()) -> list:
    """Greedy placement of point labels in pixel space (x, y in pixels, y down).

    For each point, in order, the first of a few candidate positions (right or left of the
    point, level, above or below) whose box stays inside the chart and overlaps no point, no
    label placed so far and none of ``obstacles`` (boxes (x0, y0, x1, y1) of other text the
    chart draws); if none is free, the one with the least overlap.  Returns
    (align, dx, dy) per point, offsets in pixels from the point to the label's anchor.
    Deterministic (no randomness), so the chart's spec is the same on every run.
    """
    char_w, box_h, gap = 0.56 * font_size, font_size + 2, 7
    candidates = [("left", gap, 0), ("left", gap, -box_h), ("left", gap, box_h),
                  ("right", -gap, 0), ("right", -gap, -box_h), ("right", -gap, box_h),
                  ("left", gap, -2 * box_h), ("left", gap, 2 * box_h),
                  ("right", -gap, -2 * box_h), ("right", -gap, 2 * box_h),
                  ("left", gap, -3 * box_h), ("left", gap, 3 * box_h),
                  ("right", -gap, -3 * box_h), ("right", -gap, 3 * box_h)]
    dots = [(x - 4, y - 4, x + 4, y + 4) for x, y in zip(xs, ys)]
    placed: list = list(obstacles)
    out = []

    def overlap(a, b):
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        return w * h if w > 0 and h > 0 else 0.0

    for i, (x, y, text) in enumerate(zip(xs, ys, texts)):
        w = char_w * len(text)
        best, best_cost = None, None
        for align, dx, dy in candidates:
            x0 = x + dx if align == "left" else x + dx - w
            box = (x0, y + dy - box_h / 2, x0 + w, y + dy + box_h / 2)
            outside = (max(0, -box[0]) + max(0, box[2] - width)
                       + max(0, -box[1]) + max(0, box[3] - height)) * box_h
            cost = outside + sum(overlap(box, o) for o in placed) + sum(
                overlap(box, d) for j, d in enumerate(dots) if j != i)
            if best_cost is None or cost < best_cost:
                best, best_cost = (align, dx, dy, box), cost
            if cost == 0:
                break
        placed.append(best[3])
        out.append(best[:3])
    return out
