"""What the chapters call: set-up, glue, and one module per chapter for its numbers.

- :func:`setup` enables the offline chart renderer and returns the environment report
  (printed at the top of each chapter).
- :func:`glue_all` hands a chapter's computed values to its prose, so that no number in the
  text is typed by hand: the prose quotes each as ``{eval}`glued["name:spec"]``` (see
  :mod:`dwlib.book.prose`), where ``glued`` is what :func:`glue_all` returns. Each value is also
  saved as a myst-nb glue output (:func:`glue`), which nbval compares with a fresh run; outside a
  book build (Colab, where myst-nb is not installed) only the first happens.
- ``dwlib.book.<chapter>`` modules compute a chapter's numbers and tables (the bookkeeping
  a reader need not read), and hand them to the prose with :func:`glue_all`.
"""

from __future__ import annotations

import html
import re
import textwrap

import pandas as pd
from IPython import get_ipython

from dwlib import env, fmt
from dwlib.book.prose import format_value
from dwlib.viz import render

try:
    from myst_nb import glue as _myst_glue
except ImportError:  # myst-nb is absent outside a book build (Colab): glue() then hands nothing over
    _myst_glue = None

#: characters of a code line that fit the book's text column on a desktop page (measured in
#: Chromium at 1280 px: 77 of the theme's monospace characters); outputs are wrapped to it.
CODE_COLUMNS = 76


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as a reader sees it: symbols in its labels written as a reader writes them
    (:func:`dwlib.fmt.math_label`: 'log3 d_x' -> 'log₃ dₓ') and true/false columns as yes/no.
    The frame's own labels, which code indexes by, are left as they are."""
    shown = frame.rename(columns=fmt.math_label, index=fmt.math_label)
    shown.columns.names = [fmt.math_label(n) for n in shown.columns.names]
    shown.index.names = [fmt.math_label(n) for n in shown.index.names]
    for i, dtype in enumerate(shown.dtypes):
        if dtype == bool:
            shown.isetitem(i, shown.iloc[:, i].map({True: "yes", False: "no"}))
    return shown


def true_minus(html_text: str) -> str:
    """HTML with the minus sign of each negative number in its text written as a minus (−), not a
    hyphen: '-0.216 to +0.094' -> '−0.216 to +0.094'. Tags and attributes are left alone."""
    return re.sub(r">([^<]*)<", lambda m: ">" + re.sub(r"(^|[\s(])-(?=\.?\d)", "\\1\N{MINUS SIGN}", m.group(1)) + "<",
                  html_text)


def _frame_html(frame: pd.DataFrame) -> str:
    return true_minus(readable(frame)._repr_html_())


def setup() -> str:
    """Enable the book's chart renderer, show tables in full (pandas cuts a cell longer than
    50 characters with "..." by default) and with readable labels (:func:`readable`, for the
    HTML a notebook shows); return the environment report as text, each line wrapped to the
    column (:data:`CODE_COLUMNS`)."""
    render.enable()
    pd.set_option("display.max_colwidth", None)
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, _frame_html)
    return "\n".join(textwrap.fill(line, CODE_COLUMNS, subsequent_indent=" " * 10, break_on_hyphens=False)
                     for line in env.format_report().splitlines())


class Table:
    """A table with a caption above it: ``frame`` shown in full, missing values as ``missing``.

    For tables quoted from other papers, whose caption names what they hold and where they come
    from; a caption in the table wraps with the column, where a printed line would not. A
    ``note`` (optional) is printed under the table, for what a mark in its cells means ("†: ...");
    a table with a note alone may have no caption (``caption=None``).
    """

    def __init__(self, frame: pd.DataFrame, caption: str | None, missing: str = "\N{EM DASH}",
                 note: str | None = None):
        self.frame, self.caption, self.missing, self.note = frame, caption, missing, note

    def _repr_html_(self) -> str:
        # a running row number (an unnamed default index) is no column of the quoted table
        plain = isinstance(self.frame.index, pd.RangeIndex) and self.frame.index.name is None
        body = true_minus(readable(self.frame).to_html(na_rep=self.missing, classes="dw-table", border=0,
                                                       index=not plain))
        if self.caption:
            body = body.replace(">", f"><caption>{html.escape(self.caption)}</caption>", 1)
        if self.note:
            body += f'\n<p class="dw-table-note">{html.escape(self.note)}</p>'
        return body

    def __repr__(self) -> str:
        plain = isinstance(self.frame.index, pd.RangeIndex) and self.frame.index.name is None
        lines = [self.caption] if self.caption else []
        lines.append(self.frame.to_string(na_rep=self.missing, index=not plain))
        return "\n".join(lines + ([self.note] if self.note else []))


def glue(name: str, value, display: bool = False) -> None:
    """Save ``value`` as a myst-nb glue output named ``name`` (what nbval compares with a fresh
    run), its real numbers kept to :data:`dwlib.fmt.STABLE_DIGITS` significant digits
    (:func:`dwlib.fmt.stable`: the saved value must not depend on the CPU's last bit), and add it
    to :data:`GLUED`.

    Returns None, so that a cell ending in a glue call prints nothing.
    """
    value = GLUED[name] = fmt.stable(value)
    if _myst_glue is not None:
        _myst_glue(name, value, display=display)


class Text(str):
    """A number as the prose shows it. IPython writes it without quotes (its text/plain is the
    text itself), so that every front end shows the same characters."""

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


class NotGlued(KeyError):
    """An expression quotes a name that no cell has glued yet in this kernel."""

    def __str__(self) -> str:
        return (f"{self.args[0]!r} is not glued yet in this kernel: run the cell that computes it "
                "(Run All runs every cell first)")


class Glued:
    """Every value glued so far in this kernel, by name, for the prose's inline expressions:
    ``glued["name"]`` or ``glued["name:.1f"]`` is the text the prose shows (a :class:`Text`),
    formatted as myst-nb's ``{glue:text}`name:.1f``` role would (:func:`dwlib.book.prose.format_value`)."""

    def __init__(self):
        self.values: dict = {}

    def __setitem__(self, name: str, value) -> None:
        self.values[name] = value

    def __getitem__(self, ref: str) -> Text:
        name, _, spec = ref.partition(":")
        if name not in self.values:
            raise NotGlued(name)
        return Text(format_value(self.values[name], spec))

    def __contains__(self, name) -> bool:
        return name in self.values

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<{len(self.values)} glued values: glued[\"name\"] or glued[\"name:spec\"] as the prose shows them>"


#: the kernel's glued values (one chapter per kernel): what :func:`glue_all` returns
GLUED = Glued()


def glue_all(values: dict) -> Glued:
    """Glue every ``name: value`` (:func:`glue`) and return :data:`GLUED`, every value glued so
    far, which the chapter keeps as ``glued`` for its prose: ``glued = glue_all(...)``."""
    for name, value in values.items():
        glue(name, value)
    return GLUED
