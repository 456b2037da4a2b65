"""Recompute the Context chapter's data and publish it into the package.

    .venv/bin/python scripts/publish_context.py [collapse] [induction]

collapse:  the rank-collapse grid, dwlib/data/context_collapse.json (about a minute on two CPU cores);
induction: the induction-head training, dwlib/data/context_induction.json (about a minute).
With no argument, both. Re-execute book/context.ipynb afterwards.
"""

from __future__ import annotations

import sys

from dwlib.experiments import context, induction
from dwlib.store import packaged_path

if __name__ == "__main__":
    which = sys.argv[1:] or ["collapse", "induction"]
    unknown = set(which) - {"collapse", "induction"}
    if unknown:
        print(f"publish_context.py: error: unknown data {sorted(unknown)} (collapse, induction)", file=sys.stderr)
        sys.exit(2)
    if "collapse" in which:
        print(context.write_collapse_grid(context.compute_collapse_grid(), packaged_path(context.COLLAPSE_FILE)))
    if "induction" in which:
        print(induction.save_induction(induction.train_induction(), packaged_path(induction.INDUCTION_FILE)))
