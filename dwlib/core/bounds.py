"""The depth threshold and the separation-rank bounds of Levine et al. (2020), section 4.

Everything is computed in log space (log base 3 of the separation rank), vectorised over
numpy arrays of depth L, width d_x and heads H, so whole (L, d_x) grids are evaluated at
once and depths in the hundreds or widths up to 1e6 never overflow. No separation rank,
and no 3^(3^L), is ever formed [levine2020depth].

- :func:`depth_threshold`, :func:`regime`: L_th(d_x) = log3(d_x) and which side of it (L, d_x) lies.
- :func:`theorem1_bounds` (eq. 7, L < log3 d_x) and :func:`theorem2_bounds` (eq. 8, L > log3 d_x),
  each also as separate lower/upper functions; they raise :class:`~dwlib.errors.InputError`
  outside their theorem's regime.
- :func:`separation_rank_bounds`: both bounds for any grid, choosing the theorem by regime
  (NaN where neither applies), for charts.
- :func:`corollary1_width`, :func:`corollary1_readings`: the width a shallower network needs
  (Corollary 1), and the BERT-large example of the paper under several readings.
- :func:`corollary2`, :func:`corollary2_smallest_constant`: the shallower, wider network of
  Corollary 2 and an honest check of its claim by the bounds.

Overflow. Theorem 1 only holds for L < log3 d_x, and a float64 width is below 1.8e308, so inside
its regime L < 646 and 3^(L-2) is finite; every function here evaluates the eq.-(7) expressions
only where Theorem 1 applies (masked, not computed-then-discarded), so grids with depths in the
hundreds stay finite and warning-free. Eq. (8) is linear in L and d_x. Widths that may exceed
float64 (Corollaries 1 and 2) are carried as log3(width) internally.
"""

from __future__ import annotations

import math

import numpy as np

from dwlib.errors import InputError, require, require_int, shown
from dwlib.fmt import number

LOG3_2 = math.log(2.0) / math.log(3.0)
LOG10_3 = math.log10(3.0)


def _log3(x):
    return np.log(x) / np.log(3.0)


def _scalar(out):
    out = np.asarray(out)
    return out if out.ndim else float(out)


def depth_threshold(width):
    """The depth threshold L_th(d_x) = log3(d_x) of section 4 (Theorems 1 and 2).

    Below it (L < log3 d_x) depth is doubly-exponentially efficient (eq. 7); above it
    (L > log3 d_x) depth and width contribute alike (eq. 8).
    """
    d_x = np.asarray(width, dtype=float)
    require(np.all(d_x >= 1), f"width must be >= 1, got {width!r}")
    return _scalar(_log3(d_x))


def regime(depth, width):
    """'depth-efficient' if L < log3(d_x) (Theorem 1), 'depth-inefficient' if L > log3(d_x)
    (Theorem 2), 'threshold' when L = log3(d_x) exactly (neither theorem applies).

    Vectorised: arrays in, an array of strings out.
    """
    L = np.asarray(depth, dtype=float)
    require(np.all(L >= 1), f"depth must be >= 1, got {depth!r}")
    th = np.asarray(depth_threshold(width))
    out = np.where(np.isclose(L, th, rtol=0, atol=1e-12), "threshold",
                   np.where(L < th, "depth-efficient", "depth-inefficient"))
    return out if out.ndim else str(out)


# ---------------------------------------------------------------------------------------------
# Validation

def _first(mask_bad, *arrays):
    """The values of ``arrays`` at the first position where ``mask_bad`` holds."""
    idx = np.unravel_index(int(np.argmax(mask_bad)), mask_bad.shape) if mask_bad.ndim else ()
    return [np.broadcast_to(a, mask_bad.shape)[idx] for a in arrays]


def _arrays(depth, width, heads):
    """(L, d_x, H) as broadcast float arrays, after checking L >= 1, H >= 1, d_x > H."""
    try:
        L, d_x, H = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (depth, width, heads)))
    except OverflowError:  # a Python int past float64's range (1.8e308)
        big = next((v for v in (depth, width, heads) if isinstance(v, int) and abs(v) > 1e308), "an array entry")
        raise InputError(f"depth, width and heads must be below 1.8e308 (float64's range), got {shown(big)}") from None
    except (TypeError, ValueError) as err:
        raise InputError(f"depth, width and heads must be numbers or broadcastable arrays ({err})") from None
    for name, a in (("depth", L), ("width", d_x), ("heads", H)):
        bad = ~np.isfinite(a)
        if np.any(bad):
            raise InputError(f"{name} must be finite, got {number(_first(bad, a)[0])}")
    bad = L < 1
    if np.any(bad):
        raise InputError(f"depth must be >= 1, got {number(_first(bad, L)[0])}")
    bad = H < 1
    if np.any(bad):
        raise InputError(f"heads must be >= 1, got {number(_first(bad, H)[0])}")
    bad = d_x <= H
    if np.any(bad):
        w, h = _first(bad, d_x, H)
        raise InputError(f"width must exceed heads (the bounds use log3(d_x - H)): width {number(w)} <= heads {number(h)}")
    return L, d_x, H


def _require_theorem1(L, d_x):
    bad = ~(L < _log3(d_x))
    if np.any(bad):
        l, w = _first(bad, L, d_x)
        raise InputError(f"Theorem 1 needs depth < log3(width): depth {number(l)} >= log3({number(w)}) = {_log3(w):.2f}")


def _require_theorem2(L, d_x):
    bad = ~(L > _log3(d_x))
    if np.any(bad):
        l, w = _first(bad, L, d_x)
        raise InputError(f"Theorem 2 needs depth > log3(width): depth {number(l)} <= log3({number(w)}) = {_log3(w):.2f}")


# ---------------------------------------------------------------------------------------------
# Theorem 1, eq. (7); Theorem 2, eq. (8). The underscored kernels take validated arrays and
# work in log3(d_x) so that Corollaries 1 and 2 can pass widths beyond float64.

def _log3_width_minus(log3_w, H):
    """log3(d_x - H) from log3(d_x), exact for small widths and finite for astronomical ones."""
    return log3_w + np.log1p(-H * np.exp(-log3_w * np.log(3.0))) / np.log(3.0)


def _log3_width_plus(log3_w, H):
    """log3(d_x + H) from log3(d_x)."""
    return log3_w + np.log1p(H * np.exp(-log3_w * np.log(3.0))) / np.log(3.0)


def _t1_lower(L, log3_w, H):
    a = -L + 2.0 - LOG3_2
    return 3.0 ** (L - 2.0) * (_log3_width_minus(log3_w, H) + a)


def _t1_upper(L, log3_w, H):
    return (3.0 ** L - 1.0) / 2.0 * _log3_width_plus(log3_w, H)


def _t2_lower(L, d_x, H):
    b1 = -L * (H / 2.0 + 1.0)
    b2 = -d_x * (1.0 + 0.5 * _log3((d_x - H) / 2.0))
    return 0.5 * d_x * L + b1 + b2


C2_FACTOR = math.sqrt(2.0 * math.sqrt(2.0 * math.e))  # sqrt(2 sqrt(2e)) = 2.1596...


def _t2_upper(L, d_x, H):
    c1 = L
    c2 = -2.0 * d_x * _log3(d_x / 2.0 * C2_FACTOR) + _log3(d_x)
    return 2.0 * d_x * L + c1 + c2


def theorem1_lower(depth, width, heads):
    """Lower bound of eq. (7) on log3 sep (Theorem 1, needs L < log3 d_x):
    3^(L-2) (log3(d_x - H) + a), a = -L + 2 - log3 2."""
    L, d_x, H = _arrays(depth, width, heads)
    _require_theorem1(L, d_x)
    return _scalar(_t1_lower(L, _log3(d_x), H))


def theorem1_upper(depth, width, heads):
    """Upper bound of eq. (7) on log3 sep (Theorem 1, needs L < log3 d_x):
    (3^L - 1)/2 * log3(d_x + H), i.e. C log3(d_x + H) with C of eq. (4)."""
    L, d_x, H = _arrays(depth, width, heads)
    _require_theorem1(L, d_x)
    return _scalar(_t1_upper(L, _log3(d_x), H))


def theorem1_bounds(depth, width, heads):
    """(lower, upper) of eq. (7) on log3 sep, Theorem 1 (L < log3 d_x)."""
    return theorem1_lower(depth, width, heads), theorem1_upper(depth, width, heads)


def theorem2_lower(depth, width, heads):
    """Lower bound of eq. (8) on log3 sep (Theorem 2, needs L > log3 d_x):
    d_x L / 2 + b1 + b2, b1 = -L (H/2 + 1), b2 = -d_x (1 + log3((d_x - H)/2) / 2).

    Just above the threshold this is negative, hence vacuous (log3 sep >= 0 always); it is
    returned as written, not clipped.
    """
    L, d_x, H = _arrays(depth, width, heads)
    _require_theorem2(L, d_x)
    return _scalar(_t2_lower(L, d_x, H))


def theorem2_upper(depth, width, heads):
    """Upper bound of eq. (8) on log3 sep (Theorem 2, needs L > log3 d_x): 2 d_x L + c1 + c2,
    c1 = L, c2 = -2 d_x log3( (d_x/2) sqrt(2 sqrt(2e)) ) + log3 d_x.

    Reading of c2. The paper prints "c2 = -2d_x · log3 (d_x/2) sqrt(2 sqrt(2e)) + log3 d_x"
    without brackets. We read the sqrt factor as inside the logarithm,
    c2 = -2 d_x log3(d_x sqrt(2 sqrt(2e)) / 2), because (i) the bound then has the form
    2 d_x log3(3^L / (d_x/2 · const)) + ..., the log of a binomial-type count of monomials
    of degree ~3^L in ~d_x variables that the proof sketch describes, with a Stirling-type
    constant; and (ii) the other reading, -2 d_x sqrt(2 sqrt(2e)) log3(d_x/2), makes the upper
    bound fall below eq. (8)'s own lower bound (and below 0) for typical widths just above
    the threshold (e.g. d_x = 1000, H = 16, L = 7: upper -1.0e4 < lower -383), which no
    correct pair of bounds can do. With our reading upper > lower throughout the regime.
    Even so, within about 0.07 layers above the threshold this upper bound is itself slightly
    negative (e.g. -127 at L = log3 1000); it is returned as written.
    """
    L, d_x, H = _arrays(depth, width, heads)
    _require_theorem2(L, d_x)
    return _scalar(_t2_upper(L, d_x, H))


def theorem2_bounds(depth, width, heads):
    """(lower, upper) of eq. (8) on log3 sep, Theorem 2 (L > log3 d_x)."""
    return theorem2_lower(depth, width, heads), theorem2_upper(depth, width, heads)


def separation_rank_bounds(depth, width, heads):
    """Both bounds on log3 sep for any (L, d_x, H), choosing the theorem by regime.

    Broadcasts its arguments; returns a dict of arrays (floats for scalar input):
    ``lower``, ``upper`` (log3 sep; NaN where neither theorem applies, i.e. L = log3 d_x
    exactly) and ``theorem`` (1 for eq. 7, 2 for eq. 8, 0 for neither). Each expression is
    evaluated only where its theorem applies, so depths in the hundreds do not overflow.
    """
    L, d_x, H = _arrays(depth, width, heads)
    th = _log3(d_x)
    t1, t2 = L < th, L > th
    lower = np.full(L.shape, np.nan)
    upper = np.full(L.shape, np.nan)
    lower[t1] = _t1_lower(L[t1], th[t1], H[t1])
    upper[t1] = _t1_upper(L[t1], th[t1], H[t1])
    lower[t2] = _t2_lower(L[t2], d_x[t2], H[t2])
    upper[t2] = _t2_upper(L[t2], d_x[t2], H[t2])
    theorem = np.where(t1, 1, np.where(t2, 2, 0))
    if L.ndim == 0:
        return {"lower": float(lower), "upper": float(upper), "theorem": int(theorem)}
    return {"lower": lower, "upper": upper, "theorem": theorem}


def log3_to_log10(x):
    """log10 of a quantity given its log3 (for readers: log10 sep = log3 sep * log10 3)."""
    return _scalar(np.asarray(x, dtype=float) * LOG10_3)


# ---------------------------------------------------------------------------------------------
# Corollary 1

def _width_from_log3(log3_w):
    """(log10 d_x, d_x as float, inf beyond float64) from log3 d_x."""
    log10_w = float(log3_w) * LOG10_3
    return log10_w, (10.0 ** log10_w if log10_w < 308 else math.inf)


def _solve_shallow_log3_width(target, shallow_depth, H, coefficient=None):
    """log3 of the width d at which C_s log3(d + H) = target, C_s = (3^L_s - 1)/2 unless given."""
    C_s = (3.0 ** shallow_depth - 1.0) / 2.0 if coefficient is None else coefficient
    s = target / C_s  # = log3(d + H)
    # d = 3^s - H, as log3: s + log3(1 - H 3^-s)
    require(3.0 ** min(s, 600.0) > H, f"no positive width solves the equation (log3(width + heads) = {s:.3g})")
    return s + math.log1p(-H * 3.0 ** -s) / math.log(3.0)


def corollary1_width(width, heads, depth, shallow_depth):
    """Corollary 1: the smallest width a depth-``shallow_depth`` network needs so that its
    eq.-(7) upper bound reaches the eq.-(7) lower bound of the deep network (depth, width, heads).

    The paper's method (section 4.1): "numerically equating the upper bound in eq. (7) for the
    shallow network and the lower bound in eq. (7) for the deep network". The shallow network
    keeps the deep network's H heads. Solves (3^L_s - 1)/2 log3(d_s + H) = 3^(L-2)(log3(d_x - H) + a)
    in closed form, in log space.

    Returns a dict: ``log3_sep_target`` (the deep lower bound), ``log10_width``, ``width``
    (float, inf past float64), ``shallow_in_theorem1`` (whether L_s < log3 d_s, so that eq. 7
    indeed applies to the shallow network), ``width_factor`` w = d_s / d_x, and
    ``any_width``: True when the shallow upper bound reaches the target already at width 1
    (then ``width`` is 1: no widening is needed, and the bounds do not separate the two).
    """
    for name, v in (("width", width), ("heads", heads), ("depth", depth), ("shallow depth", shallow_depth)):
        require_int(name, v)
    require(shallow_depth < depth, f"shallow depth must be < depth: {shallow_depth} >= {depth}")
    target = theorem1_lower(depth, width, heads)  # raises outside Theorem 1's regime
    require(target > 0, f"the deep network's eq.-(7) lower bound must be positive, got {target:.3g}")
    any_width = _t1_upper(shallow_depth, 0.0, heads) >= target  # already at width 1 (log3 width 0)
    log3_w = 0.0 if any_width else _solve_shallow_log3_width(target, shallow_depth, heads)
    log10_w, w = _width_from_log3(log3_w)
    return {"log3_sep_target": float(target), "log10_width": log10_w, "width": w,
            "width_factor": 10.0 ** (log10_w - math.log10(width)) if log10_w < 300 else math.inf,
            "shallow_in_theorem1": bool(shallow_depth < log3_w), "any_width": bool(any_width)}


# Paper's stated results for the BERT-large example (section 4.1, after Corollary 1).
PAPER_COROLLARY1 = {"width": 1000, "heads": 16, "depth": 6, "shallow": {2: 2e17, 3: 2e5}}


def _readings(d_x, H, L):
    """(key, description, deep target log3 sep or None, shallow-side solver) per reading."""
    ln3 = math.log(3.0)
    t1 = lambda L_, w_, h_: float(_t1_lower(np.float64(L_), _log3(np.float64(w_)), np.float64(h_)))
    as_written = t1(L, d_x, H)
    log3 = lambda v: math.log(v) / ln3
    return [
        ("as_written", "eq. (7) as printed: log3 throughout, shallow upper (3^Ls-1)/2 log3(d_s+H), "
         "deep lower 3^(L-2)(log3(d_x-H) - L + 2 - log3 2)", as_written, None),
        ("deep_natural_log", "deep lower bound read as ln(sep) (log3 value times ln 3), shallow upper in log3: "
         "mixed bases", as_written * ln3, None),
        ("natural_log_throughout", "every log3 in eq. (7) replaced by ln (both sides)",
         3.0 ** (L - 2) * (math.log(d_x - H) - L + 2 - math.log(2.0)), "ln"),
        ("deep_log3_width", "deep lower with log3(d_x) instead of log3(d_x - H)",
         3.0 ** (L - 2) * (log3(d_x) - L + 2 - LOG3_2), None),
        ("a_without_log3_2", "a = -L + 2 (the -log3 2 dropped)",
         3.0 ** (L - 2) * (log3(d_x - H) - L + 2), None),
        ("deep_3^(L-1)", "deep lower with 3^(L-1) in place of 3^(L-2)",
         3.0 ** (L - 1) * (log3(d_x - H) - L + 2 - LOG3_2), None),
        ("deep_depth_L-1", "deep lower evaluated at depth L-1 (off by one layer)",
         t1(L - 1, d_x, H), None),
        ("shallow_3^L/2", "shallow upper with 3^Ls/2 in place of (3^Ls - 1)/2", as_written, "3^L/2"),
        ("bert_width_1024", "deep width 1024 (BERT-large's actual hidden size) instead of 1000",
         t1(L, 1024, H), None),
    ]


def corollary1_readings(width=1000, heads=16, depth=6, shallow_depths=(2, 3)):
    """The Corollary-1 example under alternative readings of eq. (7), side by side.

    The paper (after Corollary 1) states, for d_x = 1000, H = 16, L_deep = 6: d_s ~ 2e17 for
    L_s = 2 and ~ 2e5 for L_s = 3. Eq. (7) as printed gives about 7.3e15 and 7.6e4. Both
    paper numbers correspond to one and the same deep target, log3 sep ~ 145 (4 log3(2e17) =
    145.1, 13 log3(2e5) = 144.4), whereas eq. (7) as printed gives 133.0: the discrepancy
    lies in the deep network's lower bound, not in the shallow side. No constant is tuned
    here; each row changes one thing and reports what comes out.

    Returns a list of plain dicts: ``reading``, ``description``, ``log3_sep_target`` and
    ``width_Ls{n}`` (the required shallow width) per shallow depth, plus one row
    ``paper`` with the paper's numbers and the targets they imply.
    """
    rows = []
    for key, text, target, shallow in _readings(width, heads, depth):
        row = {"reading": key, "description": text, "log3_sep_target": target}
        for Ls in shallow_depths:
            if shallow == "ln":  # (3^Ls-1)/2 ln(d+H) = target
                s = target / ((3.0 ** Ls - 1) / 2)
                log10_w = (s + math.log1p(-heads * math.exp(-s))) / math.log(10.0)
            else:
                coef = 3.0 ** Ls / 2 if shallow == "3^L/2" else None
                log10_w = _solve_shallow_log3_width(target, Ls, heads, coef) * LOG10_3
            row[f"width_Ls{Ls}"] = 10.0 ** log10_w
        rows.append(row)
    if (width, heads, depth) == (PAPER_COROLLARY1["width"], PAPER_COROLLARY1["heads"], PAPER_COROLLARY1["depth"]):
        paper = {"reading": "paper", "description": "the paper's stated widths; target = (3^Ls-1)/2 log3(d_s+H) they imply",
                 "log3_sep_target": None}
        implied = []
        for Ls in shallow_depths:
            w = PAPER_COROLLARY1["shallow"].get(Ls)
            paper[f"width_Ls{Ls}"] = w
            if w is not None:
                implied.append((3.0 ** Ls - 1) / 2 * _log3(w + heads))
        paper["implied_targets"] = [float(t) for t in implied]
        rows.append(paper)
    return rows


def corollary1_paper_targets(heads=16, paper=None):
    """The deep targets (log3 sep) that the paper's rounded Corollary-1 widths allow.

    The paper gives one significant digit (d_s ~ 2e17 for L_s = 2, ~ 2e5 for L_s = 3), so each
    stated width w stands for [1.5, 2.5) x 10^k; through the shallow upper bound of eq. (7),
    (3^L_s - 1)/2 log3(d_s + H), each range maps to a range of deep targets. Returns a dict:
    ``per_shallow_depth`` {L_s: (lo, hi)} and ``both`` (lo, hi), their intersection (None if
    empty): the deep lower bounds that reproduce both numbers at the paper's precision.
    """
    stated = (paper or PAPER_COROLLARY1)["shallow"]
    ranges = {}
    for Ls, w in stated.items():
        k = math.floor(math.log10(w))
        lead = w / 10.0 ** k
        C = (3.0 ** Ls - 1) / 2
        lo_w, hi_w = (lead - 0.5) * 10.0 ** k, (lead + 0.5) * 10.0 ** k
        ranges[Ls] = (C * float(_log3(lo_w + heads)), C * float(_log3(hi_w + heads)))
    lo = max(r[0] for r in ranges.values())
    hi = min(r[1] for r in ranges.values())
    return {"per_shallow_depth": ranges, "both": (lo, hi) if lo < hi else None}


# ---------------------------------------------------------------------------------------------
# Corollary 2

def corollary2(width, heads, depth, constant=1.0, integer_depth=False):
    """Corollary 2: the shallower, wider network that out-ranks a deep one past the threshold.

    For a deep network with L > log3 d_x: beta1 = log3(d_x)/L (< 1) and
    beta2 = constant * ln(H) * ln(d_x) * ln(L), the paper's O(log H log d_x log L) with its
    hidden constant made explicit (default 1, an arbitrary choice, not the paper's; the base of
    the logs is absorbed in it, we use natural logs). The constructed network has depth
    L_s = beta1 L + beta2 and width d_s = 3^beta2 d_x.

    Note log3 d_s = log3 d_x + beta2 = L_s: the construction lands exactly on the shallow
    network's own threshold, where neither theorem strictly applies. Its lower bound is taken
    as eq. (7)'s expression there (the limit from below, where eq. 7 is positive, while
    eq. 8's lower bound is negative). With ``integer_depth=True`` the depth is rounded down to
    an integer, L_s = floor(beta1 L + beta2), which lies inside Theorem 1's regime.

    The check ``holds``: does the shallow lower bound exceed the deep network's eq.-(8) upper
    bound (eq. 9 as implied by the bounds)? Returns a dict of plain floats.
    """
    require_int("width", width)
    require_int("heads", heads)
    require_int("depth", depth)
    require(np.isfinite(constant) and constant > 0, f"constant must be a positive number, got {constant!r}")
    deep_upper = theorem2_upper(depth, width, heads)  # raises unless depth > log3(width)
    beta1 = math.log(width) / math.log(3.0) / depth
    beta2 = constant * math.log(heads) * math.log(width) * math.log(depth)
    log3_ws = math.log(width) / math.log(3.0) + beta2
    L_s = beta1 * depth + beta2
    if integer_depth:
        L_s = float(math.floor(L_s + 1e-12))
    require(L_s >= 1, f"the constructed depth must be >= 1, got {L_s:.3g}")
    require(L_s < 640, f"the constructed depth {L_s:.4g} is too large to evaluate (3^(L-2) overflows float64)")
    shallow_lower = float(_t1_lower(np.float64(L_s), np.float64(log3_ws), np.float64(heads)))
    log10_ws, ws = _width_from_log3(log3_ws)
    return {"beta1": beta1, "beta2": beta2, "constant": float(constant), "shallow_depth": L_s,
            "log10_shallow_width": log10_ws, "shallow_width": ws,
            "shallow_lower": shallow_lower, "deep_upper": float(deep_upper),
            "holds": bool(shallow_lower > deep_upper)}


def corollary2_smallest_constant(width, heads, depth, integer_depth=False, tol=1e-6):
    """The smallest O(.) constant for which :func:`corollary2`'s check holds (by bisection).

    None when H = 1 (beta2 = 0 for every constant, so the construction returns a network of the
    deep network's width at its threshold depth, and no constant helps).
    """
    require(heads >= 1, f"heads must be >= 1, got {heads}")
    if heads == 1 or depth == 1:
        return None
    hi = 1e-3
    while not corollary2(width, heads, depth, hi, integer_depth)["holds"]:
        hi *= 2.0
        require(hi < 1e6, "no constant below 1e6 makes the check hold")
    lo = 0.0
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        try:
            ok = corollary2(width, heads, depth, mid, integer_depth)["holds"]
        except InputError:
            ok = False
        lo, hi = (lo, mid) if ok else (mid, hi)
    return hi
