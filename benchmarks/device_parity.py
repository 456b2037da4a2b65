"""Does another device reproduce a stored sweep? Train the first group of one shape of a preset
again, on whatever device this machine has, into a temporary folder, and compare each run's final
losses with the stored record of the same run (same key: same config, seed, data order).

A sweep whose runs are split between machines (the small sizes on CPUs, the large on a GPU, say)
is one experiment only if a run's result does not depend on where it trained beyond rounding:
the differences printed here are that rounding, grown over a run's steps, and are to be read
against the spread between seeds (the sweep's own noise).

    python benchmarks/device_parity.py --preset cpu-pairs --shard 0/15 [--stage 2] [--json out.json]

With ``--stage 2`` the shape's stored rate grid is copied in first, so that the group retrained
is the one of the seeds at the chosen rate (the grid is not trained again): a check that the
seeds trained after the grid, at a later commit of the code, are what this code gives too.

Prints one line a run (stored and retrained held-out, validation and training losses) and the
largest absolute difference; with --json, writes the same as JSON. Trains nothing into the
results folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOSSES = ("eval_loss", "select_loss", "train_loss")


def _cell(stored, live) -> str:
    """'stored live diff', 26 characters; a missing loss (a diverged run) as '-'."""
    if stored is None or live is None:
        return f"{stored if stored is not None else '-'!s:>12} {live if live is not None else '-'!s:>7} {'':>6}"
    return f"{stored:>12.4f} {live:>7.4f} {live - stored:+.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", required=True)
    ap.add_argument("--results", default=None, help="the stored sweep (default results/<preset>)")
    ap.add_argument("--shard", default="0/1", help="i/n as for dwlib sweep: its first group is retrained")
    ap.add_argument("--stage", type=int, choices=(1, 2), default=1,
                    help="1: the rate grid (default); 2: the seeds at the chosen rate (the stored grid copied in)")
    ap.add_argument("--json", default=None, help="also write the comparison here")
    args = ap.parse_args()
    stored_root = Path(args.results or f"results/{args.preset}") / "runs"
    if not stored_root.is_dir():
        print(f"device_parity: error: no stored runs at {stored_root}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dwlib-parity-") as tmp:
        if args.stage == 2:  # every stored grid run (stage 1) in, so the sweep goes on to the seeds
            shutil.copy(stored_root.parent / "sweep.json", tmp)
            for meta in stored_root.glob("*/sweep_meta.json"):
                if json.loads(meta.read_text()).get("group", {}).get("stage") == 1:
                    shutil.copytree(meta.parent, Path(tmp, "runs", meta.parent.name))
        copied = {p.name for p in Path(tmp).glob("runs/*")}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "dwlib", "sweep", "--preset", args.preset, "--out", tmp,
                               "--shard", args.shard, "--limit", "1", "--no-progress"],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            print(f"device_parity: error: the sweep ended with status {proc.returncode}", file=sys.stderr)
            return 1
        rows = []
        for result in sorted(Path(tmp, "runs").glob("*/result.json")):
            key = result.parent.name
            if key in copied:
                continue
            stored_file = stored_root / key / "result.json"
            if not stored_file.exists():
                continue
            live, stored = json.loads(result.read_text()), json.loads(stored_file.read_text())
            rows.append({"key": key, "device": live["devices"], "stored_device": stored["devices"],
                         **{f"{k}_stored": stored[k] for k in LOSSES}, **{f"{k}_live": live[k] for k in LOSSES}})
    if not rows:
        print("device_parity: error: the retrained group holds no run with a stored record", file=sys.stderr)
        return 1
    print(f"{len(rows)} runs retrained in {seconds:.0f} s on {rows[0]['device']}; stored on {rows[0]['stored_device']}")
    print(f"{'key':<14}" + "".join(f"{k:>26}" for k in LOSSES))
    for r in rows:
        print(f"{r['key']:<14}" + "".join(_cell(r[k + "_stored"], r[k + "_live"]) for k in LOSSES))
    worst = {k: max((abs(r[k + "_live"] - r[k + "_stored"]) for r in rows
                     if r[k + "_live"] is not None and r[k + "_stored"] is not None), default=None) for k in LOSSES}
    print("largest |retrained - stored|: " + ", ".join(f"{k} {v:.4f}" for k, v in worst.items() if v is not None))
    if args.json:
        Path(args.json).write_text(json.dumps({"preset": args.preset, "shard": args.shard, "stage": args.stage, "seconds": seconds,
                                               "matmul_precision": os.environ.get("JAX_DEFAULT_MATMUL_PRECISION"),
                                               "runs": rows, "largest_abs_diff": worst}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
