"""The fast path's softmax attention: a hand-written gradient on CPUs, cuDNN's fused kernel on GPUs.

It computes :func:`dwlib.core.attention.attend` (``normalize="softmax"``), the definition it is
tested against (tests/test_attention.py), in two layouts: (..., N, H, d_a) (``layout="NHD"``,
the core's and cuDNN's) or (..., H, N, d_a) ("HND", head-major, where every product is a plain
batched matrix product over (..., H)). The decoder's fast path produces its q, k, v head-major
directly, which saves XLA a transposed copy of each (measured on 2 CPU cores: causal attention
forward and backward at B = 16, N = 256, H = 4, d_a = 64 in 22.4 ms against 25.4 ms for the
position-major layout; at H = 8, 65 against 83 ms).

On the CPU the softmax case is two batched matrix products around a masked softmax, with a
hand-written gradient (:func:`_softmax_attention`), computed in causal query blocks: this
measured faster than ``jax.nn.dot_product_attention`` and than letting JAX differentiate the
same forward pass (benchmarks/train_throughput.py). On an NVIDIA GPU, in bfloat16 or float16,
it is cuDNN's fused (flash) attention through ``jax.nn.dot_product_attention``
(:func:`fused_available`), which never stores the N x N scores; there the position-major
layout is the one cuDNN takes without a copy (:func:`preferred_layout`).
``DWLIB_ATTENTION=dwlib`` in the environment turns the fused path off.
"""

from __future__ import annotations

import functools
import math
import os

import jax
import jax.numpy as jnp

LAYOUTS = ("NHD", "HND")
BLOCK = 64  # causal attention is computed in query blocks of at least this many positions
MAX_BLOCKS = 2  # measured on 2 CPU cores at N = 256: 2 blocks beat 1 and 4


def attention(q, k, v, *, causal: bool = False, layout: str = "NHD"):
    """Softmax attention, eq. (1), in ``layout``: the fused kernel where available, else
    dwlib's own with its hand-written gradient. The same value as
    ``dwlib.core.attention.attend(q, k, v, causal=causal)`` (in the NHD layout)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'NHD' or 'HND', got {layout!r}")
    if fused_available(q.dtype, q.shape[-1]):
        return _fused_attention(q, k, v, causal, layout)
    if layout == "NHD":
        return _other_layout(attention(*_other_layout(q, k, v), causal=causal, layout="HND"))
    n = q.shape[-2]
    blocks = _causal_blocks(n) if causal else 1
    if blocks == 1:
        return _softmax_attention(q, k, v, 0 if causal else None)
    # Query block i sees only key blocks 0..i: computing each block of queries apart skips the
    # score blocks above the diagonal, which the causal mask would discard.
    b = n // blocks
    return jnp.concatenate([_softmax_attention(q[..., i * b:(i + 1) * b, :], k[..., :(i + 1) * b, :],
                                               v[..., :(i + 1) * b, :], i * b)
                            for i in range(blocks)], axis=-2)


def _other_layout(*xs):
    """(..., N, H, d_a) <-> (..., H, N, d_a): one array, or a tuple of them."""
    out = tuple(jnp.swapaxes(x, -3, -2) for x in xs)
    return out[0] if len(out) == 1 else out


def einsum_f32(spec: str, a, b):
    """``jnp.einsum(spec, a, b)`` accumulated in and returned as float32 (bfloat16 operands
    stay bfloat16 on the matrix units). On the CPU 16-bit operands are converted to float32
    first, which gives the same result: XLA's CPU dot rejects bfloat16 operands with a float32 result
    at some shapes (seen with jax 0.10.2: "Unsupported element type for DotThunk")."""
    if jax.default_backend() == "cpu":
        a, b = (x.astype(jnp.float32) if x.dtype in (jnp.bfloat16, jnp.float16) else x for x in (a, b))
    return jnp.einsum(spec, a, b, preferred_element_type=jnp.float32)


def fused_available(dtype, head_size: int) -> bool:
    """Whether softmax attention runs as cuDNN's fused kernel: an NVIDIA GPU of compute
    capability 8.0 or newer (Ampere on) as JAX's default backend, bfloat16 or float16 operands,
    head size a multiple of 8 up to 128 (cuDNN's limits), and ``DWLIB_ATTENTION`` not set to
    ``dwlib``. Decided when a function is traced: a compiled step keeps the choice it was
    compiled with (``dwlib.train.multi.make_group_steps`` caches steps per process)."""
    if os.environ.get("DWLIB_ATTENTION", "auto") == "dwlib" or jax.default_backend() != "gpu":
        return False
    if jnp.dtype(dtype) not in (jnp.bfloat16, jnp.float16) or head_size % 8 or head_size > 128:
        return False
    capability = getattr(jax.devices()[0], "compute_capability", None)  # CUDA devices only
    try:
        return capability is not None and float(capability) >= 8.0
    except (TypeError, ValueError):
        return False


def preferred_layout(dtype, head_size: int) -> str:
    """The layout :func:`attention` computes in without a transposed copy: "NHD" for the fused
    kernel, "HND" for dwlib's own."""
    return "NHD" if fused_available(dtype, head_size) else "HND"


def _fused_attention(q, k, v, causal, layout):
    """``jax.nn.dot_product_attention`` with cuDNN (scale 1/sqrt(d_a), eq. (1)); it takes
    (batch, N, H, d_a), so leading axes are folded into one batch axis."""
    if layout == "HND":
        q, k, v = _other_layout(q, k, v)
    lead = q.shape[:-3]
    q, k, v = (x.reshape((-1,) + x.shape[-3:]) for x in (q, k, v))
    o = jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation="cudnn")
    o = o.reshape(lead + o.shape[-3:])
    return _other_layout(o) if layout == "HND" else o


def _causal_blocks(n: int) -> int:
    """How many query blocks causal attention over n positions is computed in (1: one piece)."""
    blocks = 1
    while blocks * 2 <= MAX_BLOCKS and n % (blocks * 2) == 0 and n // (blocks * 2) >= BLOCK:
        blocks *= 2
    return blocks


def _probabilities(q, k, offset):
    """Softmax attention weights P (..., H, N_q, N_k) in float32 for head-major q, k; query i
    sees keys j <= i + offset (``offset=None``: every key)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = einsum_f32("...hid,...hjd->...hij", q, k) * scale
    if offset is not None:
        nq, nk = q.shape[-2], k.shape[-2]
        s = jnp.where(jnp.tril(jnp.ones((nq, nk), dtype=bool), k=offset), s, -jnp.inf)
    s = s - jnp.max(s, axis=-1, keepdims=True)
    e = jnp.exp(s)
    return e * (1.0 / jnp.sum(e, axis=-1, keepdims=True))


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _softmax_attention(q, k, v, offset):
    return _softmax_attention_fwd(q, k, v, offset)[0]


def _softmax_attention_fwd(q, k, v, offset):
    p = _probabilities(q, k, offset)
    o = jnp.einsum("...hij,...hjd->...hid", p.astype(v.dtype), v)
    return o, (q, k, v, p, o)


def _softmax_attention_bwd(offset, res, do):
    """dV = P^T dO;  dS = P * (dO V^T - rowsum(dO * O));  dQ = dS K / sqrt(d);  dK = dS^T Q / sqrt(d)."""
    q, k, v, p, o = res
    scale = 1.0 / math.sqrt(q.shape[-1])
    dv = _transposed_product(p.astype(do.dtype), do)
    dp = einsum_f32("...hid,...hjd->...hij", do, v)
    delta = jnp.sum(do.astype(jnp.float32) * o.astype(jnp.float32), axis=-1)
    ds = (p * (dp - delta[..., None]) * scale).astype(q.dtype)  # zero where masked, since p is
    dq = jnp.einsum("...hij,...hjd->...hid", ds, k)
    dk = _transposed_product(ds, q)
    return dq, dk, dv


def _transposed_product(a, b):
    """a^T b over the last two axes (``...ij,...id->...jd``). On the CPU, a^T is first written out
    (an optimization barrier keeps XLA from folding the transpose back into the product): XLA
    sends a batched product whose left operand is contracted over its first matrix axis to a
    slower kernel than the plain form. Measured on 2 CPU cores (Xeon, AVX-512, jax 0.10.2): at
    B = 16, H = 4, N = 256, d_a = 64, 84 GFLOP/s folded against 144 with the copy; causal
    attention forward and backward 22.9 -> 16.7 ms."""
    if jax.default_backend() == "cpu":
        return jnp.einsum("...ji,...id->...jd", jax.lax.optimization_barrier(jnp.swapaxes(a, -1, -2)), b)
    return jnp.einsum("...ij,...id->...jd", a, b)


_softmax_attention.defvjp(_softmax_attention_fwd, _softmax_attention_bwd)
