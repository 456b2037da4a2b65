"""The Context chapter's stored data: the rank-collapse grid and the tables quoted from the survey.

- The rank-collapse grid: :func:`dwlib.core.collapse.collapse_grid` at :data:`COLLAPSE_GRID`
  (every width and number of heads the chapter's chart offers), stored as
  ``dwlib/data/context_collapse.json`` (:func:`load_collapse_grid`; :func:`compute_collapse_grid`
  recomputes it, :func:`write_collapse_grid` stores it at a path, ``scripts/publish_context.py``
  publishes it into the package).
- Tables quoted from the survey the chapter follows [survey2024deep], each with its source key:
  ``dwlib/data/context_tables.json`` (:func:`quoted_table`).

The induction-head experiment and its stored result are :mod:`dwlib.experiments.induction`.
"""

from __future__ import annotations

import pandas as pd

from dwlib.core.collapse import collapse_grid
from dwlib.errors import require
from dwlib.store import packaged_json, write_json

COLLAPSE_FILE = "context_collapse.json"
TABLES_FILE = "context_tables.json"
COLLAPSE_GRID = {"depth": 24, "widths": [16, 32, 64, 128], "heads": [1, 2, 4, 8], "n_positions": 32, "seed": 0}


def compute_collapse_grid() -> dict:
    """:func:`dwlib.core.collapse.collapse_grid` at :data:`COLLAPSE_GRID`, residuals to four
    significant digits (which keeps the file small): {"settings": ..., "rows": [...]}.
    A minute or so on two CPU cores."""
    rows = collapse_grid(**{k: tuple(v) if isinstance(v, list) else v for k, v in COLLAPSE_GRID.items()})
    for r in rows:
        r["residual"] = float(f"{r['residual']:.4g}")
        del r["positions"]  # in the settings, once
    return {"settings": COLLAPSE_GRID, "rows": rows}


def write_collapse_grid(result: dict, path):
    """Store a :func:`compute_collapse_grid` result at ``path``."""
    return write_json(path, result, indent=None)


def load_collapse_grid() -> dict:
    """The stored rank-collapse grid the chapter's chart reads: {"settings": ..., "rows": [...]}."""
    return packaged_json(COLLAPSE_FILE)


def quoted_table(name: str) -> pd.DataFrame:
    """A table quoted in the survey [survey2024deep], as a DataFrame with ``.attrs["source"]``
    (the BibTeX key of the paper it comes from) and ``.attrs["caption"]``."""
    tables = packaged_json(TABLES_FILE)
    require(name in tables, f"no quoted table {name!r}; known: {sorted(tables)}")
    t = tables[name]
    df = pd.DataFrame(t["rows"], columns=t["columns"])
    df.attrs.update(source=t["source"], caption=t["caption"])
    return df
