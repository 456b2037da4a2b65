"""The corollaries chapter's numbers and tables: Corollary 1 for the paper's BERT-large example
(as printed and under other readings of eq. 7), and Corollary 2 with its constant made explicit."""

from __future__ import annotations

import math

import pandas as pd

from dwlib.core import bounds

W, H, L = 1000, 16, 6  # the paper's example for Corollary 1 (section 4.1)
DEEP = {(1024, 16, 24): "BERT-large shape", (1600, 25, 48): "GPT-2 XL shape", (12288, 96, 96): "GPT-3 175B shape"}
CONSTANTS = (0.05, 0.2, 1.0)


def corollary1_table(width: int = W, heads: int = H, depth: int = L) -> pd.DataFrame:
    """The width :func:`dwlib.core.bounds.corollary1_width` asks of each shallower depth (from 1
    to depth - 2: one layer short of the deep network, every width already reaches the target)."""
    rows = []
    for Ls in range(1, depth - 1):
        r = bounds.corollary1_width(width, heads, depth, Ls)
        rows.append({"shallow depth": Ls, "required width d_s": f"{r['width']:.3g}",
                     "log10 d_s": round(r["log10_width"], 3),
                     "log10 of w = d_s / d_x": round(r["log10_width"] - math.log10(width), 3)})
    return pd.DataFrame(rows).set_index("shallow depth")


def readings_table() -> pd.DataFrame:
    """:func:`dwlib.core.bounds.corollary1_readings` for the paper's example, formatted, with
    whether each reading's deep target lies in the range the paper's rounded widths allow."""
    lo, hi = bounds.corollary1_paper_targets(heads=H)["both"]
    rows = []
    for r in bounds.corollary1_readings(W, H, L, (2, 3)):
        t = r["log3_sep_target"]
        rows.append({
            "reading": r["reading"],
            "what changes": r["description"],
            "deep target log3 sep": (f"{t:.2f}" if t is not None else
                                     " / ".join(f"{v:.2f}" for v in r["implied_targets"]) + " (implied)"),
            "d_s for L_s = 2": f"{r['width_Ls2']:.2g}",
            "d_s for L_s = 3": f"{r['width_Ls3']:.2g}",
            "target within the paper's range": ("yes" if lo <= t <= hi else "no") if t is not None else "",
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
                         "shallow lower": f"{r['shallow_lower']:.3g}", "deep upper": f"{r['deep_upper']:.3g}",
                         "eq. (9) by the bounds": r["holds"], "smallest c": round(c_min, 4)})
    return pd.DataFrame(rows).set_index(["deep network", "constant c"])


def numbers() -> dict:
    """The numbers the chapter's prose quotes (glue name -> value)."""
    target = bounds.theorem1_lower(L, W, H)
    lo, hi = bounds.corollary1_paper_targets(heads=H)["both"]
    readings = {r["reading"]: r for r in bounds.corollary1_readings(W, H, L, (2, 3))}
    implied = readings["paper"]["implied_targets"]
    ln = readings["deep_natural_log"]
    c_min = bounds.corollary2_smallest_constant(1024, 16, 24)
    edge = bounds.corollary2(1024, 16, 24, constant=c_min)
    one = bounds.corollary2(1024, 16, 24, constant=1.0)
    return {
        "c1_target": target,
        "c1_w2": bounds.corollary1_width(W, H, L, 2)["width"],
        "c1_w3": bounds.corollary1_width(W, H, L, 3)["width"],
        "c1_th": bounds.depth_threshold(W),
        "c1_lo": lo,
        "c1_hi": hi,
        "c1_impl2": implied[0],
        "c1_impl3": implied[1],
        "c1_ln_target": float(ln["log3_sep_target"]),
        "c1_ln_w2": float(ln["width_Ls2"]),
        "c1_ln_w3": float(ln["width_Ls3"]),
        "c1_n_inside": sum(r["log3_sep_target"] is not None and lo <= r["log3_sep_target"] <= hi
                           for r in readings.values()),
        "c1_gap": (lo + hi) / 2 - target,
        "c2_cmin_bert": c_min,
        "c2_edge_depth": edge["shallow_depth"],
        "c2_edge_log10w": edge["log10_shallow_width"],
        "c2_one_depth": one["shallow_depth"],
        "c2_one_beta2": one["beta2"],
    }
