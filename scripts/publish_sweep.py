"""Publish a sweep's records with the package, for the book (also on Colab, where results/ is absent).

    python scripts/publish_sweep.py results/mini                # -> dwlib/data/sweeps/mini.jsonl
    python scripts/publish_sweep.py results/mini --out /tmp/mini.jsonl

Reads the finished runs under ``<results>/runs`` (dwlib.experiments.records.collect: one line per
run, the training curve thinned to about 100 points) and writes them as JSON lines. The name of
the published sweep is the results directory's name unless --name says otherwise; the book reads
it with ``dwlib.experiments.records.stored_results(name)``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dwlib.errors import InputError
from dwlib.experiments.records import collect, to_lines
from dwlib.store import packaged_path, write_lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="a sweep's results directory (holding runs/)")
    p.add_argument("--name", default=None, help="published name (default: the directory's name)")
    p.add_argument("--out", default=None, help="write here instead of dwlib/data/sweeps/<name>.jsonl")
    args = p.parse_args(argv)
    try:
        records = collect(args.results)
    except InputError as err:  # a corrupt run (StateError) or a missing directory: one line
        p.exit(2, f"{p.prog}: error: {err}\n")
    if not records:
        p.error(f"no finished runs under {args.results}/runs")
    name = args.name or Path(args.results).resolve().name
    dest = Path(args.out) if args.out else packaged_path("sweeps", f"{name}.jsonl")
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_lines(dest, to_lines(records))
    print(f"{len(records)} runs -> {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
