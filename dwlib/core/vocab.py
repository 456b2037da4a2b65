"""The vocabulary bottleneck: the analysed network fed through an input embedding of rank r.

Wies, Levine, Jannai and Shashua (2021) [wies2021which] argue that the rank of the input
embedding limits what width contributes to expressivity. The book's own derivation, which this
module measures and bounds exactly:

- Tokens reach the network as columns of a d_x x V embedding matrix of rank r, so every input
  vector lies in one r-dimensional subspace: x^j = E u^j with E (d_x, r) of full column rank and
  u^j in r coordinates. The network's output is then a polynomial of degree 3^L in the N r
  coordinates, whatever d_x and H, and the monomial count behind Theorem 2's upper bound holds
  with d_x replaced by r (:func:`upper_bound`: the polynomial-space dimension of
  :func:`dwlib.core.seprank.polynomial_dimension` at width r, and eq. 8's upper expression at r).
- A width-d_x network whose heads have dimension d_a >= r can carry a single-head width-r network
  on the embedding's subspace (its weights restricted there, the rest zero), so the separation
  ranks a full-rank width-r network reaches are reached here too: the width-r network's measured
  rank is a lower bound (:func:`width_r_lower`), and so are the 2020 lower bounds at width r
  (eqs. 7-8 at d_x = r, vacuous at the small r measurable here).

:func:`embedded_templates` builds the V token vectors; :func:`measure` gives the exact grid-matrix
rank over GF(p) of the network on all V^N token sequences, as :func:`dwlib.core.seprank.measure`
does for generic templates, with the grid cap (no positional embedding: the output at position i
is symmetric in the other positions, so the side without i has at most C(V + k - 1, k) distinct
rows, V(V + 1)/2 at N = 4) and both bounds beside it; :func:`saturate` grows V until the rank stops.
Random draws over GF(p) give lower bounds on the rank of generic real weights (Schwartz-Zippel).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dwlib.core import analysed, seprank
from dwlib.core.bounds import C2_FACTOR
from dwlib.errors import require, require_int


def embedding_factor(width: int, rank: int, seed: int = 0) -> np.ndarray:
    """E (d_x, r): small non-zero integers, of full column rank r over the rationals and over
    every prime of :data:`dwlib.core.seprank.PRIMES` (redrawn until it is)."""
    require_int("width", width)
    require_int("embedding rank", rank)
    require(rank <= width, f"the embedding rank must be at most the width: rank {rank} > width {width}")
    rng = np.random.default_rng(10_000 + seed)
    choices = np.array([v for v in range(-9, 10) if v], dtype=np.int64)
    while True:
        e = rng.choice(choices, size=(width, rank))
        if all(seprank.rank_mod_p(e, p) == rank for p in seprank.PRIMES):
            return e


def token_coordinates(n_tokens: int, rank: int, seed: int = 0) -> np.ndarray:
    """V distinct non-zero integer vectors u_v in r coordinates, no two of them opposite (u_w = -u_v):
    the analysed network is even in the input at each position j other than the output's (x^j
    enters every layer through the pair k^j, v^j, so flipping its sign leaves the output unchanged),
    so an opposite pair would be one token twice. Each first non-zero coordinate is positive,
    entries in [-s, s] with s the smallest >= 3 that holds 2V such vectors."""
    require_int("tokens", n_tokens)
    require_int("embedding rank", rank)
    span = 3
    while ((2 * span + 1) ** rank - 1) // 2 < 2 * n_tokens:
        span += 1
    rng = np.random.default_rng(seed)
    seen, out = set(), []
    while len(out) < n_tokens:
        v = [int(t) for t in rng.integers(-span, span + 1, size=rank)]
        lead = next((t for t in v if t), 0)
        if lead < 0:
            v = [-t for t in v]
        if lead and tuple(v) not in seen:
            seen.add(tuple(v))
            out.append(v)
    return np.asarray(out, dtype=np.int64)


def embedded_templates(n_tokens: int, width: int, rank: int, seed: int = 0) -> np.ndarray:
    """The V token vectors (V, d_x) of an embedding of rank r: x_v = E u_v, with u_v distinct
    integer vectors in r coordinates (:func:`token_coordinates`) spanning them all, and
    E of :func:`embedding_factor`. The embedding matrix, these vectors as columns, has rank r."""
    require_int("tokens", n_tokens)
    require(n_tokens >= rank, f"an embedding of rank {rank} needs at least {rank} tokens, got V = {n_tokens}")
    u = token_coordinates(n_tokens, rank, seed)
    require(seprank.rank_mod_p(u, seprank.PRIMES[0]) == rank, f"the {n_tokens} token coordinates do not span {rank}")
    return u @ embedding_factor(width, rank, seed).T


def _check(depth, width, heads, rank, n_positions, position, entry):
    analysed.check_shape(depth, width, heads)
    require_int("embedding rank", rank)
    require(rank <= width, f"the embedding rank must be at most the width: rank {rank} > width {width}")
    require_int("positions", n_positions, 2)
    require(isinstance(position, int) and 0 <= position < n_positions,
            f"output position must be in 0..{n_positions - 1}, got {position!r}")
    require(isinstance(entry, int) and 0 <= entry < width, f"output entry must be in 0..{width - 1}, got {entry!r}")


def grid_matrix(depth: int, width: int, heads: int, rank: int, n_positions: int, n_tokens: int, part_a=None,
                position: int = 0, entry: int = 0, modulus: int = seprank.PRIMES[0], weight_seed: int = 0,
                template_seed: int = 0, balanced: bool = True) -> np.ndarray:
    """M(y_p^i) over GF(p) of the analysed network (no residual) on every sequence of N of the V
    embedded tokens, rows the tokens at A and columns those at B, repeated rows and columns dropped."""
    _check(depth, width, heads, rank, n_positions, position, entry)
    part_a, part_b = seprank.check_partition(n_positions, part_a, balanced)
    params = seprank.field_params(depth, width, heads, modulus, weight_seed)
    table = embedded_templates(n_tokens, width, rank, template_seed)
    values = seprank.grid_values(params, table, n_positions, position, entry, False, modulus)
    return seprank.arrange(values, n_tokens, part_a, part_b, dedupe=True)


def upper_bound(depth: int, rank: int, n_a: int, n_b: int) -> int:
    """The derived upper bound on sep (and on every grid rank): the polynomial-space dimension of a
    homogeneous polynomial of degree 3^L in the N r embedding coordinates, split between A and B."""
    return seprank.polynomial_dimension(depth, rank, n_a, n_b)


def theorem2_upper_at_rank(depth, rank):
    """Eq. (8)'s upper expression on log3 sep with d_x replaced by r:
    2 r L + L - 2 r log3((r/2) sqrt(2 sqrt(2e))) + log3 r (the paper states it for L > log3 d_x;
    here L > log3 r). None where L <= log3 r."""
    require_int("depth", depth)
    require_int("embedding rank", rank)
    log3 = lambda v: math.log(v) / math.log(3.0)  # noqa: E731
    if depth <= log3(rank):
        return None
    return 2.0 * rank * depth + depth - 2.0 * rank * log3(rank / 2.0 * C2_FACTOR) + log3(rank)


def width_r_lower(depth: int, rank: int, n_positions: int, n_tokens: int, part_a=None, position: int = 0,
                  primes: Sequence[int] = seprank.PRIMES[:2], draws: int = 2, balanced: bool = True) -> int:
    """The measured rank of the plain single-head width-r network (full-rank input) on a grid of
    V generic templates: a lower bound on the generic rank of any wider network with d_a >= r fed
    through an embedding of rank r (it can carry the width-r network on the embedding's subspace)."""
    return seprank.measure(depth, rank, 1, n_positions, n_tokens, part_a, position, 0, False, primes, draws,
                           balanced)["rank"]


def measure(depth: int, width: int, heads: int, n_positions: int, n_tokens: int, rank: int, part_a=None,
            position: int = 0, entry: int = 0, primes: Sequence[int] = seprank.PRIMES[:2], draws: int = 2,
            balanced: bool = True, template_seed: int = 0) -> dict:
    """Exact grid-matrix rank over GF(p) for every (prime, weight draw) of the network fed through an
    embedding of rank r, V = ``n_tokens``; a plain dict as :func:`dwlib.core.seprank.measure` gives
    (``rank`` the largest over the repeats, ``agree``), plus ``embedding_rank``, ``tokens``, the grid
    cap, ``capped`` (rank equal to the cap or to the distinct rows or columns of the grid: the grid,
    not the network, sets the number), the
    polynomial-space bounds at width r (``upper``, the derived one) and at d_x (``poly_dim``)."""
    require_int("draws", draws)
    require(len(primes) >= 1, "give at least one prime")
    _check(depth, width, heads, rank, n_positions, position, entry)
    part_a, part_b = seprank.check_partition(n_positions, part_a, balanced)
    ranks, shape = [], None
    for k, p in enumerate(primes):
        for d in range(draws):
            mat = grid_matrix(depth, width, heads, rank, n_positions, n_tokens, part_a, position, entry, int(p),
                              weight_seed=1000 * k + d, template_seed=template_seed, balanced=balanced)
            require(min(mat.shape) <= seprank.MAX_MATRIX_SIDE,
                    f"grid matrix {mat.shape} is too large for elimination (side at most {seprank.MAX_MATRIX_SIDE})")
            shape = mat.shape
            ranks.append(seprank.rank_mod_p(mat, int(p)))
    cap = seprank.grid_cap(n_tokens, n_positions, part_a, part_b, position)
    return {"depth": depth, "width": width, "heads": heads, "embedding_rank": rank, "positions": n_positions,
            "tokens": n_tokens, "templates": n_tokens, "A": list(part_a), "B": list(part_b), "position": position,
            "entry": entry, "rank": max(ranks), "ranks": ranks, "agree": len(set(ranks)) == 1,
            "matrix_shape": list(shape), "grid_cap": cap, "capped": max(ranks) >= min(cap, *shape),
            "upper": upper_bound(depth, rank, len(part_a), len(part_b)),
            "poly_dim": seprank.polynomial_dimension(depth, width, len(part_a), len(part_b))}


def _measure_with(rank):
    def fn(depth, width, heads, n_positions, n_tokens, **kw):
        return measure(depth, width, heads, n_positions, n_tokens, rank, **kw)
    return fn


def saturate(depth: int, width: int, heads: int, n_positions: int, rank: int, start: int = 4, step: int = 2,
             max_tokens: int = 64, patience: int = 2, measure_with=None, **kw) -> dict:
    """Grow the vocabulary V = start, start + step, ... until the rank stops growing (``patience``
    enlargements leave it unchanged and below the grid cap), as :func:`dwlib.core.seprank.saturate`;
    ``measure_with`` wraps :func:`measure` (the sweep times it) and is called with ``rank``."""
    fn = _measure_with(rank) if measure_with is None else (
        lambda *a, **k: measure_with(*a, rank=rank, **k))
    return seprank.saturate(depth, width, heads, n_positions, start=start, step=step, max_templates=max_tokens,
                            patience=patience, measure_with=fn, **kw)
