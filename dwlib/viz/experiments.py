"""Charts of the trained sweeps (the experiments chapter): loss against size, transitions.

Both work in the static book: the pair slider of :func:`loss_chart` is a bound Vega parameter.
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from dwlib.errors import require
from dwlib.experiments.transition import fit_transitions, loss_table, pair_depth, transitions
from dwlib.viz.render import slider

DEPTH_SCHEME = "viridis"


def json_list(values) -> str:
    """A Python list as a Vega expression array literal."""
    return json.dumps(values)


def loss_chart(records: list[dict], results: list[dict] | None = None, width: int = 480, height: int = 360):
    """The Figure 2 analogue: final held-out loss against non-embedding budget, one line per
    depth, error bars from seeds (mean -+ one standard deviation), with a slider that picks a
    (shallow, deep) pair to highlight and marks its transition (if the pair crosses).

    ``results``: the output of :func:`~dwlib.experiments.transition.transitions` (default:
    adjacent pairs, computed here).
    """
    results = transitions(records) if results is None else results
    rows = [r for r in loss_table(records) if r["losses"]]
    df = pd.DataFrame([{"depth": r["depth"], "width": r["width"], "budget": r["budget"], "loss": r["mean"],
                        "low": r["mean"] - (r["std"] if r["seeds"] > 1 else 0.0),
                        "high": r["mean"] + (r["std"] if r["seeds"] > 1 else 0.0), "seeds": r["seeds"]}
                       for r in rows])
    pairs = json_list([[t["shallow"], t["deep"]] for t in results])
    crossings = json_list([t["budget"] if t["budget"] is not None else -1 for t in results])
    pick = slider("pair", 0, max(len(results) - 1, 0), 1, 0, label="pair (shallow, deep)")
    in_pair = f"indexof({pairs}[pair], datum.depth) >= 0"
    span = [float(df["budget"].min()) / 1.25, float(df["budget"].max()) * 1.25]  # the measured range, a margin either side
    x = alt.X("budget:Q", scale=alt.Scale(type="log", domain=span, nice=False),
              axis=alt.Axis(format="~s", labelOverlap=True), title="non-embedding parameters N = 12 L d²")
    y = alt.Y("loss:Q", scale=alt.Scale(zero=False), title="held-out loss (nats/token)")
    color = alt.Color("depth:O", scale=alt.Scale(scheme=DEPTH_SCHEME), title="depth L",
                      legend=alt.Legend(orient="bottom"))  # below: the plot keeps its width on a phone
    base = alt.Chart(df).transform_calculate(highlight=f"{in_pair} ? 1 : 0.18")
    opacity = alt.Opacity("highlight:Q", scale=None, legend=None)
    tips = [alt.Tooltip("depth:O", title="L"), alt.Tooltip("width:Q", title="d_x"),
            alt.Tooltip("budget:Q", format=",", title="N"), alt.Tooltip("loss:Q", format=".4f", title="mean loss"),
            alt.Tooltip("seeds:Q")]
    lines = base.mark_line(point=True).encode(x=x, y=y, color=color, opacity=opacity, tooltip=tips)
    bars = base.mark_errorbar(ticks=True).encode(x=x, y=alt.Y("low:Q", title=""), y2="high:Q", color=color,
                                                  opacity=opacity)
    marker = (alt.Chart(pd.DataFrame({"i": [0]}))
              .transform_calculate(budget=f"{crossings}[pair]",
                                   text=f"'L = ' + {pairs}[pair][0] + ' vs ' + {pairs}[pair][1]"
                                        f" + ({crossings}[pair] > 0 ? ': transition at N = '"
                                        f" + format({crossings}[pair], '.3s') : ': no transition in range')"))
    rule = marker.transform_filter("datum.budget > 0").mark_rule(color="#d62728", strokeDash=[5, 3]).encode(x=x)
    note = marker.mark_text(align="left", x=8, y=10, fontSize=12, fontWeight="bold", color="#d62728",
                            limit=alt.expr("width - 16")).encode(text="text:N")
    return (alt.layer(bars, lines, rule, note).add_params(pick)
            .properties(width=width, height=height,
                        title=alt.Title("Loss against size at each depth", subtitle="seed mean ± std",
                                        anchor="start")))


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
    y = alt.Y("budget:Q", scale=yscale, title="transition budget N_t", axis=alt.Axis(format="~s"))
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
                       x=x, y=alt.Y("range_low:Q", scale=yscale, title="transition budget N_t",
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
