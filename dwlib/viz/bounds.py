"""The bounds of section 4 as charts and explorers: the regime map, the bounds against depth,
an explorer that recomputes in the static page (Vega expressions) and one for live kernels.

The Vega expressions (:func:`vega_bound_expressions`, :func:`vega_corollary1_expression`) are
ports of :mod:`dwlib.core.bounds` to Vega's expression language, so that the book's sliders work
without a kernel; tests/test_viz_bounds.py checks them against dwlib.core.bounds on a grid.
"""

from __future__ import annotations

import html
import math

import altair as alt
import ipywidgets
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core.bounds import (C2_FACTOR, LOG3_2, corollary1_width, depth_threshold, regime,
                               separation_rank_bounds)
from dwlib.errors import InputError
from dwlib.viz.layout import band, label_rows, leader_rules, narrow_plot, power_of_ten_labels, text_offsets
from dwlib.viz.render import PlacementError, short_label, slider, text_width
from dwlib.viz.widgets import explorer, int_slider, log_slider

# ---------------------------------------------------------------------------------------------
# Sentences shared by the live explorer and the command line

# ---------------------------------------------------------------------------------------------
# The regime map

def width_ticks(lo: float, hi: float) -> list[int]:
    """Tick values for a logarithmic width axis from ``lo`` to ``hi``: the powers of ten inside
    it, and the 3 x 10^k between them when it spans fewer than three decades, so that labels
    such as '2,000' and '3,000' never stand side by side on a phone."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    steps = (1,) if math.log10(hi / lo) >= 3 else (1, 3)
    return [m * 10 ** k for k in decades for m in steps if lo <= m * 10 ** k <= hi]


#: Okabe and Ito's colours (told apart by colour-blind readers): Theorem 1's region and band,
#: Theorem 2's band and region (pink: reddish purple, pale), the regime map's chosen width, the
#: explorer's depth (purple) and the shallow depth of Corollary 1
BLUE, VERMILION, PURPLE, ORANGE, GREEN = "#0072b2", "#d55e00", "#cc79a7", "#e69f00", "#009e73"
#: the widths of the bounds chart, in Okabe and Ito's colours (each also named on its line)
WIDTH_COLOURS = (BLUE, ORANGE, GREEN, PURPLE, "#56b4e9", VERMILION)

#: digits and the minus sign as Unicode superscripts (as dwlib.fmt.sci writes exponents)
_SUPERSCRIPTS = dict(zip("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"))


def vega_superscript(expr: str) -> str:
    """A Vega expression writing the integer ``expr`` in Unicode superscripts (16 -> '¹⁶'), so
    that a chart's text writes 1.2 × 10¹⁶ as a reader does, not 1.2 × 10^16."""
    text = f"('' + ({expr}))"
    for digit, sup in _SUPERSCRIPTS.items():
        text = f"replace({text}, regexp('{digit}', 'g'), '{sup}')"
    return text


def log_axis(title: str, domain=None) -> dict:
    """The keywords of ``alt.Y`` for a logarithmic axis labelled at the powers of ten as a reader
    writes them (1, 10, 10²), narrow enough to leave a phone's plot its width."""
    scale = alt.Scale(type="log", **({"domain": list(domain), "clamp": True} if domain else {}))
    return dict(scale=scale, title=title, axis=alt.Axis(labelExpr=power_of_ten_labels()))


#: how many times further than its own point any other point stays from a label on the regime
#: map, where the placer finds such places: more than its default, since the models crowd at
#: depth 24 on a phone, where a label must be plainly its own point's (a leader line ties it)
LABEL_MARGIN = 2.5

#: the slider's note on the regime map: font size, and its offsets (px) from the marker
NOTE_FONT, NOTE_DX, NOTE_DY = 12, 8, 6


def _note_lines(width: float) -> list[str]:
    """The slider's note at ``width``, line by line (as the chart's expression writes it)."""
    return [f"width {width:,.0f}:", f"threshold {depth_threshold(width):.2f}"]


def threshold_chart(models=(), width_range=(10, 2e5), depth_range=(1, 128)):
    """The two regimes over (width, depth): the curve L = log3(d_x) of section 4 splits the
    plane into Theorem 1's depth-efficient region (below) and Theorem 2's region (above).

    ``models``: dicts with ``name``, ``depth`` and ``width``, drawn as labelled points.
    A slider bound to log10(width) marks one width and prints its threshold; it works in
    the static book (no kernel).
    """
    lo, hi = width_range
    widths = np.geomspace(lo, hi, 120)
    curve = pd.DataFrame({"width": widths, "threshold": depth_threshold(widths),
                          "floor": depth_range[0], "ceiling": depth_range[1]})
    x = alt.X("width:Q", scale=alt.Scale(type="log", domain=list(width_range)), title="width",
              axis=alt.Axis(values=width_ticks(lo, hi), format=",", labelOverlap="greedy"))
    yscale = alt.Scale(type="log", domain=list(depth_range))
    base = alt.Chart(curve).encode(x=x)
    below = base.mark_area(opacity=0.15, color=BLUE).encode(
        **band(x, alt.Y("floor:Q", scale=yscale, title="depth L (layers)"), "threshold:Q"))
    above = base.mark_area(opacity=0.15, color=PURPLE).encode(
        **band(x, alt.Y("threshold:Q", scale=yscale), "ceiling:Q"))
    line = base.mark_line(color="black").encode(y=alt.Y("threshold:Q", scale=yscale),
                                                tooltip=[alt.Tooltip("width:Q", format=",.0f", title="width dₓ"),
                                                         alt.Tooltip("threshold:Q", format=".2f",
                                                                     title="threshold log₃ dₓ (layers)")])
    # The regions' names: Theorem 1's along the bottom, under the curve; Theorem 2's in short
    # lines at the top left, where no real model stands (the narrowest real width, 768, lies
    # near the middle of the x axis); the models' labels keep clear of it (an obstacle below).
    width_px, height_px = 560, 340
    region_font, upper_depth = 10, depth_range[1] / 1.1
    upper = "above the\nthreshold:\ndepth and\nwidth alike\n(Theorem 2)"
    lower_depth = depth_range[0] * 1.3  # the top of Theorem 1's name, along the bottom
    labels = pd.DataFrame({"width": [lo * 1.3, lo * 1.3], "depth": [lower_depth, upper_depth],
                           "text": ["below the threshold: depth-efficient (Theorem 1)", upper]})
    # the slider's dashed line starts just above that name, so that it never runs through it
    dash_floor = lower_depth * 1.08
    region_text = alt.Chart(labels).mark_text(align="left", baseline="top", fontSize=region_font, color="#444",
                                              lineBreak="\n", limit=alt.expr("width - 12")).encode(
        x=x, y=alt.Y("depth:Q", scale=yscale), text="text:N")
    # the slider's ends on its step grid (multiples of 0.05), so that its start, 3.0 (width
    # 1,000), is a position the slider can take and leave and come back to
    step = 0.05
    ends = [round(f(round(float(np.log10(v)) / step, 9)) * step, 10) for f, v in ((math.ceil, lo), (math.floor, hi))]
    start = 3.0
    log_w = slider("log10_width", *ends, step, start, label="log₁₀ width")
    right = f"{log_w.name} > {(float(np.log10(lo)) + float(np.log10(hi))) / 2!r}"
    layers = [below, above, line, region_text]
    if models:
        # One point per shape (models of equal depth and width share it), each label nearest its
        # own point and clear of the threshold curve at every width the chart is drawn at
        # (dwlib.viz.layout); a label set apart from its point gets a leader line to it.
        shapes: dict = {}
        for m in models:
            shapes.setdefault((m["depth"], m["width"]), []).append(m["name"])
        keys = sorted(shapes, key=lambda s: (s[1], s[0]))

        def fraction(width):
            return float((np.log10(width) - np.log10(lo)) / (np.log10(hi) - np.log10(lo)))

        def y_px(depth):
            return float((1 - (np.log10(depth) - np.log10(depth_range[0]))
                          / (np.log10(depth_range[1]) - np.log10(depth_range[0]))) * height_px)
        fx = [fraction(w) for _, w in keys]
        py = [y_px(L) for L, _ in keys]
        # one name a point (the tooltip has them all): two names are wider than a phone's plot
        texts = [short_label(shapes[k], most=1) for k in keys]
        # kept clear of: the upper region's name, and the slider's note, point and dashed line
        # where the slider starts
        rows = upper.split("\n")
        region = (fraction(lo * 1.3), 0.0, y_px(upper_depth), text_width(max(rows, key=len), region_font),
                  y_px(upper_depth) + (region_font + 2) * len(rows))
        w0 = 10.0 ** start
        note_w = max(text_width(t, NOTE_FONT) for t in _note_lines(w0)) * 1.1  # bold
        th_y = y_px(float(depth_threshold(w0)))
        note_x = ((-NOTE_DX - note_w, -NOTE_DX) if start > (np.log10(lo) + np.log10(hi)) / 2
                  else (NOTE_DX, NOTE_DX + note_w))
        note = (fraction(w0), note_x[0], th_y + NOTE_DY, note_x[1], th_y + NOTE_DY + 2 * (NOTE_FONT + 2) + 2)
        marker_box = (fraction(w0), -7, th_y - 7, 7, th_y + 7)
        threshold = [(fraction(w), y_px(t)) for w, t in zip(widths, curve["threshold"])]
        dashed = [(fraction(w0), y_px(dash_floor)), (fraction(w0), th_y)]
        # the plot a 320 px phone draws: the column less the depth axis ("100" its widest label)
        # and what the width axis's last label reaches past the plot's end
        ticks = width_ticks(lo, hi)
        meta = narrow_plot([f"{10 ** math.floor(math.log10(depth_range[1])):,}"],
                           (fraction(ticks[-1]), f"{ticks[-1]:,}"))
        place = dict(obstacles=[region, note, marker_box], curves=[threshold, dashed],
                     narrowest=meta["narrow_plot"])
        try:
            rows = label_rows(fx, py, texts, height_px, 10, width_px, margin=LABEL_MARGIN, **place)
        except PlacementError:  # no such places: the placer's own margin
            rows = label_rows(fx, py, texts, height_px, 10, width_px, **place)
        pts = pd.DataFrame([{"name": " / ".join(shapes[k]), "depth": k[0], "width": k[1], **row}
                            for k, row in zip(keys, rows)])
        tips = [alt.Tooltip("name:N", title="model"), alt.Tooltip("depth:Q", title="depth L"),
                alt.Tooltip("width:Q", format=",", title="width dₓ")]
        y = alt.Y("depth:Q", scale=yscale)
        layers.append(leader_rules(pts, x, y))
        layers.append(alt.Chart(pts).mark_point(filled=True, size=50, color="black").encode(
            x=x, y=y, tooltip=tips))
        layers.append(alt.Chart(pts).mark_text(fontSize=10, **text_offsets()).encode(
            x=x, y=y, text="label:N", tooltip=tips))
    marker = (alt.Chart(pd.DataFrame({"i": [0]}))
              .transform_calculate(width=f"pow(10, {log_w.name})")
              .transform_calculate(threshold="log(datum.width) / log(3)")
              .transform_calculate(text="'width ' + format(datum.width, ',.0f') + ':\\nthreshold '"
                                        " + format(datum.threshold, '.2f')"))
    # the marker's dashed line runs from above Theorem 1's name up to its threshold only, below
    # the models' labels (every published model stands above the threshold)
    rule = marker.transform_calculate(floor=repr(float(dash_floor))).mark_rule(
        color="#555", strokeDash=[4, 3]).encode(x=x, y=alt.Y("floor:Q", scale=yscale), y2="threshold:Q")
    dot = marker.mark_point(size=120, fill=ORANGE, stroke="black", strokeWidth=0.8, filled=True).encode(
        x=x, y=alt.Y("threshold:Q", scale=yscale))
    # The note stays inside the plot, in two short lines: right of the marker in the left half,
    # left of it in the right half.
    note = marker.mark_text(align=alt.expr(f"{right} ? 'right' : 'left'"),
                            dx=alt.expr(f"{right} ? {-NOTE_DX} : {NOTE_DX}"), dy=NOTE_DY, baseline="top",
                            lineBreak="\n", fontSize=NOTE_FONT, fontWeight="bold", color="black").encode(
        x=x, y=alt.Y("threshold:Q", scale=yscale), text="text:N")
    layers += [rule, dot, note]
    chart = alt.layer(*layers).add_params(log_w).properties(width=width_px, height=height_px)
    return chart.properties(usermeta=meta) if models else chart


# ---------------------------------------------------------------------------------------------
# Separation-rank bounds (Theorems 1 and 2) as charts

def bounds_chart(widths=(64, 256, 1024, 4096), heads=8, depth_range=(1.0, 24.0), step=0.05, coarse=0.5):
    """log3 sep bounds against depth for several widths (eqs. 7 and 8), computed by
    :func:`dwlib.core.bounds.separation_rank_bounds` on a grid of depths.

    Each width gets a colour; solid lines are lower bounds, dashed lines upper bounds; the
    band between them is shaded. Depths on the threshold L = log3 d_x (where neither theorem
    applies) and non-positive (vacuous) bounds are left out, so the log scale is defined.
    Depths are sampled every ``step`` below the largest threshold (where eq. 7 curves) and
    every ``coarse`` above it (eq. 8 is linear in L), which keeps the inline data small.
    """
    top = min(float(depth_threshold(float(max(widths)))), depth_range[1])
    depths = np.unique(np.round(np.concatenate([
        np.arange(depth_range[0], top + step, step),
        np.arange(depth_range[0], depth_range[1] + coarse / 2, coarse)]), 6))
    rows = []
    for w in widths:
        b = separation_rank_bounds(depths, w, heads)
        for bound in ("lower", "upper"):
            for L, val, th in zip(depths, b[bound], b["theorem"]):
                if th and val > 0:
                    rows.append({"width": f"{w:,}", "depth": float(L), "bound": bound,
                                 "log3_sep": round(float(val), 6), "theorem": f"Theorem {th}"})
    df = pd.DataFrame(rows)
    # Legends below the plot: the chart keeps its plot width when narrowed to a phone's column.
    color = alt.Color("width:N", sort=[f"{w:,}" for w in widths], title="width",
                      scale=alt.Scale(domain=[f"{w:,}" for w in widths], range=list(WIDTH_COLOURS[:len(widths)])),
                      legend=alt.Legend(orient="bottom", columns=2))
    y = alt.Y("log3_sep:Q", **log_axis("log₃ of the separation rank (bounds)"))
    x = alt.X("depth:Q", title="depth L (layers)", scale=alt.Scale(domain=list(depth_range)))
    lines = alt.Chart(df).mark_line().encode(
        x=x, y=y, color=color,
        strokeDash=alt.StrokeDash("bound:N", sort=["lower", "upper"], title="bound",
                                  legend=alt.Legend(orient="bottom", columns=1)),
        detail="theorem:N",
        tooltip=[alt.Tooltip("width:N", title="width dₓ"), alt.Tooltip("depth:Q", format=".2f", title="depth L"),
                 alt.Tooltip("bound:N", title="bound"), alt.Tooltip("theorem:N", title="from"),
                 alt.Tooltip("log3_sep:Q", format=",.4~r", title="log₃ sep")])
    th = pd.DataFrame({"width": [f"{w:,}" for w in widths], "threshold": depth_threshold(np.array(widths, float))})
    rules = alt.Chart(th).mark_rule(strokeDash=[2, 2], opacity=0.7).encode(
        x="threshold:Q", color=color,  # the lines' encoding: one legend, no conflicting properties
        tooltip=[alt.Tooltip("width:N", title="width dₓ"),
                 alt.Tooltip("threshold:Q", format=".2f", title="threshold log₃ dₓ (layers)")])
    # Each width's name written above the right end of its upper bound, in its colour, so the
    # lines can be told apart without the legend. The same colour encoding as the lines: a
    # layer with legend=None would remove the legend the layers share.
    ends = df[df["bound"] == "upper"].sort_values("depth", kind="stable").groupby("width", sort=False).tail(1)
    names = alt.Chart(ends).transform_calculate(name="'width ' + datum.width").mark_text(
        align="right", baseline="bottom", dy=-3, fontSize=11, fontWeight="bold").encode(
        x=x, y=y, color=color, text="name:N")
    return alt.layer(lines, rules, names).properties(width=560, height=340)


def _log3(e: str) -> str:
    return f"(log({e}) / log(3))"


def vega_bound_expressions(L: str = "datum.depth", w: str = "pow(10, log10_width)", H: str = "heads") -> dict:
    """Vega expressions of the four bounds, in the names of the chart's parameters.

    The same formulas as :mod:`dwlib.core.bounds` (eqs. 7 and 8), written in Vega's expression
    language (which is also valid Python given ``pow`` and ``log``: the tests evaluate them
    and compare with dwlib.core.bounds).
    """
    return {
        "t1_lower": f"pow(3, {L} - 2) * ({_log3(f'{w} - {H}')} - {L} + 2 - {LOG3_2!r})",
        "t1_upper": f"(pow(3, {L}) - 1) / 2 * {_log3(f'{w} + {H}')}",
        "t2_lower": f"0.5 * {w} * {L} - {L} * ({H} / 2 + 1) - {w} * (1 + 0.5 * {_log3(f'({w} - {H}) / 2')})",
        "t2_upper": f"2 * {w} * {L} + {L} - 2 * {w} * {_log3(f'{w} / 2 * {C2_FACTOR!r}')} + {_log3(w)}",
    }


def vega_corollary1_expression(target: str, shallow: str = "shallow_depth", H: str = "heads") -> str:
    """log10 of the Corollary-1 width, d_s = 3^s - H with s = target / ((3^Ls - 1)/2)."""
    s = f"(({target}) / ((pow(3, {shallow}) - 1) / 2))"
    return f"({s} * log(3) / log(10) + log(1 - {H} * pow(3, -{s})) / log(10))"


#: the bounds explorer's plot height and the bottom of its five lines of text (pixels)
HEIGHT, TEXT_BOTTOM = 400, 92


def bounds_explorer_chart(width: int = 1024, heads: int = 16, depth: int = 6, shallow_depth: int = 2,
                          max_depth: float = 40.0, step: float = 0.05):
    """The bounds explorer for the static book: sliders for log2(width), heads, depth and
    the shallow depth of Corollary 1, all Altair parameters bound to range inputs, so the
    page recomputes in the browser with no kernel. The width is an integer, 2^log2_width
    rounded: the slider starts at log2(``width``) exactly (so 1024 is 1024, not the 1,023 that
    a log10 slider rounded to its step gave), and each step of 0.05 is a factor of 1.035.

    Draws the eq.-(7) band (blue, below the threshold) and the eq.-(8) band (red, above it)
    of log3 sep against depth for the chosen width and heads, the threshold L = log3 d_x, the
    chosen depth and shallow depth, and a text panel: regime, both bounds at the chosen
    depth, and the width Corollary 1 asks of a network of the shallow depth.
    """
    lw = slider("log2_width", 5, 20, 0.05, math.log2(width), label="log₂ width")
    hp = slider("heads", 1, 64, 1, heads, label="heads H")
    dp = slider("depth", 1, int(max_depth), 1, depth, label="depth L")
    sp = slider("shallow_depth", 1, 12, 1, shallow_depth, label="shallow depth (Corollary 1)")
    params = [lw, hp, dp, sp]
    w = "round(pow(2, log2_width))"
    e = vega_bound_expressions(L="datum.L", w=w, H="heads")
    grid = pd.DataFrame({"L": np.round(np.arange(1.0, max_depth + step / 2, step), 6)})
    base = (alt.Chart(grid)
            .transform_calculate(th=_log3(w))
            .transform_calculate(**{k: v for k, v in e.items()}))
    x = alt.X("L:Q", title="depth L (layers)", scale=alt.Scale(domain=[1, max_depth]))
    # headroom above the bounds (they stay below 1e8 over the sliders' ranges): the text panel
    # at the top sits over empty plot, and the rules start below it (TEXT_BOTTOM)
    axis = log_axis("log₃ of the separation rank (bounds)", domain=[0.1, 1e11])
    y = axis["scale"]
    t1 = (base.transform_filter(f"datum.L < datum.th && heads < {w}")
          .transform_filter("datum.t1_lower > 0"))
    t2 = (base.transform_filter(f"datum.L > datum.th && heads < {w}")
          .transform_filter("datum.t2_upper > 0"))
    # eq. (8)'s band and lower bound only where that bound is positive (it says nothing below);
    # just above the threshold the upper bound is drawn alone
    t2_band = t2.transform_filter("datum.t2_lower > 0")
    band1 = t1.mark_area(opacity=0.25, color=BLUE).encode(**band(x, alt.Y("t1_lower:Q", **axis), "t1_upper:Q"))
    lo1 = t1.mark_line(color=BLUE).encode(x=x, y=alt.Y("t1_lower:Q", scale=y))
    up1 = t1.mark_line(color=BLUE, strokeDash=[5, 3]).encode(x=x, y=alt.Y("t1_upper:Q", scale=y))
    band2 = t2_band.mark_area(opacity=0.2, color=VERMILION).encode(
        **band(x, alt.Y("t2_lower:Q", scale=y), "t2_upper:Q"))
    lo2 = t2_band.mark_line(color=VERMILION).encode(x=x, y=alt.Y("t2_lower:Q", scale=y))
    up2 = t2.mark_line(color=VERMILION, strokeDash=[5, 3]).encode(x=x, y=alt.Y("t2_upper:Q", scale=y))

    one = alt.Chart(pd.DataFrame({"i": [0]})).transform_calculate(
        w=w, th=_log3(w), L="depth", Ls="shallow_depth")
    eL = vega_bound_expressions(L="depth", w=w, H="heads")
    one = one.transform_calculate(
        ok=f"heads < {w}",
        regime="datum.L < datum.th ? 'depth-efficient (Theorem 1)' : "
               "(datum.L > datum.th ? 'depth and width alike (Theorem 2)' : 'on the threshold')",
        lower=f"depth < datum.th ? {eL['t1_lower']} : {eL['t2_lower']}",
        upper=f"depth < datum.th ? {eL['t1_upper']} : {eL['t2_upper']}",
        cor1=vega_corollary1_expression(eL["t1_lower"]),
    ).transform_calculate(  # the width as m × 10ᵉ, the mantissa to one decimal carried into e
        cor1_e="floor(datum.cor1) + (round(pow(10, datum.cor1 - floor(datum.cor1)) * 10) >= 100 ? 1 : 0)",
    ).transform_calculate(  # short lines: the panel stays inside a plot narrowed to a phone
        line0="!datum.ok ? 'heads must be below the width' : 'width ' + format(datum.w, ',.0f')"
              " + ', ' + heads + (heads == 1 ? ' head' : ' heads')",
        line1="!datum.ok ? '' : 'threshold ' + format(datum.th, '.2f') + ' layers'",
        line2="!datum.ok ? '' : 'depth ' + depth + ': ' + datum.regime",
        # 4 significant digits written in full (70,800, not 7.08e+4), as dwlib.fmt.value does
        line3="!datum.ok ? '' : 'log₃ separation rank: ' + format(datum.lower, ',.4~r') + ' to ' + format(datum.upper, ',.4~r')",
        line4="!datum.ok ? '' : (depth >= datum.th ? 'Corollary 1 needs a depth below the threshold' : "
              "(shallow_depth >= depth ? 'Corollary 1: pick a shallow depth below the depth' : "
              "(datum.lower <= 0 ? 'Corollary 1: deep lower bound not positive' : "
              "'Corollary 1: depth ' + shallow_depth + ' needs width ' + format(pow(10, datum.cor1 - datum.cor1_e), "
              "'.1f') + ' × 10' + " + vega_superscript("datum.cor1_e") + ")))",
    )
    # the rules run from under the text panel to the bottom: no line crosses the text
    span = {"y": alt.value(TEXT_BOTTOM), "y2": alt.value(HEIGHT)}
    rule = one.mark_rule(strokeDash=[4, 3], color="black").encode(
        x=alt.X("th:Q", scale=alt.Scale(domain=[1, max_depth])), **span)
    deep_rule = one.mark_rule(color=PURPLE, size=2).encode(
        x=alt.X("L:Q", scale=alt.Scale(domain=[1, max_depth])), **span)
    shallow_rule = one.mark_rule(color=GREEN, size=2, strokeDash=[2, 2]).encode(
        x=alt.X("Ls:Q", scale=alt.Scale(domain=[1, max_depth])), **span)
    texts = [one.mark_text(align="left", baseline="top", fontSize=fs, color=c, fontWeight=fw,
                           limit=alt.expr("width - 16"))
             .encode(x=alt.value(8), y=alt.value(6 + 16 * i), text=f"{name}:N")
             for i, (name, c, fw, fs) in enumerate([("line0", "black", "bold", 12), ("line1", "black", "bold", 12),
                                                    ("line2", "black", "normal", 11),
                                                    ("line3", "black", "normal", 11),
                                                    ("line4", "black", "normal", 11)])]
    return (alt.layer(band1, band2, lo1, up1, lo2, up2, rule, deep_rule, shallow_rule, *texts)
            .add_params(*params).properties(width=560, height=HEIGHT))


# ---------------------------------------------------------------------------------------------
# Live explorers (ipywidgets)

def threshold_explorer(width: int = 1024, depth: int = 6) -> ipywidgets.VBox:
    """Width and depth sliders; the panel shows L_th = log3(d_x), the regime of (L, d_x) and
    the number C = (3^L - 1)/2 of position indices summed in eq. (4)."""

    def render(width: float, depth: int) -> str:
        d_x = int(round(width))
        th = depth_threshold(d_x)
        which = regime(depth, d_x)
        theorem = {"depth-efficient": "Theorem 1 (eq. 7)", "depth-inefficient": "Theorem 2 (eq. 8)",
                   "threshold": "neither theorem (L = log3 d_x exactly)"}[which]
        C = (3**depth - 1) // 2
        return (f"<p>width d<sub>x</sub> = {d_x:,}: threshold L<sub>th</sub> = log<sub>3</sub> d<sub>x</sub>"
                f" = <b>{th:.2f}</b>. Depth L = {depth} is <b>{which}</b> ({theorem}).<br>"
                f"A depth-{depth} analysed network sums over C = (3<sup>L</sup> &minus; 1)/2 = "
                f"{C:,} position indices (eq. 4).</p>")

    return explorer(render, static=threshold_panel_chart(width, depth),
                    width=log_slider("width", width, 1, 6, 0.05),
                    depth=int_slider("depth", depth, 1, 24))


def threshold_panel_chart(width: int = 1024, depth: int = 6, lines_width: int = 560):
    """:func:`threshold_explorer`'s panel as a chart that computes in the page (the static
    book's form of the explorer): sliders for log2(width) and depth, and three lines of text,
    the threshold log3(d_x), the regime of (L, d_x) and C = (3^L - 1)/2 of eq. (4)."""
    # width as log2 (the explorer's own 1,024 is a position of the slider), 10 to a million
    log_w = slider("log2_width", 3.3, 19.95, 0.05, round(round(math.log2(width) / 0.05) * 0.05, 10),
                   label="log₂ width")
    L = slider("depth", 1, 24, 1, depth, label="depth L")
    th = "log(datum.width) / log(3)"
    lines = (alt.Chart(pd.DataFrame({"i": [0]}))
             .transform_calculate(width=f"round(pow(2, {log_w.name}))")
             .transform_calculate(th=th)
             .transform_calculate(C=f"(pow(3, {L.name}) - 1) / 2")
             .transform_calculate(
                 line1="'width ' + format(datum.width, ',.0f') + ': threshold '"
                       " + format(datum.th, '.2f') + ' layers'",
                 line2=f"'depth ' + {L.name} + ': ' + (abs({L.name} - datum.th) <= 1e-12 ? "
                       "'at the threshold (neither theorem)' : "
                       f"{L.name} < datum.th ? 'depth-efficient (Theorem 1, eq. 7)' : "
                       "'depth-inefficient (Theorem 2, eq. 8)')",
                 line3="'the network sums over ' + format(datum.C, ',.0f') + (datum.C == 1 ? ' position index' : "
                       "' position indices')",
                 line4="'C = (3ᴸ − 1)/2, eq. (4)'"))
    texts = [lines.mark_text(align="left", baseline="top", fontSize=12, fontWeight=w,
                             limit=alt.expr("width - 4"))
             .encode(x=alt.value(0), y=alt.value(4 + 20 * i), text=f"{name}:N")
             for i, (name, w) in enumerate([("line1", "bold"), ("line2", "bold"), ("line3", "normal"),
                                            ("line4", "normal")])]
    return (alt.layer(*texts).add_params(log_w, L)
            .properties(width=lines_width, height=84)
            .configure_view(stroke=None))


def bounds_panel(width: int, heads: int, depth: int, shallow_depth: int) -> str:
    """The HTML of :func:`bounds_explorer`'s panel: threshold, regime, the bounds of eq. (7) or
    (8) at (L, d_x, H), and the width Corollary 1 asks of a depth-``shallow_depth`` network
    (or why it does not apply). Bad input is reported in the panel, not raised."""
    try:
        b = separation_rank_bounds(depth, width, heads)
    except InputError as err:
        return f"<p><b>Not evaluated:</b> {html.escape(str(err))}</p>"
    th = depth_threshold(width)
    which = regime(depth, width)
    eq = {1: "Theorem 1, eq. (7)", 2: "Theorem 2, eq. (8)"}.get(b["theorem"], "neither theorem")
    lines = [f"width d<sub>x</sub> = {width:,}, heads H = {heads}: threshold L<sub>th</sub> = "
             f"log<sub>3</sub> d<sub>x</sub> = <b>{th:.2f}</b>.",
             f"Depth L = {depth} is <b>{which}</b> ({eq}): "
             f"{fmt.value(b['lower'])} &le; log<sub>3</sub> sep &le; {fmt.value(b['upper'])}."]
    note = fmt.heads_note(width, heads)
    if note:
        lines.append(f"<i>Note: {note}.</i>")
    if shallow_depth >= depth:
        lines.append(f"Corollary 1: choose a shallow depth below L = {depth}.")
    else:
        try:
            r = corollary1_width(width, heads, depth, shallow_depth)
        except InputError as err:
            lines.append(f"Corollary 1 does not apply: {html.escape(str(err))}.")
        else:
            if r["any_width"]:
                lines.append(f"Corollary 1: {fmt.any_width_sentence(shallow_depth)}.")
            else:
                lines.append(f"Corollary 1: a depth-{shallow_depth} network needs width &ge; "
                             f"<b>10<sup>{r['log10_width']:.2f}</sup></b> (a factor 10<sup>"
                             f"{r['log10_width'] - math.log10(width):.2f}</sup> wider) for its eq. (7) "
                             f"upper bound to reach the deep network's lower bound.")
    return "<p>" + "<br>".join(lines) + "</p>"


def bounds_explorer(width: int = 1024, heads: int = 16, depth: int = 6, shallow_depth: int = 2) -> ipywidgets.VBox:
    """Sliders for width, heads, depth and the shallow depth of Corollary 1 (live kernels);
    the panel is :func:`bounds_panel`."""

    def render(width: float, heads: int, depth: int, shallow_depth: int) -> str:
        return bounds_panel(int(round(width)), heads, depth, shallow_depth)

    return explorer(render,
                    width=log_slider("width", width, 1, 6, 0.05),
                    heads=int_slider("heads", heads, 1, 128),
                    depth=int_slider("depth", depth, 1, 64),
                    shallow_depth=int_slider("shallow depth", shallow_depth, 1, 12))
