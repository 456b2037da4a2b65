#!/usr/bin/env python3
"""What each hand-written operation of the fast path is worth: the training step with all of
:data:`dwlib.train.fast.OPS` against the same step with one of them replaced by the plain
operation (:data:`dwlib.train.model.PLAIN`), one operation at a time.

A custom-gradient operation stays in the fast path only where taking it out costs at least 2%
of the step at some shape. For each shape of ``train_throughput.py`` (vocabulary 1000,
sequence 256, batch 16, float32, AdamW) the variants' steps alternate, round by round, in one
process, so that a machine that slows down slows each alike. Printed per variant: the best
step, the median step, and the cost of taking the operation out, as the median over rounds of
(variant / all-fast) - 1, with the range of the middle half of rounds.

Usage: python benchmarks/ops_ablation.py [--steps 10] [--shapes 6,256,4 6,512,8 2,128,2] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

from common import fail, parse_shape  # beside this script

def variants() -> dict:
    """{name: Ops}: all fast, and each operation in which the fast path differs from the plain one in turn
    replaced by the plain one."""
    from dwlib.train import fast
    from dwlib.train.model import PLAIN

    out = {"all fast": fast.OPS}
    for field in dataclasses.fields(fast.OPS):
        if getattr(fast.OPS, field.name) is not getattr(PLAIN, field.name):  # the fast path's own operations only
            out[f"plain {field.name}"] = dataclasses.replace(fast.OPS, **{field.name: getattr(PLAIN, field.name)})
    return out


def measure(shape, steps: int, bench) -> list[dict]:
    """One row per variant at ``shape``."""
    from dwlib.train import fast

    original = fast.OPS
    step_fns = {}
    try:
        for name, ops in variants().items():
            fast.OPS = ops  # read when the step is traced, inside dwlib_step
            step_fns[name] = bench.dwlib_step(*shape, ops="fast")
            step_fns[name]()  # compile now, with this variant in place
    finally:
        fast.OPS = original
    times = {k: np.array(v) for k, v in bench.time_steps(step_fns, steps).items()}
    base = times["all fast"]
    rows = []
    for name, t in times.items():
        cost = t / base - 1
        rows.append({"shape": list(shape), "variant": name, "best_ms": round(1e3 * t.min(), 1),
                     "median_ms": round(1e3 * float(np.median(t)), 1),
                     "cost_median": round(float(np.median(cost)), 4),
                     "cost_quartiles": [round(float(q), 4) for q in np.quantile(cost, [0.25, 0.75])]})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="timed rounds (each variant once a round)")
    parser.add_argument("--shapes", nargs="+", default=["6,256,4", "6,512,8", "2,128,2"], help="depth,width,heads")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    if args.steps < 2:
        fail(f"--steps must be at least 2, got {args.steps}")
    what = "depth,width,heads with heads dividing width"
    shapes = [parse_shape(s, 3, what) for s in args.shapes]
    for text, (_, width, heads) in zip(args.shapes, shapes):
        if width % heads:
            fail(f"shape {text!r} is not {what}")
    from dwlib.train.process import prepare_process
    prepare_process()
    import train_throughput as bench  # beside this script; after the process set-up, as it imports JAX
    for shape in shapes:
        if not args.json:
            print(f"shape (L, d_x, H) = {shape}: {args.steps} rounds")
            print(f"  {'variant':>22} {'best ms':>9} {'median ms':>10} {'cost of plain':>14} {'middle half':>18}")
        for row in measure(shape, args.steps, bench):
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                q = row["cost_quartiles"]
                print(f"  {row['variant']:>22} {row['best_ms']:>9.1f} {row['median_ms']:>10.1f} "
                      f"{100 * row['cost_median']:>13.1f}% {100 * q[0]:>8.1f}% to {100 * q[1]:.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
