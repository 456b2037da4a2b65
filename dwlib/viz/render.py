"""Altair charts that work in the offline book and in a live kernel, with no network.

A chart's output is its Vega-Lite spec as data, under the MIME type that front ends render
with the Vega they ship (JupyterLab, Jupyter Notebook 7 and VS Code render
``application/vnd.vegalite.v5+json`` with their bundled Vega-Lite 5; none ships Vega-Lite 6,
Altair's own MIME type; the payload's ``$schema`` says Vega-Lite 5 accordingly, and the live
test draws every chapter's charts there). Nothing is fetched: no CDN, no require.js. A notebook saved with
outputs shows its charts when opened, before it runs (the spec is data, not a script, so an
untrusted notebook draws it too).

- The offline book turns that output into HTML at build time (:func:`chart_html`, hooked into
  myst-nb by :class:`dwlib.book.charts.VegaLiteHTML`): a container and a script calling the
  ``vegaEmbed`` that the book's pages load from their own static files (Vega-Lite 6, the
  version Altair writes for: :func:`book_spec` gives the spec Altair's ``$schema`` back).
- Colab renders no Vega MIME type: there :func:`enable` uses Altair's JupyterChart widget in
  its offline mode, whose JavaScript comes from the installed ``vl-convert-python`` package
  (``pip install dwlib[colab]``).

Use :func:`enable` once per notebook (the chapters do it through :func:`dwlib.book.setup`),
then display charts as usual. Static interactivity uses Altair parameters bound to HTML
inputs (:func:`slider`), which work in the rendered page without a kernel. Also here: the
helpers that charts share (:func:`spec_json`, :func:`short_label`, :func:`place_labels`); the
charts themselves live beside their subject (:mod:`dwlib.viz.bounds`, ...).
"""

from __future__ import annotations

import html
import json
import math

import altair as alt
import numpy as np

from dwlib import fmt
from dwlib.env import on_colab
from dwlib.errors import InputError

RENDERER = "dwbook"
MIMETYPE = "application/vnd.vegalite.v5+json"
# The $schema of a chart under MIMETYPE: vega-embed compares it with the Vega-Lite it runs and
# warns on a different major version.
MIME_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

# The chart's container, then a script that finds it as its previous sibling (no id needed).
_SCRIPT = """\
<div class="dw-chart"></div>
<script type="text/javascript">
(function(spec, embedOpt) {
  const el = document.currentScript.previousElementSibling;
  if (typeof vegaEmbed === "undefined") {  // never fetched: the book's pages bring vegaEmbed
    el.innerHTML = '<pre class="dw-chart-error">Vega-Embed is not on this page.</pre>';
    return;
  }
  vegaEmbed(el, spec, embedOpt).catch(function(err) {
    el.innerHTML = '<pre class="dw-chart-error">' + err + '</pre>';
    console.error(err);
  });
})(%s, %s);
</script>
"""


def chart_html(spec: dict, embed_options: dict | None = None) -> str:
    """The book's HTML for a chart: its container and a script drawing ``spec`` with the
    page's own ``vegaEmbed``. Loads nothing; ``</`` in the spec is escaped for the script."""
    def js(value) -> str:
        return json.dumps(value, sort_keys=True).replace("</", "<\\/")
    return _SCRIPT % (js(spec), js(embed_options or {}))


def book_spec(spec: dict) -> dict:
    """A chart's spec as saved under :data:`MIMETYPE`, for the book's pages: with the ``$schema``
    Altair wrote (the Vega-Lite version the book loads)."""
    return {**spec, "$schema": alt.SCHEMA_URL}


def _renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    spec = fmt.stable(spec)  # every number the output saves, not only the data's (see _inline_values)
    title = spec.get("title")
    text = f"<Altair chart{': ' + html.escape(str(title)) if isinstance(title, str) else ''}>"
    embed = {"embed_options": metadata.get("embed_options") or {}}
    return {MIMETYPE: {**spec, "$schema": MIME_SCHEMA}, "text/plain": text}, {MIMETYPE: embed}


alt.renderers.register(RENDERER, _renderer)


def mime_bundle(chart: alt.TopLevelMixin) -> tuple[dict, dict]:
    """A chart's output as the book's renderer writes it (data, metadata), whichever renderer is
    enabled: for a chart shown inside another output (an explorer's static form)."""
    options = {"actions": False, "renderer": "svg"}
    return _renderer(chart.to_dict(), embed_options=options)


def _inline_values(data) -> dict:
    """Altair's data transformer for dwlib's charts: the data inline in the spec (the book has no
    server to fetch data files from; no row limit), real numbers to
    :data:`dwlib.fmt.STABLE_DIGITS` significant digits (:func:`dwlib.fmt.stable`), so that a
    chart's saved data, and the dataset name Altair hashes from it, are the same on every CPU."""
    values = alt.utils.data.to_values(data)
    return {**values, "values": fmt.stable(values["values"])} if "values" in values else values


alt.data_transformers.register(RENDERER, _inline_values)


def enable(actions: bool = False, live: bool | None = None) -> None:
    """Render Altair charts as Vega-Lite data (``live=False``: JupyterLab, Notebook, VS Code,
    the book), or with Altair's offline JupyterChart widget (``live=True``; default: only on
    Colab, which renders no Vega MIME type).

    ``actions`` shows vega-embed's export menu (off by default: it links to an online editor).
    """
    if on_colab() if live is None else live:
        alt.renderers.enable("jupyter", offline=True, embed_options={"actions": actions})
    else:
        alt.renderers.enable(RENDERER, embed_options={"actions": actions, "renderer": "svg"})
    alt.data_transformers.enable(RENDERER)


def slider(name: str, min: float, max: float, step: float, value: float, label: str | None = None):
    """An Altair parameter bound to a range input: static interactivity with no kernel."""
    return alt.param(name=name, value=value,
                     bind=alt.binding_range(min=min, max=max, step=step, name=(label or name) + " "))


def spec_json(chart: alt.TopLevelMixin) -> str:
    """The chart's Vega-Lite spec as canonical JSON (stable across runs; used by tests)."""
    return json.dumps(chart.to_dict(), sort_keys=True)


def short_label(names: list[str], most: int = 2) -> str:
    """A point's label: at most ``most`` names (size suffixes in parentheses dropped), then +k."""
    short = [n.split(" (")[0] for n in names]
    return " / ".join(short[:most]) + (f" +{len(short) - most}" if len(short) > most else "")


#: advance widths (thousandths of the font size) of the characters of the book's chart font,
#: Arimo (measured in Chromium on the font file the book ships); others count as a wide letter
_ADVANCE = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
    [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, *[556] * 10,
     278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556,
     833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
     333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333,
     500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584]))
#: the nearest other point may come no nearer a label's box than this many times its own point
OWN_MARGIN = 1.5
#: a label whose box lies further than this (px) from its point is tied to it by a leader line
LEADER_FROM = 10.0
#: the radius (px) kept clear around a point: its mark, and where a leader line starts
DOT_RADIUS = 5.0
#: the gap (px) between a point and a label beside it
GAP = 6.0
#: the longest leader line (px): about a quarter of the plot a phone draws (221 px at 320 px) and
#: four lines of label text; a longer line crosses the ground of other points, and a reader has
#: to trace it to know whose label it is rather than see it at a glance
LEADER_MAX = 40.0
#: the clearance (px) between a label's box and the plot's edges (its axes among them)
EDGE = 2.0
#: the most steps the exhaustive search for a placement takes (where the greedy one leaves the
#: rule broken) before a label is declared unplaceable
SEARCH_STEPS = 200_000


class PlacementError(InputError):
    """No place for a label obeys the rule of :func:`place_labels`: one line naming the label
    (``label``: its index among the texts given)."""

    def __init__(self, message: str, label: int | None = None):
        super().__init__(message)
        self.label = label


def text_width(text: str, font_size: float) -> float:
    """The width (px) of one line of chart text in the book's font, with a pixel's margin each
    side (a browser's rounding, a front end drawing in a slightly wider font)."""
    return sum(_ADVANCE.get(c, 722) for c in str(text)) * font_size / 1000 + 2


def label_box(x: float, y: float, text: str, place, font_size: float) -> tuple:
    """The box (x0, y0, x1, y1), in pixels, y down, of a label drawn at ``place``, an
    (align, dx, dy) offset from its point (x, y), with baseline middle."""
    align, dx, dy = place
    w, h = text_width(text, font_size), font_size + 2
    x0 = x + dx - {"left": 0, "center": w / 2, "right": w}[align]
    return (x0, y + dy - h / 2, x0 + w, y + dy + h / 2)


def _box_point_distance(b, px, py):
    """Distance (px) from points (arrays px, py) to box b; 0 inside."""
    ddx = np.maximum(np.maximum(b[0] - px, 0), px - b[2])
    ddy = np.maximum(np.maximum(b[1] - py, 0), py - b[3])
    return np.hypot(ddx, ddy)


def leader_offsets(text: str, place, font_size: float):
    """The leader line of a label at ``place`` as (x0, y0, x1, y1) offsets in pixels from its
    point: from the edge of the point's mark to the nearest point of the label's box; None for
    a label near enough to its point (within :data:`LEADER_FROM`) to need none."""
    b = label_box(0.0, 0.0, text, place, font_size)
    nx, ny = min(max(0.0, b[0]), b[2]), min(max(0.0, b[1]), b[3])  # the box's point nearest (0, 0)
    d = math.hypot(nx, ny)
    if d <= LEADER_FROM:
        return None
    return (nx / d * DOT_RADIUS, ny / d * DOT_RADIUS, nx, ny)


def _hits(seg, boxes):
    """Which segments meet which boxes: (A, B) booleans for segments ``seg`` (A, 4: x0, y0,
    x1, y1) and ``boxes`` (B, 4: x0, y0, x1, y1) (Liang-Barsky clipping)."""
    seg, boxes = np.asarray(seg, float).reshape(-1, 4), np.asarray(boxes, float).reshape(-1, 4)
    x0, y0 = seg[:, 0:1], seg[:, 1:2]
    dx, dy = seg[:, 2:3] - x0, seg[:, 3:4] - y0
    lo = np.zeros((len(seg), len(boxes)))
    hi = np.ones((len(seg), len(boxes)))
    ok = np.ones((len(seg), len(boxes)), bool)
    for p, q in ((-dx, x0 - boxes[:, 0]), (dx, boxes[:, 2] - x0),
                 (-dy, y0 - boxes[:, 1]), (dy, boxes[:, 3] - y0)):
        p = np.broadcast_to(p, q.shape)
        par = np.abs(p) < 1e-12
        ok &= ~(par & (q < 0))
        t = q / np.where(par, 1.0, p)
        lo = np.where(~par & (p < 0), np.maximum(lo, t), lo)
        hi = np.where(~par & (p > 0), np.minimum(hi, t), hi)
    return ok & (lo <= hi)


def _overlaps(a, b):
    """Overlap areas (A, B) of boxes ``a`` (A, 4) and ``b`` (B, 4)."""
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    return np.where((w > 0) & (h > 0), w * h, 0.0)


def _candidates(font_size: float) -> list:
    """Places tried for a label, (align, dx, dy): beside its point (level, or a half line to
    six lines up or down), further out to the side (with a leader), and above or below it."""
    h = font_size + 2
    out = []
    for k in (0, -0.5, 0.5, -1, 1, -1.5, 1.5, -2, 2, -2.5, 2.5, -3, 3, -4, 4, -5, 5, -6, 6):
        for extra in (0, 12, 20, 30, 50):
            out += [("left", GAP + extra, k * h), ("right", -(GAP + extra), k * h)]
    for k in range(8):
        dy = h / 2 + DOT_RADIUS + 1 + k * h
        out += [("center", 0.0, -dy), ("center", 0.0, dy)]
    # above or below it, the label starting or ending at the point, or shifted along
    for k in range(8):
        dy = h / 2 + DOT_RADIUS + 1 + k * h / 2
        for shift in (0.0, 12.0, -12.0, -24.0, -36.0):
            out += [("left", shift, -dy), ("right", -shift, -dy), ("left", shift, dy), ("right", -shift, dy)]
    return out


def leader_length(line) -> float:
    """The length (px) of a leader line (x0, y0, x1, y1); 0 for none."""
    return 0.0 if line is None else math.hypot(line[2] - line[0], line[3] - line[1])


def _crossings(a, b):
    """Which segments of ``a`` (A, 4) cross which of ``b`` (B, 4): (A, B) booleans (each
    segment's ends strictly on either side of the other's line)."""
    a, b = np.asarray(a, float).reshape(-1, 4), np.asarray(b, float).reshape(-1, 4)

    def side(p, q, r):  # the sign of the turn p -> q -> r, broadcast (A, B)
        return np.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))
    a0, a1 = (a[:, None, 0], a[:, None, 1]), (a[:, None, 2], a[:, None, 3])
    b0, b1 = (b[None, :, 0], b[None, :, 1]), (b[None, :, 2], b[None, :, 3])
    return ((side(a0, a1, b0) * side(a0, a1, b1) < 0) & (side(b0, b1, a0) * side(b0, b1, a1) < 0))


def _search(n: int, domains: list, pair: dict, budget: int = SEARCH_STEPS):
    """A place per label (index into its candidates) such that no two placed labels meet
    (``pair[i, j][ci, cj] == 0``), each from its ``domains`` list (in order of preference);
    depth first, the label with the fewest places left first, the labels that can meet it
    keeping only the places that do not; None if none exists or ``budget`` steps run out."""
    steps = 0
    ok = {key: m <= 0 for key, m in pair.items()}

    def go(chosen: dict, left: dict):
        nonlocal steps
        if not left:
            return chosen
        i = min(left, key=lambda k: (len(left[k]), k))
        for c in left[i]:
            steps += 1
            if steps > budget:
                return None
            rest = {}
            for j, places in left.items():
                if j == i:
                    continue
                if (i, j) in ok:
                    places = [d for d in places if ok[i, j][c, d]]
                    if not places:
                        break
                rest[j] = places
            else:
                got = go({**chosen, i: c}, rest)
                if got is not None:
                    return got
        return None

    if any(not d for d in domains):
        return None
    return go({}, {i: list(d) for i, d in enumerate(domains)})


def place_labels(xs, ys, texts, width: int, height: int, font_size: float = 9.0, obstacles=(), *,
                 widths=(), curves=(), margin: float = OWN_MARGIN) -> list:
    """Places of point labels in pixel space (x, y in pixels at a plot ``width`` wide, y down),
    that obey one rule at ``width`` and at every plot width in ``widths`` (as the plot widens,
    points and ``obstacles`` move with it, ``xs`` scaled, and labels keep their offsets):

    a label belongs to its point: the point nearest its box is its own, and every other point
    is at least ``margin`` times as far (but for a point drawn over the label's own, closer
    than :data:`DOT_RADIUS`: one mark to a reader; a label set further than :data:`LEADER_FROM` from its
    point is tied to it by a leader line, and keeps other points ``margin`` times
    :data:`LEADER_FROM` away); and its box stays inside the plot, clear of other
    labels, other points, ``obstacles`` (other text the chart draws: boxes (ax, x0, y0, x1, y1),
    anchored at ax pixels, which moves as a point does, x0 and x1 offsets from it), the lines of
    ``curves`` (each a sequence of (x, y) pixels at ``width``), and the leader lines of other
    labels.

    Among the places that obey it, the nearest its point wins (one needing a leader line counts
    :data:`LEADER_FROM` further); a leader line (:func:`leader_offsets`) is at most
    :data:`LEADER_MAX` long and crosses no other label, point or leader line; a label's box
    keeps :data:`EDGE` pixels from the plot's edges (its axes). The most constrained labels are
    placed first, then each label is placed again while that lowers the rule's violations.
    Where no place obeys the rule, nothing ambiguous is drawn: :class:`PlacementError` names
    the label. Returns (align, dx, dy) per point, offsets in pixels from the point to the
    label's anchor. Deterministic, so the chart's spec is the same on every run.
    """
    n = len(xs)
    texts = [str(t) for t in texts]
    scales = [1.0] + [w / width for w in widths if w != width]
    fx, fy = np.asarray(xs, float), np.asarray(ys, float)
    cands = _candidates(font_size)
    C = len(cands)
    segs = [np.column_stack([np.asarray(c, float)[:-1], np.asarray(c, float)[1:]])
            for c in curves if len(c) > 1]
    seg = np.concatenate(segs) if segs else np.zeros((0, 4))
    obst = np.asarray(obstacles, float).reshape(-1, 5)
    # per label: its boxes and leaders relative to its point, its own distance, and a preference
    rel = np.array([[label_box(0.0, 0.0, t, c, font_size) for c in cands] for t in texts])  # (n, C, 4)
    lead = np.zeros((n, C, 4))
    has = np.zeros((n, C), bool)
    for i, t in enumerate(texts):
        for c, cand in enumerate(cands):
            ln = leader_offsets(t, cand, font_size)
            if ln is not None:
                lead[i, c], has[i, c] = ln, True
    too_long = np.hypot(lead[:, :, 2] - lead[:, :, 0], lead[:, :, 3] - lead[:, :, 1]) > LEADER_MAX
    own = _box_point_distance(rel.transpose(2, 0, 1), 0.0, 0.0)  # (n, C)
    near = own + LEADER_FROM * has

    def grown(b, d=1.0):
        return b + np.array([-d, -d, d, d])

    static = np.zeros((n, C))
    parts: dict = {}  # the rule's clauses that a place breaks, per label and place
    absbox = np.zeros((len(scales), n, C, 4))
    abslead = np.zeros((len(scales), n, C, 4))
    for s, k in enumerate(scales):
        px = fx * k
        shift = np.column_stack([px, fy, px, fy])  # (n, 4)
        absbox[s] = rel + shift[:, None, :]
        abslead[s] = lead + shift[:, None, :]
        for i in range(n):
            b = absbox[s, i]
            out = (np.maximum(0, EDGE - b[:, 0]) + np.maximum(0, b[:, 2] - (width * k - EDGE))
                   + np.maximum(0, EDGE - b[:, 1]) + np.maximum(0, b[:, 3] - (height - EDGE)))
            others = np.arange(n) != i
            dist = _box_point_distance(b.T[:, :, None], px[others][None, :], fy[others][None, :])  # (C, n-1)
            # a label tied by a leader keeps other points as far as one at LEADER_FROM would
            # (a point whose mark covers the own point's centre is the same mark to a reader)
            apart = np.hypot(px[others] - px[i], fy[others] - fy[i]) >= DOT_RADIUS
            owned = (np.maximum(0, margin * np.minimum(own[i], LEADER_FROM)[:, None] - dist)
                     * apart).sum(axis=1)
            over_dot = (np.maximum(0, DOT_RADIUS + 1 - dist) * apart).sum(axis=1)
            part = {"leaves the plot or touches its axes": 10 * out,
                    "lies as near another point as its own": 10 * owned,
                    "covers another point": 10 * over_dot}
            if len(obst):
                ob = np.column_stack([obst[:, 0] * k + obst[:, 1], obst[:, 2],
                                      obst[:, 0] * k + obst[:, 3], obst[:, 4]])
                part["covers the chart's other text"] = _overlaps(grown(b), ob).sum(axis=1)
            if len(seg):
                part["touches a curve"] = 50 * _hits(seg * [k, 1, k, 1], grown(b)).sum(axis=0)
            far = others & (np.hypot(px - px[i], fy - fy[i]) >= DOT_RADIUS)  # marks of their own
            dots = np.column_stack([px[far] - DOT_RADIUS, fy[far] - DOT_RADIUS,
                                    px[far] + DOT_RADIUS, fy[far] + DOT_RADIUS])
            part["has a leader line across another point"] = 20 * np.where(
                has[i], _hits(abslead[s, i], dots).sum(axis=1), 0)
            for name, cost in part.items():
                parts.setdefault(name, np.zeros((n, C)))[i] += cost
                static[i] += cost
    parts[f"needs a leader line over {LEADER_MAX:g} px"] = 1000.0 * too_long
    static += 1000.0 * too_long

    def fail(i, c, chosen=None):
        why = [name for name, cost in parts.items() if cost[i, c] > 1e-9] + [
            f"meets the label '{texts[j]}' or its leader line" for j in range(n)
            if chosen is not None and (i, j) in pair and pair[i, j][c, chosen[j]] > 0]
        return PlacementError(
            f"no place for the label '{texts[i]}' obeys the rule at plot widths "
            f"{width}-{round(width * max(scales))} px: at its best place it {' and '.join(why)}", i)

    # only the places that obey the rule on their own are weighed against the other labels
    allowed = static <= 1e-9
    for i in range(n):
        if not allowed[i].any():
            raise fail(i, int(np.argmin(static[i])))
    static = np.where(allowed, static, static + 1e6)

    # pairs of labels that can meet: their costs over every width, (C, C) per pair
    reach_x = rel[:, :, [0, 2]].__abs__().max(axis=(1, 2)) + 2
    reach_y = rel[:, :, [1, 3]].__abs__().max(axis=(1, 2)) + 2
    pair: dict = {}
    for i in range(n):
        for j in range(i + 1, n):
            if (abs(fx[i] - fx[j]) * min(scales) > reach_x[i] + reach_x[j] + 1
                    or abs(fy[i] - fy[j]) > reach_y[i] + reach_y[j] + 1):
                continue
            ai, aj = np.flatnonzero(allowed[i]), np.flatnonzero(allowed[j])
            sub = np.zeros((len(ai), len(aj)))
            hi, hj = has[i, ai], has[j, aj]
            for s in range(len(scales)):
                bi, bj = absbox[s, i, ai], absbox[s, j, aj]
                li, lj = abslead[s, i, ai], abslead[s, j, aj]
                sub += _overlaps(grown(bi), bj)
                if hi.any():
                    sub[hi] += 20 * _hits(li[hi], bj)
                if hj.any():
                    sub[:, hj] += 20 * _hits(lj[hj], bi).T
                if hi.any() and hj.any():
                    sub[np.ix_(hi, hj)] += 20 * _crossings(li[hi], lj[hj])
            m = np.zeros((C, C))
            m[np.ix_(ai, aj)] = sub
            pair[i, j], pair[j, i] = m, m.T

    def costs(i, chosen):
        hard = static[i].copy()
        for j, cj in chosen.items():
            if j != i and (i, j) in pair:
                hard += pair[i, j][:, cj]
        return np.round(hard, 6)

    def best(i, chosen):
        hard = costs(i, chosen)
        return min(range(C), key=lambda c: (hard[c], near[i, c], c)), hard

    def score(chosen):
        hard = sum(costs(i, chosen)[chosen[i]] for i in range(n))
        return round(float(hard), 6), float(sum(near[i, chosen[i]] for i in range(n)))

    def solve(order):
        chosen: dict = {}
        for i in order:
            chosen[i] = best(i, chosen)[0]
        for _ in range(8):  # each label placed again, against all the others, while that helps
            changed = False
            for i in order:
                c, hard = best(i, chosen)
                old = chosen[i]
                if (hard[c], near[i, c]) < (hard[old], near[i, old]):
                    chosen[i], changed = c, True
            if not changed:
                break
        return score(chosen), chosen

    def improve(chosen, current):
        """Move a label (one that breaks the rule, or nearer its point), placing again the labels
        it then meets, while the whole breaks the rule less, or as little and its labels lie
        nearer their points in all."""
        for _ in range(60):
            for i in range(n):
                broken = costs(i, chosen)[chosen[i]] > 0
                better = [c for c in np.argsort(near[i], kind="stable") if static[i, c] <= 1e-9
                          and (broken or near[i, c] < near[i, chosen[i]]) and c != chosen[i]]
                for c in better:
                    trial = dict(chosen)
                    trial[i] = int(c)
                    for j in range(n):
                        if j != i and (i, j) in pair and pair[i, j][c, trial[j]] > 0:
                            trial[j] = best(j, trial)[0]
                    got = score(trial)
                    if got < current:
                        chosen, current = trial, got
                        break
                else:
                    continue
                break
            else:
                return chosen
        return chosen

    # greedy from several orders (the most constrained labels first: fewest places that obey
    # the rule on their own; left to right; right to left; top down; bottom up), the best kept,
    # then improved
    free = [int(np.sum(static[i] <= 1e-9)) for i in range(n)]
    orders = [sorted(range(n), key=lambda i: (free[i], i)), sorted(range(n), key=lambda i: (fx[i], i)),
              sorted(range(n), key=lambda i: (-fx[i], i)), sorted(range(n), key=lambda i: (fy[i], i)),
              sorted(range(n), key=lambda i: (-fy[i], i))]
    current, chosen = min((solve(o) for o in orders), key=lambda r: r[0])
    chosen = improve(chosen, current)
    if score(chosen)[0] > 0:
        # where that leaves the rule broken: a search through the places that obey it on their
        # own, the label with fewest left first, each place tried nearest first, dropping from
        # the other labels' the places that meet it (the first whole placement found is then
        # improved, as above)
        found = _search(n, [[int(c) for c in np.argsort(near[i], kind="stable") if static[i, c] <= 1e-9]
                            for i in range(n)], pair)
        if found is not None:
            chosen = improve(found, score(found))
    broken = [i for i in range(n) if costs(i, chosen)[chosen[i]] > 0]
    if broken:
        i = max(broken, key=lambda i: (costs(i, chosen)[chosen[i]], -i))
        raise fail(i, chosen[i], chosen)
    return [cands[chosen[i]] for i in range(n)]
