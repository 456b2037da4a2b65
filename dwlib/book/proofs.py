"""The numbers and tables of the chapter "Proof sketches" (book/proofs.ipynb): each step of the
outlines of Theorems 1 and 2 and of Corollary 2, evaluated or checked with dwlib.core."""

from __future__ import annotations

import math

import jax
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import analysed, bounds, proofs, seprank
from dwlib.experiments import seprank_sweep
from dwlib.viz.theory import bound_counts_chart

LOG3 = math.log(3.0)
DEEP = {"BERT-large": (1024, 16, 24), "GPT-2 XL": (1600, 25, 48), "GPT-3 175B": (12288, 96, 96)}
COUNT_WIDTH, COUNT_HEADS = 1024, 16  # the example of the count tables (two_regimes uses the same)
#: the count (P1) as a table's column names it: (d_x + H) to the power C
COUNT = "(d_x + H)\u1d9c"


def _log3(x: float) -> float:
    return math.log(x) / LOG3


# ---------------------------------------------------------------------------------------------
# Theorem 1, upper bound

ONE_LAYER_TOL = 1e-12  # relative; float64 rounding of a sum of a few dozen products is ~1e-16


def one_layer_check(width: int = 6, heads: int = 2, n_positions: int = 4, batch: int = 8, seed: int = 0) -> dict:
    """One layer with Gaussian weights written as d_x + H products (proofs.one_layer_terms),
    summed and compared with the layer itself (float64), at every output entry, for A = the
    odd positions {1, 3, ...}. Reports whether the largest relative difference is below
    ONE_LAYER_TOL (the difference itself is rounding and varies with the machine)."""
    with jax.enable_x64(True):
        params = analysed.init_params(jax.random.PRNGKey(seed), 1, width, heads, dtype=np.float64)
        x = np.random.default_rng(seed).normal(size=(batch, n_positions, width))
        y = np.asarray(analysed.forward(params, x))
    part_a = list(range(0, n_positions, 2))
    errors, terms = [], set()
    for p in range(width):
        t = proofs.one_layer_terms(params[0], x, part_a, position=0, entry=p)
        errors.append(float(np.max(np.abs((t["g"] * t["g_prime"]).sum(0) - y[:, 0, p])) / np.max(np.abs(y[:, 0, p]))))
        terms.add(t["terms"])
    return {"width": width, "heads": heads, "terms": sorted(terms),
            f"sum equals the layer (relative difference < {ONE_LAYER_TOL:g})": max(errors) < ONE_LAYER_TOL}


def stored_against_count() -> pd.DataFrame:
    """Every stored measured rank (dwlib/data/seprank.json, no residual) beside the count
    (d_x + H)^C of the eq.-(7) upper bound's argument, C = (3^L - 1)/2."""
    data = seprank_sweep.load()
    rows = []
    for m in data["ranks"] + data["variants"]:
        if m["residual"]:
            continue
        C = (3 ** m["depth"] - 1) // 2
        rows.append({"depth L": m["depth"], "width d_x": m["width"], "heads H": m["heads"],
                     "positions N": m["positions"], "measured rank": m["rank"],
                     COUNT: (m["width"] + m["heads"]) ** C,
                     "rank within it": "yes" if m["rank"] <= (m["width"] + m["heads"]) ** C else "no"})
    # one row a network, led by its depth (no running row number)
    return pd.DataFrame(rows).drop_duplicates().set_index("depth L")


def depth_one_summary(stored: pd.DataFrame) -> pd.DataFrame:
    """What the argument of (P2) reads from the stored ranks (:func:`stored_against_count`): at
    depth 1, per number of heads, the widths measured, and the measured ranks beside d_x + 1 and
    the count d_x + H (each as its range over the widths). The measurements themselves are the
    measured-ranks chapter's."""
    d1 = stored.reset_index()
    d1 = d1[d1["depth L"] == 1]
    rows = []
    for heads, g in d1.groupby("heads H"):
        w = g["width d_x"]
        rows.append({"heads H": heads, "widths d_x": fmt.span(sorted(set(w))), "networks": len(g),
                     "measured rank": fmt.span(list(g["measured rank"])), "d_x + 1": fmt.span(list(w + 1)),
                     "count d_x + H": fmt.span(list(w + heads))})
    return pd.DataFrame(rows).set_index("heads H")


# ---------------------------------------------------------------------------------------------
# Theorem 1, lower bound

def generic_and_special(cases=((1, 4, 2, 4, 6), (2, 10, 1, 4, 6))) -> pd.DataFrame:
    """Grid-matrix ranks over GF(p) at random weights (two primes) and at the all-ones
    assignment, for (L, d_x, H, N, M) in ``cases``, beside eq. (7)'s bounds (as log3)."""
    p = seprank.PRIMES[0]
    rows = []
    for L, w, H, N, M in cases:
        m = seprank.measure(L, w, H, N, M, primes=seprank.PRIMES[:2], draws=1)
        ones = [{k: np.asarray(v, dtype=np.int64) for k, v in layer.items()} for layer in analysed.constant_params(L, w, H)]
        special = seprank.rank_mod_p(seprank.grid_matrix(L, w, H, N, M, params=ones, modulus=p), p)
        lo, up = bounds.theorem1_bounds(L, w, H)
        rows.append({"depth L": L, "width d_x": w, "heads H": H, "grid M": M, "random weights": m["ranks"],
                     "grid cap": m["grid_cap"], "all weights 1": special,
                     "eq. (7) lower, as a rank": round(3.0 ** lo, 2), "eq. (7) upper, as a rank": round(3.0 ** up)})
    return pd.DataFrame(rows).set_index("depth L")  # a row a network, led by its depth


def count_table(max_vars: int = 4, max_degree: int = 5) -> pd.DataFrame:
    """Monomials of degree k in n variables: listed one by one, and C(n + k - 1, k)."""
    rows = [{"n variables": n, "degree k": k, "listed": proofs.monomials_by_enumeration(n, k),
             "C(n+k-1, k)": proofs.multiset(n, k)}
            for n in range(1, max_vars + 1) for k in range(max_degree + 1)]
    return pd.DataFrame(rows)


def count_grid(max_vars: int = 4, max_degree: int = 5) -> pd.DataFrame:
    """:func:`count_table`'s listed counts as a grid: variables down, degrees across."""
    return count_table(max_vars, max_degree).pivot(index="n variables", columns="degree k", values="listed")


def lower_count_table(width: int = COUNT_WIDTH, heads: int = COUNT_HEADS, depths=range(2, 15)) -> pd.DataFrame:
    """:func:`lower_counts` as a reader sees it (:func:`signed_table`)."""
    return signed_table(lower_counts(width, heads, depths))


def lower_counts(width: int = COUNT_WIDTH, heads: int = COUNT_HEADS, depths=range(2, 15)) -> pd.DataFrame:
    """Eq. (7) or (8)'s lower bound beside log3 C(n + k - 1, k), n = (d_x - H)/2, k = 3^(L-2)."""
    rows = []
    for L in depths:
        r = proofs.lower_bound_count(width, heads, L)
        rows.append({"depth L": L, K_LABEL: r["k"], "theorem": {1: "1, eq. (7)", 2: "2, eq. (8)"}[r["theorem"]],
                     "lower bound (log3)": round(r["lower"], 2), COUNT_LOG: round(r["log3_count"], 2),
                     "count minus bound": round(r["log3_count"] - r["lower"], 2)})
    return pd.DataFrame(rows).set_index("depth L")


#: the count table's labels as a reader writes them: k = 3ᴸ⁻², log₃ C(n + k − 1, k)
K_LABEL, COUNT_LOG = "k = 3\u1d38\u207b\u00b2", "log3 C(n + k \u2212 1, k)"


def signed_table(frame: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """``frame`` as a reader sees it: its real numbers to ``digits`` decimals with separators and
    a true minus sign ('−402.98', '1,647.24'); its integers with separators."""
    def cell(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            return v
        if isinstance(v, (int, np.integer)):
            return f"{int(v):,}"
        return f"{v:,.{digits}f}".replace("-", "\N{MINUS SIGN}")
    return frame.map(cell)


#: the names of the count chart's series, as its legend shows them: symbols as a reader writes
#: them (log₃, dₓ), not as code does
COUNT_SERIES = tuple(fmt.math_label(name) for name in (
    "upper bound (P1): C log3(d_x + H)", "log3 of the monomial count (P4)", "printed lower bound, eq. (7) or (8)"))


def count_chart_rows(width: int = COUNT_WIDTH, heads: int = COUNT_HEADS, depths=range(2, 15)) -> pd.DataFrame:
    """The count chart's rows (``depth L``, ``series``, ``log3``): per depth, Theorem 1's upper
    bound as a count, C log3(d_x + H) (P1, which holds at every depth), log3 of the monomial
    count C(n + k - 1, k) and the printed lower bound of eq. (7) or (8) where it is positive
    (``theorem``: 1 or 2, so that the chart does not join the two theorems' bounds; 0 for the
    counts, which are one expression at every depth)."""
    rows = []
    for L in depths:
        r = proofs.lower_bound_count(width, heads, L)
        rows.append({"depth L": L, "series": COUNT_SERIES[0],
                     "log3": (3.0 ** L - 1) / 2 * _log3(width + heads), "theorem": 0})
        rows.append({"depth L": L, "series": COUNT_SERIES[1], "log3": r["log3_count"], "theorem": 0})
        if r["lower"] > 0:
            rows.append({"depth L": L, "series": COUNT_SERIES[2], "log3": r["lower"], "theorem": r["theorem"]})
    return pd.DataFrame(rows)


def count_chart(width: int = COUNT_WIDTH, heads: int = COUNT_HEADS):
    """:func:`count_chart_rows` drawn by :func:`dwlib.viz.theory.bound_counts_chart`."""
    return bound_counts_chart(count_chart_rows(width, heads), float(bounds.depth_threshold(width)))


def bracket_floor(widths=tuple(2 ** e for e in range(2, 21)), max_depth: int = 20) -> float:
    """The smallest log3(d_x - H) + a of eq. (7) over every (L, d_x, H) with H | d_x, H <= d_x/2
    and L < log3 d_x, for the widths given: the paper notes it is positive."""
    best = math.inf
    for w in widths:
        for H in (h for h in range(1, w // 2 + 1) if w % h == 0):
            for L in range(1, max_depth + 1):
                if L < _log3(w):
                    best = min(best, bounds.theorem1_lower(L, w, H) / 3.0 ** (L - 2))
    return best


# ---------------------------------------------------------------------------------------------
# Theorem 2

def n_dependence(width: int = 2, depths=range(3, 11), positions=(2, 4, 6, 8)) -> pd.DataFrame:
    """Growth per layer of log3 of the polynomial-space count (seprank.polynomial_dimension, which
    depends on N) for each N, beside eq. (8)'s upper-bound slope 2 d_x + 1 (free of N)."""
    rows = []
    for N in positions:
        logs = [_log3(seprank.polynomial_dimension(L, width, N // 2, N // 2)) for L in depths]
        rows.append({"positions N": N, **{f"L {a} to {b}": round(y - x, 2)
                                          for a, b, x, y in zip(depths, list(depths)[1:], logs, logs[1:])}})
    return pd.DataFrame(rows).set_index("positions N")


# ---------------------------------------------------------------------------------------------
# Corollary 2

def corollary2_table() -> pd.DataFrame:
    """beta_2 of Corollary 2 for three deep shapes: solved here (proofs.corollary2_beta2), its
    closed-form estimate, and the same through bounds.corollary2_smallest_constant."""
    rows = []
    for name, (w, H, L) in DEEP.items():
        r = proofs.corollary2_beta2(w, H, L)
        c = bounds.corollary2_smallest_constant(w, H, L)
        rows.append({"deep network": name, "L \u00d7 d_x (H)": f"{L} \u00d7 {w:,} ({H})", "log3 d_x": round(_log3(w), 2),
                     "beta2": round(r["beta2"], 4), "estimate log3(9U / ((2 \u2212 log3 2) d_x))": round(r["estimate"], 4),
                     "c ln H ln d_x ln L (corollaries chapter)": round(c * math.log(H) * math.log(w) * math.log(L), 4),
                     "shallow depth": round(r["shallow_depth"], 2), "log10 shallow width": round(r["log10_shallow_width"], 2)})
    return pd.DataFrame(rows).set_index("deep network")


# ---------------------------------------------------------------------------------------------
# The numbers the prose quotes

def _small(x: float) -> str:
    """A small non-negative difference as the prose writes it: 2.1 × 10⁻⁶ (not 2.1e-06), or 0."""
    return fmt.sci(math.log10(x), 2, superscript=True) if x > 0 else "0"


def one_layer_numbers(one_layer: dict) -> dict:
    """The numbers the prose quotes from :func:`one_layer_check`'s result."""
    return {
        "pf_ol_w": one_layer["width"], "pf_ol_h": one_layer["heads"], "pf_ol_terms": one_layer["terms"][0],
        "pf_ol_tol": fmt.sci(math.log10(ONE_LAYER_TOL), 1, superscript=True),  # 1 × 10⁻¹², not 1e-12
        "pf_ol_ok": "reproduces" if one_layer[f"sum equals the layer (relative difference < {ONE_LAYER_TOL:g})"] else "does not reproduce",
    }


def stored_numbers(stored: pd.DataFrame) -> dict:
    """The numbers the prose quotes from :func:`stored_against_count`'s table."""
    stored = stored.reset_index()
    d1 = stored[(stored["depth L"] == 1) & (stored["heads H"] == 1)]
    return {
        "pf_st_n": len(stored), "pf_st_all": "all" if bool((stored["rank within it"] == "yes").all()) else "not all",
        "pf_st_d1_eq": "equals" if bool((d1["measured rank"] == d1[COUNT]).all()) else "does not equal",
        "pf_st_d1_n": len(d1),
    }


def special_numbers(special: pd.DataFrame) -> dict:
    """The numbers the prose quotes from :func:`generic_and_special`'s table."""
    special = special.reset_index()
    two_cases = special.set_index("depth L")
    return {
        "pf_gs_rand1": two_cases.loc[1, "random weights"][0], "pf_gs_ones1": int(two_cases.loc[1, "all weights 1"]),
        "pf_gs_rand2": two_cases.loc[2, "random weights"][0], "pf_gs_ones2": int(two_cases.loc[2, "all weights 1"]),
        "pf_gs_cap2": int(two_cases.loc[2, "grid cap"]), "pf_gs_lo2": float(two_cases.loc[2, "eq. (7) lower, as a rank"]),
        "pf_gs_agree": "agree" if all(len(set(r)) == 1 for r in special["random weights"]) else "do not agree",
    }


def numbers() -> dict:
    """The rest of the chapter's glued numbers: the counts, the bounds and the stored data. (Those
    of the live checks come from :func:`one_layer_numbers`, :func:`stored_numbers` and
    :func:`special_numbers`, each glued right after its check, before the prose quotes it.)"""
    data = seprank_sweep.load()
    v = {(m["varies"], m["positions"]): m["rank"] for m in data["variants"]}
    counts = lower_counts(depths=range(2, 30))
    t1, t2 = counts[counts.theorem.str.startswith("1")], counts[counts.theorem.str.startswith("2")]
    slope_count = float(counts[COUNT_LOG].iloc[-1] - counts[COUNT_LOG].iloc[-2])
    slope8 = bounds.theorem2_lower(29, COUNT_WIDTH, COUNT_HEADS) - bounds.theorem2_lower(28, COUNT_WIDTH, COUNT_HEADS)
    nd = n_dependence()
    c2 = [proofs.corollary2_beta2(*shape) for shape in DEEP.values()]
    bert = c2[0]
    return {
        "pf_cnt_ok": "agree" if bool((count_table()["listed"] == count_table()["C(n+k-1, k)"]).all()) else "disagree",
        "pf_cnt_n": COUNT_WIDTH, "pf_cnt_h": COUNT_HEADS, "pf_cnt_nvars": (COUNT_WIDTH - COUNT_HEADS) // 2,
        "pf_t1_below": "lies below" if bool((t1["count minus bound"] >= -1e-9).all()) else "does not lie below",
        "pf_t2_below": "lies below" if bool((t2["count minus bound"] >= -1e-9).all()) else "does not lie below",
        "pf_slope_count": slope_count, "pf_slope8": slope8,
        "pf_gap_far": float(t2["count minus bound"].iloc[-1]),
        "pf_floor": bracket_floor(), "pf_floor_theory": 2.0 - 2.0 * _log3(2.0),
        "pf_nd_w": 2, "pf_nd_last": nd.columns[-1].replace("L ", ""),
        "pf_nd_slopes": ", ".join(f"{s:.2f}" for s in nd.iloc[:, -1]),
        "pf_nd_eq8": 2 * 2 + 1,
        "pf_n2": v[("positions", 2)], "pf_n6": v[("positions", 6)],
        "pf_n4": next(m["rank"] for m in data["ranks"] if (m["depth"], m["width"], m["heads"]) == (2, 2, 1)),
        "pf_c2_beta2": bert["beta2"], "pf_c2_est": bert["estimate"], "pf_c2_Ls": bert["shallow_depth"],
        "pf_c2_log10w": bert["log10_shallow_width"], "pf_c2_U": bert["deep_upper"],
        "pf_c2_maxdiff": _small(max(abs(proofs.corollary2_beta2(w, H, L)["beta2"]
                                        - bounds.corollary2_smallest_constant(w, H, L) * math.log(H) * math.log(w)
                                        * math.log(L)) for w, H, L in DEEP.values())),
        "pf_c2_factor": 9.0 / proofs.THRESHOLD_FACTOR, "pf_thf": proofs.THRESHOLD_FACTOR,
        "pf_c2_shallower": "In every row" if all(r["shallower"] for r in c2) else "Not in every row",
        "pf_c2_w_lo": min(r["log10_shallow_width"] for r in c2), "pf_c2_w_hi": max(r["log10_shallow_width"] for r in c2),
        # the same widths as a reader writes them: 2.4 × 10⁵
        "pf_c2_width_lo": fmt.sci(min(r["log10_shallow_width"] for r in c2), superscript=True),
        "pf_c2_width_hi": fmt.sci(max(r["log10_shallow_width"] for r in c2), superscript=True),
    }
