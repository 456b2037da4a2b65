"""The figure captions computed from stored results.

Jupyter Book reads a figure's caption from its cell's metadata (``mystnb.figure.caption``), where
nothing can be glued, so a caption that states a result is computed here and written into the
chapter when it is executed (``scripts/execute_notebooks.py``, ``make execute``); the unit tests
check that every chapter holds the caption its results give. :data:`COMPUTED` names them: figure
name -> (chapter, the function that computes its caption).
"""

from __future__ import annotations

from collections.abc import Callable

from dwlib.book import claims, context, figure2, two_regimes, vocabulary
from dwlib.experiments import context as quoted
from dwlib.experiments import induction

COMPUTED: dict[str, tuple[str, Callable[[], str]]] = {
    "fig-bounds-depth": ("two_regimes", two_regimes.bounds_depth_caption),
    "fig-bounds-explorer": ("two_regimes", two_regimes.explorer_caption),
    "fig-pairs": ("experiments", figure2.caption),
    "fig-vocab-trained": ("vocabulary", vocabulary.trained_caption),
    "fig-claims": ("claims", claims.figure_caption),
    "fig-wide-deep": ("context", lambda: context.brown_caption(quoted.quoted_table("brown2022wide"))),
    "fig-induction-attention": ("context", lambda: context.attention_caption(induction.load_induction())),
}


def figures(nb: dict) -> dict[str, dict]:
    """A notebook's figures (its cells' ``mystnb.figure`` metadata), by name."""
    return {f["name"]: f for c in nb["cells"] if (f := c.get("metadata", {}).get("mystnb", {}).get("figure"))
            and "name" in f}


def set_computed(nb: dict, chapter: str) -> list[str]:
    """Write into ``nb`` (the chapter named ``chapter``, as in book/<chapter>.ipynb) every computed
    caption of a figure it shows; return the names of those whose caption changed."""
    changed = []
    for name, fig in figures(nb).items():
        where, compute = COMPUTED.get(name, (None, None))
        if where == chapter:
            caption = compute()
            if fig.get("caption") != caption:
                fig["caption"] = caption
                changed.append(name)
    return changed
