#!/usr/bin/env python3
"""dwlib's training step against the compiled PyTorch reference on one GPU, in one process.

The shape is the GPU benchmark's: (L, d_x, H) = (12, 768, 12), sequence 1024, vocabulary 1000,
bfloat16 compute with float32 parameters, AdamW. The reference is ``torch_reference.py``'s model
as a PyTorch user would run it fast: bfloat16 autocast, fused scaled-dot-product attention,
fused AdamW, the model and its loss under ``torch.compile``. dwlib's step is the one the trainer
compiles (the fast path, cuDNN's fused attention where it is available).

For each batch the two steps alternate, one by one (a, b, b, a, ...), after warm-up; each step
is timed on the host clock after the device finished it. It prints, per batch: each side's best
and median step, the median of the step-by-step ratio (reference / dwlib: above 1, dwlib is
faster), the achieved TFLOP/s with the reference's FLOP count (6 x parameters + the full
attention products) and with the attention products halved (the causal half), and their share of
the datasheet's dense bf16 peak and of the bf16 product rate this script measures.

With ``--profile-batch B`` it also profiles B's steps of each side (JAX's profiler, PyTorch's)
and prints where the device's time goes: matrix products, attention, the other kernels (norms,
activations, the optimiser, the loss), copies, and the share of the step with no kernel running.
``--chunk K`` also times dwlib's step with K steps per dispatch (a ``scan``, as the trainer runs
them), at the profiled batch (every batch without ``--profile-batch``). ``--out DIR`` writes the rows as JSON lines and the profiles' summaries there.

Usage (on a GPU): python benchmarks/gpu_compare.py [--batches 32 64 96 128] [--profile-batch 64] [--out DIR]
       python benchmarks/gpu_compare.py --smoke      (CPU: a tiny shape, 2 rounds, no compile: checks that it runs)
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # PyTorch shares the device

import numpy as np  # noqa: E402

from common import fail  # noqa: E402

# JAX, dwlib and torch are imported inside the functions (after the allocator setting above).
VOCAB = 1000
SHAPE, SEQ = (12, 768, 12), 1024
SMOKE_SHAPE, SMOKE_SEQ = (2, 64, 2), 32
DATASHEET_BF16 = {"H200": 989.4e12, "H100": 989.4e12, "A100": 312e12}
# Kernel-name fragments by what the kernel does (lower case); the first match wins.
KINDS = (
    ("attention", ("sdpa", "fmha", "flash", "attention", "cudnn")),
    ("matmul", ("gemm", "xmma", "nvjet", "cutlass", "matmul", "cublas", "dot", "mm_")),
    ("copy", ("memcpy", "memset", "copy")),
)


def flop_counts(depth, width, seq, vocab=VOCAB):
    """Training FLOPs per token: the reference's count (attention products in full) and the
    same with the attention products halved (a causal mask needs only half of them)."""
    params = 6 * (12 * depth * width * width + vocab * width)
    return params + 12 * depth * seq * width, params + 6 * depth * seq * width


def kind_of(name: str) -> str:
    low = name.lower()
    return next((kind for kind, keys in KINDS if any(k in low for k in keys)), "other")


def summarise(kernels: dict, steps: int, step_s: float) -> dict:
    """Kernel time per step by kind, the busiest kernels, and the step's share with no kernel."""
    ops = {k[3:]: v / steps for k, v in kernels.items() if k.startswith("op:")}
    per_step = {k: v / steps for k, v in kernels.items() if not k.startswith("op:")}
    by_kind: dict = {}
    for name, t in per_step.items():
        by_kind[kind_of(name)] = by_kind.get(kind_of(name), 0.0) + t
    busy = sum(per_step.values())
    top = sorted(per_step.items(), key=lambda kv: -kv[1])[:15]
    return {"step_ms": round(step_s * 1e3, 2), "kernel_ms": round(busy * 1e3, 2),
            "idle_share": round(max(0.0, 1 - busy / step_s), 3),
            "by_kind_ms": {k: round(v * 1e3, 2) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])},
            "top_kernels_ms": [[n[:120], round(t * 1e3, 3)] for n, t in top],
            "top_xla_ops_ms": [[n[:120], round(t * 1e3, 3)] for n, t in sorted(ops.items(), key=lambda kv: -kv[1])[:25]]}


def jax_kernels(trace_dir: Path) -> dict:
    """Seconds per kernel name summed over the GPU's stream lines of JAX's profile (its XPlane
    file), and seconds per XLA operation from the profile's "XLA Ops" line (key "op:" + name)."""
    from jax.profiler import ProfileData

    files = sorted(trace_dir.rglob("*.xplane.pb"), key=os.path.getmtime)
    out: dict = {}
    if not files:
        return out
    for plane in ProfileData.from_file(str(files[-1])).planes:
        if "/device:GPU" not in plane.name:
            continue
        for line in plane.lines:
            prefix = "" if "stream" in line.name.lower() else "op:" if line.name == "XLA Ops" else None
            if prefix is None:
                continue
            for e in line.events:
                out[prefix + e.name] = out.get(prefix + e.name, 0.0) + e.duration_ns * 1e-9
    return out


def torch_kernels(prof) -> dict:
    out = {}
    for evt in prof.key_averages():
        t = getattr(evt, "self_device_time_total", None)
        if t is None:
            t = getattr(evt, "self_cuda_time_total", 0)
        if t and getattr(evt, "device_type", None) is not None and "CUDA" in str(evt.device_type):
            out[evt.key] = out.get(evt.key, 0.0) + t * 1e-6
    return out


def product_rates(n: int) -> dict:
    """TFLOP/s of an n^3 bf16 product on random operands, JAX and PyTorch, best of ten."""
    import jax
    import jax.numpy as jnp
    import torch

    a, b = (jax.random.normal(jax.random.key(i), (n, n), jnp.bfloat16) for i in range(2))
    f = jax.jit(jnp.matmul)
    for _ in range(3):
        f(a, b).block_until_ready()
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        f(a, b).block_until_ready()
        ts.append(time.perf_counter() - t0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = (torch.randn(n, n, device=dev, dtype=torch.bfloat16) for _ in range(2))
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    for _ in range(3):
        x @ y
    sync()
    tt = []
    for _ in range(10):
        t0 = time.perf_counter()
        x @ y
        sync()
        tt.append(time.perf_counter() - t0)
    return {"jax_tflops": 2 * n ** 3 / min(ts) / 1e12, "torch_tflops": 2 * n ** 3 / min(tt) / 1e12}


class DwlibStep:
    """dwlib's compiled step (a group of one) at one batch: ``chunk`` steps per call."""

    def __init__(self, shape, seq, batch, chunk=1, dtype="bfloat16"):
        from dwlib.train.config import TrainConfig
        from dwlib.train.multi import group_steps, init_group

        depth, width, heads = shape
        cfg = TrainConfig.from_dict(dict(depth=depth, width=width, heads=heads, vocab_size=VOCAB, seq_len=seq,
                                         batch_size=batch, steps=1000, lr=1e-3, dtype=dtype, ops="fast"))
        self.steps = group_steps([cfg])
        init = init_group([cfg])
        self.state = [init["params"], init["opt_state"]]
        rng = np.random.default_rng(0)
        self.batch = self.steps.batches(rng.integers(0, VOCAB, (chunk, 1, batch, seq + 1)).astype(np.int32))
        self.peaks = self.steps.by_run(np.asarray([1e-3], np.float32))
        self.chunk = chunk
        self.params = sum(int(np.prod(x.shape)) for x in __import__("jax").tree.leaves(init["params"]))

    def __call__(self):
        self.state[0], self.state[1], loss = self.steps.train_chunk(self.state[0], self.state[1], self.batch, self.peaks)
        loss.block_until_ready()


class TorchStep:
    """The reference's model and loss under torch.compile, bf16 autocast, fused AdamW."""

    def __init__(self, ref, shape, seq, batch, compile=True):
        import torch
        import torch.nn.functional as F

        depth, width, heads = shape
        self.cuda = torch.cuda.is_available()
        dev = "cuda" if self.cuda else "cpu"
        torch.manual_seed(0)
        self.model = ref.LM(VOCAB, seq, depth, width, heads).to(dev)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.1, fused=self.cuda)
        data = torch.randint(0, VOCAB, (batch, seq + 1), device=dev)
        self.x, self.y = data[:, :-1].contiguous(), data[:, 1:].contiguous()
        model = self.model

        def loss(x, y):
            with torch.autocast(dev, dtype=torch.bfloat16):
                logits = model(x)
            return F.cross_entropy(logits.float().view(-1, VOCAB), y.view(-1))

        self.loss = torch.compile(loss) if compile else loss
        self.params = sum(p.numel() for p in self.model.parameters())
        self.torch = torch

    def __call__(self):
        loss = self.loss(self.x, self.y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.cuda:
            self.torch.cuda.synchronize()


def _layer_norm_keeping_xhat():
    """The fast LayerNorm as it was before it kept x instead of the float32 x^ (for --ablate)."""
    import jax
    import jax.numpy as jnp

    from dwlib.train import fast

    @jax.custom_vjp
    def layer_norm(x, scale, bias):
        return fwd(x, scale, bias)[0]

    def fwd(x, scale, bias, eps=1e-5):
        x32 = x.astype(jnp.float32)
        xc = x32 - jnp.mean(x32, axis=-1, keepdims=True)
        rstd = jax.lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + eps)
        xhat = xc * rstd
        return (xhat * scale + bias).astype(x.dtype), (rstd, scale, xhat)

    def bwd(res, dy):  # the same formula as fast's, from the kept x^
        rstd, scale, xhat = res
        dtype, dy = dy.dtype, dy.astype(jnp.float32)
        g = dy * scale
        dx = rstd * (g - jnp.mean(g, axis=-1, keepdims=True) - xhat * jnp.mean(g * xhat, axis=-1, keepdims=True))
        axes = tuple(range(dy.ndim - 1))
        return dx.astype(dtype), jnp.sum(dy * xhat, axis=axes), jnp.sum(dy, axis=axes)

    layer_norm.defvjp(fwd, bwd)
    return lambda x, scale, bias, eps=1e-5: layer_norm(x, scale, bias)


def _gelu_erf32():
    """A candidate: the same GELU and gradient, its forward pass written as x Phi(x) with erf in
    float32 (the plain one calls erfc on the input's dtype)."""
    import jax
    import jax.numpy as jnp

    from dwlib.train import fast

    @jax.custom_vjp
    def gelu(x):
        x32 = x.astype(jnp.float32)
        return (x32 * (0.5 + 0.5 * jax.lax.erf(x32 * 0.7071067811865476))).astype(x.dtype)

    gelu.defvjp(lambda x: (gelu(x), x), fast._gelu_bwd)
    return gelu


def ablate(mine, shape, seq, batch, rounds, warmup, which=("gelu_plain", "layer_norm_keeping_xhat")) -> dict:
    """dwlib's step against itself with one fast operation changed (as before: JAX's derivative
    of GELU, LayerNorm keeping x^; or a candidate: GELU's forward pass with erf in float32),
    alternating: median ms of each and the median paired ratio."""
    from dwlib.train import fast
    from dwlib.train.model import PLAIN
    from dwlib.train.step import make_group_steps

    current, out = fast.OPS, {}
    variants = {"gelu_plain": lambda: dataclasses.replace(current, gelu=PLAIN.gelu),
                "layer_norm_keeping_xhat": lambda: dataclasses.replace(current, layer_norm=_layer_norm_keeping_xhat()),
                "gelu_erf32": lambda: dataclasses.replace(current, gelu=_gelu_erf32())}
    for name, ops in ((n, variants[n]()) for n in which):
        fast.OPS = ops
        make_group_steps.cache_clear()
        try:
            other = DwlibStep(shape, seq, batch)
            other()
            t = alternate({"now": mine, "before": other}, rounds, warmup)
            out[name] = {"now_ms": round(statistics.median(t["now"]) * 1e3, 2),
                         "before_ms": round(statistics.median(t["before"]) * 1e3, 2),
                         "before_over_now": round(statistics.median([b / n for n, b in zip(t["now"], t["before"])]), 3)}
        except Exception as err:
            out[name] = {"failed": str(err).splitlines()[0][:200]}
        finally:
            fast.OPS = current
            make_group_steps.cache_clear()
            other = None
            gc.collect()
    return out


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def alternate(sides: dict, rounds: int, warmup: int) -> dict:
    names = list(sides)
    for _ in range(warmup):
        for n in names:
            sides[n]()
    times = {n: [] for n in names}
    for i in range(rounds):
        for n in (names if i % 2 == 0 else names[::-1]):
            times[n].append(timed(sides[n]))
    return times


def profile_jax(step, steps: int, where: Path, step_s: float) -> dict:
    import jax

    with jax.profiler.trace(str(where)):
        for _ in range(steps):
            step()
    return summarise(jax_kernels(where), steps * step.chunk, step_s)


def profile_torch(step, steps: int, step_s: float) -> dict:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
    return summarise(torch_kernels(prof), steps, step_s)


def load_reference():
    import importlib.util

    path = Path(__file__).resolve().parent / "torch_reference.py"
    spec = importlib.util.spec_from_file_location("torch_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", nargs="*", type=int, default=[32, 64, 96, 128])
    p.add_argument("--rounds", type=int, default=20, help="timed steps of each side per batch")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps of each side after the first")
    p.add_argument("--profile-batch", type=int, default=None)
    p.add_argument("--ablate", nargs="?", const="gelu_plain,layer_norm_keeping_xhat", default=None,
                   help="at the profiled batch, also time dwlib's step with each fast operation made as before "
                        "(or the comma-separated variants named: gelu_plain, layer_norm_keeping_xhat, gelu_erf32)")
    p.add_argument("--no-torch", action="store_true", help="dwlib's step only")
    p.add_argument("--chunk", type=int, default=0, help="also time dwlib with this many steps per dispatch")
    p.add_argument("--out", default=None, help="folder for the JSON lines and profile summaries")
    p.add_argument("--smoke", action="store_true", help="CPU check: a tiny shape, no torch.compile")
    a = p.parse_args(argv)
    if min(a.batches, default=0) < 1 or a.rounds < 1 or a.warmup < 0 or a.chunk < 0:
        fail("batches and rounds must be positive, warm-up and chunk not negative")
    import jax

    shape, seq = (SMOKE_SHAPE, SMOKE_SEQ) if a.smoke else (SHAPE, SEQ)
    gpu = jax.devices()[0].platform == "gpu"
    if not gpu and not a.smoke:
        fail(f"JAX sees no GPU ({jax.devices()[0].platform}); use --smoke on a CPU")
    try:
        import torch
    except ImportError:
        fail("torch is not importable (on a CPU: pip install torch==2.13.0)")
    if gpu and not torch.cuda.is_available():
        fail("PyTorch sees no GPU")
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    kind = jax.devices()[0].device_kind
    sheet = next((v for k, v in DATASHEET_BF16.items() if k in kind), None)
    rates = product_rates(256 if a.smoke else 8192)
    full, causal = flop_counts(*shape[:2], seq)
    ref = load_reference()
    head = {"device": kind, "jax": jax.__version__, "torch": torch.__version__, "shape": shape, "seq": seq,
            "vocab": VOCAB, "datasheet_tflops": sheet and sheet / 1e12, **{k: round(v, 1) for k, v in rates.items()},
            "flops_per_token": full, "flops_per_token_causal": causal,
            "xla_flags": os.environ.get("XLA_FLAGS", "")}
    print(json.dumps(head), flush=True)
    rows = []
    log = open(out / "gpu_compare.jsonl", "w") if out else None
    if log:
        log.write(json.dumps(head) + "\n")
    for batch in a.batches:
        row = {"batch": batch}
        rounds = 2 if a.smoke else a.rounds
        try:
            t0 = time.perf_counter()
            mine = DwlibStep(shape, seq, batch)
            mine()
            row["dwlib_first_s"] = round(time.perf_counter() - t0, 1)
            if a.no_torch:
                theirs = None
                times = alternate({"dwlib": mine}, rounds, a.warmup)
            else:
                t0 = time.perf_counter()
                theirs = TorchStep(ref, shape, seq, batch, compile=not a.smoke)
                theirs()
                row["torch_first_s"] = round(time.perf_counter() - t0, 1)
                row["params"] = {"dwlib": mine.params, "torch": theirs.params}
                times = alternate({"dwlib": mine, "torch": theirs}, rounds, a.warmup)
        except Exception as err:  # both do not fit at once: each alone, the reference first (it frees its memory)
            row["paired_failed"] = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
            mine = theirs = None
            gc.collect()
            times = {}
            try:
                if gpu:
                    torch.cuda.empty_cache()
                theirs = TorchStep(ref, shape, seq, batch, compile=not a.smoke)
                times["torch"] = alternate({"torch": theirs}, rounds, a.warmup + 1)["torch"]
                theirs = None
                gc.collect()
                if gpu:
                    torch.cuda.empty_cache()
                mine = DwlibStep(shape, seq, batch)
                times["dwlib"] = alternate({"dwlib": mine}, rounds, a.warmup + 1)["dwlib"]
                row["alone"] = True
            except Exception as err2:
                row["failed"] = str(err2).splitlines()[0][:200] if str(err2) else type(err2).__name__
                print(json.dumps(row), flush=True)
                rows.append(row)
                log and (log.write(json.dumps(row) + "\n"), log.flush())
                mine = theirs = None
                continue
        tokens = batch * seq
        for side in (x for x in ("dwlib", "torch") if x in times):
            best, med = min(times[side]), statistics.median(times[side])
            row[side] = {"best_ms": round(best * 1e3, 2), "median_ms": round(med * 1e3, 2),
                         "tflops": round(full * tokens / med / 1e12, 1),
                         "tflops_causal": round(causal * tokens / med / 1e12, 1),
                         "share_datasheet": sheet and round(full * tokens / med / sheet, 3),
                         "share_datasheet_causal": sheet and round(causal * tokens / med / sheet, 3),
                         "share_measured_jax_product": round(full * tokens / med / (rates["jax_tflops"] * 1e12), 3)}
        if "torch" not in times:
            pass
        elif row.get("alone"):  # not paired: the ratio of the medians
            row["ratio_torch_over_dwlib_median"] = round(statistics.median(times["torch"]) / statistics.median(times["dwlib"]), 3)
        else:
            ratios = [t / d for d, t in zip(times["dwlib"], times["torch"])]
            row["ratio_torch_over_dwlib_median"] = round(statistics.median(ratios), 3)
            row["ratio_range"] = [round(min(ratios), 3), round(max(ratios), 3)]
        if gpu:
            row["torch_max_alloc_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
            stats = jax.devices()[0].memory_stats() or {}
            row["jax_peak_gb"] = round(stats.get("peak_bytes_in_use", 0) / 2**30, 1)
        if a.profile_batch == batch:
            where = Path("/tmp") / f"dwlib-jax-trace-{batch}"
            row["profile_dwlib"] = profile_jax(mine, 3, where, row["dwlib"]["median_ms"] / 1e3)
            if gpu and theirs is not None:
                row["profile_torch"] = profile_torch(theirs, 3, row["torch"]["median_ms"] / 1e3)
            if a.ablate and mine is not None:
                theirs = None
                row["ablation"] = ablate(mine, shape, seq, batch, rounds, a.warmup, tuple(a.ablate.split(",")))
        if a.chunk and a.profile_batch in (None, batch):
            try:
                many = DwlibStep(shape, seq, batch, chunk=a.chunk)
                many()
                t = alternate({"many": many}, 2 if a.smoke else 5, 1)["many"]
                row["dwlib_chunk"] = {"chunk": a.chunk, "per_step_median_ms": round(statistics.median(t) / a.chunk * 1e3, 2)}
                many = None
            except Exception as err:
                row["dwlib_chunk"] = {"failed": str(err).splitlines()[0][:200]}
        print(json.dumps(row), flush=True)
        rows.append(row)
        log and (log.write(json.dumps(row) + "\n"), log.flush())
        mine = theirs = None
        if gpu:
            torch.cuda.empty_cache()
    print(f"\n{kind}: (L, d, H) = {shape}, seq {seq}, vocab {VOCAB}, bf16; datasheet {sheet and sheet / 1e12} TFLOP/s; "
          f"measured 8192^3 product: jax {rates['jax_tflops']:.0f}, torch {rates['torch_tflops']:.0f}")
    print(f"{'batch':>5} | {'dwlib ms':>9} {'torch ms':>9} {'torch/dwlib':>11} | {'dwlib %sheet':>12} {'(causal)':>8} | "
          f"{'torch %sheet':>12} {'(causal)':>8}")
    for r in sorted(rows, key=lambda r: r["batch"]):
        if "failed" in r or "torch" not in r:
            print(f"{r['batch']:>5} | " + (f"failed: {r['failed'][:90]}" if "failed" in r else
                                           f"dwlib {r['dwlib']['median_ms']:.1f} ms {r.get('ablation', '')}"))
            continue
        d, t = r["dwlib"], r["torch"]
        pct = (lambda x: f"{100 * x:.1f}%" if x is not None else "-")
        print(f"{r['batch']:>5} | {d['median_ms']:>9.1f} {t['median_ms']:>9.1f} {r['ratio_torch_over_dwlib_median']:>11.3f} | "
              f"{pct(d['share_datasheet']):>12} {pct(d['share_datasheet_causal']):>8} | "
              f"{pct(t['share_datasheet']):>12} {pct(t['share_datasheet_causal']):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
