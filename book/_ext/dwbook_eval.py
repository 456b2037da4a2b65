"""The ``{eval}`` role from saved results: the book shows what JupyterLab shows.

The chapters quote their computed numbers as MyST inline expressions,
``{eval}`glued["name:.1f"]``` (see ``dwlib/book/prose.py``). jupyterlab-myst evaluates them in the
kernel and stores each result in the markdown cell's metadata (``user_expressions``);
``make execute`` stores them the same way. myst-nb's own ``{eval}`` role asks a live kernel,
and the book is built from the saved notebooks with execution off, so this role replaces it:
it renders the result stored in the role's own cell, as myst-nb renders a ``{glue:text}``
(an inline ``pasted-text``), and warns (an error under ``--warningiserror``) when there is none.

Once per notebook it also runs :func:`dwlib.book.prose.problems`, which checks every stored text
against the glued value it quotes (the glue outputs, which nbval compares with a fresh run):
a book built from stale or hand-edited results fails.
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from dwlib.book import prose

logger = logging.getLogger(__name__)
CHECKED = "dwbook_eval_checked"


def _notebook(document):
    renderer = document.get("nb_renderer") if hasattr(document, "get") else None
    try:
        return renderer.renderer.nb_client.notebook
    except AttributeError:
        return None


def _cell_index(nb, lineno: int) -> int | None:
    """The index of the cell holding source line ``lineno``: myst-nb numbers a notebook's lines
    from a base per cell, (index + 1) * 10000, or from its ``source_map`` where it has one."""
    smap = nb.metadata.get("source_map")
    if smap:
        return max(bisect.bisect_right(smap, lineno - 1) - 1, 0)
    index = lineno // 10000 - 1
    return index if 0 <= index < len(nb.cells) else None


def eval_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    document = inliner.document
    source = document.get("source", "")
    nb = _notebook(document)
    if nb is None:
        msg = f"{{eval}}`{text}` outside a notebook: nothing stored to show"
        return [], [document.reporter.warning(msg, line=lineno)]
    if not document.get(CHECKED):
        # the file as saved: myst-nb has taken the glue outputs out of the notebook it renders
        document[CHECKED] = True
        for problem in prose.problems(json.loads(Path(source).read_text(encoding="utf-8"))):
            logger.warning(problem, location=source, type="dwbook", subtype="eval")
    index = _cell_index(nb, lineno)
    cell = nb.cells[index] if index is not None else None
    saved = prose.stored(cell) if cell is not None and cell.cell_type == "markdown" else {}
    shown = saved.get(text)
    if shown is None:
        msg = (f"{{eval}}`{text}`: no stored result in cell {index} (run `make execute`, or Run All "
               "in JupyterLab and save)")
        return [], [document.reporter.warning(msg, line=lineno)]
    node = nodes.inline(shown, shown, classes=["pasted-text"])
    return [node], []


def setup(app):
    # myst-nb registers its own (live-kernel) {eval} role; this extension loads after it.
    app.add_role("eval", eval_role, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
