"""Time the chapter's separation-rank sweep (and, with --out, store it there).

    .venv/bin/python benchmarks/seprank_sweep.py [--out PATH]

Prints each measurement, then the time of the largest measurement and of the whole sweep
(the same numbers are stored under "timing" in the JSON). `dwlib seprank --sweep --out PATH`
does the same; scripts/publish_seprank.py publishes the result into the package.
"""

from __future__ import annotations

import argparse
import time

from dwlib.experiments import seprank_sweep

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the JSON here")
    args = parser.parse_args()
    t0 = time.perf_counter()
    out = seprank_sweep.sweep()
    if args.out:
        seprank_sweep.write_sweep(out, args.out)
    t = out["timing"]
    print(f"largest measurement: {t['largest']}")
    print(f"whole sweep: {t['sweep_seconds']} s (wall {time.perf_counter() - t0:.1f} s)"
          + (f"; written to {args.out}" if args.out else ""))
