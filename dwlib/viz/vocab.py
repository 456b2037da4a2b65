"""The vocabulary chapter's charts: the exact grid rank against width at fixed embedding rank, and
log3 of it against depth beside the bounds (data: :func:`dwlib.book.vocabulary.width_frame` and
:func:`dwlib.book.vocabulary.depth_frame`, from the stored sweep); and the trained comparison of the
pair 2 vs 4 layers at three input-embedding ranks (:func:`trained_chart`, from
:mod:`dwlib.experiments.vocab_trained`'s reading)."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.errors import require
from dwlib.experiments import pairs
from dwlib.experiments import vocab_trained as vt
from dwlib.viz import pairs as vp

#: the full-rank network's series in the width figure (its legend's words)
FULL_RANK = "full rank (r = d\u2093, one head)"
RANK_ORDER = ["r = 1", "r = 2", "r = 3", "r = 4", FULL_RANK]
#: each series' colour (Okabe and Ito's palette) and point shape: told apart without colour too
RANK_COLORS = alt.Scale(domain=RANK_ORDER, range=["#0072b2", "#009e73", "#e69f00", "#cc79a7", "#000000"])
RANK_SHAPES = alt.Scale(domain=RANK_ORDER, range=["circle", "square", "triangle-up", "diamond", "cross"])
DEPTH_QUANTITIES = ["measured grid rank", "polynomial-space bound at width r", "eq. (8) upper bound at width r",
                    "2020 upper bound at the full width"]
DEPTH_COLORS = alt.Scale(domain=DEPTH_QUANTITIES, range=["#000000", "#7f7f7f", "#d55e00", "#0072b2"])
#: solid, dotted, dashed and dash-dotted: the two upper bounds told apart without colour too
DEPTH_DASH = alt.Scale(domain=DEPTH_QUANTITIES, range=[[1, 0], [2, 2], [5, 3], [8, 3, 2, 3]])


def width_chart(frame: pd.DataFrame):
    """Measured rank (log scale) against d_x, one line per embedding rank and one for the full-rank
    network, one panel per depth; hollow points where a head is narrower than r (d_a < r). The
    series differ in colour and in their points' shape, which the one legend shows both."""
    legend = alt.Legend(orient="bottom", columns=2, title=None)
    base = alt.Chart(frame).encode(
        x=alt.X("width:Q", title="width", scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(values=[1, 2, 4, 8, 16])),
        y=alt.Y("rank:Q", title="measured grid rank", scale=alt.Scale(type="log")),
        color=alt.Color("series:N", scale=RANK_COLORS, legend=legend),
        detail="series:N",
        tooltip=["series:N", "width:Q", "heads:Q", "rank:Q"])
    lines = base.mark_line()
    points = base.mark_point(size=60, strokeWidth=1.5, opacity=1).encode(
        shape=alt.Shape("series:N", scale=RANK_SHAPES, legend=legend),
        fill=alt.condition("datum.heads_hold_r", alt.Fill("series:N", scale=RANK_COLORS, legend=legend),
                           alt.value("white")))  # the same legend as the colour's: one legend, merged
    return (lines + points).properties(width=200, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=2).properties(
        title=alt.Title("Grid rank against width", subtitle="4 positions, vocabulary grown until the rank stops", anchor="start"))


def depth_chart(frame: pd.DataFrame):
    """log3 of the measured rank and of the bounds against depth, one panel per embedding rank; a
    hollow point is a rank the grid's cap set (the network's rank is at least that)."""
    # one column (the names are long for a phone); line swatches, so that the legend shows each
    # quantity's colour and dash as the caption names them
    legend = alt.Legend(orient="bottom", columns=1, title=None, symbolType="stroke", symbolStrokeWidth=2,
                        symbolSize=400)
    base = alt.Chart(frame).encode(
        x=alt.X("depth:O", title="depth L"),
        y=alt.Y("log3:Q", title="log₃ of the rank or bound"),
        tooltip=["quantity:N", "depth:O", alt.Tooltip("log3:Q", format=".2f")])
    lines = base.mark_line().encode(color=alt.Color("quantity:N", scale=DEPTH_COLORS, legend=legend),
                                    strokeDash=alt.StrokeDash("quantity:N", scale=DEPTH_DASH, legend=legend))
    # the measured points in the measured line's colour, outside the legend (it shows the lines)
    points = base.transform_filter("datum.quantity == 'measured grid rank'").mark_point(
        size=45, color=DEPTH_COLORS.range[0]).encode(
        fill=alt.condition("datum.capped", alt.value("white"), alt.value("#000000")))
    return (lines + points).properties(width=150, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=3).properties(
        title=alt.Title("log₃ of the rank against depth", subtitle="width 8, two heads, 4 positions", anchor="start"))


# --- the trained comparison ------------------------------------------------------------------

#: how a difference of gaps reads (the rule's verdicts), each with the side of zero it names; drawn
#: in the colours and shapes of the Figure 2 view's sides (below zero blue, above orange, neither grey)
READING_LABELS = {vt.SUPPORTED: "supported (below zero)", vt.AGAINST: "against (above zero)",
                  vt.UNDECIDED: "undecided (contains zero)"}
#: pixels left of each panel of the trained chart for the rank names and ticks, the same in both
#: panels so that their shared axis lines up ("full rank" takes about 58 px in 11 px type)
RANK_LABEL_ROOM = 64
_SIDE_OF_READING = {vt.SUPPORTED: pairs.BETTER, vt.AGAINST: pairs.WORSE, vt.UNDECIDED: pairs.UNRESOLVED}


def _rank_name(label: str) -> str:
    return "full rank" if label == "full" else f"r = {label}"


def _interval_rows(items, what: str) -> list[dict]:
    rows = []
    for label, iv, verdict in items:
        if iv is None:
            continue
        finite = iv["half_width"] is not None
        rows.append({"rank": _rank_name(label), "mean": iv["mean"], "low": iv["low"] if finite else None,
                     "high": iv["high"] if finite else None, "seeds": iv["n"], what: verdict})
    return rows


def signed_ticks(low: float, high: float, count: int = 5) -> dict:
    """An axis's tick values over [low, high], about ``count`` of them at 1, 2 or 5 times a power of
    ten (the step Vega itself would take), and a label expression that writes each with its sign
    and as many decimals as the step needs: "+0.02", "−0.02" (a true minus sign, Vega's own), and
    zero as "0", never "+0.00"."""
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = power * (10 if raw / power >= math.sqrt(50) else 5 if raw / power >= math.sqrt(10) else
                    2 if raw / power >= math.sqrt(2) else 1)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    values = [round(k * step, decimals) for k in range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)]
    return {"values": [v if v else 0.0 for v in values],
            "labelExpr": f"datum.value == 0 ? '0' : format(datum.value, '+.{decimals}f')"}


def _interval_panel(df: pd.DataFrame, field: str, labels: dict, order, xscale, xtitle: str, ytitle,
                    width: int, height: int):
    """Points and paired intervals, one row per rank, coloured and shaped by the side of zero."""
    domain = list(labels.values())
    sides = [_SIDE_OF_READING.get(k, k) for k in labels]
    legend = alt.Legend(orient="bottom", title=None, columns=1)  # one legend, of colour and shape
    colour = alt.Color(f"{field}:N", scale=alt.Scale(domain=domain, range=[vp.VERDICT_COLOURS[s] for s in sides]),
                       legend=legend)
    shape = alt.Shape(f"{field}:N", scale=alt.Scale(domain=domain, range=[vp.VERDICT_SHAPES[s] for s in sides]),
                      legend=legend)
    # the same room for the rank names in both panels, so that their axes (one scale) line up
    y = alt.Y("rank:N", sort=list(order), title=ytitle,
              axis=alt.Axis(minExtent=RANK_LABEL_ROOM, maxExtent=RANK_LABEL_ROOM))
    x = alt.X("mean:Q", scale=xscale, title=xtitle, axis=alt.Axis(**signed_ticks(*xscale.domain)))
    tips = ["rank:N", alt.Tooltip("mean:Q", format="+.4f"), alt.Tooltip("low:Q", format="+.4f"),
            alt.Tooltip("high:Q", format="+.4f"), "seeds:Q", f"{field}:N"]
    base = alt.Chart(df.assign(**{field: df[field].map(labels)}))
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="black", strokeDash=[4, 3]).encode(
        x=alt.X("zero:Q", scale=xscale))
    return alt.layer(
        zero,
        base.transform_filter("isValid(datum.low)").mark_rule(strokeWidth=2).encode(
            x=alt.X("low:Q", scale=xscale), x2="high:Q", y=y, color=colour),
        base.mark_point(filled=True, size=70, opacity=1).encode(x=x, y=y, color=colour, shape=shape, tooltip=tips),
    ).properties(width=width, height=height)


def trained_chart(reading: dict, rule: dict, width: int = 240):
    """The trained comparison (:func:`dwlib.experiments.vocab_trained.read` or ``read_stored``, and
    its rule): above, per embedding rank, the pair's gap (deeper minus shallower held-out loss,
    paired by seed) with its paired interval, coloured by the side of zero it puts ahead; below, per
    small rank, the difference of gaps (r minus full rank) with its interval, coloured by the rule's
    reading. Both panels share one axis in nats, with zero dashed, so the two read against each other."""
    ranks = [str(r) for r in rule["ranks"]]
    small = [str(r) for r in rule["small_ranks"]]
    gaps = pd.DataFrame(_interval_rows(((label, reading["ranks"][label]["interval"], reading["ranks"][label]["verdict"])
                                        for label in ranks), "side"))
    diffs = pd.DataFrame(_interval_rows(((label, reading["differences"][label]["interval"],
                                          reading["differences"][label]["reading"]) for label in small), "reading"))
    require(not gaps.empty and not diffs.empty, "the trained comparison has no seed with every run of a rank yet")
    ends = [v for df in (gaps, diffs) for col in ("low", "high", "mean") for v in df[col] if v is not None
            and np.isfinite(v)] + [0.0]
    pad = 0.08 * (max(ends) - min(ends) or 0.1)
    xscale = alt.Scale(domain=[min(ends) - pad, max(ends) + pad], nice=False, zero=False)
    shallow, deep = rule["pair"]
    sides = {v: v for v in vp.VERDICT_COLOURS}
    top = _interval_panel(gaps, "side", sides, [_rank_name(r) for r in ranks], xscale,
                          f"gap, {deep} − {shallow} layers (nats)", None, width, 26 * len(ranks))
    bottom = _interval_panel(diffs, "reading", READING_LABELS, [_rank_name(r) for r in small], xscale,
                             "gap minus the gap at full rank (nats)", None, width, 26 * len(small))
    n = max(int(gaps["seeds"].max()), int(diffs["seeds"].max()))
    return alt.vconcat(top, bottom, spacing=14).resolve_scale(color="independent", shape="independent").properties(
        title=alt.Title([f"{shallow} vs {deep} layers ({fmt.count(rule['target_budget'])} parameters)",
                         "by input-embedding rank"],
                        subtitle=[f"points: means over {n} seeds", f"bars: paired {rule['level']:.0%} intervals",
                                  "left of the dashed zero: deeper ahead"], anchor="start"))
