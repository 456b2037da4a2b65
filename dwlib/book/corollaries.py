"""The corollaries chapter's numbers and tables: Corollary 1 for the paper's BERT-large example
(as printed and under other readings of eq. 7), and Corollary 2 with its constant made explicit."""

from __future__ import annotations

import math

import pandas as pd

from dwlib import fmt
from dwlib.book.intro import how_many, number_words
from dwlib.core import bounds
from dwlib.viz.theory import corollary1_width_chart

W, H, L = 1000, 16, 6  # the paper's example for Corollary 1 (section 4.1)
DEEP = {(1024, 16, 24): "BERT-large shape", (1600, 25, 48): "GPT-2 XL shape", (12288, 96, 96): "GPT-3 175B shape"}
CONSTANTS = (0.05, 0.2, 1.0)
# The shallow side of eq. (7) under each reading of dwlib.core.bounds.corollary1_readings, as the
# factor by which it multiplies the printed (3^Ls - 1)/2 log3(d_s + H) at shallow depth Ls.
SHALLOW_SIDE = {"natural_log_throughout": "ln", "shallow_3^L/2": "3^L/2"}
#: each shallow side as a cell of the readings table writes it
SIDE_NAMES = {"log3": "log\N{SUBSCRIPT THREE}", "ln": "ln"}
SHALLOW_FACTOR = {"log3": lambda Ls: 1.0, "ln": lambda Ls: math.log(3.0), "3^L/2": lambda Ls: 3.0 ** Ls / (3.0 ** Ls - 1)}


#: each reading of eq. (7) as the table names it for readers (keys of
#: dwlib.core.bounds.corollary1_readings, plus the paper's own row)
READING_NAMES = {
    "as_written": "eq. (7) as printed",
    "deep_natural_log": "deep side in natural logs",
    "natural_log_throughout": "natural logs throughout",
    "deep_log3_width": "deep side with the width, not width \u2212 H",
    "a_without_log3_2": "deep constant without \u2212log\u2083 2",
    "deep_3^(L-1)": "deep side one power of 3 higher",
    "deep_depth_L-1": "deep side one layer short",
    "shallow_3^L/2": "shallow factor without its \u22121",
    "bert_width_1024": "deep width 1,024 (BERT-large's)",
    "paper": "the paper's stated widths",
}

#: what each reading changes, in words (the bounds module's own descriptions are formulas)
READING_CHANGES = {
    "as_written": "nothing: base-3 logarithms on both sides, as printed",
    "deep_natural_log": "the deep network's lower bound read as a natural logarithm of the separation rank; "
                        "the shallow side stays in base 3",
    "natural_log_throughout": "every base-3 logarithm of the equation read as a natural logarithm, on both sides",
    "deep_log3_width": "the deep side takes the logarithm of the width itself instead of the width minus H",
    "a_without_log3_2": "the deep side's constant loses its term \u2212log\u2083 2",
    "deep_3^(L-1)": "the deep side's factor 3 to the power L \u2212 2 becomes 3 to the power L \u2212 1",
    "deep_depth_L-1": "the deep side evaluated one layer short, at depth L \u2212 1",
    "shallow_3^L/2": "the shallow side's factor, half of 3 to the power L\u209b minus 1, loses its minus 1",
    "bert_width_1024": "the deep width 1,024, BERT-large's hidden size, instead of the paper's round 1,000",
    "paper": "none: the widths the paper states, and the deep targets they imply through the printed shallow side",
}


def corollary1_example(width: int = W, heads: int = H, depth: int = L, shallow_depth: int = 2) -> pd.DataFrame:
    """:func:`dwlib.core.bounds.corollary1_width` for one shallow depth, as a short table a reader
    can read: the deep network's eq.-(7) lower bound, the width the shallow network needs, the
    widening factor w, and whether eq. (7) bounds the shallow network at that width."""
    r = bounds.corollary1_width(width, heads, depth, shallow_depth)
    shallow = f"depth-{shallow_depth} network"
    rows = {
        f"depth-{depth} network's lower bound, log3 sep": f"{r['log3_sep_target']:.2f}",
        f"width d_s the {shallow} needs": ("any (no widening)" if r["any_width"]
                                            else fmt.power_of_ten(r["log10_width"], 3, superscript=True)),
        f"widening factor w = d_s / {width:,}": ("\N{EM DASH}" if r["any_width"] else
                                               fmt.power_of_ten(r["log10_width"] - math.log10(width), 3,
                                                                superscript=True)),
        f"eq. (7) bounds the {shallow} (L_s < log3 d_s)": "yes" if r["shallow_in_theorem1"] else "no: void",
    }
    return pd.DataFrame({f"width {width:,}, {heads} heads": list(rows.values())}, index=list(rows))


def _signed(x: float, digits: int = 3) -> str:
    """A value for a table, negative ones with a true minus sign: '−1.646'."""
    return f"{x:.{digits}f}".replace("-", "\N{MINUS SIGN}")


def corollary1_table(width: int = W, heads: int = H, depth: int = L) -> pd.DataFrame:
    """The width :func:`dwlib.core.bounds.corollary1_width` asks of each shallower depth (from 1
    to depth - 2: one layer short of the deep network, every width already reaches the target),
    and whether that width puts the shallow network inside Theorem 1's regime (L_s < log3 d_s):
    where it does not, eq. (7) does not bound the shallow network and the row means nothing."""
    rows = []
    for Ls in range(1, depth - 1):
        r = bounds.corollary1_width(width, heads, depth, Ls)
        # three significant digits; from 1,000 up as 7.34 × 10¹⁵ (a reader's form, not 7.34e+15)
        shown = fmt.sci(r["log10_width"], 3, superscript=True) if r["width"] >= 1e3 else f"{r['width']:.3g}"
        rows.append({"shallow depth": Ls, "required width d_s": shown,
                     "log10 d_s": _signed(r["log10_width"]),
                     "log10 of w = d_s / d_x": _signed(r["log10_width"] - math.log10(width)),
                     "eq. (7) applies to it (L_s < log3 d_s)": "yes" if r["shallow_in_theorem1"] else "no: row void"})
    return pd.DataFrame(rows).set_index("shallow depth")


def paper_range(shallow: str = "log3"):
    """(lo, hi): the deep targets that reproduce both of the paper's rounded Corollary-1 widths
    through the shallow upper bound ``shallow``: "log3" (eq. 7 as printed), "ln" (natural log)
    or "3^L/2" (coefficient 3^Ls/2); None if no single target reproduces both. Each is the
    printed side times SHALLOW_FACTOR, applied to the per-depth ranges of
    :func:`dwlib.core.bounds.corollary1_paper_targets` before they are intersected."""
    per = bounds.corollary1_paper_targets(heads=H)["per_shallow_depth"]
    ranges = [(lo * SHALLOW_FACTOR[shallow](Ls), hi * SHALLOW_FACTOR[shallow](Ls)) for Ls, (lo, hi) in per.items()]
    lo, hi = max(r[0] for r in ranges), min(r[1] for r in ranges)
    return (lo, hi) if lo < hi else None


def implied_targets(shallow: str = "log3") -> list[float]:
    """The deep targets the paper's two stated widths imply through the shallow side ``shallow``."""
    paper = next(r for r in bounds.corollary1_readings(W, H, L, (2, 3)) if r["reading"] == "paper")
    return [t * SHALLOW_FACTOR[shallow](Ls) for Ls, t in zip((2, 3), paper["implied_targets"])]


def _range_text(shallow: str) -> str:
    r = paper_range(shallow)
    return f"{r[0]:.1f} to {r[1]:.1f}" if r else "none: the two widths disagree"


def readings_table() -> pd.DataFrame:
    """:func:`dwlib.core.bounds.corollary1_readings` for the paper's example, formatted, with the
    range of deep targets that reproduce the paper's two rounded widths through each reading's
    own shallow side, and whether the reading's deep target lies in it."""
    rows = []
    for r in bounds.corollary1_readings(W, H, L, (2, 3)):
        t = r["log3_sep_target"]
        shallow = SHALLOW_SIDE.get(r["reading"], "log3")
        rng = paper_range(shallow)
        if t is None:
            t_text = "; ".join(f"{' / '.join(f'{v:.2f}' for v in implied_targets(side))} "
                               f"({SIDE_NAMES[side]} shallow side)" for side in ("log3", "ln"))
        rows.append({
            "reading": READING_NAMES[r["reading"]],
            "what changes": READING_CHANGES[r["reading"]],
            "deep target log3 sep": f"{t:.2f}" if t is not None else t_text,
            # as the paper writes them (one digit, 2 × 10¹⁷) in its row, to two digits in the others
            **{f"d_s for L_s = {Ls}": fmt.sci(math.log10(r[f"width_Ls{Ls}"]), 1 if r["reading"] == "paper" else 2,
                                              superscript=True)
               for Ls in (2, 3)},
            "paper's range, same shallow side": (_range_text(shallow) if t is not None else
                                                 "; ".join(f"{_range_text(side)} ({SIDE_NAMES[side]})"
                                                           for side in ("log3", "ln"))),
            "target within it": (("yes" if rng and rng[0] <= t <= rng[1] else "no") if t is not None
                                 else "\N{EM DASH}"),  # the paper states widths, no target
        })
    return pd.DataFrame(rows).set_index("reading")


def corollary2_table() -> pd.DataFrame:
    """:func:`dwlib.core.bounds.corollary2` for three deep shapes and a few constants c, with
    the smallest c for which the bounds confirm eq. (9)."""
    rows = []
    for (w, h, depth), name in DEEP.items():
        c_min = bounds.corollary2_smallest_constant(w, h, depth)
        for c in CONSTANTS:
            r = bounds.corollary2(w, h, depth, constant=c)
            rows.append({"deep network": f"{name}: L = {depth}, d_x = {w}, H = {h}",
                         "constant c": c, "beta1": round(r["beta1"], 3), "beta2": round(r["beta2"], 2),
                         "shallow depth": round(r["shallow_depth"], 2),
                         "log10 shallow width": round(r["log10_shallow_width"], 2),
                         "shallow lower": fmt.power_of_ten(math.log10(r["shallow_lower"]), 3, superscript=True),
                         "deep upper": fmt.power_of_ten(math.log10(r["deep_upper"]), 3, superscript=True),
                         "eq. (9) by the bounds": r["holds"], "smallest c": round(c_min, 4)})
    return pd.DataFrame(rows).set_index(["deep network", "constant c"])


def _inside(target, rng) -> bool:
    return target is not None and rng is not None and rng[0] <= target <= rng[1]


def _base_numbers() -> dict:
    """What the agreement of the paper's two widths does and does not test: the deep targets
    they imply with a natural-log shallow side, and with the coefficient 3^Ls/2."""
    ln_lo, ln_hi = paper_range("ln")
    ln_impl, half_impl = implied_targets("ln"), implied_targets("3^L/2")
    lnt = next(r for r in bounds.corollary1_readings(W, H, L, (2, 3)) if r["reading"] == "natural_log_throughout")
    return {"c1_ln_impl2": ln_impl[0], "c1_ln_impl3": ln_impl[1], "c1_ln_lo": ln_lo, "c1_ln_hi": ln_hi,
            "c1_half_impl2": half_impl[0], "c1_half_impl3": half_impl[1],
            "c1_half_none": "no single target" if paper_range("3^L/2") is None else "a common target",
            "c1_lnt_target": float(lnt["log3_sep_target"])}


def _void_row_numbers() -> dict:
    """The shallow depths whose required width leaves Theorem 1's regime (L_s >= log3 d_s), and
    for the first of them: its width, log3 of it, and the eq.-(7) upper bound of the narrowest
    network of that depth inside the regime (width 3^L_s + 1) against the deep target."""
    void = [Ls for Ls in range(1, L - 1) if not bounds.corollary1_width(W, H, L, Ls)["shallow_in_theorem1"]]
    Ls = void[0]
    r = bounds.corollary1_width(W, H, L, Ls)
    narrowest = 3 ** Ls + 1
    rows = ("the only row that does" if len(void) == 1
            else f"the first of {number_words(len(void))} rows that do")
    return {"c1_void_depth": Ls, "c1_void_n": len(void), "c1_void_rows": rows, "c1_void_width": r["width"],
            "c1_void_log3w": math.log(r["width"], 3), "c1_void_narrowest": narrowest,
            "c1_void_upper": bounds.theorem1_upper(Ls, narrowest, H)}


def numbers() -> dict:
    """The numbers the chapter's prose quotes (glue name -> value)."""
    target = bounds.theorem1_lower(L, W, H)
    lo, hi = bounds.corollary1_paper_targets(heads=H)["both"]
    readings = {r["reading"]: r for r in bounds.corollary1_readings(W, H, L, (2, 3))}
    implied = readings["paper"]["implied_targets"]
    ln = readings["deep_natural_log"]
    (bw, bh, bL), = [k for k, name in DEEP.items() if name.startswith("BERT-large")]
    c_min = bounds.corollary2_smallest_constant(bw, bh, bL)
    edge = bounds.corollary2(bw, bh, bL, constant=c_min)
    one = bounds.corollary2(bw, bh, bL, constant=1.0)
    return {
        "c1_target": target,
        # widths as the tables write them, 7.3 × 10¹⁵
        "c1_w2": fmt.sci(math.log10(bounds.corollary1_width(W, H, L, 2)["width"]), superscript=True),
        "c1_w3": fmt.sci(math.log10(bounds.corollary1_width(W, H, L, 3)["width"]), superscript=True),
        "c1_th": bounds.depth_threshold(W),
        "c1_lo": lo,
        "c1_hi": hi,
        "c1_impl2": implied[0],
        "c1_impl3": implied[1],
        "c1_ln_target": float(ln["log3_sep_target"]),
        "c1_ln_w2": fmt.sci(math.log10(ln["width_Ls2"]), superscript=True),
        "c1_ln_w3": fmt.sci(math.log10(ln["width_Ls3"]), superscript=True),
        "c1_n_inside": sum(_inside(r["log3_sep_target"], paper_range(SHALLOW_SIDE.get(k, "log3")))
                           for k, r in readings.items()),
        "c1_n_readings": sum(r["log3_sep_target"] is not None for r in readings.values()),
        "c1_inside_phrase": how_many(
            sum(_inside(r["log3_sep_target"], paper_range(SHALLOW_SIDE.get(k, "log3"))) for k, r in readings.items()),
            sum(r["log3_sep_target"] is not None for r in readings.values()), "readings", "does", "do", these=False),
        "c1_gap": (lo + hi) / 2 - target,
        "c1_orders2": math.log10(bounds.PAPER_COROLLARY1["shallow"][2] / bounds.corollary1_width(W, H, L, 2)["width"]),
        **_base_numbers(),
        **_void_row_numbers(),
        "c2_cmin_bert": c_min,
        "c2_edge_depth": edge["shallow_depth"],
        "c2_edge_log10w": edge["log10_shallow_width"],
        # the shallower network's width as a reader writes it, and how many times BERT-large's
        "c2_edge_width": fmt.sci(edge["log10_shallow_width"], superscript=True),
        "c2_edge_ratio": 10 ** edge["log10_shallow_width"] / bw,
        "c2_bert_width": bw, "c2_bert_depth": bL,
        "c2_one_depth": one["shallow_depth"],
        "c2_one_beta2": one["beta2"],
    }


def width_chart(width: int = W, heads: int = H, depth: int = L):
    """Corollary 1 as a picture: log10 of the width a shallower network needs to match the deep
    example, against its depth, on the rows where Theorem 1 bounds the shallow network (where the
    corollary means something). Removing one layer multiplies the exponent by about three."""
    rows = []
    for Ls in range(1, depth - 1):
        r = bounds.corollary1_width(width, heads, depth, Ls)
        if r["shallow_in_theorem1"]:
            rows.append({"shallow depth": Ls, "log10 width": r["log10_width"],
                         "width": fmt.sci(r["log10_width"], superscript=True)})
    return corollary1_width_chart(rows, width, heads, depth, math.log10(width))
