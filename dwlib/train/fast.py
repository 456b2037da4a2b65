"""The fast operations of the decoder (``ModelConfig(ops="fast")``): the same functions, hand-written gradients.

:mod:`dwlib.train.model` is the model, one forward pass whose operations are injected
(:class:`~dwlib.train.model.Ops`). :data:`OPS` are the operations below, each carrying a
hand-written gradient that measured faster on CPUs than JAX's derivative of the plain
operation, with :mod:`dwlib.train.fast_attention` for attention (query blocks and a hand-written
gradient on CPUs, cuDNN's fused kernel on GPUs). tests/test_model.py checks every operation
against the plain one, and the whole decoder's loss and gradients, in float32 and bfloat16.

What each operation is worth is measured by ``benchmarks/ops_ablation.py``: the step with all
of :data:`OPS` against the step with one of them made plain, at the benchmark's shapes; an
operation is kept where taking it out costs at least 2% of the step at some shape. The paper's
runs (``dwlib.experiments.presets``) were trained with these operations.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp

from dwlib.train.fast_attention import attention, einsum_f32, preferred_layout
from dwlib.train.model import Ops


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
    xhat = xc * rstd
    return (xhat * scale + bias).astype(x.dtype), (xhat, rstd, scale)


def _layer_norm_bwd(eps, res, dy):
    xhat, rstd, scale = res
    dtype, dy = dy.dtype, dy.astype(jnp.float32)
    g = dy * scale
    dx = rstd * (g - jnp.mean(g, axis=-1, keepdims=True) - xhat * jnp.mean(g * xhat, axis=-1, keepdims=True))
    axes = tuple(range(dy.ndim - 1))
    return dx.astype(dtype), jnp.sum(dy * xhat, axis=axes), jnp.sum(dy, axis=axes)


layer_norm.defvjp(_layer_norm_fwd, _layer_norm_bwd)


def _loss_and_probs(logits, targets):
    """Mean over positions of logsumexp(logits) - logits[target] (the target logit gathered,
    not selected with a one-hot mask over the vocabulary), and softmax(logits)."""
    m = jnp.max(logits, axis=-1, keepdims=True)
    e = jnp.exp(logits - m)
    z = jnp.sum(e, axis=-1, keepdims=True)
    target_logit = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jnp.log(z[..., 0]) + m[..., 0] - target_logit), e / z


def _dlogits(p, targets, g):
    """Gradient of the mean loss with respect to the logits: (softmax - onehot(target)) g / n."""
    n = p.size // p.shape[-1]
    onehot = targets[..., None] == jnp.arange(p.shape[-1], dtype=targets.dtype)
    return jnp.where(onehot, p - 1.0, p) * (g / n)


@jax.custom_vjp
def unembed_cross_entropy(h, w, targets):
    """Mean next-token cross-entropy of the logits h w^T, for hidden states h (..., d) and output
    matrix w (V, d): the mean over positions of logsumexp(logits) - logits[target], the logits
    in float32, as one function with a hand-written gradient, (softmax - onehot(target)) / n
    (no scatter, one pass).

    Same value and gradient as the product and the cross-entropy apart, cheaper on CPU
    (measured: about 4% of a (2, 128, 2) training step, against a cross-entropy that then
    selected the target logit with a one-hot mask): dw = (h^T dlogits)^T transposes the (..., d)
    states rather than the (..., V) logits.
    """
    return _unembed_ce_fwd(h, w, targets)[0]


def logits(h, w):
    """h w^T for hidden states h (..., d) and output matrix w (V, d), accumulated in float32."""
    return einsum_f32("...d,vd->...v", h, w.astype(h.dtype))


def _unembed_ce_fwd(h, w, targets):
    loss_, p = _loss_and_probs(logits(h, w), targets)
    return loss_, (h, w, targets, p)


def _unembed_ce_bwd(res, g):
    h, w, targets, p = res
    dlogits = _dlogits(p, targets, g).astype(h.dtype)
    dh = jnp.einsum("...v,vd->...d", dlogits, w.astype(h.dtype))
    dw = einsum_f32("...d,...v->dv", h, dlogits).T
    return dh, dw.astype(w.dtype), None


unembed_cross_entropy.defvjp(_unembed_ce_fwd, _unembed_ce_bwd)


@jax.custom_vjp
def dense(x, kernel, bias):
    """x @ kernel + bias over the last axis (``nnx.Linear``'s computation), with a hand-written
    gradient that forms the kernel's gradient by transposing the smaller operand: the XLA CPU
    matrix product transposes its left operand, so dW = x^T dy when x is the narrower one
    and (dy^T x)^T otherwise (the MLP's output projection, 4 d_x -> d_x). Measured: a (6, 512, 8)
    training step 3.2% faster than with ``nnx.Linear`` and autodiff ((6, 256, 4): 0.4%)."""
    return _dense(x, kernel, bias)


def _dense(x, kernel, bias):
    return jnp.einsum("...i,io->...o", x, kernel) + bias


def _dense_bwd(res, dy):
    x, kernel = res
    dx = jnp.einsum("...o,io->...i", dy, kernel)
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    if x.shape[-1] <= dy.shape[-1]:
        dk = jnp.einsum("ti,to->io", x2, dy2)
    else:
        dk = jnp.einsum("to,ti->oi", dy2, x2).T
    return dx, dk, jnp.sum(dy2, axis=0)


dense.defvjp(lambda x, kernel, bias: (_dense(x, kernel, bias), (x, kernel)), _dense_bwd)


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


@jax.custom_vjp
def gelu(x):
    """The exact GELU, x Phi(x) with Phi the standard normal CDF (PyTorch's default ``F.gelu``;
    ``jax.nn.gelu`` defaults to the tanh approximation).

    Hand-written gradient, Phi(x) + x phi(x), recomputed from x alone: on CPU a training step
    with it measured as fast as with ``jax.nn.gelu``'s tanh approximation and autodiff, and
    faster than autodiff of ``jax.nn.gelu(x, approximate=False)``.
    """
    return x * _normal_cdf(x)


def _normal_cdf(x):
    return 0.5 + 0.5 * jax.lax.erf(x * (1 / math.sqrt(2)))


def _gelu_bwd(x, dy):
    pdf = jnp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
    return (dy * (_normal_cdf(x) + x * pdf),)


gelu.defvjp(lambda x: (gelu(x), x), _gelu_bwd)


OPS = Ops(layer_norm=layer_norm, dense=dense, self_attention=self_attention, gelu=gelu,
          unembed_loss=unembed_cross_entropy)
