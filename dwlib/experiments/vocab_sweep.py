"""The vocabulary chapter's exact measurements: the sweep, its stored result, one measurement.

:func:`sweep` measures, with :mod:`dwlib.core.vocab`, the grid rank of the analysed network fed
through an input embedding of rank r (N = 4, A = {1, 2}, output at position 1), each with its
vocabulary V grown until the rank stops (:func:`dwlib.core.vocab.saturate`) or, where noted, at
one V the grid cap binds:

- ``width``: rank against d_x at fixed r = 1..4, depths 1 and 2, two heads; and the plain
  network at full rank (r = d_x, one head) beside it;
- ``depth``: with the width records at d_x = 8, H = 2: rank against L at r = 1 (L = 1..5, and
  L = 3 at two other widths and head counts), r = 2 (L = 1..3) and r = 3 (L = 1, 2, and L = 3 on
  a grid whose cap binds, ``capped``); every record carries the derived bounds at r and the 2020
  bounds at the full width.

The result ships as ``dwlib/data/vocab.json`` (:func:`load`); ``scripts/publish_vocab.py`` runs
the sweep and publishes it. :func:`measure_one` is ``dwlib seprank --embedding-rank``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from dwlib.core import seprank, vocab
from dwlib.core.bounds import separation_rank_bounds
from dwlib.errors import require, shown
from dwlib.experiments import seprank_sweep
from dwlib.store import packaged_json, write_json

DATA_FILE = "vocab.json"
POSITIONS = 4
PRIMES, DRAWS = 2, 1  # two primes, one weight draw each: two exact ranks per grid

# (depth, width, heads, rank, first V, step): V grows by step until the rank stops
WIDTH_SHAPES = ([(1, w, 2, r, 8, 4) for r in (1, 2, 3, 4) for w in (8, 16)]
                + [(2, w, 2, r, 12, 4) for r in (1, 2, 3, 4) for w in (4, 8, 16)]
                + [(1, w, 1, w, 8, 4) for w in range(1, 6)] + [(2, w, 1, w, 12, 4) for w in range(1, 5)])
# depths 1 and 2 at d_x = 8, H = 2 are in WIDTH_SHAPES; deeper here, and r = 1 at two other (d_x, H)
DEPTH_SHAPES = ([(L, 8, 2, 1, 8 if L < 4 else 16, 4) for L in (3, 4, 5)] + [(3, 8, 2, 2, 24, 4)]
                + [(3, 4, 2, 1, 8, 4), (3, 16, 4, 1, 8, 4)])
CAPPED_SHAPES = [(3, 8, 2, 3, 24)]  # one grid: the cap V(V + 1)/2 = 300 sets the number
QUICK = {"width": [(1, 8, 2, 2, 8, 4), (2, 4, 2, 1, 12, 4)], "depth": [(3, 4, 2, 1, 8, 4)], "capped": []}


def derived_bounds(depth: int, width: int, heads: int, rank: int) -> dict:
    """Beside a measurement: log3 of the derived upper bound at width r (polynomial space), eq. (8)'s
    upper expression at r, and the 2020 bounds at the full width d_x (None where none applies)."""
    out = {"log3_upper_rank": math.log(vocab.upper_bound(depth, rank, 2, 2), 3),
           "log3_upper_eq8_rank": vocab.theorem2_upper_at_rank(depth, rank),
           "log3_lower_full": None, "log3_upper_full": None}
    if width > heads:
        b = separation_rank_bounds(depth, width, heads)
        for k in ("lower", "upper"):
            out[f"log3_{k}_full"] = float(b[k]) if np.isfinite(b[k]) else None
    return out


def _record(m: dict, seconds: float) -> dict:
    keep = ("depth", "width", "heads", "embedding_rank", "tokens", "rank", "ranks", "agree", "matrix_shape",
            "grid_cap", "capped", "upper", "poly_dim", "history", "saturated")
    out = {k: m[k] for k in keep if k in m}
    out["seconds"] = round(seconds, 2)
    out.update(derived_bounds(m["depth"], m["width"], m["heads"], m["embedding_rank"]))
    return out


def _saturated(depth, width, heads, rank, start, step) -> dict:
    t0 = time.perf_counter()
    m = vocab.saturate(depth, width, heads, POSITIONS, rank, start=start, step=step, max_tokens=40, patience=1,
                       primes=seprank.PRIMES[:PRIMES], draws=DRAWS)
    return _record(m, time.perf_counter() - t0)


def sweep(quick: bool = False, log=print) -> dict:
    """Every measurement of the chapter (``quick``: a small subset, for tests), as a plain dict."""
    t0 = time.perf_counter()
    plan = QUICK if quick else {"width": WIDTH_SHAPES, "depth": DEPTH_SHAPES, "capped": CAPPED_SHAPES}
    out = {"positions": POSITIONS, "A": [1, 2], "position": 1, "primes": list(seprank.PRIMES[:PRIMES]),
           "draws": DRAWS}
    for part in ("width", "depth"):
        out[part] = []
        for shape in plan[part]:
            out[part].append(_saturated(*shape))
            m = out[part][-1]
            log(f"{part}: L={m['depth']} d_x={m['width']} H={m['heads']} r={m['embedding_rank']}: rank {m['rank']} "
                f"(V grown {m['history']}, {m['seconds']} s)")
    out["capped"] = []
    for depth, width, heads, rank, tokens in plan["capped"]:
        t = time.perf_counter()
        m = vocab.measure(depth, width, heads, POSITIONS, tokens, rank, primes=seprank.PRIMES[:PRIMES], draws=DRAWS)
        out["capped"].append(_record(m, time.perf_counter() - t))
        log(f"capped: L={depth} d_x={width} r={rank} V={tokens}: rank {m['rank']}, cap {m['grid_cap']}")
    out["sweep_seconds"] = round(time.perf_counter() - t0, 1)
    return out


def write_sweep(result: dict, path):
    """Store a :func:`sweep` result at ``path``."""
    return write_json(path, result, indent=1)


def load() -> dict:
    """The stored sweep the chapter reads (``dwlib/data/vocab.json``)."""
    return packaged_json(DATA_FILE)


def measure_one(depth, width, heads, embedding_rank, positions=4, part_a=None, position=1, entry=1,
                templates=None, residual=False, primes=2, draws=2, allow_slow=False) -> dict:
    """``dwlib seprank --embedding-rank r``: one measurement of the network fed through an embedding
    of rank r (``templates``: the vocabulary V; None grows it until the rank stops), numbered from 1
    as :func:`dwlib.experiments.seprank_sweep.measure_one`, whose checks it shares. The result holds
    the derived bounds at r beside the 2020 bounds at d_x; its ``poly_dim`` is the bound at r."""
    require(not residual, "--embedding-rank measures the network without the residual connection; drop --residual")
    for name, v in (("depth", depth), ("width", width), ("heads", heads), ("positions", positions),
                    ("draws", draws), ("templates", templates)):
        low = 2 if name == "positions" else 1
        require(v is None or (isinstance(v, int) and low <= v <= seprank_sweep.MEASURE_LIMITS[name]),
                f"{name} must be an integer from {low} to {seprank_sweep.MEASURE_LIMITS[name]:,}, got {shown(v)}")
    require(width % heads == 0, f"heads must divide width (d_a = d_x / H): {width} % {heads} = {width % heads}")
    require(primes in (1, 2, 3), f"primes must be 1, 2 or 3, got {shown(primes)}")
    require(1 <= position <= positions, f"output position must be in 1..{positions}, got {shown(position)}")
    require(1 <= entry <= width, f"output entry must be in 1..{width}, got {shown(entry)}")
    a1 = list(range(1, positions // 2 + 1)) if part_a is None else part_a
    require(all(1 <= a <= positions for a in a1) and len(set(a1)) == len(a1) and 2 * len(a1) == positions,
            f"A must list N/2 = {positions / 2:g} distinct positions in 1..{positions}, got {a1}")
    require(templates is None or templates ** positions <= seprank.MAX_GRID_POINTS,
            f"--templates {templates} at {positions} positions is {templates}^{positions} grid points, "
            f"more than the {seprank.MAX_GRID_POINTS:,} the measurement takes")
    require(templates is not None or len(seprank_sweep.schedule(positions)) > seprank_sweep.SATURATE["patience"],
            f"at {positions} positions too few vocabularies fit in the grid for the rank to be seen to stop: "
            "fewer --positions, or one vocabulary with --templates")
    require(isinstance(embedding_rank, int) and 1 <= embedding_rank <= width,
            f"--embedding-rank must be an integer from 1 to the width {width}, got {shown(embedding_rank)}")
    require(templates is None or templates >= embedding_rank,
            f"--templates (the vocabulary) must be at least the embedding rank {embedding_rank}, got {templates}")
    plain = dict(positions=positions, part_a=part_a, position=position, entry=entry, templates=templates,
                 primes=primes, draws=draws)
    seconds = estimate_seconds(depth, width, embedding_rank, **plain)
    require(allow_slow or seconds <= seprank_sweep.MAX_SECONDS,
            f"this measurement would take about {seconds:.2g} s, past the limit of {seprank_sweep.MAX_SECONDS} s: "
            "smaller sizes, or --allow-slow")
    a0 = sorted(a - 1 for a in (part_a or range(1, positions // 2 + 1)))
    kw = dict(part_a=a0, position=position - 1, entry=entry - 1, primes=seprank.PRIMES[:primes], draws=draws)
    t0 = time.perf_counter()
    if templates:
        m = vocab.measure(depth, width, heads, positions, templates, embedding_rank, **kw)
    else:
        first = max(seprank_sweep.SATURATE["start"], embedding_rank + embedding_rank % 2)  # V >= r tokens
        m = vocab.saturate(depth, width, heads, positions, embedding_rank, start=first, **kw)
    m = {**m, "seconds": round(time.perf_counter() - t0, 3), "poly_dim_full_width": m["poly_dim"],
         "poly_dim": m["upper"], "A": [a + 1 for a in m["A"]], "B": [b + 1 for b in m["B"]], "position": position,
         "entry": entry, "numbering": "from 1", "estimated_seconds": round(seconds, 3)}
    m.update(derived_bounds(depth, width, heads, embedding_rank))
    return seprank_sweep.with_bounds(m)


def estimate_seconds(depth, width, rank, positions, part_a, position, entry, templates, primes, draws) -> float:
    """Seconds estimated as :func:`dwlib.experiments.seprank_sweep.estimate_seconds` does, the grids
    a width-r network grows through, each evaluated at width d_x."""
    a0 = sorted(a - 1 for a in (part_a or range(1, positions // 2 + 1)))
    grids = seprank_sweep.predicted_ranks(depth, rank, positions, a0, position - 1)
    if templates is not None:
        grids = [(templates, vocab.upper_bound(depth, rank, len(a0), positions - len(a0)))]
    now = seprank_sweep.speed()
    return sum(seprank_sweep._measure_seconds(depth, width, positions, M, a0, position - 1, primes, draws, r, now)
               for M, r in grids)


def embedding_lines(m: dict) -> list[str]:
    """The lines ``dwlib seprank --embedding-rank`` adds to the plain measurement's text (none for a
    plain measurement): the embedding's rank, the vocabulary, the cap and the derived bounds at r."""
    if "embedding_rank" not in m:
        return []
    eq8 = m["log3_upper_eq8_rank"]
    return [f"embedding rank r={m['embedding_rank']}, vocabulary V={m['tokens']}: the polynomial-space bound above "
            f"is at width r (at d_x it is {m['poly_dim_full_width']}); grid cap {m['grid_cap']}"
            + ("; the grid, not the network, sets this rank" if m["capped"] else ""),
            f"derived upper bound on log3 sep at r: {m['log3_upper_rank']:.3f} (polynomial space)"
            + (f", {eq8:.3f} (eq. 8 at d_x = r)" if eq8 is not None else " (eq. 8 needs L > log3 r)")]
