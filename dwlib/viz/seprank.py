"""The measured-separation-rank chapter's charts: log3 of the measured grid ranks beside the
bounds above them, and the singular values where floating point loses the rank.

The data are the stored sweep (:func:`dwlib.experiments.seprank_sweep.load`).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.viz.layout import power_of_ten_labels

QUANTITIES = ["measured grid rank", "polynomial-space bound", "Theorem 1 lower bound",
              "Theorem 1 upper bound", "Theorem 2 lower bound", "Theorem 2 upper bound"]
#: Okabe and Ito's blue and vermilion for the two theorems; each theorem's lower bound solid, its upper dashed
COLOR = dict(zip(QUANTITIES, ["#000000", "#7f7f7f", "#0072b2", "#0072b2", "#d55e00", "#d55e00"]))
DASHES = dict(zip(QUANTITIES, [[1, 0], [2, 2], [1, 0], [5, 3], [1, 0], [5, 3]]))


def scales(quantities) -> tuple[alt.Scale, alt.Scale]:
    """The colour and dash scales of the quantities a chart draws, in :data:`QUANTITIES` order:
    the legend lists only what some panel shows."""
    domain = [q for q in QUANTITIES if q in set(quantities)]
    return (alt.Scale(domain=domain, range=[COLOR[q] for q in domain]),
            alt.Scale(domain=domain, range=[DASHES[q] for q in domain]))


def bound_rows(ranks: pd.DataFrame, panel: str) -> pd.DataFrame:
    """One row per (shape, quantity) with its log3: the measured rank, the polynomial-space
    bound and, where a theorem applies, its two bounds; ``panel`` ("width" or "depth") names
    the column that splits the chart into panels."""
    rows = []
    for _, m in ranks.iterrows():
        base = {"depth L": m["depth"], "width d_x": m["width"], "panel": f"{panel} {m[panel]}"}
        rows.append({**base, "quantity": "measured grid rank", "log3": np.log(m["rank"]) / np.log(3)})
        rows.append({**base, "quantity": "polynomial-space bound", "log3": np.log(float(m["poly_dim"])) / np.log(3)})
        thm = {1: "Theorem 1", 2: "Theorem 2"}.get(m["theorem"])
        if thm is not None:
            for side in ("lower", "upper"):
                rows.append({**base, "quantity": f"{thm} {side} bound", "log3": m[f"log3_{side}"]})
    return pd.DataFrame(rows)


def rank_chart(ranks: pd.DataFrame, against: str = "depth"):
    """log3 of the measured rank and of its bounds against depth (one panel per width, widths
    1-3) or against width (one panel per depth).

    The panels are a wrapped facet (``columns``): a narrow column shows them one above the
    other. Colour and dash show the same quantity and share one legend. The subtitle says the
    measurements' positions and heads in words, as the chapter does (4 positions, 1 head)."""
    setting = ", ".join(f"{fmt.span(sorted({int(v) for v in ranks[col]}))} {noun}"
                        + ("s" if set(ranks[col]) != {1} else "")
                        for col, noun in (("positions", "position"), ("heads", "head")))
    if against == "depth":
        df, x = bound_rows(ranks[ranks["width"] <= 3], "width"), "depth L"
        title = alt.Title("log₃ rank against depth", subtitle=f"widths 1–3, {setting}", anchor="start")
    else:
        df, x = bound_rows(ranks, "depth"), "width d_x"
        title = alt.Title("log₃ rank against width", subtitle=f"depths 1–3, {setting}", anchor="start")
    # line swatches in the legend, so that it shows each quantity's dash (solid lower bound, dashed
    # upper) as well as its colour; the points take the colour under the same legend (one legend,
    # merged: a legend of None there would conflict with it)
    legend = alt.Legend(orient="bottom", columns=2, title=None, symbolType="stroke", symbolStrokeWidth=2,
                        symbolSize=400)
    colors, dashes = scales(df["quantity"])
    base = alt.Chart(df).encode(
        x=alt.X(f"{x}:O", title=fmt.math_label(x), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("log3:Q", title="log₃ of the rank or bound"),
        tooltip=["quantity:N", alt.Tooltip(f"{x}:O", title=fmt.math_label(x)),
                 alt.Tooltip("log3:Q", title="log₃", format=".2f")])
    lines = base.mark_line().encode(color=alt.Color("quantity:N", scale=colors, legend=legend),
                                    strokeDash=alt.StrokeDash("quantity:N", scale=dashes, legend=legend))
    points = base.mark_point(filled=True, size=40).encode(color=alt.Color("quantity:N", scale=colors, legend=legend))
    panels = df["panel"].nunique()
    return (lines + points).properties(width=170, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=panels).properties(title=title)


def singular_value_chart(case) -> alt.LayerChart:
    """The singular values (relative to the largest, log scale) of one float-against-exact
    case, with its exact rank (solid) and its float64 rank (dashed) marked and named at the top
    of each line, the vertical axis labelled in powers of ten (10⁻⁶)."""
    sv = pd.DataFrame({"index": np.arange(1, len(case["singular_values"]) + 1),
                       "sigma / sigma_max": case["singular_values"]})
    sv = sv[sv["sigma / sigma_max"] > 0]
    marks = pd.DataFrame({"index": [case["exact"], case["float"]], "what": ["exact rank", "float64 rank"]})
    marks["label"] = [f"{w}\n{int(i)}" for w, i in zip(marks["what"], marks["index"])]  # two lines: narrow
    # the exact rank right of its line, the float rank (the smaller) left of its own
    marks["align"] = ["left" if i >= marks["index"].max() else "right" for i in marks["index"]]
    line = alt.Chart(sv).mark_line(color="black").encode(
        x=alt.X("index:Q", title="singular value index"),
        y=alt.Y("sigma / sigma_max:Q", scale=alt.Scale(type="log"), title="singular value / largest",
                axis=alt.Axis(labelExpr=power_of_ten_labels())))
    what = alt.Scale(domain=list(marks["what"]), range=[RANK_MARKS[w][0] for w in marks["what"]])
    legend = alt.Legend(orient="bottom", title=None, symbolType="stroke", symbolStrokeWidth=2, symbolSize=300)
    rules = alt.Chart(marks).mark_rule(strokeWidth=1.5).encode(
        x="index:Q", color=alt.Color("what:N", scale=what, legend=legend),
        strokeDash=alt.StrokeDash("what:N", legend=legend, scale=alt.Scale(
            domain=list(marks["what"]), range=[RANK_MARKS[w][1] for w in marks["what"]])))
    names = alt.Chart(marks).mark_text(baseline="top", y=4, dx=alt.expr("datum.align == 'left' ? 4 : -4"),
                                       align=alt.expr("datum.align"), fontSize=11,
                                       lineBreak="\n").encode(
        x="index:Q", text="label:N", color=alt.Color("what:N", scale=what, legend=legend))
    return (line + rules + names).properties(width=520, height=220,
                                             title=f"Singular values at depth {int(case['depth'])}, width {int(case['width'])}")


#: the two ranks the singular-value chart marks: colour (Okabe and Ito's) and dash
RANK_MARKS = {"exact rank": ("#0072b2", [1, 0]), "float64 rank": ("#d55e00", [5, 3])}
