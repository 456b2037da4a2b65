#!/usr/bin/env python3
"""Training-step throughput of dwlib's decoder against the PyTorch reference, on this machine.

For fixed shapes (vocabulary 1000, sequence 256, batch 16, float32, (L, d_x, H) in SHAPES) it
prints, per shape: tokens/s, step time, achieved FLOP/s and their share of a matrix-product peak
measured here by this script (a jitted float32 matmul of the step's own largest shape). When
torch is importable it also times ``../shared/bench/torch_reference.py``'s model (beside the repository) on the same
shapes (imported by path; override with --torch-reference) and prints the JAX/PyTorch ratio
(> 1: dwlib is faster).

FLOPs per token (the reference's formula, so the two columns compare):
    6 * (12 L d^2 + V d)  +  12 L T d
i.e. 6 x (non-embedding + unembedding parameters) for the forward and backward matrix products,
plus the attention score and value products (2 x 2 T d per layer forward, doubled backward),
without discounting the causal half.

Usage: python benchmarks/train_throughput.py [--steps 10] [--shapes 6,256,4 2,128,2] [--no-torch]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

SHAPES = ((6, 256, 4), (6, 512, 8), (2, 128, 2))
VOCAB, SEQ, BATCH = 1000, 256, 16
# The reference lives beside the repository: <parent of the repo>/shared/bench/torch_reference.py.
TORCH_REFERENCE = str(Path(__file__).resolve().parents[2] / "shared" / "bench" / "torch_reference.py")


def flops_per_token(vocab, seq, depth, width):
    return 6 * (12 * depth * width * width + vocab * width) + 12 * depth * seq * width


def matmul_peak(m=4096, k=1024, n=1024, repeats=10) -> float:
    """FLOP/s of a jitted float32 (m x k) @ (k x n) product on this machine (best of ``repeats``)."""
    import jax
    import jax.numpy as jnp

    a = jax.random.normal(jax.random.key(0), (m, k), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (k, n), jnp.float32)
    f = jax.jit(jnp.matmul)
    f(a, b).block_until_ready()
    best = min(_timed(lambda: f(a, b).block_until_ready()) for _ in range(repeats))
    return 2 * m * k * n / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def time_dwlib(depth, width, heads, steps, warmup=2) -> float:
    """Seconds per training step of dwlib's jitted step (AdamW, float32), best of ``steps``."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from dwlib.model import init_params
    from dwlib.train import _OPTIMIZER_FIELDS, TrainConfig, data_devices, make_steps

    cfg = TrainConfig(depth=depth, width=width, heads=heads, vocab_size=VOCAB, seq_len=SEQ, batch_size=BATCH,
                      steps=1000, lr=1e-3)
    mcfg = cfg.model_config()
    mesh = Mesh(np.array(data_devices(BATCH)), ("data",))  # as dwlib.train.train splits the batch
    _, _, _, train_step, _, init_opt = make_steps(mcfg, tuple(getattr(cfg, f) for f in _OPTIMIZER_FIELDS), mesh)
    params = jax.device_put(init_params(mcfg, 0)[1], NamedSharding(mesh, P()))
    opt_state = init_opt(params)
    rng = np.random.default_rng(0)
    batch = jax.device_put(rng.integers(0, VOCAB, (BATCH, SEQ + 1)).astype(np.int32), NamedSharding(mesh, P("data")))
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        params, opt_state, loss = train_step(params, opt_state, batch)
        loss.block_until_ready()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return float(np.min(times))


def time_torch(ref, depth, width, heads, steps, warmup=2) -> float:
    """Seconds per step of the reference's model and step, written as in its main(); best of ``steps``."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = ref.LM(VOCAB, SEQ, depth, width, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    data = torch.randint(0, VOCAB, (BATCH, SEQ + 1))
    x, y = data[:, :-1], data[:, 1:]

    def step():
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return float(np.min(times))


def load_reference(path):
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("torch_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8, help="timed steps per shape (the fastest is reported: the machine is shared)")
    p.add_argument("--shapes", nargs="*", default=[",".join(map(str, s)) for s in SHAPES], help="L,d,H ...")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--torch-reference", default=TORCH_REFERENCE)
    p.add_argument("--json", action="store_true", help="one JSON line per shape instead of a table")
    a = p.parse_args(argv)

    from dwlib.train import configure_cpu_devices

    configure_cpu_devices()  # as dwlib.train.train does: one XLA device per core on a CPU
    import jax

    ref = None if a.no_torch else load_reference(a.torch_reference)
    peak = matmul_peak()
    tokens = BATCH * SEQ
    print(f"jax {jax.__version__} on {jax.default_backend()} ({jax.device_count()} device(s)), "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; matmul peak {peak / 1e9:.1f} GFLOP/s (4096x1024x1024 f32)")
    if ref is not None:
        import torch

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; reference {a.torch_reference}")
    print(f"vocab {VOCAB}, seq {SEQ}, batch {BATCH}, float32; FLOPs/token = 6(12 L d^2 + V d) + 12 L T d")
    header = f"{'L':>2} {'d':>4} {'H':>2} | {'jax ms':>8} {'tok/s':>8} {'GFLOP/s':>8} {'%peak':>6}"
    if ref is not None:
        header += f" | {'torch ms':>8} {'tok/s':>8} {'GFLOP/s':>8} | {'jax/torch':>9}"
    if not a.json:
        print(header)
    for spec in a.shapes:
        depth, width, heads = (int(x) for x in spec.split(","))
        fpt = flops_per_token(VOCAB, SEQ, depth, width)
        t_jax = time_dwlib(depth, width, heads, a.steps)
        row = {"depth": depth, "width": width, "heads": heads, "jax_step_ms": round(t_jax * 1e3, 1),
               "jax_tokens_per_s": round(tokens / t_jax), "jax_gflops": round(fpt * tokens / t_jax / 1e9, 2),
               "jax_share_of_peak": round(fpt * tokens / t_jax / peak, 3)}
        line = (f"{depth:>2} {width:>4} {heads:>2} | {t_jax * 1e3:>8.1f} {tokens / t_jax:>8.0f} "
                f"{fpt * tokens / t_jax / 1e9:>8.1f} {100 * fpt * tokens / t_jax / peak:>5.1f}%")
        if ref is not None:
            t_torch = time_torch(ref, depth, width, heads, a.steps)
            row.update(torch_step_ms=round(t_torch * 1e3, 1), torch_tokens_per_s=round(tokens / t_torch),
                       torch_gflops=round(fpt * tokens / t_torch / 1e9, 2), ratio=round(t_torch / t_jax, 3))
            line += (f" | {t_torch * 1e3:>8.1f} {tokens / t_torch:>8.0f} {fpt * tokens / t_torch / 1e9:>8.1f}"
                     f" | {t_torch / t_jax:>8.2f}x")
        print(json.dumps(row) if a.json else line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
