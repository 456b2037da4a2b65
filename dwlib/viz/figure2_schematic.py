"""A schematic of the claim of the paper's Figure 2, drawn, not plotted: for each doubling pair
(depths 6 and 12, 12 and 24), loss against non-embedding size, the two networks comparable at
smaller sizes and the deeper one better at larger sizes, the 12 vs 24 pair's transition at a
larger size. Its curves are shapes from the paper's text and caption, not data, and its axes
carry no numbers; the title says so.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

#: the paper's pairs and where (as a fraction of the size axis) the schematic places each pair's
#: transition: the deeper pair's lies later, as the paper's caption says; the values are shapes
TRANSITIONS = {"depths 6 and 12": 0.35, "depths 12 and 24": 0.6}
ROLES = ("shallower", "deeper")
#: how far apart (in the loss's arbitrary units) the two lines run before the transition
SPLIT = 0.02
#: Okabe-Ito colours with a dash each, told apart without colour too
_COLOURS = ["#e69f00", "#0072b2"]
_DASHES = [[6, 3], []]


def schematic_curves(points: int = 41) -> pd.DataFrame:
    """``pair``, ``role`` (shallower/deeper), ``size`` (0 to 1, standing for log non-embedding
    size) and ``loss`` (arbitrary units): both networks of a pair follow one falling trend, a hair
    apart, up to the pair's transition; past it the deeper one falls faster. Shapes only: no value here is a
    measurement."""
    size = np.linspace(0.0, 1.0, points)
    rows = []
    for pair, t in TRANSITIONS.items():
        # the two lines a hair apart before the transition, so that both show
        trend = 0.9 - 0.45 * size
        shallow, deep = trend + SPLIT / 2, trend - SPLIT / 2 - 0.5 * np.clip(size - t, 0, None) ** 1.3
        for role, loss in zip(ROLES, (shallow, deep)):
            rows += [{"pair": pair, "role": role, "size": float(s), "loss": float(v)} for s, v in zip(size, loss)]
    return pd.DataFrame(rows)


def figure2_schematic(width: int = 220, height: int = 180):
    """Two panels, one per pair of the paper's Figure 2, each with its transition marked by a
    dotted rule, under the title "Schematic of the claim, not data"."""
    data = schematic_curves()
    axis = {"labels": False, "ticks": False, "grid": False, "domainColor": "#444444"}
    colour = alt.Color("role:N", sort=list(ROLES), scale=alt.Scale(domain=list(ROLES), range=_COLOURS),
                       legend=alt.Legend(title="network of the pair", orient="bottom"))
    dash = alt.StrokeDash("role:N", sort=list(ROLES), scale=alt.Scale(domain=list(ROLES), range=_DASHES),
                          legend=alt.Legend(title="network of the pair", orient="bottom"))
    views = []
    for pair, t in TRANSITIONS.items():
        curves = alt.Chart(data[data["pair"] == pair]).mark_line(strokeWidth=2.2).encode(
            x=alt.X("size:Q", scale=alt.Scale(domain=[0, 1], nice=False),
                    axis=alt.Axis(title="non-embedding parameters (log scale) \u2192", **axis)),
            y=alt.Y("loss:Q", scale=alt.Scale(domain=[0.1, 0.95], nice=False, zero=False),
                    axis=alt.Axis(title="loss (lower is better)", **axis)),
            color=colour, strokeDash=dash, order="size:Q")
        marks = pd.DataFrame({"size": [t], "text": ["transition"]})
        rule = alt.Chart(marks).mark_rule(color="#555555", strokeDash=[2, 2]).encode(x="size:Q")
        label = alt.Chart(marks).mark_text(align="left", dx=4, dy=-4, fontSize=11, color="#333333").encode(
            x="size:Q", y=alt.value(12), text="text:N")
        views.append(alt.layer(curves, rule, label).properties(width=width, height=height, title=pair))
    return alt.concat(*views, columns=2).properties(title=alt.Title(
        "Schematic of the claim, not data", anchor="start",
        subtitle=["the paper's Figure 2, from its text and caption:",
                  "comparable at smaller sizes, then the deeper better;",
                  "the 12 vs 24 transition at a larger size"]))
