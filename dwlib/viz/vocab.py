"""The vocabulary chapter's charts: the exact grid rank against width at fixed embedding rank, and
log3 of it against depth beside the bounds (data: :func:`dwlib.book.vocabulary.width_frame` and
:func:`dwlib.book.vocabulary.depth_frame`, from the stored sweep)."""

from __future__ import annotations

import altair as alt
import pandas as pd

RANK_ORDER = ["r = 1", "r = 2", "r = 3", "r = 4", "full rank (r = d_x, one head)"]
RANK_COLORS = alt.Scale(domain=RANK_ORDER, range=["#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#000000"])
DEPTH_QUANTITIES = ["measured grid rank", "polynomial-space bound at width r", "eq. (8) upper bound at width r",
                    "2020 upper bound at the full width"]
DEPTH_COLORS = alt.Scale(domain=DEPTH_QUANTITIES, range=["#000000", "#7f7f7f", "#d62728", "#1f77b4"])
DEPTH_DASH = alt.Scale(domain=DEPTH_QUANTITIES, range=[[1, 0], [2, 2], [5, 3], [5, 3]])


def width_chart(frame: pd.DataFrame):
    """Measured rank (log scale) against d_x, one line per embedding rank and one for the full-rank
    network, one panel per depth; hollow points where a head is narrower than r (d_a < r)."""
    legend = alt.Legend(orient="bottom", columns=2, title=None)
    base = alt.Chart(frame).encode(
        x=alt.X("width:Q", title="width d_x", scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(values=[1, 2, 4, 8, 16])),
        y=alt.Y("rank:Q", title="measured grid rank", scale=alt.Scale(type="log")),
        color=alt.Color("series:N", scale=RANK_COLORS, legend=legend),
        detail="series:N",
        tooltip=["series:N", "width:Q", "heads:Q", "rank:Q"])
    lines = base.mark_line()
    points = base.mark_point(size=45).encode(
        fill=alt.condition("datum.heads_hold_r", alt.Fill("series:N", scale=RANK_COLORS, legend=legend),
                           alt.value("white")))  # the same legend as the colour's: one legend, merged
    return (lines + points).properties(width=200, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=2).properties(
        title=alt.Title("Grid rank against width", subtitle="N = 4, V grown until the rank stops", anchor="start"))


def depth_chart(frame: pd.DataFrame):
    """log3 of the measured rank and of the bounds against depth, one panel per embedding rank; a
    hollow point is a rank the grid's cap set (the network's rank is at least that)."""
    legend = alt.Legend(orient="bottom", columns=1, title=None)  # one column: the names are long for a phone
    base = alt.Chart(frame).encode(
        x=alt.X("depth:O", title="depth L"),
        y=alt.Y("log3:Q", title="log3 of rank or bound"),
        color=alt.Color("quantity:N", scale=DEPTH_COLORS, legend=legend),
        tooltip=["quantity:N", "depth:O", alt.Tooltip("log3:Q", format=".2f")])
    lines = base.mark_line().encode(strokeDash=alt.StrokeDash("quantity:N", scale=DEPTH_DASH, legend=legend))
    points = base.transform_filter("datum.quantity == 'measured grid rank'").mark_point(size=45).encode(
        fill=alt.condition("datum.capped", alt.value("white"), alt.value("#000000")))
    return (lines + points).properties(width=150, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=3).properties(
        title=alt.Title("log3 rank against depth", subtitle="d_x = 8, two heads, N = 4", anchor="start"))
