#!/usr/bin/env python3
"""How much of a CPU training step is matrix products, in dwlib and in the PyTorch reference.

For each shape of ``train_throughput.py`` it times, alternating step by step:

- dwlib's training step (the fast path) and PyTorch's (``torch_reference.py``), as
  ``train_throughput.py`` does;
- the *products floor* of each: the matrix products of the step's linear layers and of its
  unembedding, forward, input gradient and weight gradient, run one after another with nothing
  between them. dwlib's are computed by the fast path's own functions
  (the fast path's dense operation, ``dwlib.train.fast.OPS.dense``, for the ``4 L`` linear layers,
  :func:`dwlib.train.fast.logits` for the tied output), on each CPU device's share of the batch,
  as in the step; PyTorch's are ``F.linear`` and the output product with autograd, on the whole
  batch with its threads, as in the reference.

Biases are left out of both floors (a zero bias, which XLA removes, and ``F.linear`` without
one): PyTorch adds them inside its product, XLA in the elementwise pass after it. Attention's
products, and everything that is not a product (biases, LayerNorm, GELU, softmax, AdamW, the
gradient all-reduce), are left out of both floors. What the floors show is the share of the
ratio between the two steps that the matrix-product libraries decide (XLA's YNNPACK and Eigen
kernels on one side, PyTorch's oneDNN/MKL on the other), and what is left for the rest of the step:

    step = products floor + everything else

Usage: python benchmarks/product_floor.py [--steps 8] [--shapes 6,256,4 6,512,8 2,128,2] [--json]
Prints one row per shape; needs torch (pip install torch==2.13.0, the CPU build).
"""

from __future__ import annotations

import argparse
import json
import sys

# JAX, dwlib and torch are imported inside the functions that use them: main() first runs
# dwlib's process setup (host memory, one XLA device per core), which must come before JAX starts.


def linear_shapes(depth: int, width: int) -> list:
    """(d_in, d_out) of the step's linear layers, block by block: Q/K/V, output projection, MLP in, MLP out."""
    return [(width, 3 * width), (width, width), (width, 4 * width), (4 * width, width)] * depth


def product_flops(depth: int, width: int, vocab: int, tokens: int) -> int:
    """FLOPs of the floor: forward, input gradient and weight gradient of every linear layer and
    of the unembedding (3 products each), 2 FLOPs per multiply-add."""
    return 3 * 2 * tokens * (sum(i * o for i, o in linear_shapes(depth, width)) + vocab * width)


def dwlib_products(depth: int, width: int, vocab: int, seq: int, batch: int, compiled: bool = False):
    """A function running the floor with dwlib's fast-path functions on the step's devices; it
    waits for them. ``compiled=True``: the compiled program's HLO text instead (for the tests)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    from dwlib.train import fast
    from dwlib.train.step import make_mesh

    mesh = make_mesh(1, batch)  # a group of one: its "data" axis splits the batch as the step does
    rows = batch * seq  # the step's tokens; each device takes its share of the rows
    key = iter(jax.random.split(jax.random.key(0), 64 * depth + 8))

    def normal(shape, spec):
        return jax.device_put(jax.random.normal(next(key), shape, jnp.float32), NamedSharding(mesh, spec))

    layers = [(normal((rows, i), P("data")), normal((i, o), P()), normal((rows, o), P("data")))
              for i, o in linear_shapes(depth, width)]
    h, w, g = normal((rows, width), P("data")), normal((vocab, width), P()), normal((rows, vocab), P("data"))

    def per_device(layers, h, w, g):
        outputs, weights = [], []  # the weight gradients stay on their device (the step sums them once, at the end)
        for x, kernel, dy in layers:
            y, vjp = jax.vjp(lambda x, kernel: fast.OPS.dense(x, kernel, jnp.zeros(kernel.shape[1], x.dtype)), x, kernel)
            dx, dk = vjp(dy)
            outputs += [y, dx]  # every output is returned, so that XLA computes every product
            weights.append(dk[None])
        z, vjp = jax.vjp(fast.logits, h, w)
        dh, dw = vjp(g)
        return outputs + [z, dh], weights + [dw[None]]

    specs = (P("data"), P(), P("data"))
    run = jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=([specs] * len(layers), P("data"), P(), P("data")),
                                out_specs=P("data"), check_vma=False))  # kernels replicated, their gradients per device

    if compiled:
        return run.lower(layers, h, w, g).compile().as_text()

    def step():
        jax.block_until_ready(run(layers, h, w, g))

    return step


def torch_products(depth: int, width: int, vocab: int, seq: int, batch: int):
    """A function running the floor as the reference computes it: ``F.linear`` (``nn.Linear``'s
    product, without its bias) and the tied output product, forward and backward with autograd,
    on the whole batch."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    rows = batch * seq
    layers = [(torch.randn(rows, i, requires_grad=True), torch.randn(o, i, requires_grad=True), torch.randn(rows, o))
              for i, o in linear_shapes(depth, width)]
    h, w = torch.randn(rows, width, requires_grad=True), torch.randn(vocab, width, requires_grad=True)
    g = torch.randn(rows, vocab)

    def step():
        for x, kernel, dy in layers:
            F.linear(x, kernel).backward(dy)
        (h @ w.T).backward(g)
        for t in [h, w] + [t for layer in layers for t in layer[:2]]:
            t.grad = None

    return step


def parse_shapes(specs) -> list | None:
    """[(L, d, H), ...] from "L,d,H" strings; None if any is not three positive integers with H dividing d."""
    try:
        shapes = [tuple(int(x) for x in spec.split(",")) for spec in specs]
    except ValueError:
        return None
    ok = all(len(s) == 3 and min(s) >= 1 and s[1] % s[2] == 0 for s in shapes)
    return shapes if ok and shapes else None


def main(argv=None) -> int:
    import train_throughput as tt  # beside this script: its shapes, step builders and timer
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8, help="timed rounds per shape (best of them is reported)")
    p.add_argument("--shapes", nargs="*", default=[",".join(map(str, s)) for s in tt.SHAPES], help="L,d,H ...")
    p.add_argument("--torch-reference", default=tt.TORCH_REFERENCE)
    p.add_argument("--json", action="store_true", help="one JSON line per shape instead of a table")
    a = p.parse_args(argv)
    shapes = parse_shapes(a.shapes)
    if shapes is None or a.steps < 1:
        print(f"--shapes takes L,d,H triples of positive integers with H dividing d, and --steps at least 1; "
              f"got --shapes {' '.join(a.shapes)} --steps {a.steps}", file=sys.stderr)
        return 2
    ref = tt.load_reference(a.torch_reference)
    if ref is None:
        print(f"torch is not importable or {a.torch_reference} is missing", file=sys.stderr)
        return 2

    from dwlib.train.process import prepare_process

    prepare_process()  # host memory, one XLA device per core: as the step is trained
    import jax
    import torch

    if jax.default_backend() != "cpu":
        print(f"this benchmark is for CPUs; JAX's default backend is {jax.default_backend()}", file=sys.stderr)
        return 2
    print(f"jax {jax.__version__}, {jax.device_count()} CPU device(s); torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {tt.cpu_description()}")
    print(f"vocab {tt.VOCAB}, seq {tt.SEQ}, batch {tt.BATCH}, float32; best of {a.steps} alternating rounds; "
          "products: linear layers (without biases) and unembedding, forward and backward")
    if not a.json:
        print(f"{'L':>2} {'d':>4} {'H':>2} | {'GFLOP':>6} | {'dwlib step':>10} {'products':>8} {'GFLOP/s':>7} {'rest':>6}"
              f" | {'torch step':>10} {'products':>8} {'GFLOP/s':>7} {'rest':>6} | {'step':>5} {'products':>8}")
    for depth, width, heads in shapes:
        fns = {"dwlib": tt.dwlib_step(depth, width, heads, ops="fast"),
               "dwlib_products": dwlib_products(depth, width, tt.VOCAB, tt.SEQ, tt.BATCH),
               "torch": tt.torch_step(ref, depth, width, heads),
               "torch_products": torch_products(depth, width, tt.VOCAB, tt.SEQ, tt.BATCH)}
        best = {name: min(times) for name, times in tt.time_steps(fns, a.steps).items()}
        flops = product_flops(depth, width, tt.VOCAB, tt.BATCH * tt.SEQ)
        row = {"depth": depth, "width": width, "heads": heads, "product_gflop": round(flops / 1e9, 2)}
        for side in ("dwlib", "torch"):
            step, products = best[side], best[side + "_products"]
            row.update({f"{side}_step_ms": round(step * 1e3, 1), f"{side}_products_ms": round(products * 1e3, 1),
                        f"{side}_products_gflops": round(flops / products / 1e9, 1),
                        f"{side}_rest_ms": round((step - products) * 1e3, 1)})
        row["step_ratio"] = round(best["torch"] / best["dwlib"], 3)  # > 1: dwlib faster
        row["products_ratio"] = round(best["torch_products"] / best["dwlib_products"], 3)
        if a.json:
            print(json.dumps(row), flush=True)
            continue
        print(f"{depth:>2} {width:>4} {heads:>2} | {flops / 1e9:>6.1f} | "
              + " | ".join(f"{row[s + '_step_ms']:>8.1f}ms {row[s + '_products_ms']:>6.1f}ms "
                           f"{row[s + '_products_gflops']:>7.1f} {row[s + '_rest_ms']:>4.0f}ms" for s in ("dwlib", "torch"))
              + f" | {row['step_ratio']:>4.2f}x {row['products_ratio']:>7.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
