"""The guidelines chapter's charts and widgets: real models against the fit's optimal depth,
and an advisor (a chart that computes in the page, an HTML answer and a live widget).

The advisor chart runs :func:`dwlib.core.fit.optimal_depth`'s Newton iteration in the browser:
:func:`advisor_expressions` is its port to Vega's expression language, and
tests/test_viz_guidelines.py evaluates those expressions against the Python solver on a grid.
"""

from __future__ import annotations

import functools
import html
import math

import altair as alt
import ipywidgets
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import sizes
from dwlib.core.fit import (AUTHORS_FIT, DEFAULT_ABS_TOL, DEFAULT_HEAD_SIZE, DEFAULT_REL_TOL, Fit,
                            check_budget_range, check_head_size, nearby_shapes, optimal_curve,
                            positive_number, practical_shape, require_one_head, verdict)
from dwlib.errors import InputError, require
from dwlib.experiments.catalogue import load_models
from dwlib.viz.layout import band, label_rows, leader_rules, narrow_plot, text_offsets
from dwlib.viz.render import PlacementError, short_label, slider
from dwlib.viz.widgets import explorer, log_slider

#: colours of the three verdicts in the book's charts (Okabe and Ito's palette, which readers
#: with any common colour-vision deficiency tell apart, as dwlib.viz.pairs uses), and of a model
#: whose size 12 L d^2 misdescribes it (its catalogue entry says so: no verdict).
VERDICT_COLORS = {"too shallow": "#0072b2", "near optimal": "#009e73", "too deep": "#d55e00"}
NO_VERDICT = "no verdict"
NO_VERDICT_COLOR = "#999999"
#: the verdicts' point shapes, so that no reader depends on colour alone: a triangle pointing
#: the way the depth should go (up: deeper), a circle for near optimal.
VERDICT_SHAPES = {"too shallow": "triangle-up", "near optimal": "circle", "too deep": "triangle-down",
                  NO_VERDICT: "square"}
#: Newton steps unrolled in the advisor chart's Vega expressions (from the start used by
#: :func:`dwlib.core.fit.optimal_depth`, 6 steps already agree with it to ~1e-15 for budgets
#: 1e5 - 1e14).
ADVISOR_NEWTON_STEPS = 8

_BUDGET_LABEL = ("datum.value >= 1e12 ? format(datum.value / 1e12, '~g') + 'T'"
                 " : datum.value >= 1e9 ? format(datum.value / 1e9, '~g') + 'B'"
                 " : datum.value >= 1e6 ? format(datum.value / 1e6, '~g') + 'M'"
                 " : format(datum.value, '~g')")


def _shape_groups(models, fit: Fit, rel_tol: float, abs_tol: float) -> list[dict]:
    """Models with the same (depth, width) merged into one point (names joined by ' / '),
    each with budget, optimal depth, depth ratio and verdict, always computed with ``fit`` (a
    verdict the model carries may come from another fit)."""
    groups: dict = {}
    for m in models:
        v = verdict(m["depth"], m["width"], fit=fit, rel_tol=rel_tol, abs_tol=abs_tol)
        if m.get("verdict_meaningful") is False:  # 12 L d^2 misdescribes it: a point of its own
            v = {**v, "verdict": NO_VERDICT}
        g = groups.setdefault((v["depth"], v["width"], v["verdict"] == NO_VERDICT), {
            "names": [], "sources": [], **{k: v[k] for k in (
                "depth", "width", "budget", "optimal_depth", "depth_ratio", "verdict")}})
        g["names"].append(m["name"])
        src = m.get("source")
        if src and src not in g["sources"]:
            g["sources"].append(src)
    return [{"name": " / ".join(g["names"]), "depth": g["depth"], "width": g["width"],
             "budget": g["budget"], "optimal_depth": g["optimal_depth"],
             "depth_ratio": g["depth_ratio"], "verdict": g["verdict"],
             "source": ", ".join(g["sources"])} for g in groups.values()]


def _budget_ticks(lo: float, hi: float) -> list[float]:
    return [10.0 ** k for k in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]


def _budget_tick_label(value: float) -> str:
    """A budget tick's label as the axis writes it (:data:`_BUDGET_LABEL`): 1M, 10B, 1T."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _budget_x(lo: float, hi: float) -> alt.X:
    """The log-scale budget axis of the charts: ticks at powers of ten, labelled 1M, 1B, 1T; its
    title in two lines, each narrower than a phone's plot."""
    return alt.X("budget:Q", scale=alt.Scale(type="log", domain=[lo, hi]),
                 title=["non-embedding budget", "(parameters, 12 L d²)"],
                 axis=alt.Axis(values=_budget_ticks(lo, hi), labelExpr=_BUDGET_LABEL))


def _curve_frame(budget_range, points: int, fit: Fit, rel_tol: float = DEFAULT_REL_TOL,
                 abs_tol: float = DEFAULT_ABS_TOL) -> pd.DataFrame:
    curve = pd.DataFrame(optimal_curve(budget_range, points, fit, rel_tol, abs_tol))
    curve["size"] = [fmt.count(n) for n in curve["budget"]]
    return curve


def models_chart(models=None, fit: Fit = AUTHORS_FIT, rel_tol: float = DEFAULT_REL_TOL,
                 abs_tol: float = DEFAULT_ABS_TOL, budget_range=(3e7, 3e12),
                 width: int = 600, height: int = 400, cite=None) -> alt.LayerChart:
    """Depth against non-embedding budget 12 L d^2 (log x): the fit's optimal-depth curve,
    the "near optimal" band of :func:`~dwlib.core.fit.verdict`, and ``models`` as labelled
    points coloured by verdict, with tooltips.

    ``models``: dicts with ``name``, ``depth``, ``width`` and optionally ``source`` (default
    :func:`~dwlib.experiments.catalogue.load_models`).  Models of the same shape are drawn as
    one point (the label shows one name and how many more, the tooltip all).  Verdicts are computed
    with ``fit``/``rel_tol``/``abs_tol`` (so the colours match the curve and band).  Each label
    lies nearest its own point and off the curve at every width the chart is drawn at
    (:func:`dwlib.viz.layout.narrow_offsets`). ``cite``: what the tooltips show for a model's
    ``source`` (a bibliography key), for instance the book's author-year text
    (:func:`dwlib.book.references.author_year`); the key itself by default.
    """
    models = load_models(fit, rel_tol, abs_tol) if models is None else list(models)
    if cite is not None:
        models = [{**m, "source": cite(m["source"])} if m.get("source") else m for m in models]
    lo, hi = check_budget_range(budget_range)
    curve = _curve_frame((lo, hi), 160, fit, rel_tol, abs_tol)
    groups = sorted(_shape_groups(models, fit, rel_tol, abs_tol),
                    key=lambda p: (p["budget"], p["depth"]))
    ymax = float(max([curve["depth_high"].max()] + [p["depth"] for p in groups])) * 1.05
    ytop = 10 * math.ceil(ymax / 10)
    # labels placed in pixels at the narrowest width the chart is drawn at (dwlib.viz.layout)
    lx0, lx1 = math.log10(lo), math.log10(hi)
    fx = [(math.log10(p["budget"]) - lx0) / (lx1 - lx0) for p in groups]
    py = [(1 - p["depth"] / ytop) * height for p in groups]
    # one label a mark: shapes whose points fall within a pixel of each other at the chart's
    # width, with one verdict, are one mark to a reader (GPT-3 13B and LLaMA-13B), labelled once
    names: dict = {}
    for i, g in enumerate(groups):
        first = next((j for j in names if groups[j]["verdict"] == g["verdict"]
                      and abs(fx[j] - fx[i]) * width < 1 and abs(py[j] - py[i]) < 1), None)
        names.setdefault(i if first is None else first, []).extend(g["name"].split(" / "))
    # one name a label (the tooltip has them all): a two-name label is wider than a phone's plot
    shown = sorted(names)
    texts = [short_label(names[i], most=1) for i in shown]
    # each label nearest its own point and off the fit's curve at every width the chart is
    # drawn at (dwlib.viz.layout), tied to its point by a leader line where it is set apart
    cfx = [(math.log10(b) - lx0) / (lx1 - lx0) for b in curve["budget"]]
    cpy = [(1 - d / ytop) * height for d in curve["depth"]]
    # from the plot a 320 px phone draws (dwlib.viz.layout.narrow_plot): the column less the depth
    # axis (its widest label, the top of its domain) and what the last budget label reaches past
    last = _budget_ticks(lo, hi)[-1]
    meta = narrow_plot([f"{ytop}"], ((math.log10(last) - lx0) / (lx1 - lx0), _budget_tick_label(last)))
    # a label no place can hold by the rule is left off, its point kept (its tooltip names it) and
    # its name given under the title: with another fit the curve can leave a label no room
    unlabelled = []
    while True:
        try:
            rows = label_rows([fx[i] for i in shown], [py[i] for i in shown], texts, height, 9,
                              width, curves=[list(zip(cfx, cpy))], narrowest=meta["narrow_plot"])
            break
        except PlacementError as err:
            require(err.label is not None and len(shown) > 1, str(err))
            unlabelled.append(texts.pop(err.label))
            shown.pop(err.label)
    placed = dict(zip(shown, rows))
    blank = {k: ("" if k == "label" else v) for k, v in next(iter(placed.values())).items()}
    blank.update({k: False for k in blank if k.startswith("leader")})
    pts = pd.DataFrame([dict(p, **placed.get(i, blank), size=fmt.count(p["budget"]))
                        for i, p in enumerate(groups)])
    x = _budget_x(lo, hi)
    yscale = alt.Scale(domain=[0, ytop])
    near = alt.Chart(curve).mark_area(opacity=0.18, color=VERDICT_COLORS["near optimal"]).encode(
        **band(x, alt.Y("depth_low:Q", scale=yscale, title="depth L (layers)"), "depth_high:Q"))
    line = alt.Chart(curve).mark_line(color="black").encode(
        x=x, y=alt.Y("depth:Q", scale=yscale),
        tooltip=[alt.Tooltip("size:N", title="budget N"),
                 alt.Tooltip("depth:Q", format=".1f", title="optimal depth L*"),
                 alt.Tooltip("width:Q", format=",.0f", title="optimal width d*")])
    shown = [v for v in [*VERDICT_COLORS, NO_VERDICT] if v in set(pts["verdict"]) or v in VERDICT_COLORS]
    colors = {**VERDICT_COLORS, NO_VERDICT: NO_VERDICT_COLOR}
    vscale = alt.Scale(domain=shown, range=[colors[v] for v in shown])
    # below the plot, never over its labels; the plot keeps its width on a phone
    legend = alt.Legend(orient="bottom", title="verdict", direction="horizontal", columns=2)
    color = alt.Color("verdict:N", scale=vscale, legend=legend)
    shape = alt.Shape("verdict:N", scale=alt.Scale(domain=shown, range=[VERDICT_SHAPES[v] for v in shown]),
                      legend=legend)
    tips = [alt.Tooltip("name:N", title="model"), alt.Tooltip("depth:Q", title="depth L"),
            alt.Tooltip("width:Q", format=",", title="width d"),
            alt.Tooltip("size:N", title="12 L d²"),
            alt.Tooltip("optimal_depth:Q", format=".1f", title="optimal depth L*"),
            alt.Tooltip("depth_ratio:Q", format=".2f", title="L / L*"),
            alt.Tooltip("verdict:N", title="verdict"), alt.Tooltip("source:N", title="source")]
    def points(frame, size):
        return alt.Chart(frame).mark_point(filled=True, size=size, opacity=0.9).encode(
            x=x, y=alt.Y("depth:Q", scale=yscale), color=color, shape=shape, tooltip=tips)

    # a model given no verdict is drawn larger and beneath the others, so that a model of the same
    # shape with a verdict (T5-11B shares BERT-large's 24 x 1024) shows on top of it
    undecided = pts["verdict"] == NO_VERDICT
    under, dots = points(pts[undecided], 200), points(pts[~undecided], 70)
    labels = alt.Chart(pts).mark_text(fontSize=9, **text_offsets()).encode(
        x=x, y=alt.Y("depth:Q", scale=yscale), color=color, text="label:N", tooltip=tips)
    # a thin line from a point to its label where the label is set apart
    leaders = leader_rules(pts, x, alt.Y("depth:Q", scale=yscale))
    return (alt.layer(near, line, leaders, under, dots, labels)
            .properties(width=width, height=height, usermeta=meta,
                        title=alt.Title(["Real models against", "the fit's optimal depth"],
                                        subtitle=["band: near optimal", *_unlabelled_lines(unlabelled)] if unlabelled
                                        else "band: near optimal",
                                        anchor="start")))


def _unlabelled_lines(names: list[str]) -> list[str]:
    """The subtitle's lines naming the models left unlabelled, a name a line (a phone's width)."""
    return [f"no room to label: {names[0]}", *names[1:]] if names else []


def advisor_expressions(fit: Fit = AUTHORS_FIT, head_size: int = DEFAULT_HEAD_SIZE,
                        param: str = "log10_budget",
                        steps: int = ADVISOR_NEWTON_STEPS) -> list[tuple[str, str]]:
    """The advisor chart's computation as Vega expressions: ordered (field, expression) pairs
    that turn the slider value ``param`` = log10(N) into the fit's optimal shape.

    Fields: budget N; c and u0..u{steps} (Newton's method of
    :func:`~dwlib.core.fit.optimal_depth` in u = log L, unrolled ``steps`` times from the same
    start); depth L* = exp(u); width d* = exp(a + b L*); practical_depth max(1, round(L*));
    practical_width, the multiple of ``head_size`` nearest to sqrt(N / (12 depth)) (at least
    one head); heads.  The fit's constants are written in from ``fit`` (never retyped).  Only
    log, exp, pow, sqrt, min, max and round are used, and no conditionals, so the tests can
    evaluate them in Python.
    """
    h = check_head_size(head_size)
    require(isinstance(steps, (int, np.integer)) and steps >= 1,
            f"steps must be an integer >= 1, got {steps!r}")
    a, b = repr(float(fit.log_width_intercept)), repr(float(fit.depth_slope))
    k = repr(float(sizes.PARAMS_PER_LAYER))
    out = [("budget", f"pow(10, {param})"),
           ("c", f"log(datum.budget) - log({k}) - 2 * {a}"),
           # start right of the root (see optimal_depth); equals c when c <= 0.
           ("u0", f"min(datum.c, log(max(datum.c, 0) / (2 * {b}) + 1) + 1)")]
    for i in range(steps):
        u = f"datum.u{i}"
        out.append((f"u{i + 1}", f"{u} - ({u} + 2 * {b} * exp({u}) - datum.c)"
                                 f" / (1 + 2 * {b} * exp({u}))"))
    out += [("depth", f"exp(datum.u{steps})"),
            ("width", f"exp({a} + {b} * datum.depth)"),
            ("practical_depth", "max(1, round(datum.depth))"),
            ("practical_width", f"{h} * max(1, round(sqrt(datum.budget / ({k} * "
                                f"datum.practical_depth)) / {h}))"),
            ("heads", f"datum.practical_width / {h}")]
    return out


def _advisor_marker(fit: Fit, h: int, param: str) -> alt.Chart:
    """One datum carrying the advisor's answer for the slider ``param`` and its text lines."""
    marker = alt.Chart(pd.DataFrame({"i": [0]}))
    for field, expr in advisor_expressions(fit, h, param):
        marker = marker.transform_calculate(**{field: expr})
    size = ("datum.budget >= 1e12 ? format(datum.budget / 1e12, '.3~r') + 'T'"
            " : datum.budget >= 1e9 ? format(datum.budget / 1e9, '.3~r') + 'B'"
            " : format(datum.budget / 1e6, '.3~r') + 'M'")
    return marker.transform_calculate(
        size=size,
        # short lines: the text stays inside a plot narrowed to a phone's column
        summary=("'N = ' + datum.size + ': optimal depth L* = ' + format(datum.depth, '.1f')"),
        optimum="'optimal width d* = ' + format(datum.width, ',.0f')",
        practical=("'practical: ' + format(datum.practical_depth, 'd') + ' layers of width '"
                   " + format(datum.practical_width, ',d')"),
        heads_text=f"'(' + format(datum.heads, 'd') + (datum.heads == 1 ? ' head' : ' heads') + ' of {h})'",
        depth_label="'L* = ' + format(datum.depth, '.1f')",
        width_label="'d* = ' + format(datum.width, ',.0f')")


#: the advisor slider's name, which its value follows (log10 of the budget N: 11.24 is 174B)
SLIDER_LABEL = "log\u2081\u2080 N"
#: the advisor slider's step in log10(budget), and its decimals
ADVISOR_DIGITS = 5
ADVISOR_STEP = 10.0 ** -ADVISOR_DIGITS


def advisor_chart(fit: Fit = AUTHORS_FIT, models=None, head_size: int = DEFAULT_HEAD_SIZE,
                  budget_range=(1e6, 1e13), budget: float = 175e9,
                  width: int = 600) -> alt.VConcatChart:
    """The fit's optimal depth and width against the budget, with a slider bound to
    log10(budget): a marker on each curve and a few short text lines (short enough for a
    phone's column) give the suggested shape for the slider's budget.  Everything is computed
    by Vega expressions (:func:`advisor_expressions`) in the page, so it works in the static
    book with no kernel.

    ``models`` (optional): dicts with ``name``, ``depth``, ``width`` drawn as grey points on
    the depth panel (same shape merged).  ``budget``: the slider's initial value.
    """
    lo, hi = check_budget_range(budget_range)
    N0 = positive_number(budget, "budget")
    require(lo <= N0 <= hi, f"budget must lie in budget_range, got {fmt.number(N0)}")
    h = check_head_size(head_size)
    require_one_head(lo, h)
    curve = _curve_frame((lo, hi), 200, fit)
    # a fine step, so that the slider starts at the budget asked for: its optimum then reads as
    # the advisor's text and the command line give it (at 175B, d* = 13,459, not the 13,458 of
    # 174.98B, the nearest budget on a 0.001 step)
    pick = slider("log10_budget", math.log10(lo), math.log10(hi), ADVISOR_STEP,
                  round(math.log10(N0), ADVISOR_DIGITS), label=SLIDER_LABEL)
    x = _budget_x(lo, hi)
    ydepth = alt.Scale(domain=[0, math.ceil(float(curve["depth"].max()) / 10) * 10 + 10])
    marker = _advisor_marker(fit, h, pick.name)
    # labels flip to the left of the marker in the right half of the range; both curves rise
    # to the right, so the label goes above-left of the marker in the right half and
    # below-right of it in the left half, off the curve
    right = f"{pick.name} > {(math.log10(lo) + math.log10(hi)) / 2!r}"
    align = alt.expr(f"{right} ? 'right' : 'left'")
    dx, dy = alt.expr(f"{right} ? -10 : 10"), alt.expr(f"{right} ? -10 : 12")
    rule = marker.mark_rule(color="#888", strokeDash=[4, 3]).encode(x=x)

    def answer(field: str, enc: dict) -> list:
        return [marker.mark_point(size=140, filled=True, color="#ff7f0e").encode(**enc),
                marker.mark_text(align=align, dx=dx, dy=dy, fontSize=12, fontWeight="bold",
                                 color="#ff7f0e").encode(text=f"{field}:N", **enc)]

    depth_enc = dict(x=x, y=alt.Y("depth:Q", scale=ydepth))
    layers = [alt.Chart(curve).mark_line(color="black").encode(
        x=x, y=alt.Y("depth:Q", scale=ydepth, title="optimal depth L* (layers)"),
        tooltip=[alt.Tooltip("size:N", title="budget N"),
                 alt.Tooltip("depth:Q", format=".1f", title="L*"),
                 alt.Tooltip("width:Q", format=",.0f", title="d*")])]
    if models:
        pts = pd.DataFrame(_shape_groups(models, fit, DEFAULT_REL_TOL, DEFAULT_ABS_TOL))
        layers.append(alt.Chart(pts).mark_point(color="#999", size=30).encode(
            tooltip=[alt.Tooltip("name:N", title="model"), alt.Tooltip("depth:Q", title="depth L"),
                     alt.Tooltip("width:Q", format=",", title="width d"),
                     alt.Tooltip("verdict:N", title="verdict")], **depth_enc))
    layers += [rule, *answer("depth_label", depth_enc),
               *[marker.mark_text(align="left", baseline="top", fontSize=12, fontWeight=weight,
                                  limit=alt.expr("width - 8"))
                 .encode(x=alt.value(4), y=alt.value(4 + 16 * i), text=f"{field}:N")
                 for i, (field, weight) in enumerate([("summary", "bold"), ("optimum", "bold"),
                                                      ("practical", "normal"), ("heads_text", "normal")])]]
    width_enc = dict(x=x, y=alt.Y("width:Q", scale=alt.Scale(type="log"), title="optimal width d*",
                                  axis=alt.Axis(values=[10.0 ** k for k in range(2, 7)], format=",")))
    width_panel = alt.layer(
        alt.Chart(curve).mark_line(color="black").encode(
            tooltip=[alt.Tooltip("size:N", title="budget N"),
                     alt.Tooltip("width:Q", format=",.0f", title="d*")], **width_enc),
        rule, *answer("width_label", width_enc)).properties(width=width, height=160)
    return alt.vconcat(alt.layer(*layers).properties(width=width, height=260),
                       width_panel).add_params(pick)


def advisor_html(budget: float, head_size: int = DEFAULT_HEAD_SIZE, fit: Fit = AUTHORS_FIT,
                 span: int = 2) -> str:
    """The advisor's answer for a budget as HTML: the continuous optimum, the suggested
    practical shape (:func:`~dwlib.core.fit.practical_shape`) and a table of
    :func:`~dwlib.core.fit.nearby_shapes` with their verdicts (the suggested row in bold).
    Bad input gives a one-line error paragraph."""
    try:
        best = practical_shape(budget, head_size=head_size, fit=fit)
        near = nearby_shapes(budget, head_size=head_size, span=span, fit=fit)
    except InputError as err:
        return f'<p class="dw-advisor-error">{html.escape(str(err))}</p>'
    rows = []
    for s in near:
        b = ("<b>", "</b>") if s["depth"] == best["depth"] else ("", "")
        cells = (s["depth"], f"{s['width']:,}", s["heads"], fmt.count(s["budget"]),
                 f"{s['depth_ratio']:.2f}", s["verdict"])
        rows.append("<tr>" + "".join(f"<td>{b[0]}{c}{b[1]}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{c}</th>" for c in
                   ("depth L", "width d", "heads", "budget 12 L d²", "L / L*", "verdict"))
    return (f"<p>Budget N = <b>{fmt.count(float(budget))}</b> non-embedding parameters: optimal "
            f"depth L* = {best['optimal_depth']:.2f}, optimal width d* = "
            f"{best['optimal_width']:,.0f}.<br>Suggested: <b>{best['depth']} layers of width "
            f"{best['width']:,}</b> ({fmt.heads(best['heads'], best['head_size'])}), actual "
            f"budget {fmt.count(best['budget'])}.</p>"
            f'<table class="dw-advisor"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def advisor_widget(budget: float = 175e9, head_size: int = DEFAULT_HEAD_SIZE,
                   fit: Fit = AUTHORS_FIT, span: int = 2) -> ipywidgets.VBox:
    """A live advisor (ipywidgets): a log slider for the budget (1e6 to 1e13) and a choice of
    head size; the panel shows :func:`advisor_html` for the current values."""
    sizes_ = sorted({32, 64, 96, 128, 160, 192, 256, check_head_size(head_size)})
    head = ipywidgets.Dropdown(options=sizes_, value=int(head_size), description="head size",
                               style={"description_width": "initial"})
    return explorer(functools.partial(advisor_html, fit=fit, span=span),
                    budget=log_slider("budget N", float(budget), 6, 13, 0.05, digits=3), head_size=head)
