"""ipywidgets helpers for live kernels (JupyterLab, Colab).

An explorer is a row of controls and an HTML panel that a plain function fills from the
controls' values. The panel is an ``ipywidgets.HTML`` widget (not an Output widget), so
the state saved with an executed notebook shows the last result in the static book too;
there, the controls are drawn but only a live kernel recomputes.

JupyterLab draws widgets only in trusted output: a notebook opened from disk is untrusted
until it runs, so an explorer also offers a plain-HTML snapshot (its controls' values and
its panel), which JupyterLab shows instead until the notebook runs.

The static book has no kernel, so it never shows the widget itself (its controls would move and
change nothing): _config.yml ranks the widget view last for the HTML pages. An explorer whose
computation Vega can do is given a ``static`` chart, the same panel with Vega's own sliders, which
the book draws in its place (its Vega-Lite spec rides in the output beside the widget view;
JupyterLab, with the widget manager, still draws the live widget, and untrusted, the snapshot); any
other explorer shows its snapshot there.
"""

from __future__ import annotations

import html
import re
from typing import Callable

import ipywidgets as widgets

from dwlib import fmt
from dwlib.viz.render import mime_bundle


def int_slider(description: str, value: int, min: int, max: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"})


def log_slider(description: str, value: float, min_exp: float, max_exp: float,
               step: float = 0.1, digits: int | None = None) -> widgets.FloatLogSlider:
    """A slider over 10^min_exp to 10^max_exp, even in the exponent. Its readout writes the
    value as a plain number: rounded to an integer (a width: 1024 reads '1024', where the
    default readout writes '1.02e+3'), or to ``digits`` significant digits when given (a
    budget: '175000000000'). No thousands separators there: the readout is editable and
    ipywidgets reads it back with parseFloat, which stops at a comma ('1,024' -> 1)."""
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  readout_format=".0f" if digits is None else f".{digits}r",
                                  style={"description_width": "initial"})


def readout(w: widgets.ValueWidget) -> str:
    """A control's value for the snapshot: rounded as its readout rounds it
    (:func:`log_slider`'s formats), written with separators ('1,024')."""
    if isinstance(w, widgets.FloatLogSlider):
        digits = re.fullmatch(r"\.(\d+)r", w.readout_format)
        return fmt.value(float(w.value), int(digits[1])) if digits else fmt.integer(w.value)
    return fmt.value(w.value)


class Explorer(widgets.VBox):
    """A VBox of controls and a panel, displayed with an HTML snapshot beside the widget view."""

    def snapshot_html(self) -> str:
        """The controls' current values, then the panel's HTML (what a static reader needs)."""
        controls, panel = self.children
        values = ", ".join(f"{html.escape(w.description)} = {html.escape(readout(w))}" for w in controls.children)
        return (f'<div class="dw-explorer-snapshot"><p><em>Shown for {values}: '
                f"run the notebook to move the controls.</em></p>{panel.value}</div>")

    #: the static book's form of the explorer (an Altair chart with bound sliders), or None
    static = None

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:  # None when the widget has been closed
            return None
        bundle["text/html"] = self.snapshot_html()
        if self.static is None:
            return bundle
        chart, metadata = mime_bundle(self.static)
        chart.pop("text/plain", None)  # the widget's own text stays
        return {**chart, **bundle}, metadata


def explorer(render: Callable[..., str], static=None, **controls: widgets.ValueWidget) -> Explorer:
    """Controls plus an HTML panel showing ``render(**values)``, recomputed on every change.

    ``render`` returns an HTML string; it is called once immediately, so the panel is
    filled before any control moves. ``static``: an Altair chart computing the same panel with
    Vega sliders, which the static book shows instead of the widget (see the module's note).
    """
    panel = widgets.HTML()

    def update(_change=None):
        panel.value = render(**{name: w.value for name, w in controls.items()})

    for w in controls.values():
        w.observe(update, names="value")
    update()
    box = Explorer([widgets.HBox(list(controls.values())), panel])
    box.static = static
    return box
