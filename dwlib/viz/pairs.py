"""Figure 2 of the paper in its own format, for a sweep read by a declared rule.

One column per doubling pair: above, the held-out loss of both depths against non-embedding
size (seed means with their 95% intervals); below, the gap between them (deeper minus shallower,
paired by seed) with its paired 95% interval, coloured by the side the rule's verdict puts ahead.
Everything it draws comes from :mod:`dwlib.experiments.pairs`.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from dwlib.errors import require
from dwlib.experiments import pairs
from dwlib.experiments.presets import WIDE
from dwlib.experiments.transition import loss_table

#: colours readable by colour-blind readers (blue / orange / grey), and a shape per verdict too
VERDICT_COLOURS = {pairs.BETTER: "#0072b2", pairs.WORSE: "#e69f00", pairs.UNRESOLVED: "#999999"}
VERDICT_SHAPES = {pairs.BETTER: "triangle-down", pairs.WORSE: "triangle-up", pairs.UNRESOLVED: "circle"}
#: one colour per depth across the panels, none of them a verdict's colour, so that a gap marker is
#: never read as a depth (Okabe-Ito: bluish green, reddish purple, black, sky blue)
DEPTH_COLOURS = ["#009e73", "#cc79a7", "#000000", "#56b4e9"]


def _loss_rows(records: list[dict], depths, level: float, budgets) -> pd.DataFrame:
    rows = []
    for r in loss_table(records):
        if r["depth"] not in depths or not r["losses"]:
            continue
        target = next(x["target_budget"] for x in records if (x["depth"], x["width"]) == (r["depth"], r["width"]))
        if budgets is not None and target not in budgets:
            continue
        iv = pairs.interval(r["losses"], level)
        half = iv["half_width"] or 0.0
        rows.append({"depth": f"L = {r['depth']}", "budget": r["budget"], "target": target, "width": r["width"],
                     "loss": iv["mean"],
                     "low": iv["mean"] - half, "high": iv["mean"] + half, "seeds": iv["n"],
                     "narrow": r["width"] < WIDE})
    return pd.DataFrame(rows)


def size_axis(sizes) -> alt.Axis:
    """An axis of non-embedding sizes with a tick at each size trained, written as the text writes
    them (100K, 1.6M)."""
    return alt.Axis(values=sorted({float(v) for v in sizes}), labelOverlap=True,
                    labelExpr="replace(format(datum.value, '~s'), 'k', 'K')")


def _panel(df: pd.DataFrame, shallow: int, deep: int, width: int, height: int, ydomain, colours):
    require(not df.empty, f"no finished run of depth {shallow} or {deep}")
    colours = {k: v for k, v in colours.items() if k in (f"L = {shallow}", f"L = {deep}")}  # the pair's own legend
    x = alt.X("budget:Q", scale=alt.Scale(type="log", nice=False, padding=12),
              axis=size_axis(df["target"]), title="non-embedding parameters")
    y = alt.Y("loss:Q", scale=alt.Scale(domain=ydomain, nice=False, zero=False), title="held-out loss (nats/token)")
    scale = alt.Scale(domain=list(colours), range=list(colours.values()))
    legend = alt.Legend(orient="top", title=None)  # one legend: Vega-Lite merges those of one field
    colour = alt.Color("depth:N", scale=scale, legend=legend)
    tips = ["depth:N", alt.Tooltip("width:Q", title="width"), alt.Tooltip("budget:Q", format=","),
            alt.Tooltip("loss:Q", format=".4f"), alt.Tooltip("low:Q", format=".4f"),
            alt.Tooltip("high:Q", format=".4f"), "seeds:Q"]
    base = alt.Chart(df)
    # wide networks filled, narrow ones hollow: the points are drawn by stroke and fill (a colour and
    # a fill encoding on one mark make Vega-Lite drop the colour, with a console warning)
    stroke = alt.Stroke("depth:N", scale=scale, legend=legend)
    fill = alt.condition("datum.narrow", alt.value("white"), alt.Fill("depth:N", scale=scale, legend=legend))
    return alt.layer(
        base.mark_line().encode(x=x, y=y, color=colour),
        base.mark_rule(strokeWidth=2).encode(x=x, y="low:Q", y2="high:Q", color=colour),
        base.mark_point(filled=True, size=40, strokeWidth=1.5).encode(x=x, y=y, stroke=stroke, fill=fill, tooltip=tips),
    ).properties(width=width, height=height, title=f"{shallow} vs {deep} layers")


def _gap_panel(rows: list[dict], width: int, height: int, ydomain):
    df = pd.DataFrame([{"budget": r["target_budget"], "gap": r["mean"], "low": r["low"], "high": r["high"],
                        "seeds": r["n"], "verdict": r["verdict"]} for r in rows])
    x = alt.X("budget:Q", scale=alt.Scale(type="log", nice=False, padding=12),
              axis=size_axis(df["budget"]), title="non-embedding parameters")
    y = alt.Y("gap:Q", scale=alt.Scale(domain=ydomain, nice=False), title="gap, deeper − shallower (nats)")
    verdicts = list(VERDICT_COLOURS)
    legend = alt.Legend(orient="bottom", title=None, columns=1)  # one legend, of colour and shape
    colour = alt.Color("verdict:N", scale=alt.Scale(domain=verdicts, range=list(VERDICT_COLOURS.values())),
                       legend=legend)
    shape = alt.Shape("verdict:N", scale=alt.Scale(domain=verdicts, range=list(VERDICT_SHAPES.values())),
                      legend=legend)
    tips = [alt.Tooltip("budget:Q", format=","), alt.Tooltip("gap:Q", format="+.4f"), alt.Tooltip("low:Q", format="+.4f"),
            alt.Tooltip("high:Q", format="+.4f"), "seeds:Q", "verdict:N"]
    base = alt.Chart(df)
    zero = alt.Chart(pd.DataFrame({"gap": [0.0]})).mark_rule(color="black", strokeDash=[4, 3]).encode(y="gap:Q")
    return alt.layer(
        zero,
        base.mark_rule(strokeWidth=2).encode(x=x, y="low:Q", y2="high:Q", color=colour),
        base.mark_point(filled=True, size=60).encode(x=x, y=y, color=colour, shape=shape, tooltip=tips),
    ).properties(width=width, height=height)


def figure2(records: list[dict], rule: dict, budgets=None, seeds=None, width: int = 220, height: int = 200,
            conclusion: str | None = None):
    """The two-column figure of ``rule``'s pairs from a sweep's ``records`` (at the chosen rates;
    ``budgets``: only these target budgets, default all; ``seeds``: only these seeds).
    ``conclusion``: what the figure shows, as the first line of its subtitle."""
    level = rule["level"]
    recs = [r for r in pairs.reported(records) if seeds is None or r["seed"] in seeds]
    require(recs, "figure2: no run at a chosen rate")
    frames = {tuple(p): _loss_rows(recs, tuple(p), level, budgets) for p in rule["pairs"]}
    # the loss axis holds every interval, not only the means and the single runs
    finished = [r["eval_loss"] for r in recs if r["eval_loss"] is not None and np.isfinite(r["eval_loss"])]
    finished += [v for df in frames.values() if not df.empty for v in (*df["low"], *df["high"]) if np.isfinite(v)]
    lo, hi = min(finished), max(finished)
    pad = 0.06 * (hi - lo or 1.0)
    views = []
    gap_rows = {tuple(p): pairs.points(recs, *p, level, budgets=budgets) for p in rule["pairs"]}
    ends = [v for rows in gap_rows.values() for r in rows for v in (r["low"], r["high"]) if np.isfinite(v)] + [0.0]
    gpad = 0.08 * (max(ends) - min(ends) or 0.1)
    depths = sorted({d for p in rule["pairs"] for d in p})
    colours = {f"L = {d}": c for d, c in zip(depths, DEPTH_COLOURS)}
    for shallow, deep in rule["pairs"]:
        views.append(_panel(frames[(shallow, deep)], shallow, deep, width, height, [lo - pad, hi + pad], colours))
        views.append(_gap_panel(gap_rows[(shallow, deep)], width, height, [min(ends) - gpad, max(ends) + gpad]))
    # one row per pair (its losses, then its gap), a wrapped concatenation whose views have widths
    # of their own: on a phone the book's charts script puts them one above the other and narrows
    # each to the column (book/assets/dwcharts.js)
    return alt.concat(*views, columns=2).resolve_scale(
        color="independent", fill="independent", stroke="independent", shape="independent").properties(
        title=alt.Title(["Held-out loss of doubling pairs", "at nearly equal size"],
                        subtitle=[*([conclusion] if conclusion else []),
                                  *([f"\u00b1: half-width of the {level:.0%} interval"] if "\u00b1" in (conclusion or "")
                                    else []),
                                  f"points: seed means, {level:.0%} intervals", f"hollow: width below {WIDE}",
                                  "beside or below: the paired gap"], anchor="start"))
