"""Two charts of the theory's consequences, drawn from rows the book computes.

- :func:`corollary1_width_chart`: Corollary 1's required width against the shallower depth.
- :func:`threshold_width_chart`: the width at which each depth of the paper's Figure 1 lies wholly
  below its threshold, beside real widths.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from dwlib.viz.layout import power_of_ten_labels

#: Okabe-Ito blue for the bars, vermilion for the reference lines (readable by colour-blind readers)
BAR, REFERENCE = "#0072b2", "#d55e00"


def corollary1_width_chart(rows: list[dict], width: int, heads: int, depth: int, deep_log10_width: float):
    """``rows``: per shallow depth, ``shallow depth``, ``log10 width`` and its label ``width``."""
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(
        x=alt.X("shallow depth:O", title=f"depth of the shallower network (the deep one has {depth})",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("log10 width:Q", title="log₁₀ of the width it needs"))
    ref = alt.Chart(pd.DataFrame({"y": [deep_log10_width]})).mark_rule(strokeDash=[4, 3], color="#555").encode(y="y:Q")
    return alt.layer(
        base.mark_bar(color=BAR, size=36),
        base.mark_text(dy=-8, fontSize=12).encode(text="width:N"),
        ref,
    ).properties(width=300, height=220, title=alt.Title(
        [f"Width needed to match depth {depth}", f"at width {width} ({heads} heads)"],
        subtitle="dashed: the deep network's own width"))


_HEIGHT = 240  # the plot's height in pixels: the bars' value labels are placed in pixels
_LABEL_GAP, _LABEL_HEIGHT = 3, 14  # a label's gap above its anchor, and its text's height


def _label_y(bar: float, lines: list[float], units_per_px: float) -> float:
    """Where a bar's value label is anchored (its text's bottom, less a gap): the bar's top, or,
    where a dashed line at ``lines`` would cross or touch the label there, just above that line."""
    y, room = bar, (2 * _LABEL_GAP + _LABEL_HEIGHT) * units_per_px
    while crossed := [r for r in lines if y < r <= y + room]:
        y = max(crossed) + units_per_px  # a pixel above the line, then the label's own gap
    return y


def threshold_width_chart(rows: list[dict], references: list[dict]):
    """``rows``: per depth, ``depth`` (text), ``log10 width`` and its label ``width``;
    ``references``: ``y`` (log10 width) and ``what``, drawn as dashed lines."""
    df = pd.DataFrame(rows)
    order = list(df["depth"])
    # room above the tallest bar for its value label, clear of the title's last line at any width
    top = float(df["log10 width"].max()) * 1.15
    y_title = "log₁₀ of the width (threshold above the depth)"
    base = alt.Chart(df).encode(x=alt.X("depth:N", sort=order, title="depth L (the curves of the paper's Figure 1)",
                                        axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("log10 width:Q", title=y_title,
                                        scale=alt.Scale(domain=[0, top])))
    refs = pd.DataFrame(references)
    # the dashed lines are named in the subtitle, top to bottom, not beside them: a name drawn in
    # the plot meets the short bars' value labels once a phone narrows the chart
    rule = alt.Chart(refs).mark_rule(strokeDash=[4, 3], color=REFERENCE).encode(
        y="y:Q", tooltip=alt.Tooltip("what:N", title="reference line"))
    named = [r["what"] for r in sorted(references, key=lambda r: -r["y"])]
    # a bar's value label sits on its bar, or just above the dashed line it would otherwise meet
    df["label y"] = [_label_y(y, [r["y"] for r in references], top / _HEIGHT) for y in df["log10 width"]]
    labels = alt.Chart(df).mark_text(baseline="bottom", dy=-_LABEL_GAP, fontSize=11).encode(
        x=alt.X("depth:N", sort=order), y=alt.Y("label y:Q", title=y_title,
                                                  scale=alt.Scale(domain=[0, top])), text="width:N")
    return alt.layer(base.mark_bar(color=BAR, size=30), labels,
                     rule).properties(width=320, height=_HEIGHT, title=alt.Title(
                         ["Width at which each depth lies", "wholly below its threshold"],
                         subtitle=["width above 3 to the depth: Theorem 1's regime", "dashed lines, top to bottom:", *named]))


#: Okabe-Ito colours, one per balanced partition of four positions (and shapes: told apart
#: without colour too)
_PARTITION_COLOURS = ["#0072b2", "#e69f00", "#009e73"]


def partition_rank_chart(ranks: pd.DataFrame):
    """Grid-matrix rank per function (rows of ``ranks``) and balanced partition (its columns),
    as grouped horizontal bars: one bar per partition in each function's row, the rank written
    at its end. Equal bars in a row: the function treats the partitions alike."""
    df = ranks.reset_index(names="function").melt(id_vars="function", var_name="partition", value_name="rank")
    functions, partitions = list(ranks.index), list(ranks.columns)
    colour = alt.Color("partition:N", sort=partitions, scale=alt.Scale(domain=partitions, range=_PARTITION_COLOURS),
                       legend=alt.Legend(title="partition A | B", orient="bottom", direction="vertical"))
    base = alt.Chart(df).encode(
        y=alt.Y("function:N", sort=functions, title=None, axis=alt.Axis(labelLimit=0, labelPadding=6)),
        yOffset=alt.YOffset("partition:N", sort=partitions),
        x=alt.X("rank:Q", title="grid-matrix rank (a lower bound on sep)",
                scale=alt.Scale(domainMin=0, nice=True)),
        tooltip=["function:N", "partition:N", "rank:Q"])
    return alt.layer(
        base.mark_bar(height={"band": 0.9}).encode(color=colour),
        base.mark_text(align="left", dx=3, fontSize=10).encode(text="rank:Q"),
    ).properties(width=150, height=alt.Step(13), title=alt.Title(
        "Grid rank of each function, per partition", anchor="start",
        subtitle=["four positions, six vectors each"]))


def bound_counts_chart(rows: pd.DataFrame, threshold: float):
    """What the bounds count, against depth: ``rows`` with ``depth L``, ``series``, ``log3``
    (log3 of a count or a printed bound) and ``theorem`` (lines are not joined across it), one
    line per series on a logarithmic axis, and a dashed rule at the depth ``threshold``."""
    order = list(dict.fromkeys(rows["series"]))
    colours = ["#d55e00", "#0072b2", "#000000"][:len(order)]
    dashes = [[6, 3], [], [2, 2]][:len(order)]
    legend = alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0, symbolType="stroke",
                        symbolStrokeWidth=2, symbolSize=300)
    enc = {"x": alt.X("depth L:Q", title="depth L (layers)", axis=alt.Axis(tickMinStep=1)),
           # the ticks as a reader writes them (10⁴, not 10,000), narrow enough for a phone's plot
           "y": alt.Y("log3:Q", scale=alt.Scale(type="log"), title="log₃ of the count or bound",
                      axis=alt.Axis(labelExpr=power_of_ten_labels())),
           # the legend draws each series' line, its dash included: told apart without colour too
           "color": alt.Color("series:N", sort=order, scale=alt.Scale(domain=order, range=colours), legend=legend),
           "strokeDash": alt.StrokeDash("series:N", sort=order, scale=alt.Scale(domain=order, range=dashes),
                                        legend=legend)}
    lines = alt.Chart(rows).mark_line(point=True, strokeWidth=2).encode(
        **enc, detail="theorem:N", tooltip=[alt.Tooltip("series:N", title="series"),
                                            alt.Tooltip("depth L:Q", title="depth L"),
                                            alt.Tooltip("log3:Q", format=",.1f", title="log₃")])
    rule = alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(color="#555", strokeDash=[4, 3]).encode(
        x="threshold:Q", tooltip=alt.Tooltip("threshold:Q", format=".2f", title="threshold log₃ dₓ (layers)"))
    return alt.layer(lines, rule).properties(width=300, height=240, title=alt.Title(
        "The bounds as counts", anchor="start", subtitle=["dashed grey line: the depth threshold"]))
