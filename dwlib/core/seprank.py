"""Measured separation ranks: grid-matrix ranks of the analysed network of eq. (3).

The paper lower-bounds the separation rank of eq. (5) through grid tensors (Theorem 1's proof
sketch) [levine2020depth] [hackbusch2012tensor]: give every position one of M template vectors,
evaluate the output entry y_p at position i on all M^N combinations, and arrange the values as
a matrix M(y) whose rows are indexed by the templates at the positions in A and whose columns
by those in B. A sum of R separable products gives a sum of R rank-one matrices, so
rank M(y) <= sep(y; A, B). This module measures that rank.

- :func:`arrange`: the one grid-matrix builder, from the values on the grid to M(y);
  :func:`partition_matrix` builds M(y) for any function of N positions, :func:`grid_matrix`
  for the analysed network (:func:`dwlib.core.analysed.forward`, with or without residual),
  over GF(p) or in floating point, evaluated in jitted chunks so memory stays bounded
  (:func:`grid_values`); duplicate rows and columns (which the permutation symmetry of eq. 3
  produces in numbers) are dropped, which leaves the rank unchanged.
- :func:`rank_mod_p`: exact rank over GF(p) by Gaussian elimination, vectorised over rows.
- :func:`measure`: the rank for several primes and weight draws (weights uniform in GF(p),
  integer template vectors). Every r x r minor of M(y) is an integer polynomial in the weights;
  if it vanishes identically it vanishes mod p too, so a rank measured over GF(p) never exceeds
  the rank that almost every real weight assignment gives, and it equals it unless the random
  weights hit a root of a non-zero minor mod p (Schwartz-Zippel: probability at most
  deg / p) [schwartz1980fast]. The reported rank is the largest over the repeats, with a
  flag saying whether all repeats agreed.
- :func:`saturate`: grows the grid (M) until the rank stops growing.
- :func:`polynomial_dimension`: the dimension bound any separation rank of a polynomial of the
  network's degree obeys (split each monomial into its A-part and its B-part).
- :func:`float_rank`, :func:`softmax_rank`: singular-value ranks, for the cross-check and for
  the softmax network (eq. 1 attention stacked, not a polynomial).
- :func:`proposition1`: the ranks of every balanced partition, against a local contrast.

The chapter's sweep over all of these, and its stored result, are
:mod:`dwlib.experiments.seprank_sweep`.
"""

from __future__ import annotations

import functools
import itertools
from math import comb
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dwlib.core import analysed
from dwlib.errors import require, require_int

# Primes just below 2^31 (2^31 - 1 is a Mersenne prime); dwlib.core.analysed.mod_einsum needs p < 2^31.
PRIMES = (2147483647, 2147483629, 2147483587)
CHUNK = 1 << 15  # grid points evaluated per jitted call
MAX_GRID_POINTS = 1 << 24
MAX_MATRIX_SIDE = 4096


# ---------------------------------------------------------------------------------------------
# Partitions

def check_partition(n_positions: int, part_a: Sequence[int] | None, balanced: bool = True):
    """(A, B) as sorted tuples; A defaults to the first half of the positions.

    With ``balanced=True`` (Proposition 1's setting) N must be even and |A| = N/2."""
    require_int("positions", n_positions, 2)
    if part_a is None:
        require(n_positions % 2 == 0 or not balanced,
                f"a balanced partition needs an even number of positions, got {n_positions}")
        part_a = range((n_positions + 1) // 2)
    part_a = list(part_a)
    require(all(isinstance(a, (int, np.integer)) for a in part_a), f"A must list integer positions, got {part_a}")
    require(len(set(part_a)) == len(part_a), f"A lists a position twice: {part_a}")
    require(all(0 <= a < n_positions for a in part_a),
            f"A must hold positions in 0..{n_positions - 1}, got {part_a}")
    require(0 < len(part_a) < n_positions, f"A and B must both be non-empty, got A = {part_a}")
    if balanced:
        require(n_positions % 2 == 0, f"a balanced partition needs an even number of positions, got {n_positions}")
        require(len(part_a) == n_positions // 2,
                f"a balanced partition needs |A| = N/2 = {n_positions // 2}, got |A| = {len(part_a)}")
    a = tuple(sorted(int(p) for p in part_a))
    return a, tuple(p for p in range(n_positions) if p not in a)


def balanced_partitions(n_positions: int) -> list[tuple[int, ...]]:
    """The balanced partitions (A, B) of N positions, |A| = |B| = N/2, each given by A with
    position 0 in A (so that (A, B) and (B, A) are listed once)."""
    require_int("n_positions", n_positions, 2)
    require(n_positions % 2 == 0, f"balanced partitions need an even number of positions, got {n_positions}")
    return [(0,) + rest for rest in itertools.combinations(range(1, n_positions), n_positions // 2 - 1)]


def partition_name(part_a, n_positions: int) -> str:
    """'{1,2} | {3,4}' (1-based, as the paper numbers positions)."""
    b = [p for p in range(n_positions) if p not in part_a]
    return "{" + ",".join(str(p + 1) for p in part_a) + "} | {" + ",".join(str(p + 1) for p in b) + "}"


def _check_shape(depth, width, heads, n_positions, position, entry):
    analysed.check_shape(depth, width, heads)
    require_int("positions", n_positions, 2)
    require(isinstance(position, int) and 0 <= position < n_positions,
            f"output position must be in 0..{n_positions - 1}, got {position!r}")
    require(isinstance(entry, int) and 0 <= entry < width,
            f"output entry must be in 0..{width - 1}, got {entry!r}")


# ---------------------------------------------------------------------------------------------
# The grid and its matrix

def grid_points(table, n_positions: int):
    """Every assignment of the M vectors in ``table`` (M, d_x) to N positions: (M^N, N, d_x),
    in C order (position 0 varies slowest, the last position fastest)."""
    M = len(table)
    require(M ** n_positions <= MAX_GRID_POINTS,
            f"M^N = {M}^{n_positions} grid points is too many (at most 2^24)")
    return table[np.indices((M,) * n_positions).reshape(n_positions, -1).T]


def arrange(values, M: int, part_a, part_b, dedupe: bool = False) -> np.ndarray:
    """The grid matrix M(y): the M^N values of a function on the grid (C order, as
    :func:`grid_points`) as the (M^|A|, M^|B|) matrix with the templates at the positions of A
    indexing rows and those of B columns. ``dedupe`` drops repeated rows and columns (same rank)."""
    values = np.asarray(values).reshape((M,) * (len(part_a) + len(part_b)))
    mat = values.transpose(list(part_a) + list(part_b)).reshape(M ** len(part_a), M ** len(part_b))
    if dedupe:
        mat = np.unique(np.unique(mat, axis=0), axis=1)
    return mat


def partition_matrix(fn, table, n_positions: int, part_a: Sequence[int], dedupe: bool = False) -> np.ndarray:
    """The grid matrix of any function of N positions w.r.t. (A, B): ``fn`` maps a batch of
    inputs (M^N, N, d_x) to (M^N,) values; every position takes each of the M vectors in
    ``table`` (M, d_x). Its rank is at most the separation rank of eq. (5) w.r.t. (A, B): a sum
    of R products g(A) g'(B) gives a matrix of rank at most R."""
    table = np.asarray(table)
    require(table.ndim == 2 and table.shape[0] >= 1, "the templates must be an (M, d_x) array")
    part_a, part_b = check_partition(n_positions, part_a, balanced=False)
    return arrange(fn(grid_points(table, n_positions)), len(table), part_a, part_b, dedupe)


# ---------------------------------------------------------------------------------------------
# Templates, weights and the analysed network's grid matrix

def templates(n_templates: int, width: int, seed: int = 0, span: int | None = None) -> np.ndarray:
    """M distinct integer template vectors in [-span, span]^d_x (int64, shape (M, d_x)); span
    defaults to the smallest >= 3 that holds M distinct vectors."""
    require_int("templates", n_templates)
    require_int("width", width)
    if span is None:
        span = 3
        while (2 * span + 1) ** width < 2 * n_templates:
            span += 1
    require((2 * span + 1) ** width >= n_templates,
            f"only {(2 * span + 1) ** width} integer vectors in [-{span}, {span}]^{width}; asked for {n_templates}")
    rng = np.random.default_rng(seed)
    seen, out = set(), []
    while len(out) < n_templates:
        v = tuple(int(t) for t in rng.integers(-span, span + 1, size=width))
        if v not in seen:
            seen.add(v)
            out.append(v)
    return np.asarray(out, dtype=np.int64)


def field_params(depth: int, width: int, heads: int, modulus: int, seed: int = 0) -> list[dict]:
    """Weights of the analysed network drawn uniformly from GF(p) (int64 in [0, p))."""
    rng = np.random.default_rng(seed)
    return [{k: np.asarray(rng.integers(0, modulus, size=v.shape), dtype=np.int64) for k, v in layer.items()}
            for layer in analysed.constant_params(depth, width, heads)]


def real_params(depth: int, width: int, heads: int, seed: int = 0) -> list[dict]:
    """Small non-zero integer weights in {-9, ..., 9}, as float64: exact in floating point
    while the outputs stay below 2^53 (used for the floating-point cross-check)."""
    rng = np.random.default_rng(seed)
    choices = np.array([v for v in range(-9, 10) if v], dtype=np.float64)
    return [{k: rng.choice(choices, size=v.shape) for k, v in layer.items()}
            for layer in analysed.constant_params(depth, width, heads)]


@functools.lru_cache(maxsize=64)
def _chunk_fn(n_positions, M, chunk, position, entry, residual, modulus, kind):
    """y_p^i on ``chunk`` consecutive grid points from ``start``, jitted once per shape (the
    weights are an argument, so new draws reuse the compiled function)."""
    powers = jnp.asarray([M ** (n_positions - 1 - k) for k in range(n_positions)], jnp.int64)

    def f(params, table, start):
        flat = start + jnp.arange(chunk, dtype=jnp.int64)
        digits = (flat[:, None] // powers[None, :]) % M  # C order, as grid_points
        x = table[digits]  # (chunk, N, d_x)
        if kind == "softmax":
            x = analysed.attention_forward(params, x, residual=residual)
        else:
            x = analysed.forward(params, x, residual=residual, modulus=modulus)
        return x[:, position, entry]

    return jax.jit(f)


def grid_values(params, table, n_positions: int, position: int = 0, entry: int = 0, residual: bool = False,
                modulus: int | None = None, kind: str = "analysed", chunk: int = CHUNK) -> np.ndarray:
    """y_p^i on every point of the grid (all M^N assignments of templates to positions), in
    C order. ``modulus``: over GF(p), else in float64. ``kind="softmax"``: eq. (1)'s attention
    stacked (:func:`dwlib.core.analysed.attention_forward`) instead of eq. (3)."""
    M = int(table.shape[0])
    total = M ** n_positions
    require(total <= MAX_GRID_POINTS, f"M^N = {M}^{n_positions} grid points is too many (at most 2^24)")
    chunk = min(chunk, total)
    with jax.enable_x64(True):
        dtype = jnp.int64 if modulus is not None else jnp.float64
        p = jax.tree_util.tree_map(lambda w: jnp.asarray(w, dtype), params)
        t = jnp.asarray(table % modulus if modulus is not None else table, dtype)
        fn = _chunk_fn(n_positions, M, chunk, position, entry, residual, modulus, kind)
        parts = [np.asarray(fn(p, t, jnp.int64(s))) for s in range(0, total, chunk)]
    return np.concatenate(parts)[:total]


def grid_matrix(depth: int, width: int, heads: int, n_positions: int, n_templates: int, part_a=None,
                position: int = 0, entry: int = 0, residual: bool = False, modulus: int | None = PRIMES[0],
                weight_seed: int = 0, template_seed: int = 0, balanced: bool = True, params=None) -> np.ndarray:
    """M(y_p^i) of the analysed network w.r.t. (A, B) on a grid of M integer templates, with
    repeated rows and columns dropped.

    ``modulus=p``: entries in GF(p), weights uniform in GF(p) (seeded); ``modulus=None``: float64
    with small integer weights (:func:`real_params`) unless ``params`` is given."""
    _check_shape(depth, width, heads, n_positions, position, entry)
    part_a, part_b = check_partition(n_positions, part_a, balanced)
    if params is None:
        params = (field_params(depth, width, heads, modulus, weight_seed) if modulus is not None
                  else real_params(depth, width, heads, weight_seed))
    table = templates(n_templates, width, template_seed)
    values = grid_values(params, table, n_positions, position, entry, residual, modulus)
    return arrange(values, n_templates, part_a, part_b, dedupe=True)


# ---------------------------------------------------------------------------------------------
# Ranks

def rank_mod_p(matrix, modulus: int) -> int:
    """Rank over GF(p) of an integer matrix, by Gaussian elimination (each pivot eliminates all
    rows below it at once). Entries are reduced into [0, p); p < 2^31 keeps every product
    below 2^62."""
    analysed.check_modulus(modulus)
    a = np.array(matrix, dtype=np.int64) % modulus
    require(a.ndim == 2, f"matrix must be 2-D, got shape {a.shape}")
    if a.shape[0] > a.shape[1]:
        a = np.ascontiguousarray(a.T)
    rows, cols = a.shape
    rank = 0
    for c in range(cols):
        if rank == rows:
            break
        nz = np.flatnonzero(a[rank:, c])
        if nz.size == 0:
            continue
        piv = rank + int(nz[0])
        if piv != rank:
            a[[rank, piv]] = a[[piv, rank]]
        inv = pow(int(a[rank, c]), -1, modulus)
        a[rank, c:] = (a[rank, c:] * inv) % modulus
        below = a[rank + 1:, c]
        hit = np.flatnonzero(below)
        if hit.size:
            r = rank + 1 + hit
            a[r, c:] = (a[r, c:] - (a[r, c:c + 1] * a[rank, c:]) % modulus) % modulus
        rank += 1
    return rank


def float_rank(matrix, rtol: float | None = None):
    """(rank, singular values) in float64; the tolerance is numpy's default
    (max(shape) eps sigma_max) unless ``rtol`` is given (relative to sigma_max)."""
    s = np.linalg.svd(np.asarray(matrix, dtype=np.float64), compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0, s
    tol = (max(np.shape(matrix)) * np.finfo(np.float64).eps if rtol is None else rtol) * s[0]
    return int(np.sum(s > tol)), s


def polynomial_dimension(depth: int, width: int, n_a: int, n_b: int, residual: bool = False) -> int:
    """An upper bound on the separation rank of any polynomial of the analysed network's degree.

    Without residual y_p^i is homogeneous of degree D = 3^L in the N d_x inputs; splitting each
    monomial into its part in the n_A = |A| d_x variables of A (degree a) and its part in B
    (degree D - a) writes y as sum_a sum_{monomials m of degree a} m(A) g_m(B), and also the other
    way round, so sep <= sum_a min(h(n_A, a), h(n_B, D - a)), h(n, k) = C(n + k - 1, k) the number
    of monomials of degree k in n variables. With the residual the degrees 1, 3, ..., 3^L all
    occur; the same split over all total degrees d <= D gives
    sep <= sum_a min(h(n_A, a), sum_{b <= D - a} h(n_B, b)).

    Evaluated in closed form, not term by term (3^L terms: 43 million at depth 16): the A-part
    h(n_A, a) grows with a and the B-part g(a) shrinks, so the minimum is the A-part up to the
    last a where it is the smaller (found by bisection) and the B-part after it, and each part
    sums by the hockey-stick identity sum_{k <= K} h(n, k) = h(n + 1, K).
    """
    D = 3 ** require_int("depth", depth)
    n_a = require_int("|A|", n_a) * require_int("width", width)
    n_b = require_int("|B|", n_b) * width
    m = n_b + 1 if residual else n_b  # the B-part: g(a) = h(m, D - a)

    def h(n, k):
        return comb(n + k - 1, k) if k >= 0 else 0

    lo, hi = -1, D  # the last a with h(n_a, a) <= g(a) lies in [lo, hi]; lo = -1: none
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if h(n_a, mid) <= h(m, D - mid) else (lo, mid - 1)
    return h(n_a + 1, lo) + h(m + 1, D - lo - 1)


def grid_cap(M: int, n_positions: int, part_a, part_b, position: int) -> int:
    """The most distinct rows/columns a grid of M templates can give M(y_p^i): y is symmetric in
    the positions other than i (eq. 3 sums every j alike), so the side holding i has
    M * C(M + k - 1, k) distinct rows (k its other positions) and the other side C(M + m - 1, m)."""
    def side(part):
        k = len(part) - (position in part)
        return (M if position in part else 1) * comb(M + k - 1, k)

    return min(side(part_a), side(part_b))


def measure(depth: int, width: int, heads: int, n_positions: int, n_templates: int, part_a=None,
            position: int = 0, entry: int = 0, residual: bool = False, primes: Sequence[int] = PRIMES[:2],
            draws: int = 2, balanced: bool = True, template_seed: int = 0) -> dict:
    """Exact grid-matrix rank over GF(p) for every (prime, weight draw); a plain dict with
    ``rank`` (the largest), ``ranks`` (all), ``agree`` (all equal), the matrix shape after
    dropping repeats, the grid cap and the polynomial-space bound."""
    require_int("draws", draws)
    require(len(primes) >= 1, "give at least one prime")
    part_a, part_b = check_partition(n_positions, part_a, balanced)
    ranks, shape = [], None
    for k, p in enumerate(primes):
        for d in range(draws):
            mat = grid_matrix(depth, width, heads, n_positions, n_templates, part_a, position, entry, residual,
                              modulus=int(p), weight_seed=1000 * k + d, template_seed=template_seed,
                              balanced=balanced)
            require(min(mat.shape) <= MAX_MATRIX_SIDE,
                    f"grid matrix {mat.shape} is too large for elimination (side at most {MAX_MATRIX_SIDE})")
            shape = mat.shape
            ranks.append(rank_mod_p(mat, int(p)))
    return {"depth": depth, "width": width, "heads": heads, "positions": n_positions, "templates": n_templates,
            "A": list(part_a), "B": list(part_b), "position": position, "entry": entry, "residual": residual,
            "rank": max(ranks), "ranks": ranks, "agree": len(set(ranks)) == 1, "matrix_shape": list(shape),
            "grid_cap": grid_cap(n_templates, n_positions, part_a, part_b, position),
            "poly_dim": polynomial_dimension(depth, width, len(part_a), len(part_b), residual)}


def saturate(depth, width, heads, n_positions, start: int = 4, step: int = 2, max_templates: int = 64,
             patience: int = 2, measure_with=measure, **kw) -> dict:
    """Grow the grid M = start, start + step, ... until the rank stops growing: ``patience``
    successive enlargements leave it unchanged (and below the grid cap). Returns the last
    :func:`measure` dict plus ``history`` [(M, rank, grid cap)] and ``saturated`` (False if
    max_templates, or the largest grid measured (MAX_GRID_POINTS), came first). ``measure_with``:
    :func:`measure` or a wrapper of it (the sweep times each measurement)."""
    require_int("patience", patience)
    require(start ** n_positions <= MAX_GRID_POINTS,
            f"M^N = {start}^{n_positions} grid points is too many (at most 2^24)")
    history, last, saturated = [], None, False
    M = start
    while M <= max_templates and M ** n_positions <= MAX_GRID_POINTS:
        last = measure_with(depth, width, heads, n_positions, M, **kw)
        history.append([M, last["rank"], last["grid_cap"]])
        tail = history[-(patience + 1):]
        if len(tail) == patience + 1 and len({h[1] for h in tail}) == 1 and tail[0][1] < tail[0][2]:
            saturated = True
            break
        M += step
    return {**last, "history": history, "saturated": saturated}


# ---------------------------------------------------------------------------------------------
# Softmax contrast

def softmax_rank(depth: int, width: int, heads: int, n_positions: int, n_templates: int, part_a=None,
                 position: int = 0, entry: int = 0, residual: bool = False, seed: int = 0,
                 rtols: Sequence[float] = (1e-6, 1e-9, 1e-12)) -> dict:
    """Grid-matrix rank of the network with softmax attention (eq. 1's f_SA stacked L times, no
    LayerNorm or feed-forward), Gaussian weights, templates scaled to unit size. Not a polynomial:
    only floating-point ranks, at several relative tolerances."""
    analysed.check_shape(depth, width, heads)
    part_a, part_b = check_partition(n_positions, part_a)
    with jax.enable_x64(True):
        params = [{k: np.asarray(v) for k, v in layer.items()}
                  for layer in analysed.init_params(jax.random.PRNGKey(seed), depth, width, heads, scale=1.0,
                                                    dtype=np.float64)]
    table = templates(n_templates, width, seed).astype(np.float64) / 3.0
    values = grid_values(params, table, n_positions, position, entry, residual, None, kind="softmax")
    mat = arrange(values, n_templates, part_a, part_b, dedupe=True)
    s = np.linalg.svd(mat, compute_uv=False)
    return {"depth": depth, "width": width, "heads": heads, "positions": n_positions, "templates": n_templates,
            "matrix_shape": list(mat.shape), "grid_cap": grid_cap(n_templates, n_positions, part_a, part_b, position),
            "ranks": {f"{t:g}": int(np.sum(s > t * s[0])) for t in rtols},
            "singular_values": [float(v) for v in s / s[0]]}


# ---------------------------------------------------------------------------------------------
# Proposition 1 and its local contrast

def function_rank(fn, n_positions: int, n_templates: int, width: int, part_a, modulus: int = PRIMES[0],
                  template_seed: int = 0) -> int:
    """Exact GF(p) rank of the grid matrix of an integer-valued function ``fn`` of N positions
    ((..., N, d_x) int64 -> (...,) int64, exact in int64 on the grid), w.r.t. (A, B)."""
    table = templates(n_templates, width, template_seed)
    with jax.enable_x64(True):
        mat = partition_matrix(lambda x: np.asarray(fn(jnp.asarray(x, jnp.int64))) % modulus,
                               table, n_positions, part_a, dedupe=True)
    return rank_mod_p(mat, modulus)


def proposition1(depth: int, width: int, heads: int, n_positions: int, n_templates: int, position: int = 0,
                 **kw) -> list[dict]:
    """Exact ranks of the analysed network and of the local contrast
    (:func:`dwlib.core.analysed.neighbour_pairs_function`) for every balanced partition."""
    rows = []
    for part_a in balanced_partitions(n_positions):
        m = measure(depth, width, heads, n_positions, n_templates, part_a, position, **kw)
        rows.append({"partition": partition_name(part_a, n_positions), "A": list(part_a),
                     "attention": m["rank"], "agree": m["agree"],
                     "local": function_rank(analysed.neighbour_pairs_function, n_positions, n_templates, width,
                                            part_a)})
    return rows


# ---------------------------------------------------------------------------------------------
# Floating point against exact

def float_vs_exact(depth: int, width: int, heads: int, n_positions: int, n_templates: int, seed: int = 0) -> dict:
    """The same integer-weight network (:func:`real_params`) and integer grid, once in float64
    with numpy's SVD rank and once exactly over GF(p) (the integer weights reduced mod p). For a
    degree-3^L polynomial the entries span many orders of magnitude, the singular values of
    M(y) do too, and the floating rank drops below the exact one once the spread passes 1/eps."""
    part_a, part_b = check_partition(n_positions, None)
    params = real_params(depth, width, heads, seed)
    table = templates(n_templates, width, 0)
    fvals = grid_values(params, table, n_positions)
    r_float, s = float_rank(arrange(fvals, n_templates, part_a, part_b, dedupe=True))
    p = PRIMES[0]
    iparams = [{k: (v.astype(np.int64) % p) for k, v in layer.items()} for layer in params]
    evals = grid_values(iparams, table, n_positions, modulus=p)
    r_exact = rank_mod_p(arrange(evals, n_templates, part_a, part_b, dedupe=True), p)
    return {"depth": depth, "width": width, "heads": heads, "positions": n_positions, "templates": n_templates,
            "exact": r_exact, "float": r_float, "max_abs_entry": float(np.max(np.abs(fvals))),
            "exact_in_float64": bool(np.max(np.abs(fvals)) < 2.0 ** 53),
            "singular_values": [float(v) for v in s / s[0]]}
