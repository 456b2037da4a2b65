"""Two charts of the theory's consequences, drawn from rows the book computes.

- :func:`corollary1_width_chart`: Corollary 1's required width against the shallower depth.
- :func:`threshold_width_chart`: the width at which each depth of the paper's Figure 1 lies wholly
  below its threshold, beside real widths.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

#: Okabe-Ito blue for the bars, vermilion for the reference lines (readable by colour-blind readers)
BAR, REFERENCE = "#0072b2", "#d55e00"


def corollary1_width_chart(rows: list[dict], width: int, heads: int, depth: int, deep_log10_width: float):
    """``rows``: per shallow depth, ``shallow depth``, ``log10 width`` and its label ``width``."""
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(
        x=alt.X("shallow depth:O", title=f"depth of the shallower network (the deep one has {depth})",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("log10 width:Q", title="log10 of the width it needs"))
    ref = alt.Chart(pd.DataFrame({"y": [deep_log10_width]})).mark_rule(strokeDash=[4, 3], color="#555").encode(y="y:Q")
    return alt.layer(
        base.mark_bar(color=BAR, size=36),
        base.mark_text(dy=-8, fontSize=12).encode(text="width:N"),
        ref,
    ).properties(width=300, height=220, title=alt.Title(
        [f"Width needed to match depth {depth}", f"at width {width} ({heads} heads)"],
        subtitle="dashed: the deep network's own width"))


def threshold_width_chart(rows: list[dict], references: list[dict]):
    """``rows``: per depth, ``depth`` (text), ``log10 width`` and its label ``width``;
    ``references``: ``y`` (log10 width) and ``what``, drawn as dashed lines."""
    df = pd.DataFrame(rows)
    order = list(df["depth"])
    base = alt.Chart(df).encode(x=alt.X("depth:N", sort=order, title="depth L (the curves of the paper's Figure 1)",
                                        axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("log10 width:Q", title="log10 of the width with L < log3 d_x"))
    refs = pd.DataFrame(references)
    # the dashed lines are named in the subtitle, top to bottom, not beside them: a name drawn in
    # the plot meets the short bars' value labels once a phone narrows the chart
    rule = alt.Chart(refs).mark_rule(strokeDash=[4, 3], color=REFERENCE).encode(
        y="y:Q", tooltip=alt.Tooltip("what:N", title="dashed"))
    named = [r["what"] for r in sorted(references, key=lambda r: -r["y"])]
    return alt.layer(base.mark_bar(color=BAR, size=30), base.mark_text(dy=-8, fontSize=11).encode(text="width:N"),
                     rule).properties(width=320, height=240, title=alt.Title(
                         ["Width at which each depth lies", "wholly below its threshold"],
                         subtitle=["d_x > 3^L, Theorem 1's regime", "dashed lines, top to bottom:", *named]))
