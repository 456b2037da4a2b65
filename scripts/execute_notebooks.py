"""Execute chapters in place (`make execute`): their code cells, and their prose's numbers.

    python scripts/execute_notebooks.py book/intro.ipynb [more notebooks]

Like ``jupyter nbconvert --execute --inplace`` (nbclient, the notebook's own kernel, run in the
notebook's folder, widget state saved), and one step more: when the run reaches a markdown cell,
the cell's inline expressions (``{eval}`glued["name:.1f"]```, see ``dwlib/book/prose.py``) are
evaluated in the kernel and their results stored in the cell's metadata (``user_expressions``),
as jupyterlab-myst does when the cell runs in JupyterLab. The book and JupyterLab show those
stored results; nbconvert alone would leave them as they were. Last, the figures whose captions
state a result get the captions the stored results give (``dwlib.book.captions``): a caption
sits in its cell's metadata, where nothing can be glued.

A notebook whose code raises, or whose prose quotes something the kernel cannot evaluate, is
not written; the script goes on with the others and exits 1, naming them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from dwlib.book import captions, prose

TIMEOUT_S = 900


class ExpressionError(RuntimeError):
    """An inline expression of a markdown cell did not evaluate."""


class ProseClient(NotebookClient):
    """nbclient, with each markdown cell's inline expressions evaluated when the run reaches it."""

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type == "markdown":
            await self._evaluate_expressions(cell, cell_index)
            return cell
        return await super().async_execute_cell(cell, cell_index, execution_count, store_history)

    async def _evaluate_expressions(self, cell, cell_index: int) -> None:
        exprs = prose.expressions(cell.source)
        if not exprs:
            cell.metadata.pop("user_expressions", None)
            return
        # the request jupyterlab-myst sends: no code, the expressions keyed by their position
        msg_id = self.kc.execute("", silent=False, store_history=False,
                                 user_expressions={str(i): e for i, e in enumerate(exprs)})
        reply = await self.async_wait_for_reply(msg_id, cell)
        results = reply["content"].get("user_expressions", {}) if reply else {}
        stored = []
        for i, expr in enumerate(exprs):
            result = results.get(str(i))
            if not result or result.get("status") != "ok":
                why = f"{result.get('ename')}: {result.get('evalue')}" if result else "no reply"
                raise ExpressionError(f"cell {cell_index}: {{eval}}`{expr}` failed: {why}")
            stored.append({"expression": expr, "result": {"status": "ok", "data": result["data"],
                                                           "metadata": result.get("metadata", {})}})
        cell.metadata["user_expressions"] = stored


def execute(path: Path) -> float:
    """Execute ``path`` in place; return the seconds it took."""
    started = time.monotonic()
    nb = nbformat.read(path, as_version=4)
    ProseClient(nb, timeout=TIMEOUT_S, resources={"metadata": {"path": str(path.parent)}}).execute()
    for name in captions.set_computed(nb, path.stem):
        print(f"{path}: the caption of {name} changed", file=sys.stderr)
    nbformat.write(nb, path)
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebooks", nargs="+", type=Path)
    args = p.parse_args(argv)
    failed = []
    for path in args.notebooks:
        try:
            seconds = execute(path)
        except (CellExecutionError, ExpressionError, OSError) as e:
            failed.append(path)
            why = str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)  # a cell error: its last line
            print(f"{path}: not written: {why}", file=sys.stderr)
            continue
        print(f"{path}: executed in {seconds:.1f} s", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(args.notebooks)} notebooks failed: {' '.join(map(str, failed))}",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
