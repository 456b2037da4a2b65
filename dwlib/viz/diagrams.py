"""Two figures drawn, not plotted: the analysed network's architecture and a schematic of the
depth ablation that the paper's Figure 1 reprints.

- :func:`architecture_diagram`: one layer of a Transformer encoder (eqs. (1)-(2) of the paper)
  with the parts the analysed network (eq. (3)) keeps, removes and sets aside, in words and the
  symbols a reader writes, without TeX: the paper's W^{Q,l,h}, W^{K,l,h}, W^{V,l,h} and W^{O,l,h}
  named by their role (the query box's "matrix × xᵢ", the "output matrix"; the layer and head are
  said once, in the subtitle), xᵢ for x^{l,i}, with Unicode subscripts.
- :func:`depth_ablation_schematic`: the claim of the paper's Figure 1 (Kaplan et al.'s loss
  against non-embedding size, one curve per depth, as Levine et al. read it), drawn as a
  schematic: its curves are shapes, not data, and its axes carry no numbers.

Both are Vega-Lite charts (rect, text, rule and line marks), so they need no image file and
draw in the static book, in JupyterLab and in the PDF. The diagram is laid out in pixels for a
phone: its drawing is :data:`DIAGRAM_WIDTH` pixels wide, narrower than the book's column on a
320 px phone, so it is never narrowed (narrowing would squeeze its boxes under their text);
:func:`text_width` estimates each label's width so that tests/test_diagrams.py can check that
every label fits its box.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

#: the diagram's width in pixels: the book's column on a 320 px phone is 272 px; Vega adds 5 px of
#: padding on each side, and the outlines' strokes about 2 px more (drawn at 260, it measured 274)
DIAGRAM_WIDTH = 254
#: font size (px) of the diagram's labels
FONT = 10.5
#: the three kinds of part, each with its stroke colour, dash and text colour: Okabe-Ito blue for
#: what the analysed network keeps, grey dashes for what it removes, orange dots for what the paper
#: sets aside (readable without colour: solid, dashed and dotted outlines, and a word in each box)
KINDS = {
    "kept": {"stroke": "#0072b2", "dash": [], "fill": "#e6f0f8", "text": "#000000"},
    "removed": {"stroke": "#8c8c8c", "dash": [5, 3], "fill": "#ffffff", "text": "#595959"},
    "set aside": {"stroke": "#d55e00", "dash": [1.5, 2.5], "fill": "#fff7ef", "text": "#8a3d00"},
}
#: what the legend under the diagram says of each kind
KIND_NOTES = {
    "kept": "kept: the analysed network, eq. (3)",
    "removed": "removed: in eqs. (1)-(2), not in eq. (3)",
    "set aside": "set aside: appendix or footnote",
}
#: said once for every matrix in the boxes: each belongs to one layer and one head
SUBTITLE = ("the matrices are those of layer l, head h;", "x\u1d62: the layer's input at position i")
_PAD = 4  # px between a box's edge and its text

# Approximate advance widths (in em) of the book's chart font (Arimo, metric-compatible with
# Arial): enough to check that a label fits its box with a few pixels to spare.
_NARROW = set("ijlI.,:;'|!()[]{}/ ") | {"\u00b7"}
_WIDE = set("mwMW@%") | {"\u03a3", "\u0398", "\u2192"}


def text_width(text: str, size: float = FONT) -> float:
    """An estimate, slightly generous, of ``text``'s width in pixels at ``size`` px."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.3
        elif ch in _WIDE:
            em += 0.85
        elif ch.isupper():
            em += 0.7
        else:
            em += 0.56
    return em * size


def _box(x0, x1, y0, y1, kind, *lines):
    return {"x0": x0, "x1": x1, "y0": y0, "y1": y1, "kind": kind, "lines": list(lines)}


def architecture_boxes() -> list[dict]:
    """The diagram's boxes, top to bottom: ``x0``, ``x1``, ``y0``, ``y1`` in pixels (y down),
    ``kind`` (a key of :data:`KINDS`, or ``frame`` for the outlines of the layer and of the heads,
    whose one line is their label) and ``lines`` of text."""
    W = DIAGRAM_WIDTH
    q, k, v = (14, 86), (91, 163), (168, 240)  # the query, key and value columns
    return [
        _box(0, W, 0, 44, "set aside", "input embedding and positions",
             "set aside: no effect for realistic vocabulary", "sizes (see The vocabulary bottleneck)"),
        _box(0, W, 54, 434, "frame", "layer l = 1, ..., L"),
        _box(20, W - 20, 72, 94, "kept", "inputs x\u1d62 and x\u2c7c, j = 1, ..., N"),
        _box(6, W - 6, 104, 290, "frame", "heads h = 1, ..., H"),
        _box(q[0], q[1], 118, 160, "kept", "query", "matrix \u00d7 x\u1d62"),
        _box(k[0], k[1], 118, 160, "kept", "key", "matrix \u00d7 x\u2c7c"),
        _box(v[0], v[1], 118, 160, "kept", "value", "matrix \u00d7 x\u2c7c"),
        _box(q[0], k[1], 172, 194, "kept", "score = query \u00b7 key"),
        _box(q[0], k[1], 206, 234, "removed", "softmax over j, scale 1/\u221ad\u2090", "removed"),
        _box(q[0], v[1], 246, 268, "kept", "score \u00d7 output matrix \u00d7 value"),
        _box(14, W - 14, 300, 322, "kept", "\u03a3 over positions j and heads h: y\u1d62"),
        _box(14, W - 14, 334, 362, "set aside", "residual: + x\u1d62", "set aside: in the appendix"),
        _box(14, W - 14, 374, 424, "removed", "LayerNorm, feed-forward matrix,",
             "ReLU, second matrix, LayerNorm",
             "removed (matrices join the output matrix)"),
        _box(20, W - 20, 446, 470, "kept", "output of layer L at i, eq. (4)"),
    ]


def architecture_arrows() -> list[dict]:
    """The diagram's arrows: ``x``, ``y0`` (tail) and ``y1`` (head) in pixels; all point down,
    as the computation flows. The arrow out of the layer's outline stands for the stack: layer
    l's output is layer l + 1's input, and layer L's is the network's output."""
    mid = DIAGRAM_WIDTH / 2
    return [
        {"x": mid, "y0": 44, "y1": 72},
        {"x": 50, "y0": 94, "y1": 118}, {"x": 127, "y0": 94, "y1": 118}, {"x": 204, "y0": 94, "y1": 118},
        {"x": 50, "y0": 160, "y1": 172}, {"x": 127, "y0": 160, "y1": 172},
        {"x": 88, "y0": 194, "y1": 206}, {"x": 88, "y0": 234, "y1": 246},
        {"x": 204, "y0": 160, "y1": 246},
        {"x": mid, "y0": 268, "y1": 300},
        {"x": mid, "y0": 322, "y1": 334}, {"x": mid, "y0": 362, "y1": 374},
        {"x": mid, "y0": 424, "y1": 446},
    ]


def _legend_rows(top: float) -> list[dict]:
    return [{"kind": kind, "y": top + 16 * i} for i, kind in enumerate(KIND_NOTES)]


LEGEND_TOP = 488


def architecture_texts() -> list[dict]:
    """Every text the diagram draws: ``x``, ``y`` (pixels), ``text``, ``align``, ``kind``,
    ``size`` and the box it lies in (``x0``, ``x1``, ``y0``, ``y1``), to check that it fits.
    An outline's label is set at its right: the layer's at its top, the heads' at their bottom,
    clear of the arrows that cross the outlines."""
    out = []
    step = FONT + 2
    for b in architecture_boxes():
        box = {k: b[k] for k in ("x0", "x1", "y0", "y1")}
        if b["kind"] == "frame":
            y = b["y0"] + 9 if b["lines"][0].startswith("layer") else b["y1"] - 9
            out.append({"x": b["x1"] - 6, "y": y, "text": b["lines"][0], "align": "right",
                        "kind": "frame", "size": FONT - 1, **box})
            continue
        n = len(b["lines"])
        middle = (b["y0"] + b["y1"]) / 2
        for i, line in enumerate(b["lines"]):
            out.append({"x": (b["x0"] + b["x1"]) / 2, "y": middle + (i - (n - 1) / 2) * step,
                        "text": line, "align": "center", "kind": b["kind"], "size": FONT, **box})
    for row in _legend_rows(LEGEND_TOP):
        out.append({"x": 24, "y": row["y"], "text": KIND_NOTES[row["kind"]], "align": "left",
                    "kind": row["kind"], "size": FONT, "x0": 20, "x1": DIAGRAM_WIDTH,
                    "y0": row["y"] - 8, "y1": row["y"] + 8})
    return out


def architecture_diagram():
    """The analysed network inside a Transformer encoder layer, as a Vega-Lite chart: boxes
    (solid: kept in eq. (3); dashed: removed; dotted: set aside), arrows down the computation,
    the layer's and the heads' outlines, and a legend of the three kinds below."""
    boxes = architecture_boxes()
    legend = _legend_rows(LEGEND_TOP)
    height = legend[-1]["y"] + 10
    x_scale = alt.Scale(domain=[0, DIAGRAM_WIDTH], range=[0, DIAGRAM_WIDTH], nice=False, zero=False)
    y_scale = alt.Scale(domain=[0, height], range=[0, height], nice=False, zero=False)
    x = alt.X("x0:Q", scale=x_scale, axis=None)
    y = alt.Y("y0:Q", scale=y_scale, axis=None)
    layers = []
    frames = pd.DataFrame([b for b in boxes if b["kind"] == "frame"]).drop(columns="lines")
    layers.append(alt.Chart(frames).mark_rect(fill="#fafafa", stroke="#444444", strokeWidth=0.8,
                                              cornerRadius=4).encode(x=x, x2="x1:Q", y=y, y2="y1:Q"))
    for kind, style in KINDS.items():
        parts = [b for b in boxes if b["kind"] == kind]
        parts += [{"x0": 6, "x1": 18, "y0": r["y"] - 5, "y1": r["y"] + 5, "kind": kind}
                  for r in legend if r["kind"] == kind]  # the legend's sample box
        df = pd.DataFrame(parts).drop(columns="lines", errors="ignore")
        layers.append(alt.Chart(df).mark_rect(
            fill=style["fill"], stroke=style["stroke"], strokeWidth=1.4, strokeDash=style["dash"],
            cornerRadius=3).encode(x=x, x2="x1:Q", y=y, y2="y1:Q"))
    arrows = pd.DataFrame(architecture_arrows())
    layers.append(alt.Chart(arrows).mark_rule(color="#333333", strokeWidth=1.1).encode(
        x=alt.X("x:Q", scale=x_scale, axis=None), y=alt.Y("y0:Q", scale=y_scale, axis=None),
        y2=alt.Y2("y1:Q")))
    layers.append(alt.Chart(arrows).mark_point(shape="triangle-down", filled=True, size=28, color="#333333",
                                               opacity=1, yOffset=-3).encode(
        x=alt.X("x:Q", scale=x_scale, axis=None), y=alt.Y("y1:Q", scale=y_scale, axis=None)))
    texts = pd.DataFrame(architecture_texts())
    colours = {**{k: s["text"] for k, s in KINDS.items()}, "frame": "#333333"}
    for (align, size), group in texts.groupby(["align", "size"]):
        layers.append(alt.Chart(group).mark_text(align=align, baseline="middle", fontSize=float(size)).encode(
            x=alt.X("x:Q", scale=x_scale, axis=None), y=alt.Y("y:Q", scale=y_scale, axis=None),
            text="text:N",
            color=alt.Color("kind:N", scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                            legend=None)))
    return alt.layer(*layers).properties(
        width=DIAGRAM_WIDTH, height=height,
        title=alt.Title(["A Transformer layer, and what", "the analysed network keeps"], anchor="start",
                        subtitle=list(SUBTITLE)),
    ).configure_view(stroke=None)


# ---------------------------------------------------------------------------------------------
# The paper's Figure 1, as a schematic

#: the depths of the paper's Figure 1, shallow to deep, and where (as a fraction of the size
#: axis) the schematic's curve of each shallow depth leaves the common trend; the deepest curve
#: (depths 12 to 207 in the figure) is the trend itself
SCHEMATIC_DEPTHS = {"L = 1": 0.2, "L = 2": 0.38, "L = 3": 0.54, "L = 6": 0.72, "L > 6 (12 to 207)": None}
#: Okabe-Ito colours, shallow to deep, with a dash each: told apart without colour too
_DEPTH_COLOURS = ["#d55e00", "#e69f00", "#009e73", "#56b4e9", "#0072b2"]
_DEPTH_DASHES = [[2, 2], [6, 2], [6, 2, 2, 2], [10, 3], []]


def schematic_curves(points: int = 61) -> pd.DataFrame:
    """The schematic's curves: ``size`` (0 to 1, standing for log non-embedding size), ``loss``
    (arbitrary units) and ``depth``. Every curve follows one falling trend; a shallow depth's
    curve leaves it at its own size and flattens (it falls ever more slowly, never rises), later
    for deeper networks. Shapes only: no value here is a measurement."""
    size = np.linspace(0.0, 1.0, points)
    slope, bend = 0.6, 0.25
    trend = 0.9 - slope * size
    rows = []
    for depth, leaves in SCHEMATIC_DEPTHS.items():
        loss = trend.copy()
        if leaves is not None:
            after = size > leaves
            loss[after] = (0.9 - slope * leaves
                           - slope * bend * (1 - np.exp(-(size[after] - leaves) / bend)))
        rows += [{"size": float(s), "loss": float(v), "depth": depth} for s, v in zip(size, loss)]
    return pd.DataFrame(rows)


def depth_ablation_schematic():
    """Loss against non-embedding size, one curve per depth, as the paper reads Kaplan et al.'s
    ablation: one trend for the deep networks, the shallow ones leaving it as size grows.
    Marked as a schematic in its title; its axes have names and no numbers."""
    order = list(SCHEMATIC_DEPTHS)
    colour = alt.Color("depth:N", sort=order, scale=alt.Scale(domain=order, range=_DEPTH_COLOURS),
                       legend=alt.Legend(title="depth", orient="bottom", direction="horizontal",
                                         columns=3, symbolStrokeWidth=2.5, labelLimit=200))
    dash = alt.StrokeDash("depth:N", sort=order, scale=alt.Scale(domain=order, range=_DEPTH_DASHES),
                          legend=alt.Legend(title="depth", orient="bottom", direction="horizontal",
                                            columns=3, symbolStrokeWidth=2.5, labelLimit=200))
    axis = {"labels": False, "ticks": False, "grid": False, "domainColor": "#444444"}
    return alt.Chart(schematic_curves()).mark_line(strokeWidth=2.2).encode(
        x=alt.X("size:Q", scale=alt.Scale(domain=[0, 1], nice=False),
                axis=alt.Axis(title="non-embedding parameters (log scale) \u2192", **axis)),
        y=alt.Y("loss:Q", scale=alt.Scale(domain=[0.25, 0.95], nice=False, zero=False),
                axis=alt.Axis(title="test loss (lower is better)", **axis)),
        color=colour, strokeDash=dash, order="size:Q",
    ).properties(width=260, height=200, title=alt.Title(
        "Schematic of the claim, not data", anchor="start",
        subtitle=["after Kaplan et al. 2020, as read by", "Levine et al. 2020a in their Figure 1"]))

