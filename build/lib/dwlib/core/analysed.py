"""The network the paper analyses, eq. (3), and the Transformer layer it relaxes, eqs. (1)-(2).

Levine et al. (2020), section 2 [levine2020depth]. Both are plain functions over a params
pytree (a list with one dict of weight arrays per layer), vectorised over positions and heads,
with attention dimension d_a = d_x / H. Both compute attention with
:func:`dwlib.core.attention.attend`, the one attention computation of dwlib: the analysed network
with ``normalize=None`` (the raw bilinear score of eq. 3), the Transformer layer with
``normalize="softmax"`` (eq. 1).

- :func:`init_params`, :func:`forward`: the depth-L analysed network, eq. (3) stacked L times,
  optionally with a residual connection (the paper's appendix). Without the residual it is a
  homogeneous polynomial of degree 3^L in its input; :func:`homogeneity_residual` measures
  how far a forward pass is from y(t x) = t^(3^L) y(x). With ``modulus=p`` the same forward
  pass runs over the field GF(p) (:func:`mod_einsum`), for the exact ranks of :mod:`dwlib.core.seprank`.
- :func:`init_transformer_params`, :func:`transformer_forward`: eqs. (1)-(2): softmax
  attention, residual, LayerNorm, ReLU feed-forward, LayerNorm between layers;
  :func:`attention_forward`: eq. (1)'s attention alone, stacked (the softmax contrast of the
  measured ranks, and the attention-only decoder of the induction-head experiment).
- :func:`expansion_terms`, :func:`count_terms`: the counting behind C = (3^L - 1)/2 of eq. (4),
  by symbolic expansion (small cases) and by a forward pass of the network itself.
- :func:`neighbour_pairs_function`: a local, convolution-like function, the contrast of
  Proposition 1 (grid matrices and their ranks are :mod:`dwlib.core.seprank`).

Layout: inputs ``x`` are (..., N, d_x); per layer, ``q``, ``k``, ``v`` are (H, d_a, d_x)
(W^{Q,l,h}, W^{K,l,h}, W^{V,l,h} for every head h) and ``o`` is (H, d_x, d_a) (W^{O,l,h}).
The forward passes are dtype-generic: integer weights and inputs give exact integer outputs
(use int64 under ``jax.enable_x64(True)`` when values are large).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import jax
import jax.numpy as jnp

from dwlib.core.attention import attend
from dwlib.core.attention import weights as attention_weights
from dwlib.errors import require, require_int

WEIGHT_NAMES = ("q", "k", "v", "o")


# ---------------------------------------------------------------------------------------------
# Validation

def check_shape(depth, width, heads) -> int:
    """Validate (L, d_x, H) for a network of eq. (3); return d_a = d_x / H."""
    require_int("depth", depth)
    require_int("width", width)
    require_int("heads", heads)
    require(width % heads == 0,
            f"heads must divide width (d_a = d_x / H): {width} % {heads} = {width % heads}")
    return width // heads


def shape_of(params) -> tuple[int, int, int]:
    """(depth, width, heads) of an analysed-network params pytree, after checking its shapes."""
    require(isinstance(params, (list, tuple)) and len(params) >= 1,
            "params must be a non-empty list of layers (one dict of weights per layer)")
    first = params[0]
    require(isinstance(first, dict) and set(WEIGHT_NAMES) <= set(first),
            f"each layer must be a dict with keys {WEIGHT_NAMES}")
    H, d_a, d_x = first["q"].shape
    for l, layer in enumerate(params):
        for name in WEIGHT_NAMES:
            want = (H, d_x, d_a) if name == "o" else (H, d_a, d_x)
            got = tuple(layer[name].shape)
            require(got == want, f"layer {l + 1} weight {name!r} has shape {got}, expected {want}")
    return len(params), d_x, H


def _check_input(x, width):
    require(hasattr(x, "shape") and x.ndim >= 2,
            f"input must be an array of shape (..., N, d_x), got {getattr(x, 'shape', type(x).__name__)}")
    require(x.shape[-1] == width, f"input width {x.shape[-1]} does not match the network's width {width}")
    require(x.shape[-2] >= 1, "input must have at least one position")


# ---------------------------------------------------------------------------------------------
# The analysed network, eq. (3)

def init_params(key, depth: int, width: int, heads: int, *, scale: float | None = None,
                dtype=jnp.float32) -> list[dict]:
    """Random weights Theta of a depth-L analysed network (the 4LH matrices of eq. 4).

    Gaussian entries with standard deviation ``scale`` (default 1/sqrt(d_x), so a layer
    roughly preserves the size of its input when inputs are of order 1/sqrt(N)).
    """
    d_a = check_shape(depth, width, heads)
    std = 1.0 / math.sqrt(width) if scale is None else float(scale)
    require(std > 0 and math.isfinite(std), f"scale must be a positive number, got {scale!r}")
    params = []
    for layer_key in jax.random.split(key, depth):
        kq, kk, kv, ko = jax.random.split(layer_key, 4)
        params.append({
            "q": std * jax.random.normal(kq, (heads, d_a, width), dtype),
            "k": std * jax.random.normal(kk, (heads, d_a, width), dtype),
            "v": std * jax.random.normal(kv, (heads, d_a, width), dtype),
            "o": std * jax.random.normal(ko, (heads, width, d_a), dtype),
        })
    return params


def constant_params(depth: int, width: int, heads: int, value=1, dtype=jnp.int32) -> list[dict]:
    """Weights all equal to ``value`` (default integer ones): a simple assignment of Theta."""
    d_a = check_shape(depth, width, heads)
    return [{name: jnp.full((heads, width, d_a) if name == "o" else (heads, d_a, width), value, dtype)
             for name in WEIGHT_NAMES} for _ in range(depth)]


def layer(weights: dict, x, modulus: int | None = None):
    """One analysed layer, eq. (3), at every position i at once:

    y^{l,i} = sum_j sum_h <W^{Q,l,h} x^i, W^{K,l,h} x^j> W^{O,l,h} W^{V,l,h} x^j.

    ``x``: (..., N, d_x). Returns (..., N, d_x). No softmax, no scaling, no normalisation.

    With ``modulus=p`` (a prime below 2^31) the same layer is computed over the field GF(p):
    weights and inputs must be int64 in [0, p), every contraction is reduced mod p as it is
    formed (:func:`mod_einsum`), and the result lies in [0, p). The attention is then written
    as the two contractions of ``attend(normalize=None)``, each reduced.
    """
    if modulus is None:
        q, k, v = project(weights, x)
        return combine_heads(weights, attend(q, k, v, normalize=None))  # sum_j <q^i, k^j> v^j, per head
    q, k, v = project(weights, x, functools.partial(mod_einsum, modulus=modulus))
    scores = mod_einsum("...ihd,...jhd->...hij", q, k, modulus)
    a = mod_einsum("...hij,...jhd->...ihd", scores, v, modulus)
    return mod_einsum("...nha,hda->...nd", a, weights["o"], modulus)


def project(weights: dict, x, einsum=jnp.einsum):
    """Queries, keys and values W^{Q,h} x^j, W^{K,h} x^j, W^{V,h} x^j of every position and head,
    each (..., N, H, d_a); ``einsum`` is jnp.einsum or, over GF(p), :func:`mod_einsum` with its
    modulus bound."""
    return tuple(einsum("...nd,had->...nha", x, weights[name]) for name in ("q", "k", "v"))


def combine_heads(weights: dict, a):
    """sum_h W^{O,h} a^h: the heads' outputs (..., N, H, d_a) mapped back to (..., N, d_x)."""
    return jnp.einsum("...nha,hda->...nd", a, weights["o"])


MAX_MODULUS = 2 ** 31
_SPLIT = 2 ** 16


def check_modulus(modulus) -> int:
    """The prime-field modulus p of the exact computations: an integer in [2, 2^31)."""
    require(isinstance(modulus, int) and 2 <= modulus < MAX_MODULUS,
            f"modulus must be an integer in [2, 2^31), got {modulus!r}")
    return modulus


def mod_einsum(spec: str, a, b, modulus: int):
    """``jnp.einsum(spec, a, b) mod p`` for int64 operands in [0, p), p < 2^31, without overflow.

    ``b`` is split into 16-bit halves, b = b_hi 2^16 + b_lo: every product a b_lo or a b_hi is
    below 2^47, so a contraction over fewer than 2^16 terms stays below 2^63; each partial sum
    is reduced before it is recombined.
    """
    lo = jnp.einsum(spec, a, b % _SPLIT) % modulus
    hi = jnp.einsum(spec, a, b // _SPLIT) % modulus
    return (hi * _SPLIT + lo) % modulus


def forward(params: Sequence[dict], x, residual: bool = False, modulus: int | None = None):
    """The depth-L analysed network: eq. (3) applied L times, x^{l+1,j} = y^{l,j}.

    With ``residual=True`` each layer adds its input, x^{l+1,j} = y^{l,j} + x^{l,j} (the
    variant the paper treats in its appendix). Returns y^{L,i} for every position i,
    shape (..., N, d_x); the i-th row is y^{i,L,d_x,H,Theta} of eq. (4).

    ``modulus=p``: the same network over GF(p) (see :func:`layer`), for exact ranks.
    """
    _, width, _ = shape_of(params)
    _check_input(x, width)
    if modulus is not None:
        check_modulus(modulus)
    for weights in params:
        y = layer(weights, x, modulus)
        x = y + x if residual else y
        if modulus is not None and residual:
            x = x % modulus
    return x


def degree(depth: int) -> int:
    """Degree 3^L of the no-residual analysed network as a polynomial in its input
    (each layer feeds its input three times into eq. 3: query, key, value)."""
    require_int("depth", depth)
    return 3 ** depth


def homogeneity_residual(params, x, t: float = 2.0, residual: bool = False) -> float:
    """max |y(t x) - t^(3^L) y(x)| / max |t^(3^L) y(x)|: zero (to rounding) for the network of
    eq. (3) without residual, which is a homogeneous polynomial of degree 3^L in its input."""
    require(t != 0 and math.isfinite(t), f"t must be a non-zero finite number, got {t!r}")
    depth, _, _ = shape_of(params)
    scaled = forward(params, t * x, residual=residual)
    expected = (t ** degree(depth)) * forward(params, x, residual=residual)
    denom = jnp.max(jnp.abs(expected))
    require(bool(denom > 0), "the output is zero: choose other weights or inputs")
    return float(jnp.max(jnp.abs(scaled - expected)) / denom)


# ---------------------------------------------------------------------------------------------
# Counting the summed position indices of eq. (4)

def summed_indices(depth: int) -> int:
    """C of eq. (4) by the recursion the layer structure implies: a layer's output at i sums
    over one new index j and takes in three copies of the previous layer (one at i, two at j),
    each carrying its own summed indices: C_l = 1 + 3 C_{l-1}, C_0 = 0. (Closed form
    (3^L - 1)/2, which the tests compare against.)"""
    require_int("depth", depth)
    c = 0
    for _ in range(depth):
        c = 1 + 3 * c
    return c


def expansion_terms(depth: int, n_positions: int, position: int = 0) -> list[tuple[int, ...]]:
    """The terms of y^{L,i} written out, for the scalar network (d_x = H = 1, unit weights).

    Each term is the tuple of positions of the input factors it multiplies (x^i first, then
    the key and value copies). Layer 0 at position i is the single term (i,); layer l at i is
    sum_j [layer l-1 at i] [layer l-1 at j] [layer l-1 at j], expanded. There are N^C terms,
    one per choice of the C summed indices j_1..j_C, each a product of 3^L input factors.
    Exponential in the output size: kept to N^C <= 2^16 terms.
    """
    require_int("depth", depth)
    require_int("n_positions", n_positions)
    require(0 <= position < n_positions, f"position must be in [0, {n_positions}), got {position}")
    C = summed_indices(depth)
    require(n_positions ** C <= 2 ** 16,
            f"N^C = {n_positions}^{C} terms is too many to write out (at most 2^16)")
    terms = [[(i,)] for i in range(n_positions)]
    for _ in range(depth):
        terms = [[a + b + c for j in range(n_positions) for a in terms[i] for b in terms[j] for c in terms[j]]
                 for i in range(n_positions)]
    return terms[position]


def count_terms(depth: int, n_positions: int) -> int:
    """The number of terms in the expansion of y^{L,i}, computed by the analysed network itself:
    with d_x = H = 1, unit weights and all inputs 1 every term equals 1, so the output is the
    number of terms. Exact (int64) while it fits in 63 bits."""
    require_int("depth", depth)
    require_int("n_positions", n_positions)
    require(summed_indices(depth) * math.log2(n_positions) < 63,
            f"N^C = {n_positions}^{summed_indices(depth)} does not fit in int64")
    with jax.enable_x64(True):
        params = constant_params(depth, 1, 1, 1, dtype=jnp.int64)
        y = forward(params, jnp.ones((n_positions, 1), jnp.int64))
        return int(y[0, 0])


# ---------------------------------------------------------------------------------------------
# The Transformer encoder layer, eqs. (1)-(2)

def init_transformer_params(key, depth: int, width: int, heads: int, ff_mult: int = 4,
                            dtype=jnp.float32) -> list[dict]:
    """Weights of a depth-L Transformer encoder as eqs. (1)-(2) write it: per layer the
    attention matrices of eq. (1) and W^{FF,1} (ff_mult d_x x d_x), W^{FF,2} (d_x x ff_mult d_x).
    No biases and no LayerNorm gains: the paper's equations have none."""
    check_shape(depth, width, heads)
    require_int("ff_mult", ff_mult)
    k_att, k_ff = jax.random.split(key)
    params = init_params(k_att, depth, width, heads, dtype=dtype)
    for layer_params, lk in zip(params, jax.random.split(k_ff, depth)):
        k1, k2 = jax.random.split(lk)
        layer_params["ff1"] = jax.random.normal(k1, (ff_mult * width, width), dtype) / math.sqrt(width)
        layer_params["ff2"] = jax.random.normal(k2, (width, ff_mult * width), dtype) / math.sqrt(ff_mult * width)
    return params


def layer_norm(x, eps: float = 1e-6):
    """LayerNorm over the last axis, no learned gain or bias [ba2016layer]."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps)


def self_attention(weights: dict, x, causal: bool = False):
    """f_SA of eq. (1): softmax over j of <W^Q x^i, W^K x^j> / sqrt(d_a), times W^O W^V x^j,
    summed over heads (``causal``: over j <= i only, as in a decoder)."""
    return combine_heads(weights, attend(*project(weights, x), normalize="softmax", causal=causal))


def attention_forward(params: Sequence[dict], x, residual: bool = False, causal: bool = False,
                      return_patterns: bool = False):
    """f_SA of eq. (1) stacked L times, with no LayerNorm and no feed-forward block:
    x^{l+1} = f_SA(x^l), or x^l + f_SA(x^l) with ``residual``. ``causal``: each position sees
    only itself and earlier ones (a decoder). With ``return_patterns`` also each layer's
    softmax attention weights (..., H, N, N), from the same queries and keys."""
    patterns = []
    for weights in params:
        q, k, v = project(weights, x)
        if return_patterns:
            patterns.append(attention_weights(q, k, causal=causal))
        y = combine_heads(weights, attend(q, k, v, normalize="softmax", causal=causal))
        x = x + y if residual else y
    return (x, patterns) if return_patterns else x


def feed_forward(weights: dict, h):
    """The feed-forward block of eq. (2), W^{FF,2} ReLU(W^{FF,1} h)."""
    inner = jax.nn.relu(jnp.einsum("...nd,fd->...nf", h, weights["ff1"]))
    return jnp.einsum("...nf,df->...nd", inner, weights["ff2"])


def transformer_layer(weights: dict, x):
    """f_Layer of eq. (2): W^{FF,2} ReLU(W^{FF,1} LayerNorm(f_SA + x))."""
    return feed_forward(weights, layer_norm(self_attention(weights, x) + x))


def transformer_forward(params: Sequence[dict], x):
    """The depth-L Transformer encoder of section 2.1: x^{l+1,j} = LayerNorm(f_Layer^{l,j}).

    Returns the last layer's f_Layer (..., N, d_x)."""
    require(isinstance(params, (list, tuple)) and params and all("ff1" in p and "ff2" in p for p in params),
            "params must be a list of Transformer layers (from init_transformer_params)")
    _, width, _ = shape_of(params)
    _check_input(x, width)
    for l, weights in enumerate(params):
        if l:
            x = layer_norm(x)
        x = transformer_layer(weights, x)
    return x


# ---------------------------------------------------------------------------------------------
# A local function, the contrast of Proposition 1

def neighbour_pairs_function(x):
    """A toy local (convolution-like) function for contrast with self-attention: positions are
    first combined with their neighbour, (1 + <x^1, x^2>)^2 (1 + <x^3, x^4>)^2 ..., then
    multiplied, as a convolutional network with size-2 pooling does [cohen2017inductive].
    ``x``: (..., N, d_x) with N even; returns (...,)."""
    require(x.shape[-2] % 2 == 0, f"needs an even number of positions, got {x.shape[-2]}")
    pairs = jnp.sum(x[..., 0::2, :] * x[..., 1::2, :], axis=-1)
    return jnp.prod((1 + pairs) ** 2, axis=-1)
