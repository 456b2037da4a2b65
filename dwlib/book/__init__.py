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

import html

import IPython.display

from dwlib import env, fmt
from dwlib.viz import render

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


class Numbers(dict):
    """A chapter's glued numbers, displayed as a table of names and values.

    The book puts each value in its sentence; JupyterLab (whose MyST renderer has no glue
    roles) shows a role as its name, so the glue cell's output lists every name beside its
    value. The book removes that output (the cell's ``remove-output`` tag).
    """

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(fmt.value(v, 6))}</td></tr>"
                       for k, v in self.items())
        return (f'<table class="dw-numbers"><caption>The numbers the text quotes, by name</caption>'
                f"<thead><tr><th>name</th><th>value</th></tr></thead><tbody>{rows}</tbody></table>")

    def __repr__(self) -> str:
        return "\n".join(f"{k} = {fmt.value(v, 6)}" for k, v in self.items())


def glue_all(values: dict) -> None:
    """Show a chapter's numbers as a :class:`Numbers` table (for readers of the notebook
    itself), then glue every ``name: value`` (:func:`glue` for each).

    The table comes first: JupyterLab folds a cell's outputs after its fiftieth, and each
    glued value is an output of its own.
    """
    IPython.display.display(Numbers(values))
    for name, value in values.items():
        glue(name, value)
