"""Multi-head self-attention, the one computation shared by every model in dwlib.

Both the analysed network of eq. (3) and the full Transformer layer of eqs. (1)-(2), and the
trained decoder, project each position x^j into H heads of size d_a = d_x / H and combine
query-key scores with values. They differ only in how the scores are normalised:

- ``normalize="softmax"``: eq. (1), SM_j{ <W^Q x^i, W^K x^j> / sqrt(d_a) };
- ``normalize=None``:      eq. (3), the raw bilinear score <W^Q x^i, W^K x^j> (no softmax, no scale).

Arrays are laid out (..., N, H, d_a): positions, heads, head size.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def attend(q, k, v, *, normalize: str | None = "softmax", causal: bool = False):
    """Combine values by query-key scores, per head.

    Args:
      q, k, v: arrays of shape (..., N, H, d_a).
      normalize: "softmax" for eq. (1) (scaled by 1/sqrt(d_a)); None for eq. (3).
      causal: position i attends only to positions j <= i (decoder-only models).

    Returns:
      (..., N, H, d_a): for each position i and head h, sum_j score(i, j, h) v^{j, h}.
    """
    if normalize == "softmax":
        return jax.nn.dot_product_attention(q, k, v, is_causal=causal)
    if normalize is not None:
        raise ValueError(f"normalize must be 'softmax' or None, got {normalize!r}")
    scores = jnp.einsum("...ihd,...jhd->...hij", q, k)
    if causal:
        n = q.shape[-3]
        scores = jnp.where(jnp.tril(jnp.ones((n, n), dtype=bool)), scores, 0)
    return jnp.einsum("...hij,...jhd->...ihd", scores, v)
