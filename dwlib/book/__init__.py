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
import textwrap

import IPython.display
import pandas as pd

from dwlib import env, fmt
from dwlib.viz import render

try:
    from myst_nb import glue as _myst_glue
except ImportError:  # myst-nb is absent outside a book build (Colab): glue() then hands nothing over
    _myst_glue = None

#: characters of a code line that fit the book's text column on a desktop page (measured in
#: Chromium at 1280 px: 77 of the theme's monospace characters); outputs are wrapped to it.
CODE_COLUMNS = 76


def setup() -> str:
    """Enable the book's chart renderer and show tables in full (pandas cuts a cell longer than
    50 characters with "..." by default); return the environment report as text, each line
    wrapped to the column (:data:`CODE_COLUMNS`)."""
    render.enable()
    pd.set_option("display.max_colwidth", None)
    return "\n".join(textwrap.fill(line, CODE_COLUMNS, subsequent_indent=" " * 10, break_on_hyphens=False)
                     for line in env.format_report().splitlines())


class Table:
    """A table with a caption above it: ``frame`` shown in full, missing values as ``missing``.

    For tables quoted from other papers, whose caption names what they hold and where they come
    from; a caption in the table wraps with the column, where a printed line would not.
    """

    def __init__(self, frame: pd.DataFrame, caption: str, missing: str = "\N{EM DASH}"):
        self.frame, self.caption, self.missing = frame, caption, missing

    def _repr_html_(self) -> str:
        body = self.frame.to_html(na_rep=self.missing, classes="dw-table", border=0)
        return body.replace(">", f"><caption>{html.escape(self.caption)}</caption>", 1)

    def __repr__(self) -> str:
        return f"{self.caption}\n{self.frame.to_string(na_rep=self.missing)}"


def glue(name: str, value, display: bool = False) -> None:
    """Make ``value`` available to the prose as ``{glue:text}`name```, its real numbers kept to
    :data:`dwlib.fmt.STABLE_DIGITS` significant digits (:func:`dwlib.fmt.stable`: the saved
    value must not depend on the CPU's last bit).

    Returns None, so that a cell ending in a glue call prints nothing.
    """
    if _myst_glue is not None:
        _myst_glue(name, fmt.stable(value), display=display)


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
