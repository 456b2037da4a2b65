"""The Context chapter's charts and explorer: rank collapse, induction heads, wide against deep.

Altair charts (drawn offline by :mod:`dwlib.viz.render`) of the data computed by
:mod:`dwlib.core.collapse`, :mod:`dwlib.experiments.induction` and
:mod:`dwlib.experiments.context`, and :func:`collapse_explorer`, an ipywidgets panel that
recomputes rank collapse in a live kernel.
"""

from __future__ import annotations

import math

import altair as alt
import ipywidgets
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core.collapse import VARIANTS, collapse_curves
from dwlib.errors import require
from dwlib.viz.layout import power_of_ten_labels
from dwlib.viz.render import slider
from dwlib.viz.widgets import explorer, int_slider


#: each variant's colour (Okabe and Ito's palette) and point shape, told apart without colour too
VARIANT_STYLE = dict(zip(VARIANTS, [("#0072b2", "circle"), ("#e69f00", "square"), ("#d55e00", "triangle-up"),
                                    ("#009e73", "diamond")]))


def collapse_chart(rows, width: int = 64, heads: int = 4, floor: float = 1e-17):
    """The rank residual through depth for every variant, with two sliders bound to
    log2(width) and log2(heads) that pick one (d_x, H) of the stored grid: interactive in the
    static book. Residuals at or below ``floor`` (exact zeros) are not drawn."""
    df = pd.DataFrame(rows)
    df = df[df["residual"] > floor]
    # the distance as a reader writes it in the tooltip (2.3 × 10⁻⁵, not 2.3e-5)
    df = df.assign(distance=[fmt.power_of_ten(math.log10(v), 2, superscript=True) for v in df["residual"]])
    widths, heads_ = sorted(df["width"].unique()), sorted(df["heads"].unique())
    require(width in widths and heads in heads_, f"(width, heads) = ({width}, {heads}) is not in the grid")
    lw = slider("log2_width", math.log2(widths[0]), math.log2(widths[-1]), 1, math.log2(width), label="log₂ width")
    lh = slider("log2_heads", math.log2(heads_[0]), math.log2(heads_[-1]), 1, math.log2(heads), label="log₂ heads")
    shown = alt.Chart(df).transform_filter(
        f"datum.width == pow(2, {lw.name}) && datum.heads == pow(2, {lh.name})")
    x = alt.X("layer:Q", title="layer l", scale=alt.Scale(domain=[0, int(df["layer"].max())]))
    # ticks as a reader writes them (10⁻⁶, not 1e-6)
    y = alt.Y("residual:Q", title="distance from rank one (relative)", scale=alt.Scale(type="log", domain=[floor, 2]),
              axis=alt.Axis(labelExpr=power_of_ten_labels()))
    # colour and shape: the variants told apart without colour too, in one legend
    legend = alt.Legend(orient="bottom", columns=2, symbolStrokeWidth=1.5)
    color = alt.Color("variant:N", title=None, legend=legend,
                      scale=alt.Scale(domain=list(VARIANTS), range=[VARIANT_STYLE[v][0] for v in VARIANTS]))
    shape = alt.Shape("variant:N", title=None, legend=legend,
                      scale=alt.Scale(domain=list(VARIANTS), range=[VARIANT_STYLE[v][1] for v in VARIANTS]))
    tooltip = [alt.Tooltip("variant:N", title="variant"), alt.Tooltip("layer:Q", title="layer l"),
               alt.Tooltip("distance:N", title="distance from rank one"), alt.Tooltip("width:Q", title="width"),
               alt.Tooltip("heads:Q", title="heads")]
    lines = alt.layer(shown.mark_line().encode(x=x, y=y, color=color, detail="variant:N"),
                      shown.mark_point(filled=True, size=36, opacity=1).encode(
                          x=x, y=y, color=color, shape=shape, tooltip=tooltip))
    label = (alt.Chart(pd.DataFrame({"i": [0]}))
             .transform_calculate(text=f"'width ' + pow(2, {lw.name}) + ', ' + pow(2, {lh.name})"
                                  f" + (pow(2, {lh.name}) == 1 ? ' head' : ' heads')")
             .mark_text(align="right", x=alt.expr("width - 4"), y=alt.expr("height / 2"), fontSize=13,
                        fontWeight="bold")
             .encode(text="text:N"))
    return alt.layer(lines, label).add_params(lw, lh).properties(width=560, height=300)


def collapse_explorer(depth: int = 12, width: int = 64, heads: int = 4) -> ipywidgets.VBox:
    """Depth, width and heads sliders; the panel recomputes the rank residual of
    :func:`dwlib.core.collapse.collapse_curves` for every variant at a few depths (rank
    collapse, Dong et al. 2021)."""

    def render(depth: int, width: int, heads: int) -> str:
        if width % heads:
            return f"<p>The number of heads, {heads}, must divide the width, {width}.</p>"
        rows = collapse_curves(depth, width, heads)
        shown = sorted({0, 1, 2, 3, depth // 2, depth})
        head = "".join(f"<th>{l} layer{'s' * (l != 1)}</th>" for l in shown)
        body = "".join(
            f"<tr><td>{v}</td>" + "".join(f"<td>{fmt.html_small(r['residual'])}</td>" for r in rows
                                         if r["variant"] == v and r["layer"] in shown) + "</tr>"
            for v in VARIANTS)
        return (f"<p>Relative distance of the tokens' representations from rank one after each number of layers, "
                f"at width {width} with {fmt.plural(heads, 'head')}, for 32 random tokens:</p>"
                f"<table><tr><th></th>{head}</tr>{body}</table>")

    return explorer(render,
                    depth=int_slider("depth", depth, 1, 24),
                    width=int_slider("width", width, 8, 128, 8),
                    heads=int_slider("heads", heads, 1, 8))


def induction_loss_chart(result: dict):
    """Loss on the repeated part (held-out batch) against training step, one line per depth,
    with the chance level log(vocab) dashed."""
    df = pd.DataFrame([{"layers": f"{r['depth']} layer" + ("s" if r["depth"] > 1 else ""), **p}
                       for r in result["runs"] for p in r["curve"]])
    lines = alt.Chart(df).mark_line().encode(
        x=alt.X("step:Q", title="training step"), y=alt.Y("loss:Q", title="loss on the repeat (nats)"),
        color=alt.Color("layers:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["layers:N", "step:Q", alt.Tooltip("loss:Q", format=".3f")])
    chance = alt.Chart(pd.DataFrame({"loss": [result["chance_loss"]], "text": ["chance: log(vocab)"]}))
    rule = chance.mark_rule(strokeDash=[4, 3], color="#777").encode(y="loss:Q")
    note = chance.mark_text(align="right", x=alt.expr("width - 4"), dy=-6, color="#555").encode(
        y="loss:Q", text="text:N")
    return alt.layer(lines, rule, note).properties(width=440, height=260)


def attention_heatmap(result: dict):
    """The attention weights of each run's best induction-scoring last-layer head on one
    sequence [s, s] (query position down, key position across), side by side: a wrapped
    concatenation (``columns``), so that a narrow column shows them one above the other."""
    charts = []
    for r in result["runs"]:
        p = np.array(r["example"]["pattern"])
        n = p.shape[0]
        df = pd.DataFrame([{"query": i, "key": j, "weight": float(p[i, j])} for i in range(n) for j in range(i + 1)])
        h = r["induction_head"]
        title = f"{r['depth']} layer{'s' if r['depth'] > 1 else ''}: layer {h['layer']}, head {h['head']}"
        charts.append(alt.Chart(df, title=title).mark_rect().encode(
            x=alt.X("key:O", title="key position j", axis=alt.Axis(values=list(range(0, n, 5)))),
            y=alt.Y("query:O", title="query position t", axis=alt.Axis(values=list(range(0, n, 5)))),
            color=alt.Color("weight:Q", scale=alt.Scale(scheme="greys", domain=[0, 1]), title="weight"),
            tooltip=["query:O", "key:O", alt.Tooltip("weight:Q", format=".3f")]).properties(width=240, height=240))
    return alt.concat(*charts, columns=len(charts))


def wide_deep_chart(table):
    """Brown et al.'s accuracies (wide against deep) per attention type and task: points above
    the diagonal are tasks where the single wide layer did better."""
    df = table[(table["attention"] != "Average") & (table["task"] != "Average")]
    lo, hi = float(min(df["deep"].min(), df["wide"].min())) - 2, float(max(df["deep"].max(), df["wide"].max())) + 2
    scale = alt.Scale(domain=[lo, hi], zero=False)
    legend = alt.Legend(orient="bottom", columns=2)  # below: the plot keeps its width on a phone
    pts = alt.Chart(df).mark_point(filled=True, size=60).encode(
        x=alt.X("deep:Q", scale=scale, title="deep (8 layers): accuracy %"),
        y=alt.Y("wide:Q", scale=scale, title="wide (1 layer): accuracy %"),
        color=alt.Color("task:N", title=None, legend=legend), shape=alt.Shape("task:N", legend=legend),
        tooltip=["attention:N", "task:N", "deep:Q", "wide:Q"])
    diag = alt.Chart(pd.DataFrame({"deep": [lo, hi], "wide": [lo, hi]})).mark_line(
        color="#999", strokeDash=[4, 3]).encode(x=alt.X("deep:Q", scale=scale), y=alt.Y("wide:Q", scale=scale))
    return alt.layer(diag, pts).properties(width=340, height=340)
