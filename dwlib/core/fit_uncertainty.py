"""How well the fit d_x(L) = exp(a + b L) is known, and the fit set against L_th = log3(d_x).

The authors' constants a = 5.039, b = 0.0555 (:mod:`dwlib.core.fit`) reach us as two printed
numbers: the transition budgets they were fitted to, and any standard error, are not published
in the sources this book draws on (the paper, the authors' summary, BloombergGPT's restatement).
A statistical uncertainty needs the residuals of the fit, so none can be derived here; what can
be derived is (i) the precision of the printing itself, half a unit in the last printed digit,
propagated to everything the fit gives (:func:`printed_interval`, :func:`rounding_box`), and
(ii) how far the authors' own 1-trillion projection (92 layers) sits from the fit, as the slope
that would reproduce it (:func:`slope_for_optimum`). A fit to measured transitions does come with
standard errors (:func:`dwlib.experiments.transition_fit.fit_from_transitions`).

:func:`threshold_against_fit` compares the fit's optimal networks with the depth threshold of
Theorems 1 and 2: along the fit, log3 d_x(L) = (a + b L) / ln 3, so the threshold rises by b / ln 3
of a layer per layer, and L / log3 d_x(L) tends to ln 3 / b.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

import numpy as np

from dwlib.core import sizes
from dwlib.core.fit import AUTHORS_FIT, Fit, optimal_depth, positive, positive_number
from dwlib.errors import InputError, require

LN3 = math.log(3.0)
#: the authors' constants as printed (BloombergGPT, section 2.3): their precision is all we know.
PRINTED = {"intercept": "5.039", "slope": "0.0555"}


def printed_interval(text: str) -> tuple[float, float]:
    """(lo, hi): the values a decimal printed as ``text`` may stand for, +- half a unit in its
    last digit ("0.0555" -> (0.05545, 0.05555))."""
    try:
        d = Decimal(str(text).strip())
    except InvalidOperation:
        raise InputError(f"a printed constant must be a decimal number, got {text!r}") from None
    require(d.is_finite(), f"a printed constant must be finite, got {text!r}")
    half = Decimal(5).scaleb(d.as_tuple().exponent - 1)
    return float(d - half), float(d + half)


def rounding_box(budgets=(1e9, 175e9, 1e12), printed: dict | None = None) -> dict:
    """The printed precision of (a, b) propagated: the intervals of a and b, of the width factor
    per layer e^b, of ln 3 / b, and of the optimal depth L*(N) at each budget (L* decreases in
    a and in b, so its extremes lie at the box's corners (a_hi, b_hi) and (a_lo, b_lo))."""
    printed = printed or PRINTED
    a_lo, a_hi = printed_interval(printed["intercept"])
    b_lo, b_hi = printed_interval(printed["slope"])
    N = positive(budgets, "budgets").ravel()
    deepest = np.asarray(optimal_depth(N, Fit(a_lo, b_lo)), dtype=float).ravel()
    shallowest = np.asarray(optimal_depth(N, Fit(a_hi, b_hi)), dtype=float).ravel()
    central = np.asarray(optimal_depth(N, Fit(float(printed["intercept"]), float(printed["slope"])))).ravel()
    return {"intercept": (a_lo, a_hi), "slope": (b_lo, b_hi),
            "width_factor": (math.exp(b_lo), math.exp(b_hi)), "ln3_over_slope": (LN3 / b_hi, LN3 / b_lo),
            "budgets": [float(n) for n in N], "optimal_depth": [float(v) for v in central],
            "optimal_depth_range": [(float(lo), float(hi)) for lo, hi in zip(shallowest, deepest)]}


def slope_for_optimum(budget: float, depth: float, intercept: float = AUTHORS_FIT.log_width_intercept) -> float:
    """The slope b for which depth L is the optimum at budget N with the intercept a kept:
    N = 12 L exp(2a + 2bL) solved for b, b = (ln(N / (12 L)) - 2a) / (2L)."""
    N = positive_number(budget, "budget")
    L = positive_number(depth, "depth")
    return (math.log(N / (sizes.PARAMS_PER_LAYER * L)) - 2.0 * intercept) / (2.0 * L)


def threshold_against_fit(depths, fit: Fit = AUTHORS_FIT) -> dict:
    """The fit's optimal width at each depth, d_x(L) = exp(a + bL), beside its threshold
    log3 d_x(L) = (a + bL) / ln 3 and the ratio L / log3 d_x(L).

    Also: ``crossing_depth``, the depth a / (ln 3 - b) at which L = log3 d_x(L) (above it the
    fit's networks are deeper than their threshold: Theorem 2's regime); ``limit_ratio``
    ln 3 / b, the ratio's limit; the width factors per layer of the fit (e^b) and of the
    threshold (3: keeping L = log3 d_x as L grows needs 3 times the width per layer).
    """
    L = positive(depths, "depths").ravel()
    a, b = fit.log_width_intercept, fit.depth_slope
    require(b < LN3, f"the fit's slope must be below ln 3 = {LN3:.4f} for a crossing, got {b}")
    log3_w = (a + b * L) / LN3
    with np.errstate(over="ignore"):  # widths past float64: inf (the ratio needs only log3 d_x)
        width = np.exp(a + b * L)
    return {"depth": L, "width": width, "log3_width": log3_w, "ratio": L / log3_w,
            "above_threshold": L > log3_w, "crossing_depth": a / (LN3 - b), "limit_ratio": LN3 / b,
            "fit_width_factor": math.exp(b), "threshold_width_factor": 3.0}
