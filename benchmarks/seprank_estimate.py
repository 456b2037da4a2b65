#!/usr/bin/env python3
"""How close `dwlib seprank`'s estimate of a measurement's time comes to the time it takes.

For each shape (depth, width, heads, positions), in a fresh process as the command runs, it
probes the machine's speed (as the command does, about 1 s), then measures the separation rank with the grid grown until the rank stops,
and prints the estimate, the measured seconds and their ratio. Timings depend on the machine and
on what else runs on it, so they are printed here, never asserted in a test.

Usage: python benchmarks/seprank_estimate.py [--shapes 1,2,1,4 1,8,1,4 ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from common import fail, parse_shape  # beside this script

SHAPES = ["1,2,1,4", "1,8,1,4", "1,16,2,4", "1,4,2,6", "2,2,1,4", "2,3,1,4"]

RUN = """
import json, sys, time
from dwlib.experiments import seprank_sweep
depth, width, heads, positions = json.loads(sys.argv[1])
seprank_sweep.speed()  # the probe, as the command runs it first; not part of the measurement
t0 = time.perf_counter()
m = seprank_sweep.measure_one(depth, width, heads, positions=positions, allow_slow=True)
print(json.dumps({"last_grid": m["history"][-1][0], "estimated_seconds": m["estimated_seconds"],
                  "measured_seconds": round(time.perf_counter() - t0, 3)}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="depth,width,heads,positions")
    parser.add_argument("--json", action="store_true", help="one JSON object per shape")
    args = parser.parse_args(argv)
    shapes = [parse_shape(s, 4, "four positive integers (depth,width,heads,positions)") for s in args.shapes]
    if not args.json:
        print(f"{'shape (L,d_x,H,N)':>18} {'grids to M':>10} {'estimate s':>10} {'measured s':>10} {'ratio':>6}")
    for shape in shapes:
        proc = subprocess.run([sys.executable, "-c", RUN, json.dumps(shape)], capture_output=True, text=True)
        if proc.returncode != 0:
            fail(f"shape {shape}: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        row = {"shape": list(shape), **json.loads(proc.stdout.splitlines()[-1])}
        seconds = row["measured_seconds"]
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{','.join(map(str, shape)):>18} {row['last_grid']:>10} {row['estimated_seconds']:>10.1f} "
                  f"{seconds:>10.1f} {row['estimated_seconds'] / seconds:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
