"""The numbers and tables of the chapter "Measured separation ranks"
(book/seprank_measurements.ipynb), all read from the stored sweep
(:func:`dwlib.experiments.seprank_sweep.load`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import bounds
from dwlib.experiments import seprank_sweep


def rank_frame(data: dict) -> pd.DataFrame:
    """The stored sweep's rank measurements, one row per (depth, width), as the charts take them."""
    return pd.DataFrame(data["ranks"])


def chapter(data: dict):
    """(tables, glue values) of the whole chapter from the stored sweep ``data``: the tables
    "ranks", "steps", "variants", "proposition1", "float_vs_exact", "softmax" as the chapter
    shows them, and every number its prose quotes."""
    ranks = rank_frame(data)
    r = ranks.set_index(["depth", "width"])["rank"]
    tables, numbers = {}, {}
    for part in (_ranks, _steps, _variants, _proposition1, _float_vs_exact, _softmax):
        name, table, values = part(data, ranks, r)
        tables[name] = table
        numbers.update(values)
    return tables, numbers


def numbers(data: dict | None = None) -> dict:
    """Every number the chapter's prose quotes from the stored sweep ``data`` (default: the
    packaged one), as :func:`chapter` computes them."""
    return chapter(seprank_sweep.load() if data is None else data)[1]


def live_numbers(live: dict) -> dict:
    """The glued numbers of the chapter's live measurement (:func:`dwlib.core.seprank.measure` of
    a one-layer network): the rank measured, and the one-layer closed form d_x + 1 it should equal."""
    return {"sm_live": live["rank"], "sm_live_expect": live["width"] + 1}


def worst_float_case(data: dict) -> pd.Series:
    """The last float-against-exact case whose float64 rank differs from the exact one."""
    fx = pd.DataFrame(data["float_vs_exact"])
    return fx[fx.exact != fx.float].iloc[-1]


def among(n: int, total: int) -> str:
    """How many of ``total`` cases, as English after 'agree in': 'both', 'all 3', 'none of
    them', '2 of them'."""
    if n == total:
        return "both" if total == 2 else "the one" if total == 1 else f"all {total}"
    return "none of them" if n == 0 else f"{n} of them"


def agree_sentence(n_agree: int, n_shapes: int) -> str:
    """Whether the repeats (primes and weight draws) of every shape gave one rank, as a sentence."""
    if n_agree == n_shapes:
        return f"For every one of the {n_shapes} shapes the repeats gave the same rank."
    return (f"For {n_shapes - n_agree} of the {n_shapes} shapes the repeats gave different ranks, "
            "and the table reports the largest.")


def signed(x) -> str:
    """A number of the tables with a true minus sign (−1.87, not -1.87); other cells as they are."""
    return f"{x:g}".replace("-", "\N{MINUS SIGN}") if isinstance(x, float) else x


def grid_sizes(histories) -> list[int]:
    """The grid sizes M every grid growth ran through, in order, when all grew by one rule (each
    a prefix of the longest); [] when they did not."""
    longest = max(([m for m, _, _ in h] for h in histories), key=len)
    return longest if all([m for m, _, _ in h] == longest[:len(h)] for h in histories) else []


def growth_header(sizes: list[int]) -> str:
    """The header of the ranks table's grid-growth column: the rank at each grid size M, the sizes
    named in the header when every growth followed the same steps (:func:`grid_sizes`)."""
    if not sizes:
        return "rank at each grid size (M: rank)"
    return f"rank as the grid grew (M = {', '.join(str(m) for m in sizes[:3])}, \N{HORIZONTAL ELLIPSIS})"


def growth_cell(history, sizes: list[int]) -> str:
    """One grid growth as the ranks table writes it: its ranks in order ('15, 45, 66'), or each
    with its grid size ('6: 15, 10: 45') when the growths did not share their sizes."""
    if sizes:
        return ", ".join(str(k) for _, k, _ in history)
    return ", ".join(f"{m}: {k}" for m, k, _ in history)


def _ranks(data, ranks, r):
    lg = data["timing"]["largest"]
    t1 = ranks[ranks.theorem == 1]
    values = {
        "sm_primes": " and ".join(f"{p:,}" for p in data["primes"]),
        "sm_all_agree": "all agreed" if bool(ranks["agree"].all()) else "did not all agree",
        "sm_agree_text": agree_sentence(int(ranks["agree"].sum()), len(ranks)),
        "sm_n_shapes": len(ranks), "sm_max_L": int(ranks.depth.max()), "sm_max_w": int(ranks.width.max()),
        "sm_N": int(data["positions"]), "sm_nprimes": len(data["primes"]), "sm_ndraws": int(data["draws"]),
        "sm_t1_need": ", ".join(f"{3 ** L + 1} at depth {L}" for L in (1, 2, 3)),
        "sm_t1_up210": f"{3 ** bounds.theorem1_upper(2, 10, 1):,.0f}",
        "sm_largest": f"at depth {lg['depth']} and width {lg['width']}, "
                      f"ending at M = {lg['templates']} with a {lg['matrix_shape'][0]:,} \N{MULTIPLICATION SIGN} "
                      f"{lg['matrix_shape'][1]:,} grid matrix after dropping repeated rows and columns",
        "sm_d2_L": ", ".join(str(int(r[(L, 2)])) for L in (1, 2, 3)),
        "sm_d1_L": ", ".join(str(int(r[(L, 1)])) for L in (1, 2, 3)),
        "sm_d3_L": ", ".join(str(int(r[(L, 3)])) for L in (1, 2)),
        "sm_L1_widths": f"{int(ranks[ranks.depth == 1].width.min())}-{int(ranks[ranks.depth == 1].width.max())}",
        "sm_L2_w": ", ".join(str(int(r[(2, w)])) for w in (1, 2, 3, 4)),
        "sm_t1_shapes": "widths " + ", ".join(str(int(w)) for w in t1.width),
        "sm_t1_meets": "meets" if all(abs(np.log(m.rank) / np.log(3) - m.log3_upper) < 1e-9 for m in t1.itertuples())
        else "does not always meet",
    }
    pd32 = ranks.set_index(["depth", "width"])["poly_dim"]
    values["sm_pd32"] = f"{int(pd32[(3, 2)]):,}"
    values["sm_pd32_frac"] = f"{r[(3, 2)] / pd32[(3, 2)]:.3f}"
    values["sm_pd32_rank"] = int(r[(3, 2)])
    values["sm_pd32_pct"] = f"{100 * r[(3, 2)] / pd32[(3, 2)]:.0f}%"
    sizes = grid_sizes(ranks["history"])
    values["sm_grid_sizes"] = ", ".join(str(m) for m in sizes[:3]) + ", \N{HORIZONTAL ELLIPSIS}" if sizes else ""
    growth = growth_header(sizes)
    table = ranks.assign(**{growth: [growth_cell(h, sizes) for h in ranks["history"]],
                            "theorem": [{1: "1", 2: "2"}.get(t, "none") for t in ranks["theorem"]]})
    table = table[["depth", "width", "rank", "agree", growth, "poly_dim", "theorem",
                   "log3_lower", "log3_upper", "seconds"]].rename(columns={
        "depth": "L", "width": "d_x", "rank": "measured rank", "agree": "repeats agree",
        "poly_dim": "polynomial-space bound", "log3_lower": "log3 lower bound", "log3_upper": "log3 upper bound"})
    table = table.set_index(["L", "d_x"]).round(2)
    bounded = ["log3 lower bound", "log3 upper bound"]  # no theorem: L = log3 d_x, or H >= d_x
    table[bounded] = table[bounded].astype(object).where(table[bounded].notna(), "\N{EM DASH}").map(signed)
    return "ranks", table, values


def _steps(data, ranks, r):
    steps = pd.DataFrame([{"width d_x": w, "layers": f"{L} \N{RIGHTWARDS ARROW} {L + 1}",
                           "increment of log3 rank": np.log(r[(L + 1, w)] / r[(L, w)]) / np.log(3),
                           "d_x / 2": w / 2, "2 d_x": 2 * w}
                          for w in (1, 2, 3) for L in (1, 2) if (L + 1, w) in r.index])
    steps["within [d_x/2, 2 d_x]"] = (steps["increment of log3 rank"] >= steps["d_x / 2"]) & (
        steps["increment of log3 rank"] <= steps["2 d_x"])
    inc2 = steps[steps["width d_x"] == 2]["increment of log3 rank"].to_numpy()
    values = {"sm_steps_within": "every one" if bool(steps["within [d_x/2, 2 d_x]"].all()) else "not every one",
              "sm_inc2": f"{inc2[0]:.2f} and then {inc2[1]:.2f}"}
    return "steps", steps.round(2).set_index(["width d_x", "layers"]), values


def _variants(data, ranks, r):
    var = pd.DataFrame(data["variants"])
    v = {(m.varies, m.depth, m.width, m.heads, m.positions, m.residual): int(m.rank) for m in var.itertuples()}
    res, n6, base = v[("residual", 2, 2, 1, 4, True)], v[("positions", 2, 2, 1, 6, False)], int(r[(2, 2)])
    values = {"sm_h2": v[("heads", 2, 2, 2, 4, False)], "sm_h1": base,
              "sm_h4_L2": v[("heads", 2, 4, 2, 4, False)], "sm_h4_L2_1": int(r[(2, 4)]),
              "sm_n2": v[("positions", 2, 2, 1, 2, False)], "sm_n6": n6, "sm_n46": "not" if n6 == base else "also",
              "sm_res": res,
              "sm_res_cmp": "the same rank as" if res == base else ("a higher rank than" if res > base else
                                                                     "a lower rank than")}
    table = var[["varies", "depth", "width", "heads", "positions", "residual", "rank", "agree", "templates",
                 "poly_dim"]].rename(columns={"templates": "final M", "poly_dim": "polynomial-space bound"})
    return "variants", table.set_index("varies"), values


def _proposition1(data, ranks, r):
    p1 = pd.concat([pd.DataFrame(rows).assign(setting=name) for name, rows in data["proposition1"].items()])
    p1["setting"] = p1["setting"].map({"N4": "N = 4, L = 2, d_x = 2", "N6": "N = 6, L = 2, d_x = 1"})
    values = {"sm_p1_n": len(p1),
              "sm_p1_equal": "equal" if all(g["attention"].nunique() == 1 for _, g in p1.groupby("setting"))
              else "NOT equal",
              "sm_p1_local": fmt.listed([str(v) for v in sorted(p1[p1.setting.str.startswith("N = 6")]["local"].unique())]),
              "sm_p1_local4_kept": int(p1[p1.setting.str.startswith("N = 4")]["local"].min()),
              "sm_p1_local4_cut": int(p1[p1.setting.str.startswith("N = 4")]["local"].max()),
              # a cut neighbour pair's factor: the monomials of degree <= 2 in d_x variables
              "sm_p1_factor_w2": math.comb(2 + 2, 2), "sm_p1_factor_w1": math.comb(1 + 2, 2)}
    table = p1.set_index(["setting", "partition"])[["attention", "agree", "local"]].rename(
        columns={"attention": "self-attention rank", "agree": "repeats agree", "local": "local-mixing rank"})
    return "proposition1", table, values


def _float_vs_exact(data, ranks, r):
    fx = pd.DataFrame(data["float_vs_exact"])
    bad = worst_float_case(data)
    values = {"sm_fx_agree": int(((fx.exact == fx.float) & fx.exact_in_float64).sum()),
              "sm_fx_inexact_agree": int(((fx.exact == fx.float) & ~fx.exact_in_float64).sum()),
              "sm_fx_inexact": int((~fx.exact_in_float64).sum()),
              "sm_fx_exactable": int(fx.exact_in_float64.sum()),
              "sm_fx_agree_text": among(int(((fx.exact == fx.float) & fx.exact_in_float64).sum()),
                                        int(fx.exact_in_float64.sum())),
              "sm_fx_inexact_agree_text": among(int(((fx.exact == fx.float) & ~fx.exact_in_float64).sum()),
                                                int((~fx.exact_in_float64).sum())),
              "sm_fx_bad": f"depth {int(bad.depth)}, width {int(bad.width)}",
              "sm_fx_bad_degree": 3 ** int(bad.depth),  # the degree 3^L of the analysed model's output
              "sm_fx_bad_exact": int(bad.exact), "sm_fx_bad_float": int(bad.float),
              # 2.8 × 10⁷¹, as a reader writes it (not 2.8e+71)
              "sm_fx_bad_max": fmt.sci(math.log10(bad.max_abs_entry), 2, superscript=True)}
    table = fx[["depth", "width", "templates", "exact", "float", "max_abs_entry", "exact_in_float64"]].rename(
        columns={"exact": "exact rank (GF(p))", "float": "float64 SVD rank", "max_abs_entry": "largest |entry|",
                 "exact_in_float64": "entries exact in float64"}).set_index("depth")
    table["entries exact in float64"] = table["entries exact in float64"].map({True: "yes", False: "no"})
    # 2.8 × 10⁷¹, as the prose writes it (not 2.767579e+71)
    table["largest |entry|"] = [fmt.sci(math.log10(x), 2, superscript=True) for x in table["largest |entry|"]]
    return "float_vs_exact", table, values


#: the relative tolerance of the softmax ranks the chapter quotes (a key of the stored measurements)
SOFTMAX_TOL = "1e-06"


def _softmax(data, ranks, r):
    sm = pd.DataFrame(data["softmax"])
    # 10⁻⁶, as a reader writes it
    tol = fmt.sci(math.log10(float(SOFTMAX_TOL)), 1, superscript=True).removeprefix("1 \N{MULTIPLICATION SIGN} ")
    rank = f"rank (relative tolerance {tol})"
    sm[rank] = [d[SOFTMAX_TOL] for d in sm["ranks"]]
    values = {}
    for L in (1, 2):
        values[f"sm_soft{L}"] = ", ".join(str(int(x)) for x in sm[sm.depth == L][rank])
        values[f"sm_soft{L}_cap"] = ", ".join(str(int(x)) for x in sm[sm.depth == L]["grid_cap"])
        values[f"sm_poly{L}"] = int(r[(L, 2)])
    values["sm_soft_M"] = ", ".join(str(int(x)) for x in sm[sm.depth == 1]["templates"])
    table = sm[["depth", "width", "templates", "grid_cap", rank]].rename(
        columns={"templates": "M", "grid_cap": "distinct rows or columns"}).set_index("depth")
    return "softmax", table, values
