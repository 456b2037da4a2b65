"""ipywidgets helpers for live kernels (JupyterLab, Colab).

An explorer is a row of controls and an HTML panel that a plain function fills from the
controls' values. The panel is an ``ipywidgets.HTML`` widget (not an Output widget), so
the state saved with an executed notebook shows the last result in the static book too;
there, the controls are drawn but only a live kernel recomputes.
"""

from __future__ import annotations

from typing import Callable

import ipywidgets as widgets


def int_slider(description: str, value: int, min: int, max: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"})


def log_slider(description: str, value: float, min_exp: float, max_exp: float,
               step: float = 0.1) -> widgets.FloatLogSlider:
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  style={"description_width": "initial"})


def explorer(render: Callable[..., str], **controls: widgets.ValueWidget) -> widgets.VBox:
    """Controls plus an HTML panel showing ``render(**values)``, recomputed on every change.

    ``render`` returns an HTML string; it is called once immediately, so the panel is
    filled before any control moves.
    """
    panel = widgets.HTML()

    def update(_change=None):
        panel.value = render(**{name: w.value for name, w in controls.items()})

    for w in controls.values():
        w.observe(update, names="value")
    update()
    return widgets.VBox([widgets.HBox(list(controls.values())), panel])


def threshold_explorer(width: int = 1024, depth: int = 6) -> widgets.VBox:
    """Width and depth sliders; the panel shows L_th = log3(d_x), the regime of (L, d_x) and
    the number C = (3^L - 1)/2 of position indices summed in eq. (4)."""
    from dwlib.core.bounds import depth_threshold, regime

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

    return explorer(render,
                    width=log_slider("width d_x", width, 1, 6, 0.05),
                    depth=int_slider("depth L", depth, 1, 24))


def bounds_panel(width: int, heads: int, depth: int, shallow_depth: int) -> str:
    """The HTML of :func:`bounds_explorer`'s panel: threshold, regime, the bounds of eq. (7) or
    (8) at (L, d_x, H), and the width Corollary 1 asks of a depth-``shallow_depth`` network
    (or why it does not apply). Bad input is reported in the panel, not raised."""
    import html
    import math

    from dwlib.core import bounds
    from dwlib.errors import InputError

    try:
        b = bounds.separation_rank_bounds(depth, width, heads)
    except InputError as err:
        return f"<p><b>Not evaluated:</b> {html.escape(str(err))}</p>"
    th = bounds.depth_threshold(width)
    which = bounds.regime(depth, width)
    eq = {1: "Theorem 1, eq. (7)", 2: "Theorem 2, eq. (8)"}.get(b["theorem"], "neither theorem")
    lines = [f"width d<sub>x</sub> = {width:,}, heads H = {heads}: threshold L<sub>th</sub> = "
             f"log<sub>3</sub> d<sub>x</sub> = <b>{th:.2f}</b>.",
             f"Depth L = {depth} is <b>{which}</b> ({eq}): "
             f"{b['lower']:,.4g} &le; log<sub>3</sub> sep &le; {b['upper']:,.4g}."]
    note = bounds.heads_note(width, heads)
    if note:
        lines.append(f"<i>Note: {note}.</i>")
    if shallow_depth >= depth:
        lines.append(f"Corollary 1: choose a shallow depth below L = {depth}.")
    else:
        try:
            r = bounds.corollary1_width(width, heads, depth, shallow_depth)
        except InputError as err:
            lines.append(f"Corollary 1 does not apply: {html.escape(str(err))}.")
        else:
            if r["any_width"]:
                lines.append(f"Corollary 1: {bounds.any_width_sentence(shallow_depth)}.")
            else:
                lines.append(f"Corollary 1: a depth-{shallow_depth} network needs width &ge; "
                             f"<b>10<sup>{r['log10_width']:.2f}</sup></b> (a factor 10<sup>"
                             f"{r['log10_width'] - math.log10(width):.2f}</sup> wider) for its eq. (7) "
                             f"upper bound to reach the deep network's lower bound.")
    return "<p>" + "<br>".join(lines) + "</p>"


def bounds_explorer(width: int = 1024, heads: int = 16, depth: int = 6, shallow_depth: int = 2) -> widgets.VBox:
    """Sliders for width, heads, depth and the shallow depth of Corollary 1 (live kernels);
    the panel is :func:`bounds_panel`."""

    def render(width: float, heads: int, depth: int, shallow_depth: int) -> str:
        return bounds_panel(int(round(width)), heads, depth, shallow_depth)

    return explorer(render,
                    width=log_slider("width d_x", width, 1, 6, 0.05),
                    heads=int_slider("heads H", heads, 1, 128),
                    depth=int_slider("depth L", depth, 1, 64),
                    shallow_depth=int_slider("shallow depth", shallow_depth, 1, 12))


def collapse_explorer(depth: int = 12, width: int = 64, heads: int = 4) -> widgets.VBox:
    """Depth, width and heads sliders; the panel recomputes the rank residual of
    :func:`dwlib.experiments.context.collapse_curves` for every variant at a few depths (rank collapse,
    Dong et al. 2021)."""
    from dwlib.experiments.context import VARIANTS, collapse_curves

    def render(depth: int, width: int, heads: int) -> str:
        if width % heads:
            return f"<p>heads H = {heads} must divide the width d<sub>x</sub> = {width}.</p>"
        rows = collapse_curves(depth, width, heads)
        shown = sorted({0, 1, 2, 3, depth // 2, depth})
        head = "".join(f"<th>l = {l}</th>" for l in shown)
        body = "".join(
            f"<tr><td>{v}</td>" + "".join(f"<td>{r['residual']:.1e}</td>" for r in rows
                                         if r["variant"] == v and r["layer"] in shown) + "</tr>"
            for v in VARIANTS)
        return (f"<p>||X - 1x<sup>T</sup>|| / ||X|| after l layers, d<sub>x</sub> = {width}, H = {heads}, "
                f"N = 32 random tokens:</p><table><tr><th></th>{head}</tr>{body}</table>")

    return explorer(render,
                    depth=int_slider("depth L", depth, 1, 24),
                    width=int_slider("width d_x", width, 8, 128, 8),
                    heads=int_slider("heads H", heads, 1, 8))
