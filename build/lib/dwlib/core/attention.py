"""Multi-head self-attention, the one computation shared by every model in dwlib.

Both the analysed network of eq. (3) and the full Transformer layer of eqs. (1)-(2), and the
trained decoder, project each position x^j into H heads of size d_a = d_x / H and combine
query-key scores with values. They differ only in how the scores are normalised:

- ``normalize="softmax"``: eq. (1), SM_j{ <W^Q x^i, W^K x^j> / sqrt(d_a) };
- ``normalize=None``:      eq. (3), the raw bilinear score <W^Q x^i, W^K x^j> (no softmax, no scale).

Arrays are laid out (..., N, H, d_a): positions, heads, head size. This is the reference
definition, differentiated by JAX; the trainer's opt-in fast path
(:mod:`dwlib.train.fast_attention`: hand-written gradient, cuDNN's fused kernel on GPUs) is
tested against it.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def weights(q, k, *, normalize: str | None = "softmax", causal: bool = False):
    """The attention matrix (..., H, N, N): row i holds score(i, j) for every key j.

    ``normalize="softmax"``: SM_j{<q^i, k^j> / sqrt(d_a)}, computed in float32 (or wider, for
    float64 inputs) whatever the inputs' dtype; ``causal`` keeps only j <= i.
    ``normalize=None``: <q^i, k^j> in the inputs' dtype (integers stay exact); ``causal``
    zeroes j > i.
    """
    if normalize not in ("softmax", None):
        raise ValueError(f"normalize must be 'softmax' or None, got {normalize!r}")
    n = q.shape[-3]
    keep = jnp.tril(jnp.ones((n, n), dtype=bool))  # key j visible from query i when j <= i
    if normalize is None:
        scores = jnp.einsum("...ihd,...jhd->...hij", q, k)
        return jnp.where(keep, scores, 0) if causal else scores
    wide = jnp.promote_types(q.dtype, jnp.float32)
    scores = jnp.einsum("...ihd,...jhd->...hij", q.astype(wide), k.astype(wide)) / math.sqrt(q.shape[-1])
    if causal:
        scores = jnp.where(keep, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1)


def attend(q, k, v, *, normalize: str | None = "softmax", causal: bool = False):
    """Combine values by query-key scores, per head.

    Args:
      q, k, v: arrays of shape (..., N, H, d_a).
      normalize: "softmax" for eq. (1) (scaled by 1/sqrt(d_a)); None for eq. (3).
      causal: position i attends only to positions j <= i (decoder-only models).

    Returns:
      (..., N, H, d_a) in v's dtype: for each position i and head h, sum_j score(i, j, h) v^{j, h}.
    """
    p = weights(q, k, normalize=normalize, causal=causal)
    return jnp.einsum("...hij,...jhd->...ihd", p.astype(v.dtype), v)
