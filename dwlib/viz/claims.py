"""The claims chapter's figure: every claim the book checks as one mark, in a row by what its
check rests on, coloured and shaped by the book's verdict (hover a mark for its claim)."""

from __future__ import annotations

import altair as alt
import pandas as pd

#: the verdicts in the table's order, each with a colour from Okabe and Ito's palette (told apart
#: with any common colour-vision deficiency) and a shape, so that no reader depends on colour alone
VERDICT_MARKS = {
    "agrees": ("#0072b2", "square"),
    "agrees within the tolerance": ("#56b4e9", "triangle-right"),
    "partly": ("#e69f00", "diamond"),
    "differs": ("#d55e00", "triangle-down"),
    "not reproduced": ("#cc79a7", "cross"),
    "not testable here": ("#999999", "circle"),
}
#: the horizontal distance between two claims of a row, in pixels
STEP = 18


def verdict_grid(data: pd.DataFrame, title: str, subtitle: list[str]) -> alt.Chart:
    """``data``: one row per claim with ``group`` (the row's label, in the order of first
    appearance), ``position`` (0, 1, ... within its group), ``verdict`` (a key of
    :data:`VERDICT_MARKS`) and ``claim`` (the tooltip)."""
    groups = list(dict.fromkeys(data["group"]))
    verdicts = [v for v in VERDICT_MARKS if v in set(data["verdict"])]
    colour = alt.Color("verdict:N", sort=verdicts,
                       scale=alt.Scale(domain=verdicts, range=[VERDICT_MARKS[v][0] for v in verdicts]),
                       legend=alt.Legend(title="the book's verdict", orient="bottom", columns=1, symbolSize=100))
    shape = alt.Shape("verdict:N", sort=verdicts,
                      scale=alt.Scale(domain=verdicts, range=[VERDICT_MARKS[v][1] for v in verdicts]),
                      legend=alt.Legend(title="the book's verdict", orient="bottom", columns=1, symbolSize=100))
    longest = int(data["position"].max()) + 1
    return alt.Chart(data).mark_point(filled=True, size=130, opacity=1).encode(
        x=alt.X("position:O", axis=None, scale=alt.Scale(paddingOuter=0.3)),
        y=alt.Y("group:N", sort=groups, title=None,
                axis=alt.Axis(labelLimit=160, labelFontSize=11, ticks=False, domain=False, labelPadding=4)),
        color=colour, shape=shape,
        tooltip=[alt.Tooltip("claim:N", title="claim"), alt.Tooltip("verdict:N", title="verdict")],
    ).properties(width=STEP * longest, height=26 * len(groups),
                 title=alt.Title(title, anchor="start", subtitle=subtitle))
