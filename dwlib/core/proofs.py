"""The counting steps behind Theorems 1 and 2 and Corollary 2, as functions that can be checked.

Levine et al. (2020), section 4 [levine2020depth]. The paper's main text gives proof outlines
only (its appendix holds the proofs); this module computes the quantities those outlines and the
bounds' printed forms rest on, so that each step can be evaluated, or checked against an
independent computation, at small sizes:

- :func:`multiset`, :func:`monomials_by_enumeration`, :func:`log3_multiset`: the number
  C(n + k - 1, k) of monomials of degree k in n variables, in closed form, by listing exponent
  vectors, and as log3 for sizes where the integer would have millions of digits.
- :func:`lower_bound_count`: the lower bounds of eqs. (7) and (8) beside log3 of one such count,
  with n = (d_x - H) / 2 variables and degree k = 3^(L-2) (our reading of both bounds' form).
- :func:`one_layer_terms`: one analysed layer (eq. 3) written as a sum of d_x + H products of a
  function of the inputs in A and a function of those in B (the per-summed-index count of the
  eq.-(7) upper bound, C log3(d_x + H)).
- :func:`corollary2_beta2`: the smallest beta_2 for which the bounds confirm Corollary 2
  (eq. 9), solved for beta_2 directly, and its closed-form estimate.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dwlib.core import bounds
from dwlib.errors import require, require_int

LN3 = math.log(3.0)
#: eq. (7)'s lower bound at a network's own threshold, per unit of 3^(L-2): 2 - log3 2.
THRESHOLD_FACTOR = 2.0 - math.log(2.0) / LN3
MAX_ENUMERATED = 200_000  # exponent vectors listed at most by monomials_by_enumeration
MAX_LOOP = 2_000_000      # terms summed at most by log3_multiset


# ---------------------------------------------------------------------------------------------
# Counting monomials

def multiset(n: int, k: int) -> int:
    """C(n + k - 1, k): the number of monomials of degree k in n variables (multisets of size k
    drawn from n kinds), exact."""
    require_int("variables", n)
    require(isinstance(k, int) and k >= 0, f"degree must be an integer >= 0, got {k!r}")
    return math.comb(n + k - 1, k)


def monomials_by_enumeration(n: int, k: int) -> int:
    """The same count by listing every exponent vector (e_1..e_n), e_t in 0..k, with sum k.
    Independent of the closed form; kept to (k + 1)^n <= MAX_ENUMERATED vectors."""
    require_int("variables", n)
    require(isinstance(k, int) and k >= 0, f"degree must be an integer >= 0, got {k!r}")
    require((k + 1) ** n <= MAX_ENUMERATED, f"(k + 1)^n = {k + 1}^{n} exponent vectors is too many to list")
    return sum(1 for e in itertools.product(range(k + 1), repeat=n) if sum(e) == k)


def log3_multiset(n: int, k: int) -> float:
    """log3 C(n + k - 1, k) without forming the integer: C(n+k-1, k) = prod_{t=1}^{m} (1 + M/t)
    with m = min(k, n - 1), M = max(k, n - 1), summed as logs (m <= MAX_LOOP terms)."""
    require_int("variables", n)
    require(isinstance(k, int) and k >= 0, f"degree must be an integer >= 0, got {k!r}")
    m, big = min(k, n - 1), max(k, n - 1)
    require(m <= MAX_LOOP, f"min(k, n - 1) = {m} terms is too many to sum")
    return math.fsum(math.log1p(big / t) for t in range(1, m + 1)) / LN3


def lower_bound_count(width: int, heads: int, depth: int) -> dict:
    """The lower bound of eq. (7) or (8) (by regime) beside log3 C(n + k - 1, k) with
    n = (d_x - H) / 2 variables and degree k = 3^(L-2).

    Eq. (7)'s lower bound is exactly k log3(n / k) = log3 (n/k)^k, and (n/k)^k <= C(n+k-1, k)
    (each factor (n + k - t) / t of the binomial is at least n / k). Above the threshold the
    count grows by log3 3^(n - 1) = n - 1 per layer once k >> n, which is eq. (8)'s slope
    d_x/2 - (H/2 + 1). Needs depth >= 2 and an even d_x - H (an integer n).
    """
    require_int("depth", depth, 2)
    require_int("width", width)
    require_int("heads", heads)
    require((width - heads) % 2 == 0 and width - heads >= 2,
            f"width - heads must be even and >= 2 (n = (d_x - H)/2 variables), got {width - heads}")
    n, k = (width - heads) // 2, 3 ** (depth - 2)
    r = bounds.separation_rank_bounds(depth, width, heads)
    out = {"n": n, "k": k, "theorem": r["theorem"], "lower": r["lower"], "log3_count": log3_multiset(n, k)}
    out["k_log3_n_over_k"] = k * (math.log(n) / LN3 - (depth - 2)) if r["theorem"] == 1 else None
    return out


# ---------------------------------------------------------------------------------------------
# Theorem 1's upper bound: one layer as d_x + H separable terms

def _a_side(weights: dict, xa: np.ndarray, i_local: int, entry: int) -> np.ndarray:
    """The A-side factors g_r, from the inputs at A only: (R, batch), R = H (1 + d_a)."""
    q = np.einsum("had,bd->bha", weights["q"], xa[:, i_local])         # W^Q x^i
    k = np.einsum("had,bnd->bnha", weights["k"], xa)                     # W^K x^j, j in A
    ov = np.einsum("ha,had,bnd->bnh", weights["o"][:, entry], weights["v"], xa)  # (W^O W^V x^j)_p
    within = np.einsum("bha,bnha,bnh->hb", q, k, ov)                     # sum_{j in A}, per head
    return np.concatenate([within, q.transpose(1, 2, 0).reshape(-1, q.shape[0])])


def _b_side(weights: dict, xb: np.ndarray, entry: int) -> np.ndarray:
    """The B-side factors g'_r, from the inputs at B only: (R, batch)."""
    H = weights["q"].shape[0]
    k = np.einsum("had,bnd->bnha", weights["k"], xb)
    ov = np.einsum("ha,had,bnd->bnh", weights["o"][:, entry], weights["v"], xb)
    across = np.einsum("bnha,bnh->hab", k, ov)                           # sum_{j in B} (W^K x^j)_a (..)_p
    return np.concatenate([np.ones((H, xb.shape[0])), across.reshape(-1, xb.shape[0])])


def one_layer_terms(weights: dict, x, part_a, position: int = 0, entry: int = 0) -> dict:
    """One analysed layer (eq. 3) at output position i and entry p, as sum_r g_r(A) g'_r(B).

    For each head h, the sum over j splits into j in A and j in B. The A part is a function of
    the inputs at A alone (one term, g' = 1). In the B part the score
    <W^Q x^i, W^K x^j> = sum_a (W^Q x^i)_a (W^K x^j)_a separates over the d_a attention
    coordinates a: g = (W^Q x^i)_a, g' = sum_{j in B} (W^K x^j)_a (W^O W^V x^j)_p. That is
    H (1 + d_a) = H + d_x terms, so sep(y_p^i) <= d_x + H at depth 1, eq. (7)'s upper bound with
    C = 1. ``g`` is computed from x[:, A] only and ``g_prime`` from x[:, B] only.

    ``x``: (batch, N, d_x) float; ``position`` must lie in A. Returns ``g``, ``g_prime``
    (R, batch) and ``terms`` R.
    """
    x = np.asarray(x, dtype=np.float64)
    require(x.ndim == 3, f"x must be (batch, N, d_x), got shape {x.shape}")
    part_a = sorted(int(a) for a in part_a)
    require(position in part_a, f"the output position {position} must lie in A = {part_a}")
    part_b = [j for j in range(x.shape[1]) if j not in part_a]
    require(len(part_b) >= 1, "B must hold at least one position")
    w = {name: np.asarray(v, dtype=np.float64) for name, v in weights.items()}
    g = _a_side(w, x[:, part_a], part_a.index(position), entry)
    g_prime = _b_side(w, x[:, part_b], entry)
    return {"g": g, "g_prime": g_prime, "terms": int(g.shape[0])}


# ---------------------------------------------------------------------------------------------
# Corollary 2 from the two theorems

def _holds(width, heads, beta2, deep_upper) -> bool:
    """Is eq. (7)'s lower bound of the shallow network above ``deep_upper``? Written out here
    (not taken from dwlib.core.bounds) so that the tests compare two computations."""
    log3_ws = math.log(width) / LN3 + beta2
    L_s = log3_ws  # = beta1 L + beta2: the shallow network sits on its own threshold
    log3_ws_minus_h = log3_ws + math.log1p(-heads * math.exp(-log3_ws * LN3)) / LN3  # log3(d_s - H)
    lower = 3.0 ** (L_s - 2.0) * (log3_ws_minus_h - L_s + THRESHOLD_FACTOR)
    return lower > deep_upper


def corollary2_beta2(width: int, heads: int, depth: int, tol: float = 1e-10) -> dict:
    """The smallest beta_2 for which the shallow network of Corollary 2 (depth
    log3 d_x + beta_2, width 3^beta_2 d_x) has an eq.-(7) lower bound above the deep network's
    eq.-(8) upper bound U, found by bisection on beta_2.

    Estimate: at its threshold the shallow lower bound is 3^(L_s - 2)(log3(d_s - H) - L_s + 2 -
    log3 2), which for d_s >> H is d_s (2 - log3 2) / 9 = 3^beta_2 d_x (2 - log3 2) / 9, so
    beta_2 > log3(9 U / ((2 - log3 2) d_x)): of order log3 L, since U ~ 2 d_x L.
    Returns ``beta2``, ``estimate``, ``deep_upper``, ``shallow_depth`` and ``shallower`` (is
    log3 d_x + beta_2 < L, i.e. is the constructed network shallower at all).
    """
    for name, v in (("width", width), ("heads", heads), ("depth", depth)):
        require_int(name, v)
    U = float(bounds.theorem2_upper(depth, width, heads))  # raises unless L > log3 d_x
    require(U > 0, f"the deep network's eq.-(8) upper bound must be positive, got {U:.3g}")
    estimate = math.log(9.0 * U / (THRESHOLD_FACTOR * width)) / LN3
    lo, hi = 0.0, max(estimate, 0.0) + 1.0
    while not _holds(width, heads, hi, U):
        hi *= 2.0
        require(hi < 600, "no beta_2 below 600 makes the bounds confirm eq. (9)")
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _holds(width, heads, mid, U) else (mid, hi)
    L_s = math.log(width) / LN3 + hi
    return {"beta2": hi, "estimate": estimate, "deep_upper": U, "shallow_depth": L_s,
            "log10_shallow_width": (math.log(width) / LN3 + hi) * math.log10(3.0), "shallower": L_s < depth}
