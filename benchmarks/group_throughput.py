"""Runs trained together against runs trained one after another, on this machine.

A sweep trains many runs of one shape that differ only in seed and learning rate.
``dwlib.train.multi`` trains R such runs at once (``vmap`` over the runs, ``lax.scan`` over a
chunk of steps, one dispatch per chunk); ``dwlib.train.loop`` trains them one by one (one
dispatch per step). This script times both on random tokens, after compilation, and prints the
tokens per second, the FLOP rate (the throughput benchmark's count, 6 (12 L d^2 + V d) + 12 L T d
per token) and the ratio. Timings are printed, never asserted.

    python benchmarks/group_throughput.py --shape 2,128,2 --runs 4 --chunk 10 --steps 20

``--preset NAME`` measures instead what a sweep achieves on average: every shape of the preset
(its batch and sequence; its runs per point trained together, ``--steps`` steps each), timed
from the start of each group (compilation and the host's batch assembly included, as a sweep
pays them) to its end. The sweep-average rate (all FLOPs over all that time) is printed beside
the single-run benchmark's rate: one run of the preset's largest shape, steady state (the
compiled step repeated, one dispatch a step), the measure the README's benchmark reports.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_throughput import BATCH, SEQ, VOCAB, dwlib_step, flops_per_token  # noqa: E402

from dwlib.experiments.presets import get_preset  # noqa: E402
from dwlib.train.config import TrainConfig  # noqa: E402
from dwlib.train.multi import group_key, init_group, make_group_steps  # noqa: E402
from dwlib.train.process import prepare_process  # noqa: E402


def parse_shape(text: str) -> tuple[int, int, int]:
    try:
        depth, width, heads = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape must be L,d,H (e.g. 2,128,2), got {text!r}") from None
    if min(depth, width, heads) < 1 or width % heads:
        raise argparse.ArgumentTypeError(f"shape needs L, d, H >= 1 and H dividing d, got {text!r}")
    return depth, width, heads


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def time_one_by_one(shape, runs: int, steps: int, seq: int = SEQ, batch: int = BATCH) -> float:
    """Seconds to train ``runs`` runs of ``steps`` steps one after another (one step compiled
    once and reused, as a sweep process does)."""
    step = dwlib_step(*shape, seq=seq, batch_size=batch)
    step()  # compile
    t0 = time.perf_counter()
    for _ in range(runs * steps):
        step()
    return time.perf_counter() - t0


def time_together(shape, runs: int, chunk: int, steps: int, seq: int = SEQ, batch: int = BATCH) -> tuple[float, int]:
    """Seconds to train ``runs`` runs of ``steps`` steps together, ``chunk`` steps per dispatch,
    and the number of devices the runs were split over."""
    depth, width, heads = shape
    cfgs = [TrainConfig.from_dict(dict(depth=depth, width=width, heads=heads, vocab_size=VOCAB, seq_len=seq,
                                       batch_size=batch, steps=1000, lr=1e-3 * (1 + r), seed=r, ops="fast",
                                       eval_interval=0)) for r in range(runs)]
    group = make_group_steps(group_key(cfgs[0]), runs)
    state = init_group(cfgs)
    peaks = group.by_run(np.asarray([c.optim.lr for c in cfgs], np.float32))
    rng = np.random.default_rng(0)
    batches = group.batches(rng.integers(0, VOCAB, (chunk, runs, batch, seq + 1)).astype(np.int32))
    params, opt = state["params"], state["opt_state"]
    params, opt, losses = group.train_chunk(params, opt, batches, peaks)  # compile
    losses.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(steps // chunk):
        params, opt, losses = group.train_chunk(params, opt, batches, peaks)
    losses.block_until_ready()
    return time.perf_counter() - t0, group.mesh.devices.size


def sweep_average(preset: str, steps: int, chunk: int, runs: int | None = None) -> dict:
    """Every shape of ``preset`` as a group of its runs per point, ``steps`` steps on random
    tokens, timed whole (compilation included); and one run of its largest shape, steady state.
    ``runs``: runs per group (default: the preset's runs per point)."""
    sweep = get_preset(preset)
    base = sweep.config(sweep.points()[0], 0)
    seq, batch, runs = base.model.seq_len, base.batch_size, runs or sweep.runs_per_point()
    rows, flops_all, seconds_all, steady_all = [], 0.0, 0.0, 0.0
    for p in sweep.points():
        shape = (p.depth, p.width, p.heads)
        t0 = time.perf_counter()
        together, _ = time_together(shape, runs, chunk, steps, seq, batch)
        seconds = time.perf_counter() - t0
        # the timed call trains steps + chunk steps: one chunk compiling (and training), then steps
        flops = runs * (steps + chunk) * batch * seq * flops_per_token(VOCAB, seq, p.depth, p.width)
        rows.append({"shape": list(shape), "seconds": round(seconds, 3), "steady_seconds": round(together, 4),
                     "gflop_s": round(flops / seconds / 1e9, 2)})
        flops_all, seconds_all, steady_all = flops_all + flops, seconds_all + seconds, steady_all + together
    largest = max(sweep.points(), key=lambda p: p.budget)
    shape = (largest.depth, largest.width, largest.heads)
    single = time_one_by_one(shape, 1, steps, seq, batch)
    single_flops = steps * batch * seq * flops_per_token(VOCAB, seq, *shape[:2])
    return {"preset": preset, "runs_per_group": runs, "steps": steps, "chunk": chunk, "groups": rows,
            "sweep_gflop_s": round(flops_all / seconds_all / 1e9, 2),
            "sweep_steady_gflop_s": round(flops_all * steps / (steps + chunk) / steady_all / 1e9, 2),
            "single_run_shape": list(shape), "single_run_gflop_s": round(single_flops / single / 1e9, 2),
            "sweep_over_single": round(flops_all / seconds_all / (single_flops / single), 3),
            "sweep_steady_over_single": round(flops_all * steps / (steps + chunk) / steady_all / (single_flops / single),
                                              3)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", type=parse_shape, default=(2, 128, 2), help="L,d,H")
    p.add_argument("--runs", type=positive, default=None,
                   help="runs trained together (default 4; with --preset, its runs per point)")
    p.add_argument("--chunk", type=positive, default=10, help="steps per dispatch of the group")
    p.add_argument("--steps", type=positive, default=20, help="timed steps per run (a multiple of --chunk)")
    p.add_argument("--seq", type=positive, default=SEQ, help=f"tokens per sequence (default {SEQ})")
    p.add_argument("--batch", type=positive, default=BATCH, help=f"sequences per step and run (default {BATCH})")
    p.add_argument("--preset", default=None, help="measure the sweep-average rate over this preset's shapes")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.steps % a.chunk:
        p.exit(2, f"{p.prog}: error: --steps ({a.steps}) must be a multiple of --chunk ({a.chunk})\n")
    prepare_process()
    if a.preset is not None:
        row = {"backend": jax.default_backend(), "devices": jax.device_count(), **sweep_average(a.preset, a.steps,
                                                                                                a.chunk, a.runs)}
        if a.json:
            print(json.dumps(row))
            return 0
        print(f"{row['backend']} ({row['devices']} device(s)); preset {a.preset}: {len(row['groups'])} groups of "
              f"{row['runs_per_group']} runs x {a.steps} steps (chunk {a.chunk}), compilation included")
        for g in row["groups"]:
            print(f"  (L, d, H) = {tuple(g['shape'])}: {g['seconds']:.2f} s, {g['gflop_s']:.2f} GFLOP/s")
        print(f"sweep average: {row['sweep_gflop_s']:.2f} GFLOP/s with compilation, {row['sweep_steady_gflop_s']:.2f} "
              f"without; single run of {tuple(row['single_run_shape'])}, steady state: "
              f"{row['single_run_gflop_s']:.2f} GFLOP/s; ratios {row['sweep_over_single']:.2f} with compilation, "
              f"{row['sweep_steady_over_single']:.2f} without")
        return 0
    a.runs = a.runs or 4
    tokens = a.runs * a.steps * a.batch * a.seq
    flops = tokens * flops_per_token(VOCAB, a.seq, a.shape[0], a.shape[1])
    alone = time_one_by_one(a.shape, a.runs, a.steps, a.seq, a.batch)
    together, split = time_together(a.shape, a.runs, a.chunk, a.steps, a.seq, a.batch)
    row = {"backend": jax.default_backend(), "devices": jax.device_count(), "shape": list(a.shape),
           "runs": a.runs, "run_devices": split, "chunk": a.chunk, "steps": a.steps, "batch": a.batch, "seq": a.seq,
           "one_by_one_tok_s": round(tokens / alone, 1), "together_tok_s": round(tokens / together, 1),
           "one_by_one_gflop_s": round(flops / alone / 1e9, 2), "together_gflop_s": round(flops / together / 1e9, 2),
           "together_over_one_by_one": round(alone / together, 3)}
    if a.json:
        print(json.dumps(row))
    else:
        print(f"{row['backend']} ({row['devices']} device(s)); shape (L, d, H) = {tuple(a.shape)}, {a.runs} runs x "
              f"{a.steps} steps, batch {a.batch} x {a.seq} tokens, fast ops")
        print(f"one by one : {row['one_by_one_tok_s']:>10,.0f} tok/s  {row['one_by_one_gflop_s']:8.2f} GFLOP/s")
        print(f"together   : {row['together_tok_s']:>10,.0f} tok/s  {row['together_gflop_s']:8.2f} GFLOP/s  "
              f"(chunk {a.chunk})")
        print(f"together / one by one: {row['together_over_one_by_one']:.2f}x "
              f"(runs split over {split} device(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
