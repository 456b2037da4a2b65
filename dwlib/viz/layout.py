"""Chart layout that holds at every width a chart is drawn at, and in every front end.

A chart is drawn at its spec's width in JupyterLab and in the book on a desktop, and narrower
in the book on a phone (book/assets/dwcharts.js narrows it to the column, down to about
:data:`NARROW_WIDTH` pixels of plot).

- Point labels are placed once, in pixels, at that narrowest plot width
  (:func:`narrow_offsets`, with :func:`dwlib.viz.render.place_labels`), and drawn at those
  pixel offsets from their points (:func:`text_offsets`). Widening the plot moves the points
  apart horizontally and leaves the offsets alone, so labels placed clear of each other at
  the narrowest width stay clear at wider ones (tests/test_viz_layout.py checks it on the
  book's charts).
- Bands (an area between ``y`` and ``y2``) are drawn unstacked (:func:`band`): JupyterLab's
  Vega-Lite 5.6 otherwise stacks a band over a log scale along x, drawing it thousands of
  pixels wide, and warns "Cannot stack non-linear scale (log)".
"""

from __future__ import annotations

import altair as alt

from dwlib.viz.render import place_labels

#: the plot width (pixels) labels are placed at: a chart narrowed to the column of a phone
#: 320 px wide (the narrowest the book's browser tests open a page at: about 165 px of plot).
NARROW_WIDTH = 165


def narrow_offsets(fractions, ys, texts, height: int, font_size: float, obstacles=()) -> list:
    """(align, dx, dy) per point, placed at :data:`NARROW_WIDTH`: ``fractions`` are the
    points' horizontal positions as a fraction of the plot width (0 left, 1 right), ``ys``
    their pixel heights from the top of a plot ``height`` pixels tall. ``obstacles``: boxes
    (x0, y0, x1, y1) in pixels of other text, anchored at the plot's left edge (they do not
    move as the plot widens), which the labels keep clear of."""
    return place_labels([f * NARROW_WIDTH for f in fractions], list(ys), list(texts),
                        NARROW_WIDTH, height, font_size=font_size, obstacles=obstacles)


def text_offsets() -> dict:
    """Mark properties drawing each label at its datum's ``align``, ``dx`` and ``dy``."""
    return {"align": alt.expr("datum.align"), "dx": alt.expr("datum.dx"), "dy": alt.expr("datum.dy"),
            "baseline": "middle"}


def band(x: alt.X, y: alt.Y, y2) -> dict:
    """The encoding of a band from ``y`` to ``y2`` along ``x``, unstacked on both axes."""
    x, y = x.copy(), y.copy()
    x.stack = None
    y.stack = None
    return {"x": x, "y": y, "y2": y2}
