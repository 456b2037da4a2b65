"""The two-regimes chapter's numbers: the bounds' growth below and above the threshold, and
where published models sit on the regime map."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dwlib.core import bounds
from dwlib.experiments.catalogue import gpt3_table, load_models

WIDTH, HEADS = 1024, 16      # the network whose bounds the chapter follows layer by layer
ABOVE = (8, 12, 24)          # depths above its threshold (eq. 8)
PLACED = ("BERT-base", "BERT-large", "GPT-2 Small (124M)", "GPT-2 Medium (355M)", "GPT-2 Large (774M)",
          "GPT-2 XL (1.5B)", "T5-11B")


def growth_table(width: int = WIDTH, heads: int = HEADS, depths=range(1, 7)) -> pd.DataFrame:
    """Eq. (7) at each depth (:func:`dwlib.core.bounds.theorem1_bounds`), with the factor by
    which each layer multiplies the upper bound."""
    Ls = np.asarray(depths)
    lower, upper = bounds.theorem1_bounds(Ls, width, heads)
    return pd.DataFrame({"depth L": Ls, "lower log3 sep": lower.round(2), "upper log3 sep": upper.round(1),
                         "upper(L) / upper(L-1)": np.r_[np.nan, upper[1:] / upper[:-1]].round(3)}
                        ).set_index("depth L")


def placed_models() -> pd.DataFrame:
    """Published shapes (BERT, GPT-2, T5-11B and the GPT-3 family) with their threshold, the
    number of their layers above it and the regime of their depth."""
    real = [m for m in load_models() if m["name"] in PLACED]
    gpt3 = [{"name": g["name"], "depth": g["depth"], "width": g["width"], "heads": g["heads"],
             "source": "brown2020language"} for g in gpt3_table()]
    placed = pd.DataFrame([{k: m[k] for k in ("name", "depth", "width", "heads", "source")} for m in real + gpt3])
    threshold = bounds.depth_threshold(placed["width"].to_numpy(float))
    placed["threshold log3 d_x"] = threshold.round(2)
    placed["layers above threshold"] = (placed["depth"] - np.floor(threshold)).astype(int)
    placed["regime"] = bounds.regime(placed["depth"].to_numpy(), placed["width"].to_numpy())
    return placed


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
        "tr_slope_lo": float((lo8[1] - lo8[0]) / (L2[1] - L2[0])),
        "tr_slope_up": float((up8[1] - up8[0]) / (L2[1] - L2[0])),
        "tr_lo24": float(lo8[2]),
        "tr_up24": float(up8[2]),
        "tr_n_models": len(placed),
        "tr_n_above": int((placed["regime"] == "depth-inefficient").sum()),
        "tr_max_th": float(placed["threshold log3 d_x"].max()),
    }
