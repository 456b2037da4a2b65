"""The two-regimes chapter's numbers: the bounds' growth below and above the threshold, and
where published models sit on the regime map."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book.intro import how_many
from dwlib.book.references import sources
from dwlib.core import bounds
from dwlib.experiments.catalogue import gpt3_table, load_models

WIDTH, HEADS = 1024, 16      # the network whose bounds the chapter follows layer by layer
ABOVE = (8, 12, 24)          # depths above its threshold (eq. 8)
BELOW = 5                    # a depth below its threshold (eq. 7), one layer short of the last such depth
FIGURE_WIDTHS, FIGURE_HEADS = (64, 256, 1024, 4096), 8  # the widths and heads of the chapter's first figure
PLACED = ("BERT-base", "BERT-large", "GPT-2 Small (124M)", "GPT-2 Medium (355M)", "GPT-2 Large (774M)",
          "GPT-2 XL (1.5B)", "T5-11B")


def growth_table(width: int = WIDTH, heads: int = HEADS, depths=range(1, 7)) -> pd.DataFrame:
    """Eq. (7) at each depth (:func:`dwlib.core.bounds.theorem1_bounds`), with the factor by
    which each layer multiplies the upper bound."""
    Ls = np.asarray(depths)
    lower, upper = bounds.theorem1_bounds(Ls, width, heads)
    return pd.DataFrame({"depth L": Ls, "lower log3 sep": lower.round(2), "upper log3 sep": upper.round(1),
                         # depth 1 has no layer below it to compare with
                         "upper(L) / upper(L − 1)": ["\N{EM DASH}", *(f"{r:.3f}" for r in upper[1:] / upper[:-1])]}
                        ).set_index("depth L")


def placed_models() -> pd.DataFrame:
    """Published shapes (BERT, GPT-2, T5-11B and the GPT-3 family) with their source (author and
    year), their threshold, the number of their layers above it and the regime of their depth."""
    real = [m for m in load_models() if m["name"] in PLACED]
    placed = pd.DataFrame([{k: m[k] for k in ("name", "depth", "width", "heads", "source")}
                           for m in real + gpt3_table()])
    placed["source"] = sources(placed["source"])
    threshold = bounds.depth_threshold(placed["width"].to_numpy(float))
    placed["threshold log3 d_x"] = threshold.round(2)
    placed["layers above threshold"] = (placed["depth"] - np.floor(threshold)).astype(int)
    placed["regime"] = bounds.regime(placed["depth"].to_numpy(), placed["width"].to_numpy())
    return placed


def width_for_one_layer(bound, depth: int, width: float = WIDTH, heads: int = HEADS) -> float:
    """The width at which the depth-``depth`` network's ``bound`` (a function of depth, width,
    heads from :mod:`dwlib.core.bounds`) equals that of the depth-(depth + 1) network of width
    ``width``: what one added layer is worth in width, by that bound. Bisection on log3(width)
    (the bounds increase with the width in the ranges used here; checked by the bracket)."""
    target = bound(depth + 1, width, heads)
    lo, hi = math.log(width, 3), math.log(width, 3) + 1
    if bound(depth, width, heads) > target:
        raise ValueError(f"depth {depth} at width {width} already exceeds depth {depth + 1}'s bound")
    while bound(depth, 3.0 ** hi, heads) < target:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(depth, 3.0 ** mid, heads) < target else (lo, mid)
    return 3.0 ** hi


def signed(x: float, spec: str = ",.1f") -> str:
    """A number as the prose writes it, negative ones with a true minus sign: '−130.4'."""
    return format(x, spec).replace("-", "\N{MINUS SIGN}")


def figure_numbers(widths=FIGURE_WIDTHS) -> dict:
    """Where the thresholds of the first figure's widths lie: each (2 decimals), what a factor 4
    in width moves the threshold by, and the first whole depth past every one of them."""
    th = [float(bounds.depth_threshold(w)) for w in widths]
    return {
        "tr_fig_ratio": int(round(max(widths) / min(widths))),
        "tr_fig_ths": fmt.listed([f"{t:.2f}" for t in th]),
        "tr_fig_step": math.log(4, 3),
        "tr_fig_past": math.floor(max(th)) + 1,
    }


def numbers() -> dict:
    """The numbers the chapter's prose quotes (glue name -> value)."""
    up7 = bounds.theorem1_upper(np.array([5, 6]), WIDTH, HEADS)
    L2 = np.array(ABOVE)
    lo8, up8 = bounds.theorem2_bounds(L2, WIDTH, HEADS)
    placed = placed_models()
    return {
        "tr_w": WIDTH,
        "tr_H": HEADS,
        "tr_th": bounds.depth_threshold(WIDTH),
        "tr_ratio": float(up7[1] / up7[0]),
        # the lower bound's factor per layer, first and last depth of the growth table
        "tr_lo_ratio_first": float(lower_ratios()[0]),
        "tr_lo_ratio_last": float(lower_ratios()[-1]),
        "tr_slope_lo": float((lo8[1] - lo8[0]) / (L2[1] - L2[0])),
        "tr_slope_up": float((up8[1] - up8[0]) / (L2[1] - L2[0])),
        "tr_lo24": float(lo8[2]),
        "tr_up24": float(up8[2]),
        **one_layer_numbers(),
        **cliff_numbers(),
        # negative values as the prose writes them (a true minus sign)
        "tr_th_up8_text": signed(bounds.theorem2_upper(bounds.depth_threshold(WIDTH) + 1e-9, WIDTH, HEADS)),
        "tr_cliff_lo8_text": signed(bounds.theorem2_lower(math.floor(bounds.depth_threshold(WIDTH)) + 1, WIDTH, HEADS)),
        "tr_n_models": len(placed),
        "tr_n_above": int((placed["regime"] == "depth-inefficient").sum()),
        # the start of a sentence: 'All 15 published models placed here have their'
        "tr_above_models": fmt.capitalised(how_many(int((placed["regime"] == "depth-inefficient").sum()), len(placed),
                                         "published models placed here", "has its", "have their", these=False)),
        "tr_max_th": float(placed["threshold log3 d_x"].max()),
        # the Takeaway's reading of the placement (the chapter's text gives the count)
        "tr_takeaway_models": (
            "For every published model placed here, then, the bounds say depth and width trade evenly: depth's "
            "double-exponential advantage holds only for networks shallower than the threshold, and none "
            "of these models is that shallow."
            if (placed["regime"] == "depth-inefficient").all() else
            "For most published models placed here the bounds say depth and width trade evenly; depth's "
            "double-exponential advantage belongs to layers below the threshold."),
    }



def one_layer_numbers(depth: int = ABOVE[-1]) -> dict:
    """What one added layer is worth in width at ``depth`` (above the threshold) and at
    BELOW (below it), by :func:`width_for_one_layer`, and the leading-order value d_x / L."""
    up = width_for_one_layer(bounds.theorem2_upper, depth) - WIDTH
    lo = width_for_one_layer(bounds.theorem2_lower, depth) - WIDTH
    return {
        "tr_L": depth,
        "tr_layer_lead": WIDTH / depth,
        "tr_layer_pct": 100 / depth,
        "tr_layer_up": up,
        "tr_layer_lo": lo,
        "tr_layer_up_pct": 100 * up / WIDTH,
        "tr_layer_lo_pct": 100 * lo / WIDTH,
        "tr_below_L": BELOW,
        "tr_below_L1": BELOW + 1,
        "tr_below_width": width_for_one_layer(bounds.theorem1_upper, BELOW),
    }


def cliff_numbers() -> dict:
    """The upper bound on both sides of the threshold: eq. (7) at the last depth below it, eq. (8)
    at the first depth above it, and each expression's limit at the threshold itself (where
    3^L = d_x and neither theorem applies), from below for eq. (7) and from above for eq. (8)."""
    th = bounds.depth_threshold(WIDTH)
    below, above = math.floor(th), math.floor(th) + 1
    eps = 1e-9
    return {
        "tr_cliff_below": below,
        "tr_cliff_above": above,
        "tr_cliff_up7": bounds.theorem1_upper(below, WIDTH, HEADS),
        "tr_cliff_up8": bounds.theorem2_upper(above, WIDTH, HEADS),
        "tr_cliff_lo7": bounds.theorem1_lower(below, WIDTH, HEADS),
        "tr_cliff_lo8": bounds.theorem2_lower(above, WIDTH, HEADS),
        "tr_th_up7": bounds.theorem1_upper(th - eps, WIDTH, HEADS),
        "tr_th_up8": bounds.theorem2_upper(th + eps, WIDTH, HEADS),
    }


def lower_ratios(width: int = WIDTH, heads: int = HEADS, depths=range(1, 7)) -> np.ndarray:
    """The factor by which each layer multiplies eq. (7)'s lower bound, at the growth table's
    depths: below 3 (the bound's constant a falls by one per layer), shrinking with depth."""
    lower, _ = bounds.theorem1_bounds(np.asarray(depths), width, heads)
    return lower[1:] / lower[:-1]


def growth_words(width: int = WIDTH, heads: int = HEADS) -> str:
    """How a layer below the threshold multiplies the two bounds: 'the upper bound about
    threefold and the lower bound by less (from 2.5 to 1.9 at d_x = 1024, H = 16)'."""
    r = lower_ratios(width, heads)
    return (f"the upper bound about threefold and the lower bound by less (from {r[0]:.1f} to "
            f"{r[-1]:.1f} at $d_x = {width}$, $H = {heads}$)")


def bounds_depth_caption() -> str:
    """The caption of the chapter's first figure (in the cell's metadata, where nothing can be
    glued): what it encodes and what to conclude, with the lower bound's growth computed."""
    return (
        "Lower (solid) and upper (dashed) bounds on $\\log_3 sep$ against depth, for four widths $d_x$ (one "
        f"colour each, named at the right) and $H = {FIGURE_HEADS}$ heads: eq. {{ref}}`(7) <eq-7>` below each "
        "width's threshold (the dotted line of its colour), eq. {ref}`(8) <eq-8>` above it; bounds that are "
        "not positive are not drawn. What to conclude: below its threshold each layer multiplies "
        f"{growth_words()}; above it both bounds rise in proportion to depth, at a slope set by the width. "
        "The fall at each threshold is a break between two theorems' bounds, not a drop in the separation "
        "rank.")


def explorer_caption() -> str:
    """The bounds explorer's caption (cell metadata), its colours those of
    :func:`dwlib.viz.bounds.bounds_explorer_chart`, the lower bound's growth computed."""
    return (
        "The bounds explorer, computed in the page; sliders set $d_x$, $H$, the depth $L$ and Corollary 1's "
        "shallow depth. Against depth, on a logarithmic axis: the blue band is eq. {ref}`(7) <eq-7>`, from its "
        "lower (solid) to its upper (dashed) bound; the orange band is eq. {ref}`(8) <eq-8>`, where its lower "
        "bound is positive; the black dashed line is the threshold, the pink solid line $L$, the green dotted "
        "line the shallow depth. What to "
        "conclude: the width moves the threshold only by its "
        f"logarithm; below it each layer multiplies {growth_words()}; the width Corollary 1 asks explodes as "
        "the shallow depth drops.")
