"""Measured separation ranks: grid-matrix ranks of the analysed network of eq. (3).

The paper lower-bounds the separation rank of eq. (5) through grid tensors (Theorem 1's proof
sketch) [levine2020depth] [hackbusch2012tensor]: give every position one of M template vectors,
evaluate the output entry y_p at position i on all M^N combinations, and arrange the values as
a matrix M(y) whose rows are indexed by the templates at the positions in A and whose columns
by those in B. A sum of R separable products gives a sum of R rank-one matrices, so
rank M(y) <= sep(y; A, B). This module measures that rank.

- :func:`grid_matrix`: M(y) for the analysed network (:func:`dwlib.core.analysed.forward`, with or
  without residual), over GF(p) or in floating point, evaluated in jitted chunks so memory stays
  bounded; duplicate rows and columns (which the permutation symmetry of eq. 3 produces in
  numbers) are dropped, which leaves the rank unchanged.
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
- :func:`sweep`: the chapter's measurements (``dwlib seprank --sweep``).
"""

from __future__ import annotations

import functools
import json
import math
import time
from math import comb
from pathlib import Path
from typing import Sequence

import numpy as np

from dwlib.errors import require, require_int

# Primes just below 2^31 (2^31 - 1 is a Mersenne prime); dwlib.core.analysed.mod_einsum needs p < 2^31.
PRIMES = (2147483647, 2147483629, 2147483587)
CHUNK = 1 << 15  # grid points evaluated per jitted call
MAX_GRID_POINTS = 1 << 24
MAX_MATRIX_SIDE = 4096
DATA_PATH = Path(__file__).resolve().parents[1] / "data" / "seprank.json"


# ---------------------------------------------------------------------------------------------
# Validation

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


def _check_shape(depth, width, heads, n_positions, position, entry):
    from dwlib.core.analysed import check_shape

    check_shape(depth, width, heads)
    require_int("positions", n_positions, 2)
    require(isinstance(position, int) and 0 <= position < n_positions,
            f"output position must be in 0..{n_positions - 1}, got {position!r}")
    require(isinstance(entry, int) and 0 <= entry < width,
            f"output entry must be in 0..{width - 1}, got {entry!r}")


# ---------------------------------------------------------------------------------------------
# Templates, weights and the grid matrix

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
    from dwlib.core.analysed import constant_params

    rng = np.random.default_rng(seed)
    return [{k: np.asarray(rng.integers(0, modulus, size=v.shape), dtype=np.int64) for k, v in layer.items()}
            for layer in constant_params(depth, width, heads)]


def real_params(depth: int, width: int, heads: int, seed: int = 0) -> list[dict]:
    """Small non-zero integer weights in {-9, ..., 9}, as float64: exact in floating point
    while the outputs stay below 2^53 (used for the floating-point cross-check)."""
    from dwlib.core.analysed import constant_params

    rng = np.random.default_rng(seed)
    choices = np.array([v for v in range(-9, 10) if v], dtype=np.float64)
    return [{k: rng.choice(choices, size=v.shape) for k, v in layer.items()}
            for layer in constant_params(depth, width, heads)]


@functools.lru_cache(maxsize=64)
def _chunk_fn(n_positions, M, chunk, position, entry, residual, modulus, kind):
    import jax
    import jax.numpy as jnp

    from dwlib.core import analysed

    powers = jnp.asarray([M ** (n_positions - 1 - k) for k in range(n_positions)], jnp.int64)

    def f(params, table, start):
        flat = start + jnp.arange(chunk, dtype=jnp.int64)
        digits = (flat[:, None] // powers[None, :]) % M  # C order: position 0 varies slowest
        x = table[digits]  # (chunk, N, d_x)
        if kind == "softmax":
            for weights in params:
                y = analysed.self_attention(weights, x)
                x = y + x if residual else y
        else:
            x = analysed.forward(params, x, residual=residual, modulus=modulus)
        return x[:, position, entry]

    return jax.jit(f)


def grid_values(params, table, n_positions: int, position: int = 0, entry: int = 0, residual: bool = False,
                modulus: int | None = None, kind: str = "analysed", chunk: int = CHUNK) -> np.ndarray:
    """y_p^i on every point of the grid (all M^N assignments of templates to positions), in
    C order (position 0 varies slowest). ``modulus``: over GF(p), else in float64."""
    import jax
    import jax.numpy as jnp

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


def arrange(values: np.ndarray, M: int, n_positions: int, part_a, part_b, dedupe: bool = True) -> np.ndarray:
    """The grid values as the matrix M(y): rows indexed by the templates at the positions in A,
    columns by those in B. ``dedupe`` drops repeated rows and columns (same rank)."""
    from dwlib.core.analysed import arrange_grid

    mat = arrange_grid(values, M, part_a, part_b)
    if dedupe:
        mat = np.unique(mat, axis=0)
        mat = np.unique(mat, axis=1)
    return mat


def grid_matrix(depth: int, width: int, heads: int, n_positions: int, n_templates: int, part_a=None,
                position: int = 0, entry: int = 0, residual: bool = False, modulus: int | None = PRIMES[0],
                weight_seed: int = 0, template_seed: int = 0, balanced: bool = True, params=None) -> np.ndarray:
    """M(y_p^i) of the analysed network w.r.t. (A, B) on a grid of M integer templates.

    ``modulus=p``: entries in GF(p), weights uniform in GF(p) (seeded); ``modulus=None``: float64
    with small integer weights (:func:`real_params`) unless ``params`` is given."""
    _check_shape(depth, width, heads, n_positions, position, entry)
    part_a, part_b = check_partition(n_positions, part_a, balanced)
    if params is None:
        params = (field_params(depth, width, heads, modulus, weight_seed) if modulus is not None
                  else real_params(depth, width, heads, weight_seed))
    table = templates(n_templates, width, template_seed)
    values = grid_values(params, table, n_positions, position, entry, residual, modulus)
    return arrange(values, n_templates, n_positions, part_a, part_b)


# ---------------------------------------------------------------------------------------------
# Ranks

def rank_mod_p(matrix, modulus: int) -> int:
    """Rank over GF(p) of an integer matrix, by Gaussian elimination (each pivot eliminates all
    rows below it at once). Entries are reduced into [0, p); p < 2^31 keeps every product
    below 2^62."""
    from dwlib.core.analysed import check_modulus

    check_modulus(modulus)
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
    """
    D = 3 ** require_int("depth", depth)
    n_a = require_int("|A|", n_a) * require_int("width", width)
    n_b = require_int("|B|", n_b) * width

    def h(n, k):
        return comb(n + k - 1, k)

    if not residual:
        return sum(min(h(n_a, a), h(n_b, D - a)) for a in range(D + 1))
    return sum(min(h(n_a, a), sum(h(n_b, b) for b in range(D - a + 1))) for a in range(D + 1))


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
    dropping repeats, the grid cap, the polynomial-space bound and the seconds taken."""
    require_int("draws", draws)
    require(len(primes) >= 1, "give at least one prime")
    part_a, part_b = check_partition(n_positions, part_a, balanced)
    t0 = time.perf_counter()
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
            "poly_dim": polynomial_dimension(depth, width, len(part_a), len(part_b), residual),
            "seconds": round(time.perf_counter() - t0, 3)}


def saturate(depth, width, heads, n_positions, start: int = 4, step: int = 2, max_templates: int = 64,
             patience: int = 2, **kw) -> dict:
    """Grow the grid M = start, start + step, ... until the rank stops growing: ``patience``
    successive enlargements leave it unchanged (and below the grid cap). Returns the last
    :func:`measure` dict plus ``history`` [(M, rank, grid cap)], ``saturated`` (False if
    max_templates came first) and ``seconds`` for the whole growth."""
    require_int("patience", patience)
    t0 = time.perf_counter()
    history, last = [], None
    M = start
    while M <= max_templates:
        last = measure(depth, width, heads, n_positions, M, **kw)
        history.append([M, last["rank"], last["grid_cap"]])
        tail = history[-(patience + 1):]
        if (len(tail) == patience + 1 and len({h[1] for h in tail}) == 1 and tail[0][1] < tail[0][2]):
            break
        M += step
    done = M <= max_templates
    return {**last, "history": history, "saturated": done, "seconds": round(time.perf_counter() - t0, 3),
            "last_seconds": last["seconds"]}


# ---------------------------------------------------------------------------------------------
# Softmax contrast

def softmax_rank(depth: int, width: int, heads: int, n_positions: int, n_templates: int, part_a=None,
                 position: int = 0, entry: int = 0, residual: bool = False, seed: int = 0,
                 rtols: Sequence[float] = (1e-6, 1e-9, 1e-12)) -> dict:
    """Grid-matrix rank of the network with softmax attention (eq. 1's f_SA stacked L times, no
    LayerNorm or feed-forward), Gaussian weights, templates scaled to unit size. Not a polynomial:
    only floating-point ranks, at several relative tolerances."""
    import jax

    from dwlib.core.analysed import check_shape, init_params

    check_shape(depth, width, heads)
    part_a, part_b = check_partition(n_positions, part_a)
    with jax.enable_x64(True):
        params = [{k: np.asarray(v) for k, v in layer.items()}
                  for layer in init_params(jax.random.PRNGKey(seed), depth, width, heads, scale=1.0,
                                           dtype=np.float64)]
    table = templates(n_templates, width, seed).astype(np.float64) / 3.0
    values = grid_values(params, table, n_positions, position, entry, residual, None, kind="softmax")
    mat = arrange(values, n_templates, n_positions, part_a, part_b)
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
    import jax
    import jax.numpy as jnp

    part_a, part_b = check_partition(n_positions, part_a, balanced=False)
    table = templates(n_templates, width, template_seed)
    total = n_templates ** n_positions
    require(total <= MAX_GRID_POINTS, f"M^N = {n_templates}^{n_positions} grid points is too many (at most 2^24)")
    from dwlib.core.analysed import grid_points

    with jax.enable_x64(True):
        values = np.asarray(fn(jnp.asarray(grid_points(table, n_positions), jnp.int64))) % modulus
    return rank_mod_p(arrange(values, n_templates, n_positions, part_a, part_b), modulus)


def partition_name(part_a, n_positions: int) -> str:
    """'{1,2} | {3,4}' (1-based, as the paper numbers positions)."""
    b = [p for p in range(n_positions) if p not in part_a]
    return "{" + ",".join(str(p + 1) for p in part_a) + "} | {" + ",".join(str(p + 1) for p in b) + "}"


def proposition1(depth: int, width: int, heads: int, n_positions: int, n_templates: int, position: int = 0,
                 **kw) -> list[dict]:
    """Exact ranks of the analysed network and of the local contrast
    (:func:`dwlib.core.analysed.neighbour_pairs_function`) for every balanced partition."""
    from dwlib.core.analysed import balanced_partitions, neighbour_pairs_function

    rows = []
    for part_a in balanced_partitions(n_positions):
        m = measure(depth, width, heads, n_positions, n_templates, part_a, position, **kw)
        rows.append({"partition": partition_name(part_a, n_positions), "A": list(part_a),
                     "attention": m["rank"], "agree": m["agree"],
                     "local": function_rank(neighbour_pairs_function, n_positions, n_templates, width, part_a)})
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
    fmat = arrange(fvals, n_templates, n_positions, part_a, part_b)
    r_float, s = float_rank(fmat)
    p = PRIMES[0]
    iparams = [{k: (v.astype(np.int64) % p) for k, v in layer.items()} for layer in params]
    evals = grid_values(iparams, table, n_positions, modulus=p)
    r_exact = rank_mod_p(arrange(evals, n_templates, n_positions, part_a, part_b), p)
    return {"depth": depth, "width": width, "heads": heads, "positions": n_positions, "templates": n_templates,
            "exact": r_exact, "float": r_float, "max_abs_entry": float(np.max(np.abs(fvals))),
            "exact_in_float64": bool(np.max(np.abs(fvals)) < 2.0 ** 53),
            "singular_values": [float(v) for v in s / s[0]]}


# ---------------------------------------------------------------------------------------------
# The chapter's sweep

# (depth, width) pairs measured at N = 4, H = 1: rank against depth at widths 1-3 and against
# width at depths 1-3. L = 3 stops at d_x = 2 (d_x = 3 needs a grid matrix past 4096 rows).
SWEEP_SHAPES = [(1, w) for w in range(1, 9)] + [(2, w) for w in range(1, 5)] + [(3, 1), (3, 2)]


def _bounds(depth, width, heads):
    from dwlib.core.bounds import separation_rank_bounds

    b = separation_rank_bounds(depth, width, heads) if width > heads else None
    if b is None:
        return None, None, None
    lo, hi = (float(b[k]) if np.isfinite(b[k]) else None for k in ("lower", "upper"))
    return lo, hi, (int(b["theorem"]) or None)


def sweep(quick: bool = False, log=print) -> dict:
    """Every measurement of the chapter (``quick``: a small subset, for tests). Returns a plain
    dict (JSON-ready) with the timings of each part and of the largest measurement."""
    t0 = time.perf_counter()
    out = {"primes": list(PRIMES[:2]), "draws": 2, "positions": 4, "heads": 1}
    shapes = SWEEP_SHAPES if not quick else [(1, 2), (2, 1)]
    ranks = []
    for depth, width in shapes:
        m = saturate(depth, width, 1, 4, start=6, step=4, max_templates=46)
        lo, hi, thm = _bounds(depth, width, 1)
        m.update({"log3_lower": lo, "log3_upper": hi, "theorem": thm})
        ranks.append(m)
        log(f"L={depth} d_x={width}: rank {m['rank']} (grid {m['history']}, {m['seconds']} s)")
    out["ranks"] = ranks
    extra = [] if quick else [  # heads, positions, residual at L = 2, d_x = 2 (and d_x = 4 for heads)
        ("heads", dict(depth=2, width=2, heads=2, n_positions=4)),
        ("heads", dict(depth=1, width=4, heads=2, n_positions=4)),
        ("heads", dict(depth=1, width=4, heads=4, n_positions=4)),
        ("heads", dict(depth=2, width=4, heads=2, n_positions=4)),
        ("positions", dict(depth=2, width=2, heads=1, n_positions=2)),
        ("positions", dict(depth=2, width=2, heads=1, n_positions=6)),
        ("residual", dict(depth=2, width=2, heads=1, n_positions=4, residual=True)),
        ("residual", dict(depth=1, width=4, heads=1, n_positions=4, residual=True)),
    ]
    variants = []
    for what, kw in extra:
        grid = dict(start=6, step=4, max_templates=46) if kw["n_positions"] <= 4 else dict(start=5, step=2, max_templates=9)
        m = saturate(**grid, **kw)
        m["varies"] = what
        variants.append(m)
        log(f"{what}: {kw} rank {m['rank']} ({m['seconds']} s)")
    out["variants"] = variants
    out["proposition1"] = {
        "N4": proposition1(2, 2, 1, 4, 10),
        "N6": proposition1(2, 1, 1, 6, 7) if not quick else []}
    log("proposition 1 done")
    out["float_vs_exact"] = [float_vs_exact(*a) for a in
                             ([(1, 2, 1, 4, 8)] if quick else
                              [(1, 2, 1, 4, 8), (1, 4, 1, 4, 8), (2, 1, 1, 4, 10), (2, 2, 1, 4, 14),
                               (3, 1, 1, 4, 10), (3, 2, 1, 4, 34)])]
    log("float vs exact done")
    out["softmax"] = [softmax_rank(L, 2, 1, 4, M) for L in (1, 2) for M in ((6,) if quick else (6, 10, 14))]
    for s in out["softmax"]:
        s.pop("singular_values")
    log("softmax done")
    largest = max(ranks + variants, key=lambda m: m["seconds"])
    out["timing"] = {"sweep_seconds": round(time.perf_counter() - t0, 1),
                     "largest": {k: largest[k] for k in ("depth", "width", "heads", "positions", "templates",
                                                         "matrix_shape", "rank", "seconds")}}
    return out


def write_sweep(result: dict, path: str | Path = DATA_PATH) -> Path:
    """Store a :func:`sweep` result (default: the packaged data file the chapter reads)."""
    from dwlib.store import write_json

    return write_json(path, result, indent=1)


def load(path: str | Path = DATA_PATH) -> dict:
    """The stored sweep (dwlib/data/seprank.json, written by ``dwlib seprank --sweep``)."""
    path = Path(path)
    require(path.exists(), f"no stored sweep at {path}: run `dwlib seprank --sweep`")
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------------------
# Command line

def _run(args) -> int:
    from dwlib.cli import print_json

    if args.sweep:
        out = sweep(quick=args.quick, log=(lambda *_: None) if args.json else print)
        if args.out:
            write_sweep(out, args.out)
        if args.json:
            print_json(out)
        else:
            t = out["timing"]
            print(f"sweep: {t['sweep_seconds']} s; largest measurement {t['largest']}"
                  + (f"; written to {args.out}" if args.out else ""))
        return 0
    require(all(v is not None for v in (args.depth, args.width, args.heads)),
            "give --depth, --width and --heads (or --sweep)")
    part_a = [int(a) - 1 for a in args.part_a.split(",")] if args.part_a else None
    kw = dict(part_a=part_a, position=args.position - 1, entry=args.entry - 1, residual=args.residual,
              primes=PRIMES[:args.primes], draws=args.draws)
    if args.templates:
        m = measure(args.depth, args.width, args.heads, args.positions, args.templates, **kw)
    else:
        m = saturate(args.depth, args.width, args.heads, args.positions, **kw)
    lo, hi, thm = _bounds(args.depth, args.width, args.heads)
    m.update({"log3_lower": lo, "log3_upper": hi, "theorem": thm})
    if args.json:
        print_json(m)
        return 0
    print(f"L={m['depth']} d_x={m['width']} H={m['heads']} N={m['positions']} A={[a + 1 for a in m['A']]}: "
          f"grid rank {m['rank']} over GF(p) (repeats {m['ranks']}, M={m['templates']}, matrix {m['matrix_shape']})")
    if "history" in m:
        print(f"grid growth (M, rank, grid cap): {m['history']}; saturated: {m['saturated']}")
    print(f"polynomial-space bound {m['poly_dim']}; log3 rank = {math.log(max(m['rank'], 1), 3):.3f}; "
          + (f"theorem {thm} bounds on log3 sep: [{lo:.3f}, {hi:.3f}]" if thm else
             "neither theorem applies (on the threshold, or width <= heads)"))
    return 0


def add_commands(sub) -> None:
    """Register ``dwlib seprank``."""
    p = sub.add_parser("seprank", help="measured grid-matrix ranks of the analysed network (exact, over GF(p))",
                       description="Rank of the grid matrix M(y) of output entry p at position i of the analysed "
                                   "network (eq. 3) w.r.t. a partition (A, B), exact over GF(p); a lower bound on "
                                   "the separation rank. --sweep regenerates the chapter's measurements.")
    p.add_argument("--depth", type=int, help="L")
    p.add_argument("--width", type=int, help="d_x")
    p.add_argument("--heads", type=int, help="H (divides d_x)")
    p.add_argument("--positions", type=int, default=4, help="N (default 4)")
    p.add_argument("--part-a", help="positions in A, 1-based, comma-separated (default: the first half)")
    p.add_argument("--position", type=int, default=1, help="output position i, 1-based (default 1)")
    p.add_argument("--entry", type=int, default=1, help="output entry p, 1-based (default 1)")
    p.add_argument("--templates", type=int, help="grid size M (default: grow until the rank stops growing)")
    p.add_argument("--residual", action="store_true", help="with the residual connection")
    p.add_argument("--primes", type=int, default=2, choices=(1, 2, 3), help="how many primes (default 2)")
    p.add_argument("--draws", type=int, default=2, help="weight draws per prime (default 2)")
    p.add_argument("--sweep", action="store_true", help="run the chapter's whole sweep")
    p.add_argument("--quick", action="store_true", help="with --sweep: a small subset")
    p.add_argument("--out", help="with --sweep: write the JSON here (e.g. dwlib/data/seprank.json)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_run)
