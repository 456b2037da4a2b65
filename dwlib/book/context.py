"""The numbers and tables of the chapter "Context: what depth buys" (book/context.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book import Table
from dwlib.core.collapse import VARIANTS
from dwlib.errors import require
from dwlib.experiments.context import TABLES_FILE
from dwlib.store import packaged_json

#: said under a quoted table none of whose numbers has been checked against the paper it comes from
UNCHECKED = "The numbers are as the survey gives them; they have not been checked against the original paper."


def table_check(name: str) -> dict:
    """What of the quoted table ``name`` has been checked against its primary paper: ``source``
    (the paper or the part of it that was read, in words), ``columns`` (those whose entries are
    the table's numbers), ``values`` (each ``{"row": {label column: value}, "column", "paper"}``,
    the paper's value; ``"survey"`` where the survey's copy differed and the table holds the
    paper's) and, for Brown et al., ``average_gain`` (the wide models' average advantage as the
    paper's abstract states it, in percent)."""
    tables = packaged_json(TABLES_FILE)
    require(name in tables and "check" in tables[name], f"no check recorded for quoted table {name!r}")
    return tables[name]["check"]


def _cell(table: pd.DataFrame, entry: dict):
    """The table's value at ``entry`` (its row given by label values, and its column)."""
    mask = np.logical_and.reduce([table[k] == v for k, v in entry["row"].items()])
    require(mask.sum() == 1 and entry["column"] in table.columns,
            f"checked value {entry['row']} {entry['column']!r} is not one cell of the table")
    return table.loc[mask, entry["column"]].iloc[0]


def provenance(table: pd.DataFrame, check: dict) -> str:
    """The sentence under a quoted table that says how much of it has been checked against the
    primary paper: :data:`UNCHECKED` when nothing, "n of its m numbers checked" when part, "every
    number checked" when all, with each value that had to be corrected from the survey's copy.
    A checked value that the table does not hold is an error (the table holds the paper's values)."""
    total = int(table[check["columns"]].notna().to_numpy().sum())
    values = check["values"]
    if not values:
        return UNCHECKED
    for v in values:
        held = _cell(table, v)
        require(held == v["paper"], f"the table holds {held} at {v['row']} {v['column']}, the paper {v['paper']}")
    where = [f"{v['column']} of {' on '.join(v['row'].values())}" for v in values]
    which = "; ".join(where)
    fixed = [f"{w}: the survey gives {v['survey']}, the paper {v['paper']}"
             for w, v in zip(where, values) if "survey" in v]
    said = (f"Every number checked against {check['source']}." if len(values) == total else
            f"{len(values)} of its {total} numbers checked against {check['source']} ({which}), and they "
            f"agree; the rest are as the survey gives them, not checked.")
    return said + (f" Corrected to the paper where the survey's copy differs ({'; '.join(fixed)})." if fixed else "")


def brown_table(brown: pd.DataFrame) -> Table:
    """Brown et al.'s accuracies under the quoted table's caption: one row per attention type,
    one column per task, each cell "deep / wide" (five columns, not ten: the table fits the
    text column)."""
    cells = brown.assign(both=[f"{d:.1f} / {w:.1f}" for d, w in zip(brown["deep"], brown["wide"])])
    table = cells.pivot(index="attention", columns="task", values="both").reindex(
        index=brown["attention"].unique(), columns=brown["task"].unique())
    check = table_check("brown2022wide")
    caption = f"{brown.attrs['caption']} Each cell: deep / wide. {provenance(brown, check)}"
    if "average_gain" in check:
        n = brown_numbers(brown)
        gain, here = check["average_gain"], n["bw_wide_avg"] - n["bw_deep_avg"]
        caption += (f" The paper's abstract puts the wide models' average advantage at {gain:.1f}%; the averages"
                    f" here differ by {here:.1f} points.")
    return Table(table, caption)


def clark_table(clark: pd.DataFrame) -> Table:
    """Clark et al.'s heads, one row per head, under the quoted table's caption."""
    return Table(clark.set_index("head"),
                 f"{clark.attrs['caption']} {provenance(clark, table_check('clark2019heads'))}")


def brown_numbers(brown: pd.DataFrame) -> dict:
    """How often the wide layer beats the deep stack, the averages and the largest gap."""
    pairs = brown[(brown["attention"] != "Average") & (brown["task"] != "Average")]
    gap = pairs["wide"] - pairs["deep"]
    overall = brown[(brown["attention"] == "Average") & (brown["task"] == "Average")].iloc[0]
    return {"bw_pairs": len(pairs), "bw_wide_wins": int((gap > 0).sum()), "bw_deep_wins": int((gap < 0).sum()),
            "bw_ties": int((gap == 0).sum()), "bw_deep_avg": float(overall["deep"]),
            "bw_wide_avg": float(overall["wide"]), "bw_max_gap": float(gap.abs().max()),
            "bw_max_gap_at": " / ".join(pairs.loc[gap.abs().idxmax(), ["attention", "task"]])}


#: the wide-deep figure's base caption (what it encodes); :func:`brown_caption` adds what to conclude
BROWN_CAPTION = ("Brown et al.'s test accuracies {cite}`brown2022wide`, as the survey reproduces them (not checked "
                 "against their paper): each point "
                 "is one kind of attention on one task (colour and shape), at the eight-layer network's accuracy "
                 "(horizontal) and the one-layer wide network's (vertical), in percent. Points above the dashed "
                 "diagonal are those where the single wide layer scored higher.")


def brown_conclusion(n: dict) -> str:
    """What the wide-deep figure shows, from :func:`brown_numbers`: no systematic winner when the
    averages are within a point and neither network wins two thirds of the pairs, else the winner."""
    wide, deep = n["bw_wide_wins"], n["bw_deep_wins"]
    counts = (f"the wide layer scores higher in {wide} of the {n['bw_pairs']} pairs, the deep network in {deep}"
              + (f", and {n['bw_ties']} {'is a tie' if n['bw_ties'] == 1 else 'are ties'}" if n["bw_ties"] else "")
              + f"; on average {n['bw_wide_avg']:.1f}% wide against {n['bw_deep_avg']:.1f}% deep")
    even = abs(n["bw_wide_avg"] - n["bw_deep_avg"]) < 1 and max(wide, deep) < 2 * n["bw_pairs"] / 3
    if even:
        return f"The points hug the diagonal, with no systematic winner: {counts}."
    leader = "single wide layer" if n["bw_wide_avg"] > n["bw_deep_avg"] else "eight-layer network"
    return f"The {leader} is ahead: {counts}."


def brown_caption(brown: pd.DataFrame) -> str:
    """The wide-deep figure's caption: what it encodes and what to conclude from it."""
    return f"{BROWN_CAPTION} {brown_conclusion(brown_numbers(brown))}"


def collapse_live(rows: list[dict], layers=(0, 1, 2, 3, 4, 6, 8, 12)):
    """(table, glue values) of a live :func:`dwlib.core.collapse.collapse_curves` run: the
    residual per variant at ``layers``, and the numbers the prose quotes."""
    live = pd.DataFrame(rows)
    table = live.pivot(index="variant", columns="layer", values="residual").reindex(list(VARIANTS))
    pure, resid = table.loc["pure attention"], table.loc["attention + residual"]
    depth = int(live["layer"].max())
    values = {"rc_width": int(live["width"].iloc[0]), "rc_heads": int(live["heads"].iloc[0]), "rc_depth": depth,
              "rc_positions": int(live["positions"].iloc[0])}
    for l in (1, 2, 3):
        values[f"rc_pure_{l}"] = float(pure[l])
    values.update({
        "rc_drops": ", ".join(f"{d:.1f}" for d in -np.diff(np.log10(pure[:4].to_numpy()))),
        "rc_floor_layer": int(pure.index[pure < 1e-14][0]),
        "rc_mlp_3": float(table.loc["attention + MLP", 3]),
        "rc_resid_end": float(resid[depth]),
        "rc_paper_end": float(table.loc[VARIANTS[-1], depth])})
    for l in (1, 2, 3):  # as the prose writes them
        values[f"rc_pure_{l}_text"] = _written(values[f"rc_pure_{l}"])
    values["rc_mlp_3_text"] = _written(values["rc_mlp_3"])
    return table[list(layers)].map(_written), values


def _written(v: float) -> str:
    """A residual as a reader writes it: 0.85, 0.041, 5.1 × 10⁻⁷ (two significant digits), 0."""
    return fmt.power_of_ten(math.log10(v), 2, superscript=True) if v > 0 else "0"


def collapse_grid_numbers(grid: dict) -> dict:
    """Over the stored grid: the latest layer by which pure attention is below 1e-6, and the
    range of the residual-connection variant's last value."""
    g = pd.DataFrame(grid["rows"])
    pure = g[g["variant"] == "pure attention"]
    first_below = pure[pure["residual"] < 1e-6].groupby(["width", "heads"])["layer"].min()
    end = g[g["layer"] == grid["settings"]["depth"]].groupby("variant")["residual"]
    return {"rc_grid_n": int(first_below.size),
            "rc_grid_all": bool(first_below.size == g.groupby(["width", "heads"]).ngroups),
            "rc_grid_worst": int(first_below.max()), "rc_grid_depth": grid["settings"]["depth"],
            "rc_grid_widths": f"{min(grid['settings']['widths'])} to {max(grid['settings']['widths'])}",
            "rc_grid_heads": f"{min(grid['settings']['heads'])} to {max(grid['settings']['heads'])}",
            "rc_grid_res_lo": float(end.min()["attention + residual"]),
            "rc_grid_res_hi": float(end.max()["attention + residual"])}


def liu_table(liu: pd.DataFrame):
    """(table, glue values): Liu et al.'s table as shown (diverged runs marked, under the quoted
    table's caption), and the BLEU and parameter counts of the 6-layer default and the 60-layer
    ADMIN models."""
    bleu = liu.set_index(["benchmark", "model"])
    values = {}
    for tag, bench in (("fr", "WMT'14 En-Fr"), ("de", "WMT'14 En-De")):
        values[f"liu_{tag}_base"] = float(bleu.loc[(bench, "6L-6L Default"), "BLEU"])
        values[f"liu_{tag}_deep"] = float(bleu.loc[(bench, "60L-12L ADMIN"), "BLEU"])
        values[f"liu_{tag}_params_base"] = bleu.loc[(bench, "6L-6L Default"), "parameters"]
        values[f"liu_{tag}_params_deep"] = bleu.loc[(bench, "60L-12L ADMIN"), "parameters"]
    shown = liu.astype(object).where(liu.notna(), "\N{EM DASH}")
    shown.loc[liu["BLEU"].isna(), "TER"] = "diverged"
    return Table(shown, f"{liu.attrs['caption']} {provenance(liu, table_check('liu2020very'))}"), values


def induction_summary(ind: dict):
    """(table, glue values) of a :func:`dwlib.experiments.induction.train_induction` result:
    loss, best induction and previous-token scores and training time per depth, the settings."""
    cfg = ind["config"]
    one, two = ind["runs"]
    table = pd.DataFrame([{
        "layers": r["depth"],
        "loss on the repeat (nats)": round(r["loss"], 3),
        "best induction score (last layer)": round(max(r["scores"]["induction"][-1]), 3),
        "best previous-token score (layer 1)": round(max(r["scores"]["previous_token"][0]), 3),
        "training time (s, CPU)": r["train_seconds"]} for r in ind["runs"]]).set_index("layers")
    values = {"ih_vocab": cfg["vocab"], "ih_n": cfg["n_positions"], "ih_tmin": cfg["min_period"],
              "ih_tmax": cfg["max_period"], "ih_width": cfg["width"], "ih_heads": cfg["heads"],
              "ih_steps": cfg["steps"], "ih_batch": cfg["batch"], "ih_eval": cfg["eval_batch"],
              "ih_chance": ind["chance_loss"], "ih_loss1": one["loss"], "ih_loss2": two["loss"],
              "ih_ind1": max(one["scores"]["induction"][-1]), "ih_ind2": max(two["scores"]["induction"][-1]),
              "ih_prev2": max(two["scores"]["previous_token"][0]),
              "ih_secs": sum(r["train_seconds"] for r in ind["runs"])}
    return table, values


#: the induction-attention figure's base caption (what it encodes); :func:`attention_caption` adds
#: what to conclude
ATTENTION_CAPTION = ("Attention weights of each model's best induction head on one sequence that repeats a block "
                     "once: query position $t$ down, key position $j$ across, darker for larger weights (causal "
                     "attention leaves the upper triangle empty). An induction head puts its weight on the diagonal "
                     "$j = t - T + 1$ in the second half.")

#: how many times the one-layer model's best induction score the two-layer model's must be for the
#: caption to say that only the two-layer model attends along the induction diagonal
INDUCTION_RATIO = 3.0


def attention_conclusion(ind1: float, ind2: float) -> str:
    """What the induction-attention figure shows, from the best induction scores of the one-layer
    (``ind1``) and two-layer (``ind2``) models: the mean attention weight on the induction diagonal
    over the held-out repeats."""
    scores = (f"averaged over the held-out repeats, the two-layer model's best head puts {ind2:.2f} of its "
              f"attention on that diagonal, the one-layer model's best head {ind1:.2f}")
    if ind2 >= INDUCTION_RATIO * ind1:
        return f"Only the two-layer model attends along the induction diagonal: {scores}."
    if ind1 >= INDUCTION_RATIO * ind2:
        return f"Only the one-layer model attends along the induction diagonal: {scores}."
    return f"Neither model stands out on the induction diagonal: {scores}."


def attention_caption(ind: dict) -> str:
    """The induction-attention figure's caption: what it encodes and what to conclude from it."""
    one, two = ind["runs"]
    best = [max(r["scores"]["induction"][-1]) for r in (one, two)]
    return f"{ATTENTION_CAPTION} {attention_conclusion(*best)}"
