"""The separation-rank chapter's measurements: the sweep, its timings, and its stored result.

:func:`sweep` runs every measurement the chapter shows (grid ranks against depth and width,
heads, positions and the residual connection, Proposition 1, floating point against exact,
softmax attention), with the rank code of :mod:`dwlib.core.seprank`, and times each. The result
ships as ``dwlib/data/seprank.json`` (:func:`load`); :func:`write_sweep` stores a fresh one at a
path you give, and ``scripts/publish_seprank.py`` (or ``dwlib seprank --sweep --out PATH``)
publishes it into the package.
"""

from __future__ import annotations

import time

import numpy as np

from dwlib.core import seprank
from dwlib.core.bounds import separation_rank_bounds
from dwlib.store import packaged_json, write_json

DATA_FILE = "seprank.json"

# (depth, width) pairs measured at N = 4, H = 1: rank against depth at widths 1-3 and against
# width at depths 1-3. L = 3 stops at d_x = 2 (d_x = 3 needs a grid matrix past 4096 rows).
SWEEP_SHAPES = [(1, w) for w in range(1, 9)] + [(2, w) for w in range(1, 5)] + [(3, 1), (3, 2)]

# heads, positions and residual, at L = 2, d_x = 2 (and d_x = 4 for heads)
VARIANTS = [
    ("heads", dict(depth=2, width=2, heads=2, n_positions=4)),
    ("heads", dict(depth=1, width=4, heads=2, n_positions=4)),
    ("heads", dict(depth=1, width=4, heads=4, n_positions=4)),
    ("heads", dict(depth=2, width=4, heads=2, n_positions=4)),
    ("positions", dict(depth=2, width=2, heads=1, n_positions=2)),
    ("positions", dict(depth=2, width=2, heads=1, n_positions=6)),
    ("residual", dict(depth=2, width=2, heads=1, n_positions=4, residual=True)),
    ("residual", dict(depth=1, width=4, heads=1, n_positions=4, residual=True)),
]


def bounds_of(depth: int, width: int, heads: int):
    """(log3 lower, log3 upper, theorem) of :func:`dwlib.core.bounds.separation_rank_bounds`,
    with None where a bound is infinite or neither theorem applies (or width <= heads)."""
    b = separation_rank_bounds(depth, width, heads) if width > heads else None
    if b is None:
        return None, None, None
    lo, hi = (float(b[k]) if np.isfinite(b[k]) else None for k in ("lower", "upper"))
    return lo, hi, (int(b["theorem"]) or None)


def timed_measure(*args, **kw) -> dict:
    """:func:`dwlib.core.seprank.measure`, with the seconds it took."""
    t0 = time.perf_counter()
    m = seprank.measure(*args, **kw)
    m["seconds"] = round(time.perf_counter() - t0, 3)
    return m


def timed_saturate(*args, **kw) -> dict:
    """:func:`dwlib.core.seprank.saturate` with ``seconds`` for the whole grid growth and
    ``last_seconds`` for its last measurement."""
    t0 = time.perf_counter()
    m = seprank.saturate(*args, measure_with=timed_measure, **kw)
    m["last_seconds"] = m["seconds"]
    m["seconds"] = round(time.perf_counter() - t0, 3)
    return m


def with_bounds(m: dict) -> dict:
    """A measurement with the theorems' bounds on log3 sep at its shape added."""
    lo, hi, thm = bounds_of(m["depth"], m["width"], m["heads"])
    m.update({"log3_lower": lo, "log3_upper": hi, "theorem": thm})
    return m


def sweep(quick: bool = False, log=print) -> dict:
    """Every measurement of the chapter (``quick``: a small subset, for tests). Returns a plain
    dict (JSON-ready) with the timings of each part and of the largest measurement."""
    t0 = time.perf_counter()
    out = {"primes": list(seprank.PRIMES[:2]), "draws": 2, "positions": 4, "heads": 1}
    shapes = SWEEP_SHAPES if not quick else [(1, 2), (2, 1)]
    ranks = []
    for depth, width in shapes:
        m = with_bounds(timed_saturate(depth, width, 1, 4, start=6, step=4, max_templates=46))
        ranks.append(m)
        log(f"L={depth} d_x={width}: rank {m['rank']} (grid {m['history']}, {m['seconds']} s)")
    out["ranks"] = ranks
    variants = []
    for what, kw in ([] if quick else VARIANTS):
        grid = dict(start=6, step=4, max_templates=46) if kw["n_positions"] <= 4 else dict(start=5, step=2, max_templates=9)
        m = timed_saturate(**grid, **kw)
        m["varies"] = what
        variants.append(m)
        log(f"{what}: {kw} rank {m['rank']} ({m['seconds']} s)")
    out["variants"] = variants
    out["proposition1"] = {
        "N4": seprank.proposition1(2, 2, 1, 4, 10),
        "N6": seprank.proposition1(2, 1, 1, 6, 7) if not quick else []}
    log("proposition 1 done")
    out["float_vs_exact"] = [seprank.float_vs_exact(*a) for a in
                             ([(1, 2, 1, 4, 8)] if quick else
                              [(1, 2, 1, 4, 8), (1, 4, 1, 4, 8), (2, 1, 1, 4, 10), (2, 2, 1, 4, 14),
                               (3, 1, 1, 4, 10), (3, 2, 1, 4, 34)])]
    log("float vs exact done")
    out["softmax"] = [seprank.softmax_rank(L, 2, 1, 4, M) for L in (1, 2) for M in ((6,) if quick else (6, 10, 14))]
    for s in out["softmax"]:
        s.pop("singular_values")
    log("softmax done")
    largest = max(ranks + variants, key=lambda m: m["seconds"])
    out["timing"] = {"sweep_seconds": round(time.perf_counter() - t0, 1),
                     "largest": {k: largest[k] for k in ("depth", "width", "heads", "positions", "templates",
                                                         "matrix_shape", "rank", "seconds")}}
    return out


def write_sweep(result: dict, path):
    """Store a :func:`sweep` result at ``path`` (``scripts/publish_seprank.py`` publishes it
    into the package)."""
    return write_json(path, result, indent=1)


def load() -> dict:
    """The stored sweep the chapter reads (``dwlib/data/seprank.json``)."""
    return packaged_json(DATA_FILE)
