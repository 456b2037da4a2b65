"""Time the chapter's separation-rank sweep and write it to dwlib/data/seprank.json.

    .venv/bin/python benchmarks/seprank_sweep.py [--out PATH]

Prints each measurement, then the time of the largest measurement and of the whole sweep
(the same numbers are stored under "timing" in the JSON). Same as `dwlib seprank --sweep --out PATH`.
"""

from __future__ import annotations

import argparse
import time

from dwlib.core import seprank

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(seprank.DATA_PATH))
    args = parser.parse_args()
    t0 = time.perf_counter()
    out = seprank.sweep()
    seprank.write_sweep(out, args.out)
    t = out["timing"]
    print(f"largest measurement: {t['largest']}")
    print(f"whole sweep: {t['sweep_seconds']} s (wall {time.perf_counter() - t0:.1f} s); written to {args.out}")
