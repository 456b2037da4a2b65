"""The numbers in the chapters' prose: inline expressions, their stored results and their checks.

A chapter's markdown quotes a computed number as a MyST inline expression,
``{eval}`glued["name"]``` or, with a format spec as in Python's :func:`format`,
``{eval}`glued["name:.1f"]```. ``glued`` is what the chapter's glue cells return
(:func:`dwlib.book.glue_all`): every value glued so far, and ``glued["name:spec"]`` is the text
the prose shows, formatted as myst-nb's ``{glue:text}`name:spec``` role formats it.

Every reader takes the text from one place, the markdown cell's metadata ``user_expressions``
(a list of ``{"expression": ..., "result": {"status": "ok", "data": {"text/plain": ...}}}``,
the form jupyterlab-myst writes):

- JupyterLab with jupyterlab-myst shows the stored results as soon as the notebook opens,
  trusted or not (a text/plain result is safe), and when the cell runs (Run All, or Shift+Enter
  on it) evaluates each expression in the kernel and stores the new results;
- the built book renders the stored result (``book/_ext/dwbook_eval.py``: myst-nb's own
  ``{eval}`` role needs a live kernel, and the book is built from saved outputs);
- ``make execute`` (``scripts/execute_notebooks.py``) stores them, evaluating each markdown
  cell's expressions in the kernel when the run reaches the cell, as Shift+Enter does.

The glued values themselves are also saved as myst-nb glue outputs of the glue cells, which
nbval compares with a fresh run; :func:`problems` checks that every stored text is its glued
value formatted, so the numbers a reader sees are those nbval proves current.
"""

from __future__ import annotations

import ast
import re

#: a MyST inline expression in markdown: {eval}`...`
ROLE = re.compile(r"\{eval\}`([^`]+)`")
#: the only expression the chapters use: glued["name"] or glued["name:spec"]
GLUED = re.compile(r'glued\["([A-Za-z_]\w*)(?::([^"]*))?"\]')
#: a myst-nb glue role, which JupyterLab cannot render (it shows the name)
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
SCRAPBOOK = "application/papermill.record/text/plain"
#: jupyterlab-myst drops the quotes around a text/plain result ("'a'" shows as a)
_QUOTED = re.compile(r"""^(["'])(.*)\1$""")


def format_value(value, spec: str = "") -> str:
    """``value`` as ``{glue:text}`name:spec``` shows it: myst-nb converts the value by the spec's
    type character (``s`` text, ``bcdoxX`` integer, ``eEfFgGn%`` real) before :func:`format`,
    and writes it with :class:`str` when there is no spec."""
    if spec == "":
        return str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, spec)


def expression(name: str, spec: str = "") -> str:
    """The expression that quotes glued value ``name`` with format ``spec``."""
    return f'glued["{name}:{spec}"]' if spec else f'glued["{name}"]'


def parse(expr: str) -> tuple[str, str] | None:
    """(name, spec) of a ``glued["name:spec"]`` expression; None for any other expression."""
    m = GLUED.fullmatch(expr)
    return (m.group(1), m.group(2) or "") if m else None


def expressions(source: str) -> list[str]:
    """The inline expressions of a markdown cell's source, in order (repeats kept, as
    jupyterlab-myst sends them to the kernel)."""
    return ROLE.findall(source)


def _source(cell) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def shown(text_plain: str) -> str:
    """What jupyterlab-myst shows of a text/plain result (and the book, which renders the same)."""
    return _QUOTED.sub(r"\2", text_plain)


def stored(cell) -> dict[str, str | None]:
    """expression -> the text a markdown cell's metadata stores for it (None for an error)."""
    out = {}
    for entry in cell.get("metadata", {}).get("user_expressions", []) or []:
        result = entry.get("result", {})
        text = result.get("data", {}).get("text/plain") if result.get("status") == "ok" else None
        if isinstance(text, list):
            text = "".join(text)
        out[entry.get("expression")] = shown(text) if isinstance(text, str) else None
    return out


def glue_outputs(nb) -> dict[str, tuple[int, str]]:
    """name -> (index of the cell that glues it, its saved text/plain) of a notebook's glue outputs."""
    out = {}
    for i, cell in enumerate(nb["cells"]):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            meta = o.get("metadata", {}).get("scrapbook")
            text = o.get("data", {}).get(SCRAPBOOK)
            if meta and text is not None:
                out[meta["name"]] = (i, text if isinstance(text, str) else "".join(text))
    return out


def literal(text_plain: str):
    """A saved text/plain back as the value, as myst-nb reads it (the text itself if not a literal)."""
    try:
        return ast.literal_eval(text_plain)
    except (SyntaxError, ValueError):
        return text_plain


def expected(nb) -> list[tuple[int, str, str]]:
    """(markdown cell index, expression, the text it must show) for every inline expression of a
    notebook, the text computed from the saved glue outputs (None where nothing is glued)."""
    glued = glue_outputs(nb)
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "markdown":
            continue
        for expr in expressions(_source(cell)):
            ref = parse(expr)
            text = None
            if ref and ref[0] in glued:
                text = format_value(literal(glued[ref[0]][1]), ref[1])
            out.append((i, expr, text))
    return out


def problems(nb) -> list[str]:
    """Everything that would make a number in a notebook's prose wrong or unreadable, one line each:

    - a myst-nb ``{glue}`` role (JupyterLab shows its name, not its value);
    - an inline expression other than ``glued["name:spec"]``, or a name no earlier code cell
      glues (Shift+Enter through the cells would meet it before its value exists);
    - no stored result for an expression, a stored error, or a stored text that is not the
      glued value formatted (the notebook was edited or re-run without ``make execute``);
    - a stored result for an expression the cell no longer has.
    """
    glued = glue_outputs(nb)
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "markdown":
            continue
        source, where = _source(cell), f"cell {i}"
        found += [f"{where}: {m.group(0)} is a glue role, which JupyterLab shows as its name: "
                  f"write {{eval}}`{expression(*_glue_ref(m.group(0)))}`" for m in GLUE_ROLE.finditer(source)]
        exprs, saved = expressions(source), stored(cell)
        for expr in exprs:
            ref = parse(expr)
            if ref is None:
                found.append(f'{where}: {{eval}}`{expr}` is not of the form glued["name:spec"]')
                continue
            name, spec = ref
            if name not in glued:
                found.append(f"{where}: {name!r} is glued by no cell (its glue outputs are missing: re-execute)")
                continue
            if glued[name][0] > i:
                found.append(f"{where}: {name!r} is glued only later, in cell {glued[name][0]}: "
                             "glue it before the prose that quotes it")
            want = format_value(literal(glued[name][1]), spec)
            if expr not in saved:
                found.append(f"{where}: no stored result for {expr} (run `make execute`)")
            elif saved[expr] is None:
                found.append(f"{where}: the stored result of {expr} is an error (run `make execute`)")
            elif saved[expr] != want:
                found.append(f"{where}: {expr} stores {saved[expr]!r}, its glued value gives {want!r} "
                             "(run `make execute`)")
        found += [f"{where}: a stored result for {expr}, which the cell no longer has (run `make execute`)"
                  for expr in saved if expr not in exprs]
    return found


def _glue_ref(role: str) -> tuple[str, str]:
    body = role.split("`")[1]
    name, _, spec = body.partition(":")
    return name, spec
