"""Multi-head self-attention, the one computation shared by every model in dwlib.

Both the analysed network of eq. (3) and the full Transformer layer of eqs. (1)-(2), and the
trained decoder, project each position x^j into H heads of size d_a = d_x / H and combine
query-key scores with values. They differ only in how the scores are normalised:

- ``normalize="softmax"``: eq. (1), SM_j{ <W^Q x^i, W^K x^j> / sqrt(d_a) };
- ``normalize=None``:      eq. (3), the raw bilinear score <W^Q x^i, W^K x^j> (no softmax, no scale).

Arrays are laid out (..., N, H, d_a) (positions, heads, head size: ``layout="NHD"``, the
default) or (..., H, N, d_a) (``layout="HND"``). The computation itself is written head-major,
where every product is a plain batched matrix product over (..., H); the trained decoder
produces its q, k, v in that layout directly, which saves XLA a transposed copy of each
(measured on 2 CPU cores: causal attention forward and backward at B = 16, N = 256, H = 4,
d_a = 64 in 22.4 ms against 25.4 ms for the position-major layout; at H = 8, 65 against 83 ms).

The softmax case is written out as two batched matrix products around a masked softmax, with
a hand-written gradient (:func:`_softmax_attention`): on CPU this measured faster than
``jax.nn.dot_product_attention`` and than letting JAX differentiate the same forward pass
(see benchmarks/train_throughput.py). On an NVIDIA GPU, in bfloat16 or float16, the same
function is computed by cuDNN's fused (flash) attention through ``jax.nn.dot_product_attention``
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


def attend(q, k, v, *, normalize: str | None = "softmax", causal: bool = False, layout: str = "NHD"):
    """Combine values by query-key scores, per head.

    Args:
      q, k, v: arrays of shape (..., N, H, d_a) (``layout="NHD"``) or (..., H, N, d_a) ("HND").
      normalize: "softmax" for eq. (1) (scaled by 1/sqrt(d_a)); None for eq. (3).
      causal: position i attends only to positions j <= i (decoder-only models).

    Returns:
      the input layout: for each position i and head h, sum_j score(i, j, h) v^{j, h}.
    """
    if layout not in ("NHD", "HND"):
        raise ValueError(f"layout must be 'NHD' or 'HND', got {layout!r}")
    if normalize == "softmax" and fused_available(q.dtype, q.shape[-1]):
        return _fused_attention(q, k, v, causal, layout)
    if layout == "NHD":
        return _other_layout(attend(*_other_layout(q, k, v), normalize=normalize, causal=causal, layout="HND"))
    if normalize == "softmax":
        n = q.shape[-2]
        blocks = _causal_blocks(n) if causal else 1
        if blocks > 1:
            # Query block i sees only key blocks 0..i: computing each block of queries apart
            # skips the score blocks above the diagonal, which the causal mask would discard.
            b = n // blocks
            return jnp.concatenate([
                _softmax_attention(q[..., i * b:(i + 1) * b, :], k[..., :(i + 1) * b, :],
                                   v[..., :(i + 1) * b, :], i * b)
                for i in range(blocks)], axis=-2)
        return _softmax_attention(q, k, v, 0 if causal else None)
    if normalize is not None:
        raise ValueError(f"normalize must be 'softmax' or None, got {normalize!r}")
    scores = jnp.einsum("...hid,...hjd->...hij", q, k)
    if causal:
        n = q.shape[-2]
        scores = jnp.where(jnp.tril(jnp.ones((n, n), dtype=bool)), scores, 0)
    return jnp.einsum("...hij,...hjd->...hid", scores, v)


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
    compiled with (``dwlib.train.loop.make_steps`` caches steps per process)."""
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
    """The layout :func:`attend` computes in without a transposed copy: "NHD" for the fused
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


def weights(q, k, *, causal: bool = False, layout: str = "NHD"):
    """The softmax attention weights P (..., H, N, N) of eq. (1) (float32): row i is
    SM_j{<q^i, k^j> / sqrt(d_a)}, over j <= i when ``causal``. q, k laid out as in :func:`attend`."""
    if layout == "NHD":
        q, k = _other_layout(q, k)
    elif layout != "HND":
        raise ValueError(f"layout must be 'NHD' or 'HND', got {layout!r}")
    return _probabilities(q, k, 0 if causal else None)


BLOCK = 64  # causal attention is computed in query blocks of at least this many positions
MAX_BLOCKS = 2  # measured on 2 CPU cores at N = 256: 2 blocks beat 1 and 4


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
    dv = jnp.einsum("...hij,...hid->...hjd", p.astype(do.dtype), do)
    dp = einsum_f32("...hid,...hjd->...hij", do, v)
    delta = jnp.sum(do.astype(jnp.float32) * o.astype(jnp.float32), axis=-1)
    ds = (p * (dp - delta[..., None]) * scale).astype(q.dtype)  # zero where masked, since p is
    dq = jnp.einsum("...hij,...hjd->...hid", ds, k)
    dk = jnp.einsum("...hij,...hid->...hjd", ds, q)
    return dq, dk, dv


_softmax_attention.defvjp(_softmax_attention_fwd, _softmax_attention_bwd)
