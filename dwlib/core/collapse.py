"""Rank collapse: stacked softmax attention drives every token to the same representation.

Dong et al. prove that pure self-attention layers (no skip connection, no feed-forward block)
lose rank doubly exponentially with depth: the token representations X (N x d_x) converge to a
matrix 1 x^T whose rows are all equal [dong2021attention]. :func:`rank_residual` measures the
distance to the nearest such matrix, relative to the size of X; :func:`collapse_curves` follows
it through depth for four layers built from the pieces of :mod:`dwlib.core.analysed` (eq. (1)'s
attention alone, followed by the feed-forward block, with a residual connection, and the full
layer of eqs. (1)–(2)), all with the same random weights.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dwlib.core.analysed import (check_shape, feed_forward, init_transformer_params, layer_norm, self_attention,
                                 transformer_layer)
from dwlib.errors import require, require_int

VARIANTS = ("pure attention", "attention + MLP", "attention + residual", "paper layer (eqs. 1\N{EN DASH}2)")


def rank_residual(x) -> np.ndarray:
    """||X - 1 x^T||_F / ||X||_F for the x that minimises it (the mean row): 0 when every
    token has the same representation (rank one of the form 1 x^T), 1 when the rows average
    to zero. ``x``: (..., N, d_x); returns an array of shape (...).

    Dong et al. measure res(X) = X - 1 x^T in a composite l1/l_inf norm; the Frobenius norm
    used here has the mean row as its minimiser, so the measure is exact and cheap.
    """
    x = jnp.asarray(x)
    require(x.ndim >= 2 and x.shape[-2] >= 2, f"x must be (..., N, d_x) with N >= 2, got shape {x.shape}")
    return np.asarray(_residual(x))


def _residual(x):
    res = x - jnp.mean(x, axis=-2, keepdims=True)
    norm = jnp.sqrt(jnp.sum(x * x, axis=(-2, -1)))
    return jnp.sqrt(jnp.sum(res * res, axis=(-2, -1))) / jnp.where(norm > 0, norm, 1.0)


def layer_step(variant: str, weights: dict, x):
    """One layer of a variant: X <- f_SA(X); W^{FF,2} ReLU(W^{FF,1} f_SA(X)); X + f_SA(X); or
    LayerNorm(f_Layer(X)), eq. (2) followed by the LayerNorm between layers (section 2.1)."""
    if variant == "pure attention":
        return self_attention(weights, x)
    if variant == "attention + MLP":
        return feed_forward(weights, self_attention(weights, x))
    if variant == "attention + residual":
        return x + self_attention(weights, x)
    return layer_norm(transformer_layer(weights, x))


def collapse_curves(depth: int = 24, width: int = 64, heads: int = 4, n_positions: int = 32,
                    variants=VARIANTS, seed: int = 0) -> list[dict]:
    """Relative rank residual of the token representations after each of ``depth`` layers.

    Random Gaussian tokens (N x d_x, unit variance) pass through ``depth`` layers with random
    weights (:func:`dwlib.core.analysed.init_transformer_params`, the same weights for every
    variant). Returns one record per (variant, layer l = 0..depth) with the residual of
    :func:`rank_residual`; layer 0 is the input. Computed in float64.
    """
    check_shape(depth, width, heads)
    require_int("n_positions", n_positions, 2)
    for v in variants:
        require(v in VARIANTS, f"variant must be one of {VARIANTS}, got {v!r}")
    with jax.enable_x64(True):
        key_w, key_x = jax.random.split(jax.random.PRNGKey(seed))
        params = init_transformer_params(key_w, depth, width, heads, dtype=jnp.float64)
        x0 = jax.random.normal(key_x, (n_positions, width), jnp.float64)
        curves = []
        for variant in variants:
            x, res = x0, [_residual(x0)]
            for weights in params:
                x = layer_step(variant, weights, x)
                res.append(_residual(x))
            curves.append(np.asarray(jnp.stack(res)))
    return [{"variant": v, "layer": l, "residual": float(curves[i][l]), "width": width, "heads": heads,
             "positions": n_positions}
            for i, v in enumerate(variants) for l in range(depth + 1)]


def collapse_grid(depth: int = 16, widths=(16, 32, 64, 128), heads=(1, 2, 4, 8), n_positions: int = 32,
                  seed: int = 0) -> list[dict]:
    """:func:`collapse_curves` over every (width, heads) pair with heads dividing width."""
    rows = []
    for w in widths:
        for h in heads:
            if w % h == 0:
                rows.extend(collapse_curves(depth, w, h, n_positions, seed=seed))
    return rows
