"""The separation-rank chapter's measurements: the sweep, its timings, and its stored result.

:func:`sweep` runs every measurement the chapter shows (grid ranks against depth and width,
heads, positions and the residual connection, Proposition 1, floating point against exact,
softmax attention), with the rank code of :mod:`dwlib.core.seprank`, and times each. The result
ships as ``dwlib/data/seprank.json`` (:func:`load`); :func:`write_sweep` stores a fresh one at a
path you give, and ``scripts/publish_seprank.py`` (or ``dwlib seprank --sweep --out PATH``)
publishes it into the package.
"""

from __future__ import annotations

import functools
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
# the estimated time. Its model, calibrated on the 2-core CI machine (2026-11-26, load average
# about 2): per prime and grid size M, XLA compiles the grid's function once (COMPILE_SECONDS
# + COMPILE_PER_LAYER L: 0.4-0.9 s measured at L = 1-3, N = 4-10); per weight draw, the M^N grid
# points, POINT_SECONDS x L N (N + d_x) (d_x + 4) each (the analysed network over GF(p):
# 0.56 us a point at L = 1, N = 4, d_x = 2; 16.9 us at d_x = 32; 6.4 us at N = 10, d_x = 4;
# within 1.4x of this at the ten shapes measured), and the elimination, ELIM_SECONDS per entry
# it updates, sum over the r pivots of (rows - k)(cols - k) (0.40 s for 500 x 500 at rank 200,
# 4.3 s for 1000 x 1000 at full rank). Other jobs slow XLA's threads far more than numpy's (at a
# load average of 8 on this machine the grid took 10x as long, the elimination 2.3x), so before
# estimating, :func:`speed` times both now on a small probe and scales the model by what it finds.
# Which grids a measurement grows through depends on the rank it finds: :func:`predicted_ranks`.
# Estimated / measured seconds of whole measurements (2026-11-26, load average 0.7-1.3, probe
# (1.0, 1.3)); L, d_x, H, N: 1, 2, 1, 4: 3.3 / 2.7; 1, 8, 1, 4: 7.4 / 8.3; 1, 16, 2, 4: 30 / 31;
# 1, 4, 2, 6: 16 / 21; 2, 2, 1, 4: 6.1 / 5.8; 2, 3, 1, 4: 11.6 / 9.3; 1, 8, 2, 6: 226 / 252;
# 1, 32, 2, 4: 884 / 629; at M = 30 and 20, 1, 4, 1, 4: 5.4 / 5.8 and 2, 4, 2, 4: 3.5 / 3.2:
# 0.77x to 1.41x.
MEASURE_LIMITS = {"depth": 64, "width": 4096, "heads": 4096, "positions": 24, "templates": 1 << 24, "draws": 1000}
POINT_SECONDS = 4.6e-9
ELIM_SECONDS = 1.3e-8
COMPILE_SECONDS, COMPILE_PER_LAYER = 0.35, 0.2
MAX_SECONDS = 120  # estimated; --allow-slow lifts it
SATURATE = dict(start=4, step=2, max_templates=64, patience=2)  # seprank.saturate's defaults
PROBE = dict(depth=1, width=4, heads=1, positions=4, templates=16, rows=200, rank=100)


def _grid_seconds(depth, width, positions, M, speed=(1.0, 1.0)) -> tuple[float, float]:
    """The model's seconds to compile the grid's function once, and to evaluate it once."""
    return (speed[0] * (COMPILE_SECONDS + COMPILE_PER_LAYER * depth),
            speed[0] * M ** positions * POINT_SECONDS * depth * positions * (positions + width) * (width + 4))


def _elimination_seconds(rows, cols, r, speed=(1.0, 1.0)) -> float:
    return speed[1] * ELIM_SECONDS * (r * rows * cols - r * r * (rows + cols) / 2 + r ** 3 / 3)


@functools.lru_cache(maxsize=1)
def speed() -> tuple[float, float]:
    """How much slower than the calibration (XLA's grid, numpy's elimination) this machine runs
    now, from a probe: the grid of :data:`PROBE` compiled and evaluated (0.6 s at the
    calibration's load) and an elimination of a 200 x 200 matrix of rank 100 (0.03 s). Timed once
    per process; each factor within [0.2, 50]."""
    p, k = PROBE, seprank.PRIMES[0]
    params = seprank.field_params(p["depth"], p["width"], p["heads"], k, seed=99)
    t0 = time.perf_counter()
    seprank.grid_values(params, seprank.templates(p["templates"], p["width"], seed=99), p["positions"], modulus=k)
    t1 = time.perf_counter()
    rng = np.random.default_rng(99)
    low = rng.integers(0, 1000, (p["rows"], p["rank"])) @ rng.integers(0, 1000, (p["rank"], p["rows"]))
    seprank.rank_mod_p(low % k, k)
    t2 = time.perf_counter()
    grid = sum(_grid_seconds(p["depth"], p["width"], p["positions"], p["templates"]))
    elimination = _elimination_seconds(p["rows"], p["rows"], p["rank"])
    return min(max((t1 - t0) / grid, 0.2), 50.0), min(max((t2 - t1) / elimination, 0.2), 50.0)


def _measure_seconds(depth, width, positions, M, part_a, position, primes, draws, rank, speed) -> float:
    """Estimated seconds of one :func:`seprank.measure` (``primes`` x ``draws`` repeats) whose
    grid matrix has rank ``rank``."""
    def side(part):  # the distinct rows (or columns) a grid of M templates can give
        k = len(part) - (position in part)
        return min(M ** len(part), (M if position in part else 1) * comb(M + k - 1, k))

    rows, cols = sorted((side(part_a), side([p for p in range(positions) if p not in part_a])))
    compile_once, evaluate = _grid_seconds(depth, width, positions, M, speed)
    return primes * (compile_once + draws * (evaluate + _elimination_seconds(rows, cols, min(rank, rows), speed)))


def schedule(positions: int, templates=None) -> list[int]:
    """The grid sizes M a measurement may try: ``templates``, or :func:`seprank.saturate`'s
    default schedule up to its cap and the largest grid the measurement takes (MAX_GRID_POINTS)."""
    if templates is not None:
        return [templates]
    grids = range(SATURATE["start"], SATURATE["max_templates"] + 1, SATURATE["step"])
    return [M for M in grids if M ** positions <= seprank.MAX_GRID_POINTS]


def predicted_ranks(depth, width, positions, part_a, position, residual=False) -> list[tuple[int, int]]:
    """[(M, rank)] of :func:`seprank.saturate` as the stored measurements (``dwlib/data/seprank.json``)
    predict it: the rank a grid grows to is d_x + 1 at depth 1 and about 0.28 / 2^(L-1) of the
    polynomial-space bound of N = 4 deeper (within 1.45x of the 22 shapes stored, N = 2, 4, 6 and
    the residual included); at depth 1 the rank of a grid of M templates is at most M, deeper its
    grid cap; the grid grows until ``patience`` enlargements leave the rank below its cap."""
    b = [p for p in range(positions) if p not in part_a]
    poly = seprank.polynomial_dimension(depth, width, len(part_a), len(b), residual)
    reach = width + 1 if depth == 1 else 0.28 / 2 ** (depth - 1) * seprank.polynomial_dimension(depth, width, 2, 2,
                                                                                                  residual)
    history = []
    for M in schedule(positions):
        cap = seprank.grid_cap(M, positions, part_a, b, position)
        history.append((M, min(max(2, round(reach)), poly, cap, M if depth == 1 else cap), cap))
        tail = history[-(SATURATE["patience"] + 1):]
        if len(tail) == SATURATE["patience"] + 1 and len({h[1] for h in tail}) == 1 and tail[0][1] < tail[0][2]:
            break
    return [(M, rank) for M, rank, _ in history]


def estimate_seconds(depth, width, positions, templates, part_a, position, primes=2, draws=2, residual=False) -> float:
    """Estimated seconds of a measurement at ``templates`` M, or (None) of :func:`seprank.saturate`
    with its default schedule, grid by grid as :func:`predicted_ranks` predicts it, at this
    machine's current :func:`speed`."""
    grids = predicted_ranks(depth, width, positions, part_a, position, residual)
    if templates is not None:
        poly = seprank.polynomial_dimension(depth, width, len(part_a), positions - len(part_a), residual)
        grids = [(templates, poly)]
    now = speed()
    return sum(_measure_seconds(depth, width, positions, M, part_a, position, primes, draws, rank, now)
               for M, rank in grids)


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
    grids = schedule(positions, templates)
    require(templates is not None or len(grids) > SATURATE["patience"],
            f"at {positions} positions {len(grids)} of the grids M = {SATURATE['start']}, "
            f"{SATURATE['start'] + SATURATE['step']}, ... fit within the {seprank.MAX_GRID_POINTS:,} points a "
            f"measurement takes, and the rank needs {SATURATE['patience'] + 1} to be seen to stop: fewer "
            "--positions, or one grid with --templates")
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
