"""ipywidgets helpers for live kernels (JupyterLab, Colab).

An explorer is a row of controls and an HTML panel that a plain function fills from the
controls' values. The panel is an ``ipywidgets.HTML`` widget (not an Output widget), so
the state saved with an executed notebook shows the last result in the static book too;
there, the controls are drawn but only a live kernel recomputes.

JupyterLab draws widgets only in trusted output: a notebook opened from disk is untrusted
until it runs, so an explorer also offers a plain-HTML snapshot (its controls' values and
its panel), which JupyterLab shows instead until the notebook runs.
"""

from __future__ import annotations

import html
from typing import Callable

import ipywidgets as widgets

from dwlib import fmt


def int_slider(description: str, value: int, min: int, max: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"})


def log_slider(description: str, value: float, min_exp: float, max_exp: float,
               step: float = 0.1) -> widgets.FloatLogSlider:
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  style={"description_width": "initial"})


class Explorer(widgets.VBox):
    """A VBox of controls and a panel, displayed with an HTML snapshot beside the widget view."""

    def snapshot_html(self) -> str:
        """The controls' current values, then the panel's HTML (what a static reader needs)."""
        controls, panel = self.children
        values = ", ".join(f"{html.escape(w.description)} = {html.escape(fmt.value(w.value))}" for w in controls.children)
        return (f'<div class="dw-explorer-snapshot"><p><em>Shown for {values}: '
                f"run the notebook to move the controls.</em></p>{panel.value}</div>")

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:  # None when the widget has been closed
            bundle["text/html"] = self.snapshot_html()
        return bundle


def explorer(render: Callable[..., str], **controls: widgets.ValueWidget) -> Explorer:
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
    return Explorer([widgets.HBox(list(controls.values())), panel])
