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
