#!/usr/bin/env python3
"""Training-step throughput of dwlib's decoder against the PyTorch reference, on this machine.

For fixed shapes (vocabulary 1000, sequence 256, batch 16, float32, (L, d_x, H) in SHAPES) it
prints, per shape and per implementation of dwlib's decoder (``--ops``: "fast", the hand-written
gradients of dwlib.train.fast, the headline; "plain", the plain Flax model that JAX
differentiates, beside it; default both): tokens/s, step time, achieved FLOP/s and their share
of a matrix-product peak measured here by this script (a jitted 4096 x 1024 x 1024 float32
product). When torch is importable it also times the PyTorch reference of this directory,
``torch_reference.py`` (imported by path; override with --torch-reference), on the same shapes
and prints the dwlib/PyTorch ratio for each implementation (> 1: dwlib is faster): of the best
steps, and the median over rounds of the two steps' ratio ("paired"). The steps alternate, one
by one, so that a machine that slows down or speeds up during the measurement affects every
side alike. All run under dwlib's host-memory setting
(``dwlib.train.process.configure_host_memory``); ``--torch-alone`` times the reference by itself, in a
process of its own with the C library's default allocator, as a check that the setting does not
flatter the comparison. The header names the CPU (model, widest vector extension) and the same
product's rate in PyTorch: the ratio depends on the machine, since XLA's and PyTorch's matrix
products do not use the same instructions on every CPU (README, "Training throughput").

FLOPs per token (the reference's formula, so the two columns compare):
    6 * (12 L d^2 + V d)  +  12 L T d
i.e. 6 x (non-embedding + unembedding parameters) for the forward and backward matrix products,
plus the attention score and value products (2 x 2 T d per layer forward, doubled backward),
without discounting the causal half.

On a GPU (JAX's default backend) it times instead the issue's GPU shape, (L, d_x, H) =
(12, 768, 12), sequence 1024, bfloat16 compute, at the batch sizes of --gpu-batches; it measures
the chip's bfloat16 matrix-product rate (8192^3, random operands), prints the share of it and of
the datasheet's dense bf16 peak where the chip is known, times the same step with dwlib's own
attention instead of cuDNN's fused kernel (and the plain model, with --ops plain or both), and
checks the fused kernel's output against float32.

Usage: python benchmarks/train_throughput.py [--steps 8] [--shapes 6,256,4 2,128,2] [--ops fast] [--no-torch]
       python benchmarks/train_throughput.py --smoke      (smallest shape, 2 steps: checks that it runs)
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

# JAX, dwlib and torch are imported inside the functions that use them, on purpose: torch is
# optional (installed for this benchmark only), and --torch-alone times the reference in a
# process that never loads JAX or dwlib (nor dwlib's host-memory setting), which a
# module-level import would defeat.
SHAPES = ((6, 256, 4), (6, 512, 8), (2, 128, 2))
VOCAB, SEQ, BATCH = 1000, 256, 16
GPU_SHAPE, GPU_SEQ = (12, 768, 12), 1024
# Dense bfloat16 tensor-core peaks from the vendor's datasheets (SXM parts), FLOP/s, by a
# substring of jax's device_kind. A lead, beside the rate this script measures.
DATASHEET_BF16 = {"H200": 989.4e12, "H100": 989.4e12, "A100": 312e12}
TORCH_REFERENCE = str(Path(__file__).resolve().parent / "torch_reference.py")  # this project's, beside this file
OPS = ("fast", "plain")


def flops_per_token(vocab, seq, depth, width):
    """dwlib's count (:func:`dwlib.core.sizes.training_flops_per_token`), the same formula as
    torch_reference.flops_per_token's (tests/test_benchmarks.py)."""
    from dwlib.core.sizes import training_flops_per_token

    return training_flops_per_token(depth, width, vocab, seq)


# attention's score product at (6, 256, 4): batch x heads = 64 products of (256 x 64) @ (64 x 256)
BATCHED = (BATCH * 4, SEQ, 64, SEQ)


def matmul_peak(m=4096, k=1024, n=1024, repeats=10, batch=None) -> float:
    """FLOP/s of a jitted float32 (m x k) @ (k x n) product on this machine (best of ``repeats``);
    ``batch`` products of that shape at once when given."""
    import jax
    import jax.numpy as jnp

    lead = () if batch is None else (batch,)
    a = jax.random.normal(jax.random.key(0), lead + (m, k), jnp.float32)
    b = jax.random.normal(jax.random.key(1), lead + (k, n), jnp.float32)
    f = jax.jit(jnp.matmul)
    f(a, b).block_until_ready()
    best = min(_timed(lambda: f(a, b).block_until_ready()) for _ in range(repeats))
    return 2 * (batch or 1) * m * k * n / best


def torch_matmul_peak(m=4096, k=1024, n=1024, repeats=10, batch=None) -> float:
    """FLOP/s of the same float32 product in PyTorch (``torch.matmul``, its own BLAS), best of ``repeats``."""
    import torch

    lead = () if batch is None else (batch,)
    a, b = torch.randn(*lead, m, k), torch.randn(*lead, k, n)
    torch.matmul(a, b)
    return 2 * (batch or 1) * m * k * n / min(_timed(lambda: torch.matmul(a, b)) for _ in range(repeats))


def cpu_description() -> str:
    """The CPU's model name and its widest x86 vector extension, from /proc/cpuinfo (Linux): the
    ratio to PyTorch depends on them, since XLA and PyTorch's BLAS do not use the same instructions."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "CPU unknown"
    fields = {}
    for line in info.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    isa = next((name for name, flag in (("AVX-512", "avx512f"), ("AVX2", "avx2"), ("AVX", "avx")) if flag in flags),
               "no AVX")
    return (f"CPU {fields.get('model name', 'unknown')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}), {isa}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def dwlib_step(depth, width, heads, seq=SEQ, batch_size=BATCH, dtype="float32", ops="fast"):
    """A function that runs one training step of dwlib's compiled step (AdamW; a group of one,
    one step per dispatch, as :func:`dwlib.train.loop.train` splits the batch) and waits for it."""
    from dwlib.train.config import TrainConfig
    from dwlib.train.multi import group_steps, init_group
    from dwlib.train.step import make_group_steps

    cfg = TrainConfig.from_dict(dict(depth=depth, width=width, heads=heads, vocab_size=VOCAB, seq_len=seq,
                                     batch_size=batch_size, steps=1000, lr=1e-3, dtype=dtype, ops=ops))
    make_group_steps.cache_clear()  # the attention implementation is chosen at trace time
    steps = group_steps([cfg])
    init = init_group([cfg])
    state = [init["params"], init["opt_state"]]
    rng = np.random.default_rng(0)
    batch = steps.batches(rng.integers(0, VOCAB, (1, 1, batch_size, seq + 1)).astype(np.int32))
    peaks = steps.by_run(np.asarray([cfg.optim.lr], np.float32))

    def step():
        state[0], state[1], loss = steps.train_chunk(state[0], state[1], batch, peaks)
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


def time_dwlib(depth, width, heads, steps, warmup=2, seq=SEQ, batch_size=BATCH, dtype="float32", ops="fast") -> tuple:
    """Seconds per training step of dwlib's jitted step (AdamW), best of ``steps``, and the
    seconds of the first step (compilation included)."""
    step = dwlib_step(depth, width, heads, seq, batch_size, dtype, ops)
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
    """||fast - exact|| / ||exact|| for causal attention on random bfloat16 inputs: the fast path's
    attention (cuDNN's fused kernel on a GPU) against the core definition in float32 on the same
    (rounded) inputs."""
    import jax
    import jax.numpy as jnp

    from dwlib.core.attention import attend
    from dwlib.train.fast_attention import attention

    q, k, v = (jax.random.normal(jax.random.key(i), (batch, seq, heads, head_size), jnp.bfloat16) for i in range(3))
    fused = attention(q, k, v, causal=True).astype(jnp.float32)
    exact = attend(*(x.astype(jnp.float32) for x in (q, k, v)), causal=True)
    return float(jnp.linalg.norm(fused - exact) / jnp.linalg.norm(exact))


def gpu_main(a) -> int:
    """The GPU target: (12, 768, 12), sequence 1024, bfloat16, as a share of the bf16 peak."""
    import jax

    from dwlib.train.fast_attention import fused_available

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
    print(f"{'ops':>5} {'attention':>9} {'batch':>5} | {'ms':>7} {'tok/s':>9} {'TFLOP/s':>8} {'%meas':>6} "
          f"{'%sheet':>6}  first step")
    before = os.environ.get("DWLIB_ATTENTION")
    # (ops, DWLIB_ATTENTION, label): the fast path with cuDNN's kernel and with dwlib's own
    # attention, and the plain model (the core's attention, JAX's derivative).
    variants = [("fast", "auto", "cudnn")] if fused else []
    variants += [("fast", "dwlib", "dwlib"), ("plain", "dwlib", "plain")]
    for ops, impl, label in (v for v in variants if v[0] in a.ops):
        os.environ["DWLIB_ATTENTION"] = impl
        for batch in a.gpu_batches:
            try:
                t, first = time_dwlib(depth, width, heads, a.steps, seq=GPU_SEQ, batch_size=batch, dtype="bfloat16",
                                      ops=ops)
            except Exception as err:  # out of memory at a large batch: say so and go on
                print(f"{ops:>5} {label:>9} {batch:>5} | failed: {str(err).splitlines()[0][:100]}", flush=True)
                continue
            rate = fpt * batch * GPU_SEQ / t
            row = {"ops": ops, "attention": label, "batch": batch, "step_ms": round(t * 1e3, 2),
                   "tokens_per_s": round(batch * GPU_SEQ / t), "tflops": round(rate / 1e12, 1),
                   "share_of_measured": round(rate / peak, 3),
                   "share_of_datasheet": round(rate / sheet, 3) if sheet else None, "first_step_s": round(first, 1)}
            print(json.dumps(row) if a.json else
                  f"{ops:>5} {label:>9} {batch:>5} | {t * 1e3:>7.1f} {batch * GPU_SEQ / t:>9.0f} {rate / 1e12:>8.1f} "
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
    p.add_argument("--ops", choices=("fast", "plain", "both"), default="both",
                   help="dwlib's implementation: the fast ops (the headline), the plain model, or both (default)")
    p.add_argument("--smoke", action="store_true",
                   help=f"a check that the benchmark runs: shape {','.join(map(str, SHAPES[-1]))}, 2 steps, "
                        f"GPU batch 16 (overrides --shapes, --steps, --gpu-batches)")
    a = p.parse_args(argv)
    a.ops = OPS if a.ops == "both" else (a.ops,)
    if a.smoke:
        a.shapes, a.steps, a.gpu_batches = [",".join(map(str, SHAPES[-1]))], 2, [16]
    if a.torch_alone:
        return torch_alone_main(a)

    from dwlib.train.process import configure_host_memory, prepare_process

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
    print(cpu_description())
    batch, m, k, n = BATCHED
    batched = f"{batch} x {m}x{k}x{n} f32 (attention's scores at (6, 256, 4))"
    print(f"jax batched product {matmul_peak(m, k, n, batch=batch) / 1e9:.1f} GFLOP/s: {batched}")
    if ref is not None:
        import torch

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; matmul peak "
              f"{torch_matmul_peak() / 1e9:.1f} GFLOP/s (the same product), batched product "
              f"{torch_matmul_peak(m, k, n, batch=batch) / 1e9:.1f} GFLOP/s; reference {a.torch_reference}")
    print(f"vocab {VOCAB}, seq {SEQ}, batch {BATCH}, float32; FLOPs/token = 6(12 L d^2 + V d) + 12 L T d; "
          f"dwlib/torch > 1: dwlib faster (best steps; paired: median of step-by-step ratios)")
    header = f"{'L':>2} {'d':>4} {'H':>2}" + "".join(
        f" | {ops + ' ms':>10} {'tok/s':>7} {'GFLOP/s':>7} {'%peak':>6}" for ops in a.ops)
    if ref is not None:
        header += f" | {'torch ms':>8} {'tok/s':>7}" + "".join(f" | {ops + '/torch':>10} {'paired':>6}" for ops in a.ops)
    if not a.json:
        print(header)
    for spec in a.shapes:
        depth, width, heads = (int(x) for x in spec.split(","))
        fpt = flops_per_token(VOCAB, SEQ, depth, width)
        fns = {ops: dwlib_step(depth, width, heads, ops=ops) for ops in a.ops}
        if ref is not None:
            fns["torch"] = torch_step(ref, depth, width, heads)
        times = time_steps(fns, a.steps)  # they alternate, step by step
        row, line = {"depth": depth, "width": width, "heads": heads}, f"{depth:>2} {width:>4} {heads:>2}"
        for ops in a.ops:
            t = min(times[ops])
            row.update({f"{ops}_step_ms": round(t * 1e3, 1), f"{ops}_tokens_per_s": round(tokens / t),
                        f"{ops}_gflops": round(fpt * tokens / t / 1e9, 2),
                        f"{ops}_share_of_peak": round(fpt * tokens / t / peak, 3)})
            line += f" | {t * 1e3:>10.1f} {tokens / t:>7.0f} {fpt * tokens / t / 1e9:>7.1f} {100 * fpt * tokens / t / peak:>5.1f}%"
        if ref is not None:
            t_torch = min(times["torch"])
            row.update(torch_step_ms=round(t_torch * 1e3, 1), torch_tokens_per_s=round(tokens / t_torch),
                       torch_gflops=round(fpt * tokens / t_torch / 1e9, 2))
            line += f" | {t_torch * 1e3:>8.1f} {tokens / t_torch:>7.0f}"
            for ops in a.ops:
                ratio = t_torch / min(times[ops])
                paired = float(np.median(np.array(times["torch"]) / np.array(times[ops])))
                row.update({f"{ops}_ratio": round(ratio, 3), f"{ops}_paired_ratio": round(paired, 3)})
                line += f" | {ratio:>9.2f}x {paired:>5.2f}x"
        print(json.dumps(row) if a.json else line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
