"""Altair charts that work in the offline book and in a live kernel.

The book is read with no network, so a chart's HTML must not load Vega from a CDN. Altair
lets a renderer supply its own HTML template (``spec_to_html(template=...)``); ours draws
with the ``vegaEmbed`` that the book's pages already load from their static files, and only
when that global is absent (JupyterLab, Colab) loads the libraries from ``base_url``.

Output ids are numbered per kernel (not random), so a notebook re-run in a fresh kernel
produces identical outputs and nbval can compare them strictly.

Use :func:`enable` once per notebook (the chapters do it through :func:`setup`), then
display charts as usual. Static interactivity uses Altair parameters bound to HTML inputs
(:func:`slider`, :func:`log_slider`), which work in the rendered page without a kernel.
"""

from __future__ import annotations

import itertools
import json

import altair as alt
import jinja2

RENDERER = "dwbook"
CDN = "https://cdn.jsdelivr.net/npm"

# The chart's container, then a script that finds it as its previous sibling.
_TEMPLATE = jinja2.Template(
    """\
<div id="{{ output_div }}" class="dw-chart"></div>
<script type="text/javascript">
(function(spec, embedOpt) {
  const el = document.currentScript.previousElementSibling;
  function draw() {
    vegaEmbed(el, spec, embedOpt).catch(function(err) {
      el.innerHTML = '<pre class="dw-chart-error">' + err + '</pre>';
      console.error(err);
    });
  }
  if (typeof vegaEmbed !== "undefined") { draw(); return; }
  // No bundled libraries on this page (a live kernel): load them in order from base_url.
  const libs = ["vega@{{ vega_version }}", "vega-lite@{{ vegalite_version }}",
                "vega-embed@{{ vegaembed_version }}"];
  libs.reduce(function(done, lib) {
    return done.then(function() {
      return new Promise(function(resolve, reject) {
        const s = document.createElement("script");
        s.src = "{{ base_url }}/" + lib;
        s.onload = resolve;
        s.onerror = function() { reject(new Error("could not load " + s.src)); };
        document.head.appendChild(s);
      });
    });
  }, Promise.resolve()).then(draw, function(err) {
    el.innerHTML = '<pre class="dw-chart-error">' + err + '</pre>';
  });
})({{ spec }}, {{ embed_options }});
</script>
"""
)

_ids = itertools.count(1)


def _renderer(spec: dict, **metadata) -> dict:
    from altair.utils.html import spec_to_html

    embed_options = metadata.get("embed_options") or {}
    html = spec_to_html(
        spec,
        mode="vega-lite",
        vega_version=alt.VEGA_VERSION,
        vegalite_version=alt.VEGALITE_VERSION,
        vegaembed_version=alt.VEGAEMBED_VERSION,
        template=_TEMPLATE,
        base_url=CDN,
        output_div=f"dw-chart-{next(_ids)}",
        embed_options=embed_options,
        fullhtml=False,
    )
    return {"text/html": html, "text/plain": f"<{spec.get('$schema', 'vega-lite').rsplit('/', 1)[-1]} chart>"}


alt.renderers.register(RENDERER, _renderer)


def enable(actions: bool = False) -> None:
    """Render Altair charts with the book's offline-capable renderer.

    ``actions`` shows vega-embed's export menu (off by default: it links to an online editor).
    """
    alt.renderers.enable(RENDERER, embed_options={"actions": actions, "renderer": "svg"})
    # Keep data inline in the spec (the book has no server to fetch separate data files from).
    alt.data_transformers.disable_max_rows()


def slider(name: str, min: float, max: float, step: float, value: float, label: str | None = None):
    """An Altair parameter bound to a range input: static interactivity with no kernel."""
    return alt.param(name=name, value=value,
                     bind=alt.binding_range(min=min, max=max, step=step, name=(label or name) + " "))


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The chart's Vega-Lite spec as canonical JSON (stable across runs; used by tests)."""
    return json.dumps(chart.to_dict(), sort_keys=True)


def threshold_chart(models=(), width_range=(10, 2e5), depth_range=(1, 128)):
    """The two regimes over (width, depth): the curve L = log3(d_x) of section 4 splits the
    plane into Theorem 1's depth-efficient region (below) and Theorem 2's region (above).

    ``models``: dicts with ``name``, ``depth`` and ``width``, drawn as labelled points.
    A slider bound to log10(width) marks one width and prints its threshold; it works in
    the static book (no kernel).
    """
    import numpy as np
    import pandas as pd

    from dwlib.bounds import depth_threshold

    lo, hi = width_range
    widths = np.geomspace(lo, hi, 120)
    curve = pd.DataFrame({"width": widths, "threshold": depth_threshold(widths),
                          "floor": depth_range[0], "ceiling": depth_range[1]})
    x = alt.X("width:Q", scale=alt.Scale(type="log", domain=list(width_range)), title="width d_x")
    yscale = alt.Scale(type="log", domain=list(depth_range))
    base = alt.Chart(curve).encode(x=x)
    below = base.mark_area(opacity=0.18, color="#1f77b4").encode(
        y=alt.Y("floor:Q", scale=yscale, title="depth L"), y2="threshold:Q")
    above = base.mark_area(opacity=0.12, color="#d62728").encode(y=alt.Y("threshold:Q", scale=yscale),
                                                                 y2="ceiling:Q")
    line = base.mark_line(color="black").encode(y=alt.Y("threshold:Q", scale=yscale),
                                                tooltip=[alt.Tooltip("width:Q", format=",.0f"),
                                                         alt.Tooltip("threshold:Q", format=".2f")])
    labels = pd.DataFrame({"width": [lo * 1.3, lo * 1.3], "depth": [1.3, depth_range[1] / 1.6],
                           "text": ["L < log3 d_x: depth-efficient (Theorem 1)",
                                    "L > log3 d_x: depth and width alike (Theorem 2)"]})
    region_text = alt.Chart(labels).mark_text(align="left", fontSize=11, color="#444").encode(
        x=x, y=alt.Y("depth:Q", scale=yscale), text="text:N")
    layers = [below, above, line, region_text]
    if models:
        pts = pd.DataFrame(list(models))
        enc = dict(x=x, y=alt.Y("depth:Q", scale=yscale),
                   tooltip=["name:N", "depth:Q", alt.Tooltip("width:Q", format=",")])
        layers.append(alt.Chart(pts).mark_point(filled=True, size=50, color="black").encode(**enc))
        layers.append(alt.Chart(pts).mark_text(align="left", dx=6, dy=-6, fontSize=10).encode(
            text="name:N", **enc))
    log_w = slider("log10_width", float(np.log10(lo)), float(np.log10(hi)), 0.05, 3.0,
                   label="log10(width)")
    marker = (alt.Chart(pd.DataFrame({"i": [0]}))
              .transform_calculate(width=f"pow(10, {log_w.name})")
              .transform_calculate(threshold="log(datum.width) / log(3)")
              .transform_calculate(text="'d_x = ' + format(datum.width, ',.0f') + ': L_th = '"
                                        " + format(datum.threshold, '.2f')"))
    rule = marker.mark_rule(color="#555", strokeDash=[4, 3]).encode(x=x)
    dot = marker.mark_point(size=120, color="#ff7f0e", filled=True).encode(
        x=x, y=alt.Y("threshold:Q", scale=yscale))
    note = marker.mark_text(align="left", dx=8, dy=12, fontSize=12, fontWeight="bold",
                            color="#ff7f0e").encode(x=x, y=alt.Y("threshold:Q", scale=yscale),
                                                    text="text:N")
    layers += [rule, dot, note]
    return alt.layer(*layers).add_params(log_w).properties(width=560, height=340)
