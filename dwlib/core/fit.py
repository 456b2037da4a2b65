"""Practical depth-to-width guidelines: the optimal depth for a size, and verdicts on shapes.

The practical outcome of Levine et al. (2020) (``levine2020depth``; the authors' summary,
"Bottom lines"): for a given number of non-embedding parameters there is an optimal depth,
logarithmic in that size; the GPT-3 models up to ~10B parameters were too shallow for their
size and GPT-3 175B was too deep; a 1-trillion parameter network should have depth ~92 and
width ~30K (:mod:`dwlib.experiments.catalogue` holds those models and that projection).

The authors fitted the network size at which a deeper network starts to outperform a
shallower one (the transition between the depth-inefficiency and depth-efficiency regimes of
section 5) as exponential in depth.  As later applied by others (Jurassic-1,
``lieber2021jurassic``; BloombergGPT, ``wu2023bloomberggpt``, section 2.3, which states it in
this form), the fit reads, for a network of depth L, the optimal width

    d_x(L) = exp(5.039) * exp(0.0555 * L),

with the non-embedding parameter count of Kaplan et al. (2020) (``kaplan2020scaling``)
N = 12 * L * d_x**2 (:mod:`dwlib.core.sizes`).  So the budget at which depth L is optimal is
N(L) = 12 L exp(2 * 5.039 + 2 * 0.0555 L); it increases monotonically in L, and the optimal
depth for a budget N is its inverse (solved numerically here; there is no closed form because
of the factor L).

Everything takes plain numbers or numpy arrays and returns plain numbers, numpy arrays, dicts
or lists of dicts.  Bad input raises :class:`dwlib.errors.InputError` with one line naming
the failed condition.  A different fit (for example one measured from transitions,
:func:`dwlib.experiments.transition_fit.fit_from_transitions`) can be passed everywhere as
``fit=Fit(...)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dwlib import fmt
from dwlib.core import sizes
from dwlib.errors import InputError, require, shown

# --------------------------------------------------------------------------------------------
# The fit
# --------------------------------------------------------------------------------------------

#: log of the optimal width at depth 0 in the authors' fit d_x = exp(5.039) exp(0.0555 L)
#: (Levine et al. 2020; stated in this form by BloombergGPT, Wu et al. 2023, section 2.3).
LOG_WIDTH_INTERCEPT = 5.039
#: growth of log optimal width per layer in the same fit: each added layer calls for a width
#: larger by a factor exp(0.0555) ~= 1.057.
DEPTH_SLOPE = 0.0555
#: default head size when a width is split into heads (GPT-3, LLaMA, OPT, BLOOM all use 128
#: at scale); every practical width is a multiple of it.
DEFAULT_HEAD_SIZE = 128
#: default tolerance of the verdict: a depth within 10% of the optimal depth (or within one
#: layer, for small models) is "near optimal".  See :func:`verdict` for the justification.
DEFAULT_REL_TOL = 0.10
DEFAULT_ABS_TOL = 1.0
#: depths of the authors' transition experiments (their summary: "networks of depths 6, 12,
#: 18, 24, 30, 36, 48"); adjacent ones differ by a factor 1.2 at the finest (30 -> 36).
AUTHORS_EXPERIMENT_DEPTHS = (6, 12, 18, 24, 30, 36, 48)

_LOG_K = math.log(sizes.PARAMS_PER_LAYER)  # log 12, of N = 12 L d_x^2


#: the range a fit may take: an optimal width at depth 0 between e^-50 and e^50 (5e21), and at
#: most a factor e^10 per layer; past them budgets such as 12 L exp(2a) overflow float64.
MAX_INTERCEPT = 50.0
MAX_SLOPE = 10.0
#: most head size and nearby-depth span the advice takes (a span of 10^400 never ends).
MAX_HEAD_SIZE = 1 << 20
MAX_SPAN = 1000


@dataclass(frozen=True)
class Fit:
    """An exponential fit of the optimal width in depth: d_x(L) = exp(a + b L).

    ``log_width_intercept`` is a = log d_x(0), ``depth_slope`` is b (> 0, so that the budget
    N(L) = 12 L d_x(L)^2 at which depth L is optimal grows monotonically with L and every
    budget has exactly one optimal depth).  The defaults are the authors' fit (see the module
    docstring).
    """

    log_width_intercept: float = LOG_WIDTH_INTERCEPT
    depth_slope: float = DEPTH_SLOPE

    def __post_init__(self):
        a, b = self.log_width_intercept, self.depth_slope
        require(isinstance(a, (int, float)) and math.isfinite(a) and abs(a) <= MAX_INTERCEPT,
                f"fit log_width_intercept must be a number from -{MAX_INTERCEPT} to {MAX_INTERCEPT}, got {shown(a)}")
        require(isinstance(b, (int, float)) and math.isfinite(b) and 0 < b <= MAX_SLOPE,
                f"fit depth_slope must be a number > 0 and <= {MAX_SLOPE}, got {shown(b)}")


#: the authors' fit, used wherever no other is passed.
AUTHORS_FIT = Fit()


# --------------------------------------------------------------------------------------------
# Input checks (also used by the transition fit and the charts): one-line InputErrors
# --------------------------------------------------------------------------------------------

def _out(x):
    """numpy 0-d results become Python floats (plain data out)."""
    x = np.asarray(x)
    return x if x.ndim else float(x)


def _array(value, name: str, strict: bool) -> np.ndarray:
    """``value`` as a float array, every entry finite and > 0 (``strict``) or >= 0."""
    try:
        arr = np.asarray(value, dtype=float)
    except OverflowError:  # a Python int past float64's range
        raise InputError(f"{name} must be below 1.8e308 (float64's range), got {shown(value)}") from None
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {shown(value)}") from None
    require(arr.size > 0, f"{name} must not be empty")
    for bad, rule in ((~np.isfinite(arr), "be finite"),
                      ((arr <= 0, "be > 0") if strict else (arr < 0, "be >= 0"))):
        if bad.any():
            raise InputError(f"{name} must {rule}, got {fmt.number(arr[bad].flat[0])}")
    return arr


_SUFFIX = {"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_budget(text: str) -> float:
    """'175e9', '1.3e9', '175B', '1T', '350M' -> a positive finite float, else InputError."""
    s = str(text).strip().replace("_", "").replace(",", "")
    scale = _SUFFIX.get(s[-1:].upper())
    try:
        value = float(s[:-1] if scale else s) * (scale or 1.0)
    except ValueError:
        raise InputError(f"budget must be a number such as 175e9 or 175B, got {shown(text)}") from None
    require(math.isfinite(value), f"budget must be finite, got {shown(text)}")
    require(value > 0, f"budget must be > 0, got {shown(text)}")
    return value


def positive(value, name: str) -> np.ndarray:
    """``value`` as a float array, every entry finite and > 0, else InputError."""
    return _array(value, name, strict=True)


def positive_number(value, name: str) -> float:
    """One finite number > 0, else InputError."""
    arr = positive(value, name)
    require(arr.size == 1, f"{name} must be a single number, got {arr.size} values")
    return float(arr.reshape(()))


def check_head_size(head_size) -> int:
    """``head_size`` as an int, else InputError unless it is a positive integer."""
    is_int = (isinstance(head_size, (int, np.integer)) and not isinstance(head_size, bool)) or (
        isinstance(head_size, float) and head_size.is_integer())
    require(is_int, f"head_size must be an integer, got {shown(head_size)}")
    require(head_size > 0, f"head_size must be > 0, got {shown(head_size)}")
    require(head_size <= MAX_HEAD_SIZE, f"head_size must be at most {MAX_HEAD_SIZE:,}, got {shown(head_size)}")
    return int(head_size)


def check_budget_range(budget_range) -> tuple[float, float]:
    """(lo, hi) of an increasing pair of positive budgets, else InputError."""
    lo, hi = (float(v) for v in positive(budget_range, "budget_range").ravel())
    require(hi > lo, f"budget_range must be increasing, got {budget_range!r}")
    return lo, hi


def require_one_head(budget: float, head_size: int) -> None:
    """InputError unless ``budget`` affords one layer of one head (N >= 12 h^2)."""
    smallest = sizes.budget(1, head_size)
    require(budget >= smallest,
            f"budget {fmt.number(budget)} is below 12 * head_size^2 = {smallest}, the budget of "
            f"the smallest practical shape (1 layer, 1 head of size {head_size})")


# --------------------------------------------------------------------------------------------
# The fit's optimum
# --------------------------------------------------------------------------------------------

def optimal_width(depth, fit: Fit = AUTHORS_FIT):
    """The fit's optimal width for a depth: d_x(L) = exp(a) exp(b L) (module docstring).

    Vectorised over ``depth``.  Depth 0 is accepted and evaluates the intercept exp(a)
    (~154.3 for the authors' fit); negative or non-finite depths raise InputError.
    """
    L = _array(depth, "depth", strict=False)
    with np.errstate(over="ignore"):  # past float64: inf
        return _out(np.exp(fit.log_width_intercept + fit.depth_slope * L))


def budget_for_depth(depth, fit: Fit = AUTHORS_FIT):
    """The non-embedding budget at which ``depth`` is optimal: N(L) = 12 L d_x(L)^2.

    This is the fit's width d_x(L) inserted into the count N = 12 L d_x^2 of Kaplan et al.
    (2020).  Computed as exp(log 12 + log L + 2a + 2bL) so depths in the hundreds do not lose
    precision.  Vectorised; N(0) = 0.
    """
    L = _array(depth, "depth", strict=False)
    with np.errstate(divide="ignore", over="ignore"):  # N(0) = 0; past float64: inf
        log_n = _LOG_K + np.log(L) + 2 * fit.log_width_intercept + 2 * fit.depth_slope * L
        return _out(np.exp(log_n))


def depth_for_width(width, fit: Fit = AUTHORS_FIT):
    """The depth at which ``width`` is the fit's optimal width: L = (log d_x - a) / b.

    Inverse of :func:`optimal_width`.  Widths below exp(a) (the fit's width at depth 0) have
    no optimal depth and raise InputError.
    """
    d_x = positive(width, "width")
    floor = math.exp(fit.log_width_intercept)
    bad = d_x < floor
    if bad.any():
        raise InputError(f"width must be >= {floor:.1f} (the fit's optimal width at depth 0), "
                         f"got {fmt.number(d_x[bad].flat[0])}")
    return _out((np.log(d_x) - fit.log_width_intercept) / fit.depth_slope)


def optimal_depth(budget, fit: Fit = AUTHORS_FIT):
    """The continuous optimal depth L* for a non-embedding budget N: the root of N(L) = N.

    Solved in u = log L, where g(u) = log 12 + u + 2a + 2b e^u - log N is increasing
    (g' = 1 + 2b e^u > 0) and convex (g'' = 2b e^u > 0).  Newton's method started to the right
    of the root stays to its right and decreases monotonically to it, so it converges for every
    N > 0; the start (c = log N - log 12 - 2a, or the closer log(c/2b + 1) + 1 when c > 0) is
    to the right of the root (see the comments).  Vectorised over ``budget``; no scipy.
    """
    N = positive(budget, "budget")
    a, b = fit.log_width_intercept, fit.depth_slope
    c = np.asarray(np.log(N) - _LOG_K - 2 * a, dtype=float)  # g(u) = u + 2b e^u - c
    # Start right of the root: g(c) = 2b e^c > 0.  For c > 0 also u1 = log(c/2b + 1) + 1 is
    # right of it (u1 > 0 and 2b e^u1 = e (c + 2b) > c), and much closer when c is large.
    u = np.where(c > 0, np.minimum(c, np.log(np.maximum(c, 0.0) / (2 * b) + 1.0) + 1.0), c)
    for _ in range(200):
        e = np.exp(u)
        g = u + 2 * b * e - c
        step = g / (1 + 2 * b * e)
        u = u - step
        if np.all(np.abs(step) <= 1e-14 * np.maximum(1.0, np.abs(u))):
            break
    return _out(np.exp(u))


def optimal_shape(budget, fit: Fit = AUTHORS_FIT) -> dict:
    """The continuous optimal (L*, d_x*) for a budget N: L* = optimal_depth(N), d_x* = d_x(L*).

    By construction 12 L* d_x*^2 = N.  Scalar or array budgets; values are floats or arrays.
    """
    L = optimal_depth(budget, fit)
    return {"budget": _out(positive(budget, "budget")), "depth": L,
            "width": optimal_width(L, fit)}


def optimal_curve(budget_range=(1e6, 1e13), points: int = 200, fit: Fit = AUTHORS_FIT,
                  rel_tol: float = DEFAULT_REL_TOL, abs_tol: float = DEFAULT_ABS_TOL) -> dict:
    """The fit's optimal depth and width over a log-spaced range of budgets, with the band of
    depths :func:`verdict` calls "near optimal": L* -+ max(rel_tol L*, abs_tol) (lower end >= 0).

    Returns a dict of numpy arrays: budget, depth, width, depth_low, depth_high.
    """
    lo, hi = check_budget_range(budget_range)
    require(isinstance(points, (int, np.integer)) and points >= 2,
            f"points must be an integer >= 2, got {points!r}")
    N = np.geomspace(lo, hi, int(points))
    L = np.asarray(optimal_depth(N, fit))
    tol = np.maximum(rel_tol * L, abs_tol)
    return {"budget": N, "depth": L, "width": np.asarray(optimal_width(L, fit)),
            "depth_low": np.maximum(L - tol, 0.0), "depth_high": L + tol}


# --------------------------------------------------------------------------------------------
# Practical shapes
# --------------------------------------------------------------------------------------------

def shape_for_budget_at_depth(budget: float, depth: int, head_size: int = DEFAULT_HEAD_SIZE,
                              fit: Fit = AUTHORS_FIT) -> dict:
    """A practical shape of integer ``depth`` spending ``budget``: width sqrt(N / (12 L)),
    rounded to the nearest multiple of ``head_size`` (at least one head).

    Returns depth, width, heads, head_size, the actual budget 12 L d^2, its ratio to the
    requested budget, and the verdict on the shape (:func:`verdict`).
    """
    N = positive_number(budget, "budget")
    h = check_head_size(head_size)
    L = positive_number(depth, "depth")
    require(L.is_integer(), f"depth must be an integer, got {depth!r}")
    L = int(L)
    d = sizes.round_width(sizes.exact_width(N, L), h)
    actual = sizes.budget(L, d)
    v = verdict(L, d, fit=fit)
    return {"depth": L, "width": d, "heads": d // h, "head_size": h,
            "budget": float(actual), "budget_ratio": actual / N,
            "verdict": v["verdict"], "depth_ratio": v["depth_ratio"]}


def practical_shape(budget, head_size: int = DEFAULT_HEAD_SIZE, fit: Fit = AUTHORS_FIT) -> dict:
    """The practical shape for a budget: depth round(L*), width matching the budget at that
    depth rounded to a multiple of ``head_size``, heads = width / head_size.

    The budget must afford one layer of one head (N >= 12 h^2), else InputError.
    Bounds (used by the tests): |depth - L*| <= 1/2 (for L* >= 1/2; depth is at least 1), and,
    with d_c = sqrt(N / (12 depth)) the width that spends N exactly, |width - d_c| <= h/2
    whenever d_c >= h/2, so the actual budget 12 depth width^2 = N (width/d_c)^2 lies within a
    factor (1 +- h/(2 d_c))^2 of N.  Also returned: the continuous optimum (L*, d_x*).
    """
    N = positive_number(budget, "budget")
    h = check_head_size(head_size)
    require_one_head(N, h)
    L_star = float(optimal_depth(N, fit))
    depth = max(1, int(round(L_star)))
    shape = shape_for_budget_at_depth(N, depth, h, fit)
    shape["optimal_depth"] = L_star
    shape["optimal_width"] = float(optimal_width(L_star, fit))
    shape["requested_budget"] = N
    return shape


def nearby_shapes(budget, head_size: int = DEFAULT_HEAD_SIZE, span: int = 2,
                  fit: Fit = AUTHORS_FIT) -> list[dict]:
    """Practical shapes at depths round(L*) - span .. round(L*) + span (those >= 1), each with
    the width that spends ``budget`` at that depth (:func:`shape_for_budget_at_depth`)."""
    N = positive_number(budget, "budget")
    h = check_head_size(head_size)
    require(isinstance(span, (int, np.integer)) and 0 <= span <= MAX_SPAN,
            f"span must be an integer from 0 to {MAX_SPAN}, got {shown(span)}")
    require_one_head(N, h)
    center = max(1, int(round(float(optimal_depth(N, fit)))))
    # keep the depths where the budget affords at least half a head per layer, so that rounding
    # the width to whole heads changes the budget by a factor of at most 4 (practical_shape).
    return [shape_for_budget_at_depth(N, L, h, fit)
            for L in range(max(1, center - span), center + span + 1)
            if sizes.exact_width(N, L) >= h / 2]


def width_for_depth(depth, head_size: int = DEFAULT_HEAD_SIZE, fit: Fit = AUTHORS_FIT) -> dict:
    """The fit's optimal width for a (positive) depth, continuous and as a multiple of
    ``head_size``, with the budgets 12 L d^2 of both."""
    L = positive_number(depth, "depth")
    h = check_head_size(head_size)
    d = float(optimal_width(L, fit))
    require(math.isfinite(float(budget_for_depth(L, fit))),
            f"depth {fmt.number(L)} is too large for this fit: its optimal budget overflows float64")
    dp = sizes.round_width(d, h)
    return {"depth": L if not L.is_integer() else int(L), "optimal_width": d,
            "budget": float(budget_for_depth(L, fit)),
            "width": dp, "heads": dp // h, "head_size": h,
            "practical_budget": float(sizes.budget(L, dp))}


# --------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------

def verdict(depth, width, fit: Fit = AUTHORS_FIT, rel_tol: float = DEFAULT_REL_TOL,
            abs_tol: float = DEFAULT_ABS_TOL, head_size: int | None = None) -> dict:
    """Is an architecture (depth L, width d_x) too shallow, near optimal or too deep for its size?

    Its own budget N = 12 L d_x^2 is computed, and L is compared with the fit's optimal depth
    L*(N) (:func:`optimal_depth`); the width is compared with d_x* = d_x(L*).

    Rule: "near optimal" iff |L - L*| <= max(rel_tol * L*, abs_tol); otherwise "too shallow"
    (L < L*) or "too deep" (L > L*).  Defaults rel_tol = 0.10, abs_tol = 1 layer.
    Justification: the fit comes from transitions measured between the depths 6, 12, 18, 24,
    30, 36, 48 (authors' summary); adjacent depths there differ by a factor 1.2 at the finest
    (30 -> 36), so the data locate an optimal depth only to within about +-10%, and a
    deviation below that is not resolved by the experiments behind the fit.  The one-layer
    floor keeps small models (L* ~ 5-10, where 10% is under a layer) from being judged on the
    rounding of depth to an integer.  At a fixed budget, a depth ratio r means a width ratio
    r^(-1/2), so the rule tolerates ~5% in width.

    With ``head_size`` given, the width must split into heads of that size (else InputError)
    and ``heads`` is reported.  Returns plain data: depth, width, budget, optimal_depth,
    optimal_width, depth_ratio L/L*, depth_difference L - L*, width_ratio d_x/d_x*, verdict,
    rule.
    """
    L = positive_number(depth, "depth")
    d = positive_number(width, "width")
    require(L >= 1, f"depth must be >= 1, got {depth!r}")
    require(d >= 1, f"width must be >= 1, got {width!r}")
    require(math.isfinite(rel_tol) and rel_tol >= 0, f"rel_tol must be finite and >= 0, got {rel_tol!r}")
    require(math.isfinite(abs_tol) and abs_tol >= 0, f"abs_tol must be finite and >= 0, got {abs_tol!r}")
    out = {"depth": int(L) if L.is_integer() else L, "width": int(d) if d.is_integer() else d}
    if head_size is not None:
        h = check_head_size(head_size)
        require(d.is_integer() and int(d) % h == 0,
                f"width {width!r} is not divisible by head_size {h}, so it cannot be split "
                f"into heads of that size")
        out["heads"] = int(d) // h
        out["head_size"] = h
    with np.errstate(over="ignore"):
        N = float(sizes.budget(L, d))
    require(math.isfinite(N), f"depth {fmt.number(L)} and width {fmt.number(d)} give a budget past float64")
    L_star = float(optimal_depth(N, fit))
    d_star = float(optimal_width(L_star, fit))
    tol = max(rel_tol * L_star, abs_tol)
    diff = L - L_star
    word = "near optimal" if abs(diff) <= tol else ("too shallow" if diff < 0 else "too deep")
    out.update({
        "budget": N, "optimal_depth": L_star, "optimal_width": d_star,
        "depth_ratio": L / L_star, "depth_difference": diff, "width_ratio": d / d_star,
        "verdict": word,
        "rule": f"near optimal iff |L - L*| <= max({rel_tol:g} L*, {abs_tol:g}) = {tol:.2f} layers",
    })
    return out


def rule_words(rule: str) -> str:
    """A verdict's rule (:func:`verdict`, written in ASCII for a terminal's JSON) as a reader reads
    it: 'near optimal iff |L - L*| <= ...' -> 'near optimal when |L − L*| ≤ ...'."""
    return (rule.replace(" iff ", " when ").replace(" - ", " \N{MINUS SIGN} ")
            .replace("<=", "\N{LESS-THAN OR EQUAL TO}"))
