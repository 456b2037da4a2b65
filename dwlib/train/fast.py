"""The fast operations of the decoder (``ModelConfig(ops="fast")``): the same functions, computed faster.

:mod:`dwlib.train.model` is the model, one forward pass whose operations are injected
(:class:`~dwlib.train.model.Ops`). :data:`OPS` replaces three of the plain operations by ones
with hand-written gradients: LayerNorm (one backward pass over x, from x and its two statistics),
GELU (its slope recomputed in the backward pass) and self-attention (queries,
keys and values split into heads in one copy, then :mod:`dwlib.train.fast_attention`: query
blocks and a hand-written gradient on CPUs, cuDNN's fused kernel on GPUs). The output's
cross-entropy differs from the plain one only in taking its product on the states' own dtype
(bfloat16 stays on the matrix units); dense layers are the plain ones.
tests/test_model.py checks every operation against the plain one, and the whole decoder's
loss and gradients, in float32 and bfloat16.

What each operation is worth is measured by ``benchmarks/ops_ablation.py``: the step with all
of :data:`OPS` against the step with one of them made plain, alternating in one process, at
the benchmark's shapes (CPU, float32). An operation keeps a hand-written gradient only where
taking it out costs at least 2% of the step at some shape; the measurements are in
benchmarks/RESULTS.md. Hand-written gradients for the dense layers and the output's
cross-entropy did not (at most 1.7% at any shape, the smallest measured over 80 rounds) and
went; LayerNorm's (3-5%) and attention's (4-8%) stayed. GELU's came back from a GPU profile
(``benchmarks/gpu_compare.py --ablate``, an H100 at (12, 768, 12)): its form above made the step
6% faster there; LayerNorm keeping x instead of the float32 x^, and GELU keeping only x, left
the time unchanged (within 1%) and cut the step's memory by 9 GB at batch 64.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import optax

from dwlib.train.fast_attention import attention, einsum_f32, preferred_layout
from dwlib.train.model import PLAIN, Ops


def self_attention(x, kernel, bias, heads: int):
    """Causal multi-head attention of the queries, keys and values ``dense(x, kernel, bias)``,
    heads concatenated back to (B, N, d): :func:`qkv_heads` straight into the layout attention
    prefers (head-major, or GPU fused attention's), then :func:`~dwlib.train.fast_attention.attention`."""
    B, N, d = x.shape
    layout = preferred_layout(x.dtype, d // heads)
    a = attention(*qkv_heads(x, kernel, bias, heads, layout), causal=True, layout=layout)
    if layout == "HND":
        a = jnp.transpose(a, (0, 2, 1, 3))
    return a.reshape(B, N, d)


@partial(jax.custom_vjp, nondiff_argnums=(3,))
def layer_norm(x, scale, bias, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * scale + bias over the last axis, statistics in float32.

    The gradient is written by hand (one pass over x: dx = r (g - mean(g) - x^ mean(g x^)) with
    g = dy * scale): on CPU it measured faster than JAX's derivative of the forward pass.
    """
    return _layer_norm_fwd(x, scale, bias, eps)[0]


def _layer_norm_fwd(x, scale, bias, eps=1e-5):
    x32 = x.astype(jnp.float32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    xc = x32 - mean
    rstd = jax.lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + eps)
    # kept for the gradient: x in its own dtype and the two statistics, not the float32 x^
    # (which the backward pass recomputes): half the bytes written and read in bfloat16
    return (xc * rstd * scale + bias).astype(x.dtype), (x, mean, rstd, scale)


def _layer_norm_bwd(eps, res, dy):
    x, mean, rstd, scale = res
    xhat = (x.astype(jnp.float32) - mean) * rstd
    dtype, dy = dy.dtype, dy.astype(jnp.float32)
    g = dy * scale
    dx = rstd * (g - jnp.mean(g, axis=-1, keepdims=True) - xhat * jnp.mean(g * xhat, axis=-1, keepdims=True))
    axes = tuple(range(dy.ndim - 1))
    return dx.astype(dtype), jnp.sum(dy * xhat, axis=axes), jnp.sum(dy, axis=axes)


layer_norm.defvjp(_layer_norm_fwd, _layer_norm_bwd)


@jax.custom_vjp
def gelu(x):
    """The exact GELU, x Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2, computed in float32 and
    returned in x's dtype. Its gradient Phi(x) + x phi(x) is recomputed from x in float32 in the
    backward pass, so that the forward pass writes only its output: JAX's derivative of the
    plain GELU keeps intermediate arrays of the hidden layer's size, and the plain GELU's erfc
    on bfloat16 made XLA write its argument out before the GELU itself (an H100 profile at
    (12, 768, 12), batch 64: 11 ms of a 110 ms step; this form: the step 6% faster)."""
    x32 = x.astype(jnp.float32)
    return (x32 * (0.5 + 0.5 * jax.lax.erf(x32 * _SQRT_HALF))).astype(x.dtype)


def _gelu_bwd(x, dy):
    x32 = x.astype(jnp.float32)
    slope = 0.5 * (1 + jax.lax.erf(x32 * _SQRT_HALF)) + x32 * jnp.exp(-0.5 * x32 * x32) * _INV_SQRT_2PI
    return ((dy.astype(jnp.float32) * slope).astype(dy.dtype),)


_SQRT_HALF, _INV_SQRT_2PI = 0.7071067811865476, 0.3989422804014327
gelu.defvjp(lambda x: (gelu(x), x), _gelu_bwd)


def unembed_loss(h, w, targets):
    """Mean next-token cross-entropy of the logits h w^T, for hidden states h (..., d) and output
    matrix w (V, d): the plain model's cross-entropy, but with the product taken on the states'
    own dtype and accumulated in float32 (:func:`logits`), where the plain one converts both
    operands to float32 first. The same function in float32; in bfloat16 the product stays on
    the matrix units. JAX differentiates it."""
    return optax.softmax_cross_entropy_with_integer_labels(logits(h, w), targets).mean()


def logits(h, w):
    """h w^T for hidden states h (..., d) and output matrix w (V, d), accumulated in float32."""
    return einsum_f32("...d,vd->...v", h, w.astype(h.dtype))


def _dense(x, kernel, bias):
    return jnp.einsum("...i,io->...o", x, kernel) + bias


def _dense_bwd(res, dy):
    """The gradients (dx, dkernel, dbias) of :func:`_dense`: the kernel's is formed by transposing
    the smaller operand (the XLA CPU matrix product transposes its left operand)."""
    x, kernel = res
    dx = jnp.einsum("...o,io->...i", dy, kernel)
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    if x.shape[-1] <= dy.shape[-1]:
        dk = jnp.einsum("ti,to->io", x2, dy2)
    else:
        dk = jnp.einsum("to,ti->oi", dy2, x2).T
    return dx, dk, jnp.sum(dy2, axis=0)


@partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def qkv_heads(x, kernel, bias, heads: int, layout: str = "HND"):
    """Queries, keys and values split into heads: ``dense(x, kernel, bias)`` for x (B, N, d) and
    kernel (d, 3d) = [W^Q W^K W^V], returned as one (3, B, H, N, d / H) array (``layout="HND"``,
    head-major) or (3, B, N, H, d / H) ("NHD", the layout of GPU fused attention).

    One transposed copy of the (B, N, 3d) product, instead of a split and a copy of each of q,
    k, v; the gradient stacks dq, dk, dv back into (B, N, 3d) in one pass (no separate
    concatenation) and reuses :func:`dense`'s gradient. Measured on 2 CPU cores, with attention
    in the same layout: a (6, 256, 4) training step about 2.5% faster than splitting q, k, v
    (interleaved runs, 1072 against 1100 ms).
    """
    return _qkv_heads(x, kernel, bias, heads, layout)


_QKV_AXES = {"HND": (2, 0, 3, 1, 4), "NHD": (2, 0, 1, 3, 4)}  # (B, N, 3, H, d_a) -> (3, B, ...)
_QKV_BACK = {k: tuple(sorted(range(5), key=axes.__getitem__)) for k, axes in _QKV_AXES.items()}  # the inverses


def _qkv_heads(x, kernel, bias, heads, layout):
    B, N, d = x.shape
    y = _dense(x, kernel, bias).reshape(B, N, 3, heads, d // heads)
    return jnp.transpose(y, _QKV_AXES[layout])


def _qkv_heads_bwd(heads, layout, res, dqkv):
    x = res[0]
    B, N, d = x.shape
    return _dense_bwd(res, jnp.transpose(dqkv, _QKV_BACK[layout]).reshape(B, N, 3 * d))


qkv_heads.defvjp(lambda x, kernel, bias, heads, layout: (_qkv_heads(x, kernel, bias, heads, layout), (x, kernel)),
                 _qkv_heads_bwd)


OPS = Ops(layer_norm=layer_norm, dense=PLAIN.dense, self_attention=self_attention, gelu=gelu,
          unembed_loss=unembed_loss)
