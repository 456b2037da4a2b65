#!/usr/bin/env python3
"""Training-step throughput of dwlib's decoder against the PyTorch reference, on this machine.

For fixed shapes (vocabulary 1000, sequence 256, batch 16, float32, (L, d_x, H) in SHAPES) it
prints, per shape: tokens/s, step time, achieved FLOP/s and their share of a matrix-product peak
measured here by this script (a jitted 4096 x 1024 x 1024 float32 product). When
torch is importable it also times ``../shared/bench/torch_reference.py``'s model (beside the repository) on the same
shapes (imported by path; override with --torch-reference) and prints the JAX/PyTorch ratio
(> 1: dwlib is faster): of the best steps, and the median over rounds of the two steps' ratio
("paired"). The two steps alternate, one by one, so that a machine that slows down or speeds up
during the measurement affects both sides alike. Both run under dwlib's host-memory setting
(``dwlib.train.loop.configure_host_memory``); ``--torch-alone`` times the reference by itself, in a
process of its own with the C library's default allocator, as a check that the setting does not
flatter the comparison.

FLOPs per token (the reference's formula, so the two columns compare):
    6 * (12 L d^2 + V d)  +  12 L T d
i.e. 6 x (non-embedding + unembedding parameters) for the forward and backward matrix products,
plus the attention score and value products (2 x 2 T d per layer forward, doubled backward),
without discounting the causal half.

On a GPU (JAX's default backend) it times instead the issue's GPU shape, (L, d_x, H) =
(12, 768, 12), sequence 1024, bfloat16 compute, at the batch sizes of --gpu-batches; it measures
the chip's bfloat16 matrix-product rate (8192^3, random operands), prints the share of it and of
the datasheet's dense bf16 peak where the chip is known, times the same step with dwlib's own
attention instead of cuDNN's fused kernel, and checks the fused kernel's output against float32.

Usage: python benchmarks/train_throughput.py [--steps 8] [--shapes 6,256,4 2,128,2] [--no-torch]
       python benchmarks/train_throughput.py --torch-alone
       python benchmarks/train_throughput.py --gpu-batches 16 32 64     (on a GPU)
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
GPU_SHAPE, GPU_SEQ = (12, 768, 12), 1024
# Dense bfloat16 tensor-core peaks from the vendor's datasheets (SXM parts), FLOP/s, by a
# substring of jax's device_kind. A lead, beside the rate this script measures.
DATASHEET_BF16 = {"H200": 989.4e12, "H100": 989.4e12, "A100": 312e12}
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


def dwlib_step(depth, width, heads, seq=SEQ, batch_size=BATCH, dtype="float32"):
    """A function that runs one training step of dwlib's jitted step (AdamW) and waits for it."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from dwlib.train.model import init_params
    from dwlib.train.loop import _OPTIMIZER_FIELDS, TrainConfig, data_devices, make_steps

    cfg = TrainConfig(depth=depth, width=width, heads=heads, vocab_size=VOCAB, seq_len=seq, batch_size=batch_size,
                      steps=1000, lr=1e-3, dtype=dtype)
    mcfg = cfg.model_config()
    mesh = Mesh(np.array(data_devices(batch_size)), ("data",))  # as dwlib.train.loop.train splits the batch
    make_steps.cache_clear()  # the attention implementation is chosen at trace time
    _, _, _, train_step, _, init_opt = make_steps(mcfg, tuple(getattr(cfg, f) for f in _OPTIMIZER_FIELDS), mesh)
    params = jax.device_put(init_params(mcfg, 0)[1], NamedSharding(mesh, P()))
    state = [params, init_opt(params)]
    rng = np.random.default_rng(0)
    batch = jax.device_put(rng.integers(0, VOCAB, (batch_size, seq + 1)).astype(np.int32),
                           NamedSharding(mesh, P("data")))

    def step():
        state[0], state[1], loss = train_step(state[0], state[1], batch)
        loss.block_until_ready()

    return step


def torch_step(ref, depth, width, heads):
    """A function that runs one step of the reference's model and optimizer, written as in its main()."""
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

    return step


def time_steps(steps_by_name: dict, steps: int, warmup: int = 2) -> dict:
    """Seconds of each of ``steps`` timed calls per step function, after ``warmup`` untimed ones.

    With several functions the calls alternate (a, b, b, a, a, b, ...), so that a machine that
    slows down or speeds up during the measurement affects each side alike."""
    names = list(steps_by_name)
    for _ in range(warmup):
        for name in names:
            steps_by_name[name]()
    times = {name: [] for name in names}
    for i in range(steps):
        for name in names if i % 2 == 0 else names[::-1]:
            times[name].append(_timed(steps_by_name[name]))
    return times


def time_dwlib(depth, width, heads, steps, warmup=2, seq=SEQ, batch_size=BATCH, dtype="float32") -> tuple:
    """Seconds per training step of dwlib's jitted step (AdamW), best of ``steps``, and the
    seconds of the first step (compilation included)."""
    step = dwlib_step(depth, width, heads, seq, batch_size, dtype)
    first = _timed(step)
    return min(time_steps({"dwlib": step}, steps, max(warmup - 1, 0))["dwlib"]), first


def bf16_matmul_peak(n=8192, repeats=10) -> float:
    """FLOP/s of a jitted bfloat16 n^3 product on random operands (best of ``repeats``)."""
    import jax
    import jax.numpy as jnp

    a, b = (jax.random.normal(jax.random.key(i), (n, n), jnp.bfloat16) for i in range(2))
    f = jax.jit(jnp.matmul)
    for _ in range(3):
        f(a, b).block_until_ready()
    return 2 * n ** 3 / min(_timed(lambda: f(a, b).block_until_ready()) for _ in range(repeats))


def fused_attention_error(batch=4, seq=GPU_SEQ, heads=12, head_size=64) -> float:
    """||fused - exact|| / ||exact|| for causal attention on random bfloat16 inputs, the exact
    result from dwlib's own attention in float32 on the same (rounded) inputs."""
    import jax
    import jax.numpy as jnp

    from dwlib.core.attention import attend

    q, k, v = (jax.random.normal(jax.random.key(i), (batch, seq, heads, head_size), jnp.bfloat16) for i in range(3))
    fused = attend(q, k, v, causal=True).astype(jnp.float32)
    exact = attend(*(x.astype(jnp.float32) for x in (q, k, v)), causal=True)
    return float(jnp.linalg.norm(fused - exact) / jnp.linalg.norm(exact))


def gpu_main(a) -> int:
    """The GPU target: (12, 768, 12), sequence 1024, bfloat16, as a share of the bf16 peak."""
    import jax

    from dwlib.core.attention import fused_available

    depth, width, heads = GPU_SHAPE
    kind = jax.devices()[0].device_kind
    peak = bf16_matmul_peak()
    sheet = next((v for k, v in DATASHEET_BF16.items() if k in kind), None)
    fpt = flops_per_token(VOCAB, GPU_SEQ, depth, width)
    print(f"jax {jax.__version__} on {kind}; bf16 matmul 8192^3 measured {peak / 1e12:.0f} TFLOP/s"
          + (f", datasheet dense bf16 {sheet / 1e12:.0f}" if sheet else ""))
    fused = fused_available("bfloat16", width // heads)
    print(f"fused (cuDNN) attention: {fused}; relative error against float32 "
          f"{fused_attention_error() if fused else float('nan'):.2e}")
    print(f"(L, d, H) = {GPU_SHAPE}, vocab {VOCAB}, seq {GPU_SEQ}, bfloat16; FLOPs/token {fpt / 1e6:.0f}M")
    print(f"{'attention':>9} {'batch':>5} | {'ms':>7} {'tok/s':>9} {'TFLOP/s':>8} {'%meas':>6} {'%sheet':>6}  first step")
    before = os.environ.get("DWLIB_ATTENTION")
    for impl in ("auto", "dwlib") if fused else ("dwlib",):
        os.environ["DWLIB_ATTENTION"] = impl
        for batch in a.gpu_batches:
            try:
                t, first = time_dwlib(depth, width, heads, a.steps, seq=GPU_SEQ, batch_size=batch, dtype="bfloat16")
            except Exception as err:  # out of memory at a large batch: say so and go on
                print(f"{impl:>9} {batch:>5} | failed: {str(err).splitlines()[0][:100]}", flush=True)
                continue
            rate = fpt * batch * GPU_SEQ / t
            row = {"attention": "cudnn" if impl == "auto" else "dwlib", "batch": batch, "step_ms": round(t * 1e3, 2),
                   "tokens_per_s": round(batch * GPU_SEQ / t), "tflops": round(rate / 1e12, 1),
                   "share_of_measured": round(rate / peak, 3),
                   "share_of_datasheet": round(rate / sheet, 3) if sheet else None, "first_step_s": round(first, 1)}
            print(json.dumps(row) if a.json else
                  f"{row['attention']:>9} {batch:>5} | {t * 1e3:>7.1f} {batch * GPU_SEQ / t:>9.0f} {rate / 1e12:>8.1f} "
                  f"{100 * rate / peak:>5.1f}% " + (f"{100 * rate / sheet:>5.1f}%" if sheet else "      ")
                  + f"  (first step {first:.0f} s)", flush=True)
    if before is None:
        os.environ.pop("DWLIB_ATTENTION")
    else:
        os.environ["DWLIB_ATTENTION"] = before
    return 0


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


def torch_alone_main(a) -> int:
    """The reference by itself: best and median of its steps, in this process, with the C
    library's default allocator (JAX and dwlib are not imported)."""
    ref = load_reference(a.torch_reference)
    if ref is None:
        print(f"torch is not importable or {a.torch_reference} is missing", file=sys.stderr)
        return 2
    import torch

    print(f"torch {torch.__version__} alone, {torch.get_num_threads()} threads; reference {a.torch_reference}")
    for spec in a.shapes:
        depth, width, heads = (int(x) for x in spec.split(","))
        times = time_steps({"torch": torch_step(ref, depth, width, heads)}, a.steps)["torch"]
        row = {"depth": depth, "width": width, "heads": heads, "torch_alone_step_ms": round(min(times) * 1e3, 1),
               "torch_alone_median_ms": round(float(np.median(times)) * 1e3, 1)}
        print(json.dumps(row) if a.json else
              f"{depth:>2} {width:>4} {heads:>2} | best {min(times) * 1e3:8.1f} ms, median {np.median(times) * 1e3:8.1f} ms",
              flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8,
                   help="timed steps per shape (the fastest and the median paired ratio are reported)")
    p.add_argument("--shapes", nargs="*", default=[",".join(map(str, s)) for s in SHAPES], help="L,d,H ...")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--torch-reference", default=TORCH_REFERENCE)
    p.add_argument("--torch-alone", action="store_true",
                   help="time only the PyTorch reference, without JAX or dwlib's host-memory setting")
    p.add_argument("--json", action="store_true", help="one JSON line per shape instead of a table")
    p.add_argument("--gpu-batches", nargs="*", type=int, default=[16, 32, 64],
                   help="batch sizes for the GPU shape (used when JAX's default backend is a GPU)")
    a = p.parse_args(argv)
    if a.torch_alone:
        return torch_alone_main(a)

    from dwlib.train.loop import configure_host_memory, prepare_process

    # As dwlib.train.loop.train does: freed host memory kept for reuse (the PyTorch reference, timed in
    # this process, runs under the same setting), one XLA device per core on a CPU.
    prepare_process()
    kept = configure_host_memory()  # the outcome of the call in prepare_process
    import jax

    if jax.default_backend() == "gpu":
        return gpu_main(a)

    ref = None if a.no_torch else load_reference(a.torch_reference)
    peak = matmul_peak()
    tokens = BATCH * SEQ
    print(f"jax {jax.__version__} on {jax.default_backend()} ({jax.device_count()} device(s)), "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; matmul peak {peak / 1e9:.1f} GFLOP/s (4096x1024x1024 f32); "
          f"freed host memory {'kept for reuse' if kept else 'returned to the system'}")
    if ref is not None:
        import torch

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; reference {a.torch_reference}")
    print(f"vocab {VOCAB}, seq {SEQ}, batch {BATCH}, float32; FLOPs/token = 6(12 L d^2 + V d) + 12 L T d")
    header = f"{'L':>2} {'d':>4} {'H':>2} | {'jax ms':>8} {'tok/s':>8} {'GFLOP/s':>8} {'%peak':>6}"
    if ref is not None:
        header += f" | {'torch ms':>8} {'tok/s':>8} {'GFLOP/s':>8} | {'jax/torch':>9} {'paired':>7}"
    if not a.json:
        print(header)
    for spec in a.shapes:
        depth, width, heads = (int(x) for x in spec.split(","))
        fpt = flops_per_token(VOCAB, SEQ, depth, width)
        fns = {"jax": dwlib_step(depth, width, heads)}
        if ref is not None:
            fns["torch"] = torch_step(ref, depth, width, heads)
        times = time_steps(fns, a.steps)  # the two alternate, step by step
        t_jax = min(times["jax"])
        row = {"depth": depth, "width": width, "heads": heads, "jax_step_ms": round(t_jax * 1e3, 1),
               "jax_tokens_per_s": round(tokens / t_jax), "jax_gflops": round(fpt * tokens / t_jax / 1e9, 2),
               "jax_share_of_peak": round(fpt * tokens / t_jax / peak, 3)}
        line = (f"{depth:>2} {width:>4} {heads:>2} | {t_jax * 1e3:>8.1f} {tokens / t_jax:>8.0f} "
                f"{fpt * tokens / t_jax / 1e9:>8.1f} {100 * fpt * tokens / t_jax / peak:>5.1f}%")
        if ref is not None:
            t_torch = min(times["torch"])
            paired = float(np.median(np.array(times["torch"]) / np.array(times["jax"])))
            row.update(torch_step_ms=round(t_torch * 1e3, 1), torch_tokens_per_s=round(tokens / t_torch),
                       torch_gflops=round(fpt * tokens / t_torch / 1e9, 2), ratio=round(t_torch / t_jax, 3),
                       paired_ratio=round(paired, 3))
            line += (f" | {t_torch * 1e3:>8.1f} {tokens / t_torch:>8.0f} {fpt * tokens / t_torch / 1e9:>8.1f}"
                     f" | {t_torch / t_jax:>8.2f}x {paired:>6.2f}x")
        print(json.dumps(row) if a.json else line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
