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
from math import comb

import numpy as np

from dwlib.core import seprank
from dwlib.core.bounds import separation_rank_bounds
from dwlib.errors import InputError, require, shown
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


# One measurement asked for by hand (``dwlib seprank``): sizes past these are refused outright
# (3^L at depth 64 has 31 digits; a grid of 2^24 points needs N <= 24 at M = 2), and the rest by
# the estimated time, measured on the 2-core CI machine: about 1e8 operations a second for the
# grid's evaluation (M^N points, L N (N + d_x) d_x each) and for the elimination (rank x rows x
# columns), plus the compilation of the grid's function once per prime and grid size (about
# 0.5 s + 0.4 s per layer: the L layers are unrolled).
MEASURE_LIMITS = {"depth": 64, "width": 4096, "heads": 4096, "positions": 24, "templates": 1 << 24, "draws": 1000}
OPS_PER_SECOND = 1e8
MAX_SECONDS = 120  # estimated; --allow-slow lifts it
SATURATE = dict(start=4, step=2, max_templates=64, patience=2)  # seprank.saturate's defaults


def _measure_seconds(depth, width, positions, M, part_a, position, primes, draws, poly_dim) -> float:
    """Estimated seconds of one :func:`seprank.measure` (``primes`` x ``draws`` repeats)."""
    def side(part):  # the distinct rows (or columns) a grid of M templates can give
        k = len(part) - (position in part)
        return min(M ** len(part), (M if position in part else 1) * comb(M + k - 1, k))

    rows, cols = side(part_a), side([p for p in range(positions) if p not in part_a])
    ops = M ** positions * depth * positions * (positions + width) * width + min(poly_dim, rows, cols) * rows * cols
    return primes * (draws * ops / OPS_PER_SECOND + 0.5 + 0.4 * depth)


def estimate_seconds(depth, width, positions, templates, part_a, position, primes=2, draws=2, residual=False) -> float:
    """Estimated seconds of a measurement at ``templates`` M, or (None) of :func:`seprank.saturate`
    with its default schedule, up to the grid where the rank can stop: its cap passes the
    polynomial-space bound (the rank never exceeds it) and ``patience`` more steps."""
    poly = seprank.polynomial_dimension(depth, width, len(part_a), positions - len(part_a), residual)
    if templates is not None:
        return _measure_seconds(depth, width, positions, templates, part_a, position, primes, draws, poly)
    total, M, stop = 0.0, SATURATE["start"], SATURATE["max_templates"]
    while M <= stop and M ** positions <= seprank.MAX_GRID_POINTS:
        total += _measure_seconds(depth, width, positions, M, part_a, position, primes, draws, poly)
        b = [p for p in range(positions) if p not in part_a]
        if stop == SATURATE["max_templates"] and seprank.grid_cap(M, positions, part_a, b, position) > poly:
            stop = M + SATURATE["patience"] * SATURATE["step"]
        M += SATURATE["step"]
    return total


def measure_one(depth, width, heads, positions=4, part_a=None, position=1, entry=1, templates=None,
                residual=False, primes=2, draws=2, allow_slow=False) -> dict:
    """One grid-rank measurement as the command line asks for it: positions and the output entry
    numbered from 1 (as the paper and the options number them) in the arguments, the messages
    and the result (``A``, ``B``, ``position``, ``entry``). Refuses with one line, before any
    work, sizes past :data:`MEASURE_LIMITS` and, unless ``allow_slow``, a measurement estimated
    to take more than :data:`MAX_SECONDS`; ``templates`` None grows the grid until the rank stops."""
    for name, v in (("depth", depth), ("width", width), ("heads", heads), ("positions", positions),
                    ("draws", draws), ("templates", templates)):
        if v is not None:
            require(isinstance(v, int) and (2 if name == "positions" else 1) <= v <= MEASURE_LIMITS[name],
                    f"{name} must be an integer from {2 if name == 'positions' else 1} to "
                    f"{MEASURE_LIMITS[name]:,}, got {shown(v)}")
    require(width % heads == 0, f"heads must divide width (d_a = d_x / H): {width} % {heads} = {width % heads}")
    require(primes in (1, 2, 3), f"primes must be 1, 2 or 3, got {shown(primes)}")
    require(1 <= position <= positions, f"output position must be in 1..{positions}, got {shown(position)}")
    require(1 <= entry <= width, f"output entry must be in 1..{width}, got {shown(entry)}")
    if part_a is None:
        part_a = list(range(1, positions // 2 + 1))
    require(all(1 <= a <= positions for a in part_a), f"A must hold positions in 1..{positions}, got {part_a}")
    require(len(set(part_a)) == len(part_a), f"A lists a position twice: {part_a}")
    require(2 * len(part_a) == positions, f"a balanced partition needs |A| = N/2 = {positions / 2:g}, got A = {part_a}")
    require(templates is None or templates ** positions <= seprank.MAX_GRID_POINTS,
            f"--templates {templates} at {positions} positions is {templates}^{positions} grid points, "
            f"more than the {seprank.MAX_GRID_POINTS:,} the measurement takes")
    a0 = sorted(a - 1 for a in part_a)
    seconds = estimate_seconds(depth, width, positions, templates, a0, position - 1, primes, draws, residual)
    grid = f"{templates}^{positions} grid points" if templates else "the grid grown until the rank stops"
    require(allow_slow or seconds <= MAX_SECONDS,
            f"this measurement would take about {seconds:.2g} s ({grid}, polynomial degree 3^{depth}, "
            f"{primes * draws} repeats), past the limit of {MAX_SECONDS} s: smaller sizes, or --allow-slow")
    kw = dict(part_a=a0, position=position - 1, entry=entry - 1, residual=residual,
              primes=seprank.PRIMES[:primes], draws=draws)
    if templates:
        m = timed_measure(depth, width, heads, positions, templates, **kw)
    else:
        m = timed_saturate(depth, width, heads, positions, **kw)
    m.update({"A": [a + 1 for a in m["A"]], "B": [b + 1 for b in m["B"]], "position": position,
              "entry": entry, "numbering": "from 1", "estimated_seconds": round(seconds, 3)})
    return with_bounds(m)


def parse_positions(text: str) -> list[int]:
    """'1,3' -> [1, 3] (positions numbered from 1, comma-separated); InputError on anything else."""
    parts = str(text).split(",")
    if not all(p.strip().isdigit() and len(p.strip()) <= 6 for p in parts):
        raise InputError(f"positions must be whole numbers from 1, comma-separated (as 1,2), got {shown(text)}")
    return [int(p) for p in parts]


def write_sweep(result: dict, path):
    """Store a :func:`sweep` result at ``path`` (``scripts/publish_seprank.py`` publishes it
    into the package)."""
    return write_json(path, result, indent=1)


def load() -> dict:
    """The stored sweep the chapter reads (``dwlib/data/seprank.json``)."""
    return packaged_json(DATA_FILE)
