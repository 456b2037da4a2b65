#!/usr/bin/env python3
"""How close dwlib's memory estimate of a training step (:mod:`dwlib.train.memory`) comes to
what a run holds on this machine.

For each shape (depth, width, heads, seq_len, batch, vocabulary) it prints:

- the estimate of both CPU devices' buffers plus the runtime allowance, what
  :func:`dwlib.train.memory.check_fits` asks of the host;
- XLA's own plan of the compiled step (temporary buffers plus arguments, all devices);
- the growth of the peak resident memory of a 3-step run in a fresh process, measured from the
  moment its corpus is loaded (so the tokenizer and the Python heap are left out).

The peak resident memory depends on the machine (the allocator's arenas, the threads XLA starts,
what the compiler keeps), so it is measured here and printed, never asserted in a test; the
unit tests compare the estimate with XLA's plan, which does not.

Usage: python benchmarks/memory.py [--shapes 1,32,2,512,32,300 ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from common import fail, parse_shape  # beside this script

SHAPES = ["1,32,2,512,32,300", "1,32,2,1024,32,1000", "2,128,2,128,128,1000", "1,64,4,256,64,4000",
          "2,64,4,256,32,1000"]

RUN = """
import json, resource, sys
from dwlib.train import process, loop, data, memory
process.prepare_process()
from dwlib.train.config import TrainConfig
cfg = TrainConfig.from_dict(json.loads(sys.argv[1]))
data.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir)
base = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024
loop.train(cfg, progress=False, verbose=False)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"growth": peak - base}))
"""


def measure(shape: tuple[int, ...], folder: Path) -> dict:
    """Estimate, XLA's plan and a 3-step run's peak-memory growth for one shape, in bytes."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec

    from dwlib.train import memory
    from dwlib.train.config import TrainConfig
    from dwlib.train.multi import group_steps, init_group

    depth, width, heads, seq_len, batch, vocab = shape
    corpus = folder / "corpus.txt"
    if not corpus.exists():
        corpus.write_text("\n\n".join(f"Document {i} holds a few words, again and again. " * 400 for i in range(80)))
    spec = dict(depth=depth, width=width, heads=heads, seq_len=seq_len, batch_size=batch, vocab_size=vocab,
                steps=3, eval_interval=0, eval_batches=1, corpus=str(corpus), cache_dir=str(folder / "cache"),
                out_dir=str(folder / f"run-{'-'.join(map(str, shape))}"))
    cfg = TrainConfig.from_dict(spec)
    steps, state = group_steps([cfg]), init_group([cfg])  # a group of one, as dwlib.train.loop.train trains
    devices = list(steps.mesh.devices.flat)
    estimate = memory.check_fits(cfg, devices, memory=(None, ""))["needed"]
    tokens = jax.ShapeDtypeStruct((1, 1, batch, seq_len + 1), jnp.int32,
                                  sharding=NamedSharding(steps.mesh, PartitionSpec(None, "runs", "data")))
    peaks = steps.by_run(np.ones(1, np.float32))
    plan = steps.train_chunk.lower(state["params"], state["opt_state"], tokens, peaks).compile().memory_analysis()
    xla = (plan.temp_size_in_bytes + plan.argument_size_in_bytes) * len(devices)
    proc = subprocess.run([sys.executable, "-c", RUN, json.dumps(spec)], capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"the run of shape {shape} failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    growth = json.loads(proc.stdout.splitlines()[-1])["growth"]
    return {"shape": list(shape), "devices": len(devices), "estimate": estimate, "xla_plan": xla,
            "rss_growth": growth}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="depth,width,heads,seq_len,batch,vocab")
    parser.add_argument("--json", action="store_true", help="one JSON object per shape")
    args = parser.parse_args(argv)
    shapes = [parse_shape(s, 6, "six positive integers (depth,width,heads,seq_len,batch,vocab)")
              for s in args.shapes]
    from dwlib.train import process
    process.prepare_process()
    with tempfile.TemporaryDirectory(prefix="dwlib-memory-") as tmp:
        if not args.json:
            print(f"{'shape':>24} {'devices':>7} {'estimate':>9} {'XLA plan':>9} {'RSS growth':>10} "
                  f"{'est/RSS':>7}   (MB; estimate = what the host must hold)")
        for shape in shapes:
            row = measure(shape, Path(tmp))
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                mb = {k: row[k] / 1e6 for k in ("estimate", "xla_plan", "rss_growth")}
                print(f"{','.join(map(str, shape)):>24} {row['devices']:>7} {mb['estimate']:>9.0f} "
                      f"{mb['xla_plan']:>9.0f} {mb['rss_growth']:>10.0f} "
                      f"{row['estimate'] / row['rss_growth']:>7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
