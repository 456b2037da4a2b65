"""Chart layout that holds at every width a chart is drawn at, and in every front end.

A chart is drawn at its spec's width in JupyterLab and in the book on a desktop, and narrower
in the book on a phone (book/assets/dwcharts.js narrows it to the column, down to about
:data:`NARROW_WIDTH` pixels of plot).

- Point labels are placed in pixels (:func:`label_rows`, with
  :func:`dwlib.viz.render.place_labels`), once for a phone's plots and once for wider ones,
  and drawn at those pixel offsets from their points (:func:`text_offsets`), a label set
  apart from its point tied to it by a short leader line (:func:`leader_rules`) that crosses no
  other. The narrowest plot is the one the book draws on a 320 px phone (:func:`narrow_plot`). Widening the plot
  moves the points apart horizontally and leaves the offsets alone, so each placement is
  judged at every width of its range (:func:`plot_widths`): at each, every label's nearest
  point is its own, and no label meets another, a point or a curve (tests/test_viz_layout.py
  checks it on the book's charts).
- Bands (an area between ``y`` and ``y2``) are drawn unstacked (:func:`band`): JupyterLab's
  Vega-Lite 5.6 otherwise stacks a band over a log scale along x, drawing it thousands of
  pixels wide, and warns "Cannot stack non-linear scale (log)".
"""

from __future__ import annotations

import math

import altair as alt

from dwlib.viz.render import leader_offsets, place_labels, text_width

#: the plot width (pixels) labels are placed at by default (:func:`narrow_offsets`); a chart of
#: the book places them from the plot a 320 px phone draws it at (:func:`narrow_plot`)
NARROW_WIDTH = 165

#: the column a chart is drawn in on the narrowest phone the book is read on: a 320 px screen
#: less the theme's margins (24 px each side: the chart container's content box, measured in
#: Chromium; the browser tests open every page at that width)
PHONE_COLUMN = 272
# Vega-Lite's default layout of a chart with a left y axis: padding each side; the axis's tick,
# the gap to its labels (10 px font), the gap to its title (11 px font, turned upright)
_PAD, _TICK, _LABEL_GAP, _TITLE_GAP, _LABEL_FONT, _TITLE_FONT = 5, 5, 2, 4, 10, 11


#: the widest plot (px) of a phone's column (a 390 px screen draws a 291 px plot): labels are
#: placed once for the plots of a phone (from :data:`NARROW_WIDTH`) and once for wider ones
#: (up to the chart's own width), and drawn by the plot's width (:func:`text_offsets`)
PHONE_PLOT = 300


def narrow_plot(y_labels, last_x_label: tuple[float, str] | None = None,
                column: int = PHONE_COLUMN) -> dict:
    """The plot width (px) the book draws a chart at in a phone's ``column``, as the chart's
    ``usermeta`` states it: ``narrow_plot``, with what it follows from (``y_labels``,
    ``x_overhang``). The renderer (book/assets/dwcharts.js) narrows the plot until the drawing
    fits the column, so the plot is the column less the chart's padding, its y axis (tick, the
    widest of its labels ``y_labels``, its title) and the part of its x axis's last label
    ``last_x_label`` ((fraction of the plot, text)) that reaches past the plot's right end (none
    for a label at the end, which Vega draws flush). It holds for a chart whose other texts
    (its title, its axis titles, its notes) are no wider than that plot: the chart's tests
    check it."""
    fixed = column - _PAD - (_TICK + _LABEL_GAP + max(text_width(t, _LABEL_FONT) for t in y_labels)
                             + _TITLE_GAP + _TITLE_FONT) - _PAD
    plot, over = fixed, 0.0
    if last_x_label is not None:
        f, text = last_x_label
        half = (text_width(text, _LABEL_FONT) - 2) / 2  # the glyphs' half width, centred on the tick
        if (1 - f) * fixed > 1 and half > (1 - f) * fixed:  # it reaches past the end: f * plot + half = fixed
            plot = (fixed - half) / f
            over = half - (1 - f) * plot
    return {"narrow_plot": round(plot), "y_labels": list(y_labels), "x_overhang": round(over, 3)}


def plot_widths(lo: int, hi: int, step: float = 1.15) -> list[int]:
    """The plot widths (px) from ``lo`` to ``hi`` that labels are judged at, each at most
    ``step`` times the one before."""
    k = max(1, math.ceil(math.log(hi / lo) / math.log(step)))
    return sorted({round(lo * (hi / lo) ** (i / k)) for i in range(k + 1)})


def narrow_offsets(fractions, ys, texts, height: int, font_size: float, obstacles=(), curves=(),
                   lo: int = NARROW_WIDTH, hi: int | None = None, margin: float | None = None) -> list:
    """(align, dx, dy) per point (:func:`dwlib.viz.render.place_labels`), judged at every plot
    width of :func:`plot_widths` from ``lo`` to ``hi`` (default: ``lo`` only): ``fractions`` are
    the points' horizontal positions as a fraction of the plot width (0 left, 1 right), ``ys``
    their pixel heights from the top of a plot ``height`` pixels tall. ``obstacles``: other text
    the chart draws, which the labels keep clear of, as boxes (fraction, x0, y0, x1, y1) anchored
    at a horizontal fraction of the plot (x0, x1: pixel offsets from it; y0, y1: pixels).
    ``curves``: lines the chart draws, each a sequence of (fraction, y) samples, which no label
    may touch. ``margin``: how many times further than its own point every other point must be
    from a label (default :data:`dwlib.viz.render.OWN_MARGIN`; larger for a crowded chart)."""
    widths = plot_widths(lo, hi) if hi and hi > lo else []
    lines = [[(f * lo, y) for f, y in curve] for curve in curves]
    boxes = [(f * lo, *rest) for f, *rest in obstacles]
    extra = {} if margin is None else {"margin": margin}
    return place_labels([f * lo for f in fractions], list(ys), list(texts), lo, height,
                        font_size=font_size, obstacles=boxes, widths=widths, curves=lines, **extra)


def label_rows(fractions, ys, texts, height: int, font_size: float, widest: int, obstacles=(),
               curves=(), narrowest: int = NARROW_WIDTH, margin: float | None = None) -> list[dict]:
    """Per point, its label placed for a phone's plots (``narrowest``, the plot a 320 px phone
    draws (:func:`narrow_plot`), to :data:`PHONE_PLOT`) and for wider ones (to
    ``widest``, the chart's width), with
    :func:`narrow_offsets` (the arguments are its): the text ``label``, and per placement
    ``align``, ``dx``, ``dy`` and, for a label set apart from its point, ``leader`` true and its
    line's offsets ``lx0``, ``ly0``, ``lx1``, ``ly1`` from the point; the phone's fields end in
    ``_phone``. Drawn by :func:`text_offsets` and :func:`leader_rules`."""
    args = (fractions, ys, texts, height, font_size, obstacles, curves)
    phone = narrow_offsets(*args, lo=narrowest, hi=min(PHONE_PLOT, widest), margin=margin)
    wide = narrow_offsets(*args, lo=PHONE_PLOT, hi=widest, margin=margin) if widest > PHONE_PLOT else phone
    rows = []
    for text, *places in zip(texts, wide, phone):
        row = {"label": text}
        for suffix, place in zip(("", "_phone"), places):
            lead = leader_offsets(text, place, font_size)
            row.update({"align" + suffix: place[0], "dx" + suffix: float(place[1]),
                        "dy" + suffix: float(place[2]), "leader" + suffix: lead is not None})
            row.update({name + suffix: float(v) for name, v in
                        zip(("lx0", "ly0", "lx1", "ly1"), lead or (0, 0, 0, 0))})
        rows.append(row)
    return rows


def _by_width(field: str) -> str:
    return f"width <= {PHONE_PLOT} ? datum.{field}_phone : datum.{field}"


def text_offsets() -> dict:
    """Mark properties drawing each label at its place for the plot's width (:func:`label_rows`)."""
    return {"align": alt.expr(_by_width("align")), "dx": alt.expr(_by_width("dx")),
            "dy": alt.expr(_by_width("dy")), "baseline": "middle"}


def leader_rules(data, x: alt.X, y: alt.Y, color: str = "#777") -> alt.Chart:
    """Thin lines from points to their labels where these are set apart (:func:`label_rows`),
    drawn at the lines' pixel offsets from the points for the plot's width."""
    return alt.Chart(data).mark_rule(
        color=color, strokeWidth=0.8, strokeOpacity=alt.expr(f"({_by_width('leader')}) ? 1 : 0"),
        xOffset=alt.expr(_by_width("lx0")), yOffset=alt.expr(_by_width("ly0")),
        x2Offset=alt.expr(_by_width("lx1")), y2Offset=alt.expr(_by_width("ly1"))).encode(
        x=x, y=y, x2=alt.X2(x.shorthand), y2=alt.Y2(y.shorthand))


def band(x: alt.X, y: alt.Y, y2) -> dict:
    """The encoding of a band from ``y`` to ``y2`` along ``x``, unstacked on both axes."""
    x, y = x.copy(), y.copy()
    x.stack = None
    y.stack = None
    return {"x": x, "y": y, "y2": y2}


#: digits and the minus sign as Unicode superscripts (as :func:`dwlib.fmt.sci` writes exponents)
_SUPERSCRIPT_DIGITS = dict(zip("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"))


def power_of_ten_labels(field: str = "datum.value") -> str:
    """A Vega expression (an axis's ``labelExpr``) labelling a logarithmic axis as a reader
    writes its ticks: 1, 10, 10², 10⁻⁶ (not 1e-6), and nothing at a tick that is not a power
    of ten (Vega may add 2 × and 5 × ticks on a short range)."""
    exponent = f"round(log({field}) / LN10)"
    text = f"'' + {exponent}"
    for digit, sup in _SUPERSCRIPT_DIGITS.items():
        text = f"replace({text}, regexp('{digit}', 'g'), '{sup}')"
    return (f"abs({field} / pow(10, {exponent}) - 1) > 1e-6 ? '' : {exponent} == 0 ? '1'"
            f" : {exponent} == 1 ? '10' : '10' + {text}")
