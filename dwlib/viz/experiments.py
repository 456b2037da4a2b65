"""Charts of the trained sweeps (the experiments chapter): loss against size, transitions.

All work in the static book: the pair picker of :func:`loss_chart` is a bound Vega parameter.
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from dwlib.errors import require
from dwlib.experiments.presets import WIDE
from dwlib.experiments.transition import fit_transitions, loss_table, paired_gaps, pair_depth, transitions

DEPTH_SCHEME = "viridis"
USED, LEFT_OUT = "in the analysis", "left out: size stops paying"
NARROW_NOTE = f"hollow points: width under {WIDE}"


def _hollow_if(test: str, color_field: str, scale: alt.Scale, **encoding):
    """Point encodings that draw a point filled in its colour, or hollow (white inside, the
    colour as outline) where the Vega expression ``test`` holds: the narrow points."""
    return {"fill": alt.condition(test, alt.value("white"), alt.Fill(color_field, scale=scale, legend=None)),
            "stroke": alt.Stroke(color_field, scale=scale, legend=None), **encoding}


def json_list(values) -> str:
    """A Python list as a Vega expression array literal."""
    return json.dumps(values)


def loss_chart(records: list[dict], results: list[dict] | None = None, used: list[dict] | None = None,
               width: int = 480, height: int = 360):
    """The Figure 2 analogue: final held-out loss against non-embedding budget, one line per
    depth, error bars from seeds (mean -+ one standard deviation), with a choice of (shallow,
    deep) pair (radio buttons labelled "6 vs 12", ...) that highlights the pair and marks its
    transition (if the pair crosses).

    ``results``: the output of :func:`~dwlib.experiments.transition.transitions` (default:
    adjacent pairs, computed here). ``used``: the records the transitions were computed from,
    when that is a subset (:func:`~dwlib.experiments.transition.size_limited`): the other points
    are drawn as crosses joined by dashed lines, with a legend entry saying they are left out.
    """
    results = transitions(records) if results is None else results
    rows = [r for r in loss_table(records) if r["losses"]]
    kept = None if used is None else {(r["depth"], r["width"]) for r in used}
    df = pd.DataFrame([{"depth": r["depth"], "width": r["width"], "narrow": r["width"] < WIDE,
                        "budget": r["budget"], "loss": r["mean"],
                        "low": r["mean"] - (r["std"] if r["seeds"] > 1 else 0.0),
                        "high": r["mean"] + (r["std"] if r["seeds"] > 1 else 0.0), "seeds": r["seeds"],
                        "point": USED if kept is None or (r["depth"], r["width"]) in kept else LEFT_OUT}
                       for r in rows])
    pairs = json_list([[t["shallow"], t["deep"]] for t in results])
    crossings = json_list([t["budget"] if t["budget"] is not None else -1 for t in results])
    pick = alt.param(name="pair", value=0, bind=alt.binding_radio(
        options=list(range(len(results))), labels=[f"{t['shallow']} vs {t['deep']}" for t in results],
        name="pair of depths "))
    in_pair = f"indexof({pairs}[pair], datum.depth) >= 0"
    span = [float(df["budget"].min()) / 1.25, float(df["budget"].max()) * 1.25]  # the measured range, a margin either side
    x = alt.X("budget:Q", scale=alt.Scale(type="log", domain=span, nice=False),
              axis=alt.Axis(format="~s", labelOverlap=True), title="non-embedding parameters (12 L d²)")
    y = alt.Y("loss:Q", scale=alt.Scale(zero=False), title="held-out loss (nats/token)")
    color = alt.Color("depth:O", scale=alt.Scale(scheme=DEPTH_SCHEME), title="depth",
                      legend=alt.Legend(orient="bottom"))  # below: the plot keeps its width on a phone
    base = alt.Chart(df).transform_calculate(highlight=f"{in_pair} ? 1 : 0.18")
    opacity = alt.Opacity("highlight:Q", scale=None, legend=None)
    tips = [alt.Tooltip("depth:O", title="depth"), alt.Tooltip("width:Q", title="width"),
            alt.Tooltip("budget:Q", format=",", title="non-embedding parameters"), alt.Tooltip("loss:Q", format=".4f", title="mean loss"),
            alt.Tooltip("seeds:Q"), alt.Tooltip("point:N")]
    layers = [base.mark_errorbar(ticks=True).encode(x=x, y=alt.Y("low:Q", title=""), y2="high:Q", color=color,
                                                     opacity=opacity)]
    if kept is not None and (df["point"] == LEFT_OUT).any():
        # every point joined by a dashed line, the points used by a solid one drawn over it:
        # only the segments to points left out stay dashed
        layers.append(base.mark_line(strokeDash=[4, 3]).encode(x=x, y=y, color=color, opacity=opacity))
    layers.append(base.transform_filter(f"datum.point == '{USED}'").mark_line().encode(
        x=x, y=y, color=color, opacity=opacity))
    shape = alt.Shape("point:N", scale=alt.Scale(domain=[USED, LEFT_OUT], range=["circle", "cross"]),
                      title="points", legend=alt.Legend(orient="bottom", columns=1)
                      if kept is not None and (df["point"] == LEFT_OUT).any() else None)
    layers.append(base.mark_point(filled=True, size=45, strokeWidth=1.5).encode(
        **_hollow_if("datum.narrow", "depth:O", alt.Scale(scheme=DEPTH_SCHEME), x=x, y=y, opacity=opacity,
                     shape=shape, tooltip=tips)))
    marker = (alt.Chart(pd.DataFrame({"i": [0]}))
              .transform_calculate(budget=f"{crossings}[pair]",
                                   text=f"'depths ' + {pairs}[pair][0] + ' vs ' + {pairs}[pair][1]"
                                        f" + ({crossings}[pair] > 0 ? ': transition at '"
                                        f" + format({crossings}[pair], '.3s') : ': no transition in range')"))
    layers.append(marker.transform_filter("datum.budget > 0").mark_rule(color="#d62728", strokeDash=[5, 3])
                  .encode(x=x))
    layers.append(marker.mark_text(align="left", x=8, y=10, fontSize=12, fontWeight="bold", color="#d62728",
                                   limit=alt.expr("width - 16")).encode(text="text:N"))
    return (alt.layer(*layers).add_params(pick)
            .properties(width=width, height=height,
                        title=alt.Title("Loss against size at each depth", anchor="start",
                                        # one short line each: a title does not wrap on a phone
                                        subtitle=["seed mean ± std"] + ([NARROW_NOTE] if df["narrow"].any() else []))))


def gap_chart(records: list[dict], results: list[dict], width: int = 480, height: int = 320):
    """The gap between the two depths of each pair against the budget: deep minus shallow
    held-out loss, seed by seed (small points) and their mean (line), from
    :func:`~dwlib.experiments.transition.paired_gaps`. Above zero the shallower network is
    better; a pair's transition is where its line falls through zero, marked (with the seed
    bootstrap's 16th-84th percentile as a horizontal bar) for each pair of ``results`` that
    crosses. Unlike a chart of transition budgets, it shows the data when no pair crosses.
    """
    require(len(results) > 0, "gap_chart needs at least one pair")
    names = [f"{t['shallow']} vs {t['deep']}" for t in results]
    widths = {(r["depth"], r["target_budget"]): r["width"] for r in records}
    means, seeds = [], []
    for t, name in zip(results, names):
        for row in paired_gaps(records, t["shallow"], t["deep"]):
            n = row["target_budget"]
            means.append({"pair": name, "budget": n, "gap": row["mean"], "seeds": len(row["gaps"]),
                          "narrow": min(widths[(t["shallow"], n)], widths[(t["deep"], n)]) < WIDE})
            seeds += [{"pair": name, "budget": row["target_budget"], "gap": g, "seed": s}
                      for s, g in row["gaps"].items()]
    require(len(means) > 0, "gap_chart: no budget is measured at both depths of any pair")
    budgets = [m["budget"] for m in means]
    gaps = [s["gap"] for s in seeds]
    span = [min(budgets) / 1.25, max(budgets) * 1.25]
    top = max(max(gaps), 0.0)
    bottom = min(min(gaps), 0.0)
    pad = 0.08 * (top - bottom or 1.0)
    xscale = alt.Scale(type="log", domain=span, nice=False)
    x = alt.X("budget:Q", scale=xscale, axis=alt.Axis(format="~s", labelOverlap=True),
              title="non-embedding parameters N (target budget)")
    y = alt.Y("gap:Q", scale=alt.Scale(domain=[bottom - pad, top + pad], nice=False),
              title="loss gap, deep − shallow (nats/token)")
    color = alt.Color("pair:N", sort=names, scale=alt.Scale(scheme="dark2"), title="pair of depths",
                      legend=alt.Legend(orient="bottom"))
    zero = alt.Chart(pd.DataFrame({"gap": [0.0]})).mark_rule(color="black").encode(y=y)
    sides = pd.DataFrame({"gap": [top + pad, bottom - pad], "text": ["deeper network worse", "deeper network better"],
                          "baseline": ["top", "bottom"], "dy": [4, -4]})
    # in the margins above and below the data: which side of zero means what
    side_text = alt.Chart(sides).mark_text(align="left", fontSize=11, color="#555", fontStyle="italic",
                                           baseline=alt.expr("datum.baseline"), dy=alt.expr("datum.dy")).encode(
        x=alt.value(6), y=y, text="text:N")
    tips = ["pair:N", alt.Tooltip("budget:Q", format=",", title="non-embedding parameters"), alt.Tooltip("gap:Q", format=".3f")]
    layers = [zero, side_text,
              alt.Chart(pd.DataFrame(seeds)).mark_point(size=18, opacity=0.5).encode(
                  x=x, y=y, color=color, tooltip=tips + ["seed:N"]),
              alt.Chart(pd.DataFrame(means)).mark_line().encode(x=x, y=y, color=color),
              alt.Chart(pd.DataFrame(means)).mark_point(filled=True, size=40, strokeWidth=1.5).encode(
                  **_hollow_if("datum.narrow", "pair:N", alt.Scale(scheme="dark2", domain=names), x=x, y=y,
                               tooltip=tips + ["seeds:Q", "narrow:N"]))]
    crossed = [{"pair": n, "budget": t["budget"], "low": t["budget_p16"] or t["budget"],
                "high": t["budget_p84"] or t["budget"], "gap": 0.0}
               for t, n in zip(results, names) if t["status"] == "crossing"]
    if crossed:
        c = alt.Chart(pd.DataFrame(crossed))
        layers += [c.mark_rule(size=3).encode(x=alt.X("low:Q", scale=xscale), x2="high:Q", y=y, color=color),
                   c.mark_point(shape="diamond", filled=True, size=110, stroke="black").encode(
                       x=x, y=y, color=color, tooltip=["pair:N", alt.Tooltip("budget:Q", format=".3s")])]
    note = ["per seed (small points), mean (line)"]  # short lines: a title does not wrap on a phone
    if any(m["narrow"] for m in means):
        note.append(f"hollow: a network of width under {WIDE}")
    return alt.layer(*layers).properties(width=width, height=height, title=alt.Title(
        "Deep minus shallow held-out loss", subtitle=note, anchor="start"))


def transition_chart(results: list[dict], depth_of_pair: str = "midpoint", width: int = 420, height: int = 300):
    """Transition budget against depth (log scale) with the bootstrap interval (16th-84th
    percentile) and the least-squares line log N_t = alpha + beta L when two or more pairs cross.

    Every pair is drawn: a pair without a transition as a grey bar over the budgets both its
    depths cover, labelled with its status ("shallow wins", ...). The axes span every pair, so
    the chart is drawn (with no empty-data warning) even when no pair crosses.
    """
    require(len(results) > 0, "transition_chart needs at least one pair")
    rows = [{"depth": pair_depth(t, depth_of_pair), "pair": f"{t['shallow']} vs {t['deep']}",
             "status": t["status"], "budget": t["budget"], "low": t["budget_p16"] or t["budget"],
             "high": t["budget_p84"] or t["budget"], "p_crossing": t["p_crossing"],
             "range_low": t["range"][0], "range_high": t["range"][1]} for t in results]
    depths = [r["depth"] for r in rows]
    lows = [r["range_low"] for r in rows] + [r["low"] for r in rows if r["low"] is not None]
    highs = [r["range_high"] for r in rows] + [r["high"] for r in rows if r["high"] is not None]
    xdomain = [min(depths) - 0.5, max(depths) + 0.5]
    ydomain = [min(lows) / 1.25, max(highs) * 1.25]
    x = alt.X("depth:Q", title=f"depth ({depth_of_pair} of the pair)", scale=alt.Scale(domain=xdomain, nice=False))
    yscale = alt.Scale(type="log", domain=ydomain, nice=False)
    y = alt.Y("budget:Q", scale=yscale, title="transition size (non-embedding parameters)", axis=alt.Axis(format="~s"))
    layers = []
    crossed = pd.DataFrame([r for r in rows if r["status"] == "crossing"])
    if len(crossed):
        tips = ["pair:N", alt.Tooltip("budget:Q", format=".3s"), alt.Tooltip("p_crossing:Q", format=".2f")]
        layers += [alt.Chart(crossed).mark_errorbar(ticks=True).encode(x=x, y=alt.Y("low:Q", scale=yscale),
                                                                       y2="high:Q"),
                   alt.Chart(crossed).mark_point(filled=True, size=70).encode(x=x, y=y, tooltip=tips)]
    other = pd.DataFrame([r for r in rows if r["status"] != "crossing"])
    if len(other):
        middle = (xdomain[0] + xdomain[1]) / 2
        other["mid"] = np.sqrt(other["range_low"] * other["range_high"])
        other["align"] = ["right" if d > middle else "left" for d in other["depth"]]
        other["dx"] = [-6 if d > middle else 6 for d in other["depth"]]
        tips = ["pair:N", "status:N", alt.Tooltip("range_low:Q", format=".3s", title="range from"),
                alt.Tooltip("range_high:Q", format=".3s", title="range to")]
        base = alt.Chart(other)
        layers += [base.mark_rule(size=6, opacity=0.25, color="#7f7f7f").encode(
                       x=x, y=alt.Y("range_low:Q", scale=yscale, title="transition size (non-embedding parameters)",
                                    axis=alt.Axis(format="~s")),
                       y2="range_high:Q", tooltip=tips),
                   base.mark_text(fontSize=10, color="#555", align=alt.expr("datum.align"),
                                  dx=alt.expr("datum.dx")).encode(
                       x=x, y=alt.Y("mid:Q", scale=yscale), text="status:N", tooltip=tips)]
    fit = fit_transitions(results, depth_of_pair)
    if fit is not None:
        xs = np.linspace(crossed["depth"].min(), crossed["depth"].max(), 50)
        line = pd.DataFrame({"depth": xs, "budget": np.exp(fit.alpha + fit.beta * xs)})
        layers.append(alt.Chart(line).mark_line(color="black", strokeDash=[4, 3]).encode(x=x, y=y))
    return alt.layer(*layers).properties(width=width, height=height, title="Transition budget against depth")
