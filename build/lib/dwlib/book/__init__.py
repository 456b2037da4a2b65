"""What the chapters call: set-up, glue, and one module per chapter for its numbers.

- :func:`setup` enables the offline chart renderer and returns the environment report
  (printed at the top of each chapter).
- :func:`glue` hands a computed value to the prose (myst-nb's ``{glue}`` roles) so that no
  number in the text is typed by hand. Outside a book build (Colab, where myst-nb is not
  installed) it does nothing but return the value.
- ``dwlib.book.<chapter>`` modules compute a chapter's numbers and tables (the bookkeeping
  that used to sit in the notebooks' cells), and hand them to the prose with :func:`glue_all`.
"""

from __future__ import annotations

from dwlib import env
from dwlib.viz import render

COLAB_INSTALL = "dwlib @ git+https://github.com/dwbook/depth-width-interplay"


def setup() -> str:
    """Enable the book's chart renderer; return the environment report as text."""
    render.enable()
    return env.format_report()


def glue(name: str, value, display: bool = False) -> None:
    """Make ``value`` available to the prose as ``{glue:text}`name```.

    Returns None, so that a cell ending in a glue call prints nothing.
    """
    try:
        from myst_nb import glue as _glue  # lazy: myst-nb is absent outside a book build (Colab)
    except ImportError:  # not building the book: nothing to hand over
        return
    _glue(name, value, display=display)


def glue_all(values: dict) -> None:
    """Glue every ``name: value`` of a chapter's numbers (:func:`glue` for each)."""
    for name, value in values.items():
        glue(name, value)
