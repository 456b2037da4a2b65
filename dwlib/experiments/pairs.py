"""Doubling pairs read by a rule declared before their runs (Figure 2 of the paper, at CPU scale).

A sweep whose verdicts follow a declared rule has a rule file, ``dwlib/data/rules/<sweep>.json``,
committed before the sweep's first run: what is measured, the paired interval, what counts as
the deeper network being no better (the paper's first regime), what counts as a transition, and
the exclusions. :func:`rule` reads it; everything here applies it to a sweep's records and reads
its parameters (the interval's level, the half-width target) from it, never from constants of
its own. A rule file may apply to further sweeps (``applies_to``, added before their runs): each
names only its sweep's design (:data:`DESIGN`: its pairs, budgets, seeds, run length, corpus, model),
and every other entry of the rule (the measure, the interval and its level, the verdicts, the
transition, the rate choice, the exclusions, the half-width target) applies to it as written.

For a pair (L, 2L) at one target budget, each seed gives a gap (the deeper network's held-out
loss minus the shallower one's, :func:`dwlib.experiments.transition.paired_gaps`); the mean gap
and its paired interval, mean +/- t(level, n - 1) s / sqrt(n), give the point's verdict
(:func:`points`); the points of a pair, from the smallest budget up, give the pair's verdict
(:func:`pair_verdict`).
"""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
from scipy import stats

from dwlib.errors import InputError, require
from dwlib.experiments.transition import paired_gaps, reported
from dwlib.store import packaged_json

BETTER, WORSE, UNRESOLVED = "deeper better", "deeper worse", "no difference resolved"


#: what an ``applies_to`` entry of a rule file may name for its sweep: the design, never the rule
DESIGN = ("declared", "question", "pairs", "seeds", "range", "corpus", "run_length", "tokens_per_run", "power",
          "model")


def rule(sweep: str) -> dict:
    """The declared rule of ``sweep``: its packaged rule file, or the rule of the file whose
    ``applies_to`` names it, with that entry's design (:data:`DESIGN`) in place of the file's own
    sweep's (``rule_file``: the file's sweep)."""
    try:
        out = packaged_json("rules", f"{sweep}.json")
    except FileNotFoundError:
        return _applied(sweep)
    require(out.get("sweep") == sweep, f"the rule file of {sweep!r} names another sweep")
    return out


def _applied(sweep: str) -> dict:
    folder = resources.files("dwlib").joinpath("data", "rules")
    for path in sorted((p for p in folder.iterdir() if p.name.endswith(".json")), key=lambda p: p.name):
        base = json.loads(path.read_text(encoding="utf-8"))
        entry = (base.get("applies_to") or {}).get(sweep)
        if entry is None:
            continue
        design = entry.get("design") or {}
        extra = sorted(set(design) - set(DESIGN))
        require(not extra, f"the rule file {path.name} changes {', '.join(extra)} for {sweep!r}; "
                           f"a sweep it applies to names only its design ({', '.join(DESIGN)})")
        return {**{k: v for k, v in base.items() if k != "applies_to"}, **design, "sweep": sweep,
                "rule_file": base["sweep"]}
    raise InputError(f"sweep {sweep!r} has no declared rule file")


def interval(gaps, level: float) -> dict:
    """``mean``, ``half_width``, ``low``, ``high`` and ``n`` of the paired gaps (one per seed) at
    ``level``; the half-width is None (and the interval unbounded) with fewer than two seeds."""
    g = np.asarray(list(gaps), float)
    require(g.size >= 1 and np.all(np.isfinite(g)), "an interval needs at least one finite gap")
    mean = float(g.mean())
    if g.size < 2:
        return {"mean": mean, "half_width": None, "low": -math.inf, "high": math.inf, "n": 1}
    half = float(stats.t.ppf(0.5 + level / 2, g.size - 1) * g.std(ddof=1) / math.sqrt(g.size))
    return {"mean": mean, "half_width": half, "low": mean - half, "high": mean + half, "n": int(g.size)}


def point_verdict(iv: dict) -> str:
    """Which side an interval puts ahead: deeper better (all below zero), worse, or neither."""
    if iv["high"] < 0:
        return BETTER
    if iv["low"] > 0:
        return WORSE
    return UNRESOLVED


def complete_budgets(records: list[dict], depths, seeds) -> list[float]:
    """The target budgets at which every depth of ``depths`` has a finished run (at its shape's
    chosen rate) for every seed of ``seeds``: the range the verdicts are read over."""
    have: dict[float, set] = {}
    for r in reported(records):
        if r["status"] == "completed" and r["eval_loss"] is not None and math.isfinite(r["eval_loss"]):
            have.setdefault(r["target_budget"], set()).add((r["depth"], r["seed"]))
    want = {(L, s) for L in depths for s in seeds}
    return sorted(b for b, got in have.items() if want <= got)


def points(records: list[dict], shallow: int, deep: int, level: float, seeds=None, budgets=None) -> list[dict]:
    """One row per target budget (of ``budgets``, default every one both depths reach): the
    per-seed gaps (of ``seeds`` only, when given), their interval and its verdict."""
    rows = []
    for row in paired_gaps(records, shallow, deep):
        if budgets is not None and row["target_budget"] not in budgets:
            continue
        gaps = {s: g for s, g in row["gaps"].items() if seeds is None or s in seeds}
        if gaps:
            iv = interval(gaps.values(), level)
            rows.append({**row, "gaps": gaps, **iv, "verdict": point_verdict(iv)})
    return rows


def pair_verdict(rows: list[dict]) -> dict:
    """The pair's verdict from its points (smallest budget first), by the rule's definitions:
    ``transition`` (None, or the two target budgets it lies between, with the deeper network's
    actual sizes there), and the budgets at which the deeper network is better, worse, or not
    resolved from the shallower one (no better: worse or unresolved)."""
    rows = sorted(rows, key=lambda r: r["target_budget"])
    found = None
    for i in range(len(rows) - 1):
        a, b = rows[i], rows[i + 1]
        later = rows[i + 1:]
        if a["mean"] > 0 and b["mean"] < 0 and a["verdict"] == WORSE and b["verdict"] == BETTER \
                and all(r["mean"] < 0 for r in later):
            found = {"between": (a["target_budget"], b["target_budget"]),
                     "sizes": (a["budgets"][a["deep"]], b["budgets"][b["deep"]])}
            break
    by = {v: [r["target_budget"] for r in rows if r["verdict"] == v] for v in (BETTER, WORSE, UNRESOLVED)}
    return {"transition": found, "better": by[BETTER], "worse": by[WORSE], "unresolved": by[UNRESOLVED],
            "no_better": sorted(by[WORSE] + by[UNRESOLVED]), "budgets": [r["target_budget"] for r in rows]}


def with_extension(records: list[dict], extra: list[dict]) -> list[dict]:
    """The records of a sweep that chose a rate per shape (marked by
    :func:`dwlib.experiments.selection.mark`) and those of its seed extension (a sweep trained at
    those rates: ``rates_from``), as one sweep's: each extension run marked as a run at its shape's
    chosen rate, once checked to be one, and at a seed the sweep does not have."""
    chosen = {(r["depth"], r["width"]): r for r in records if r.get("chosen")}
    seeds = {r["seed"] for r in records}
    out = list(records)
    for r in extra:
        base = chosen.get((r["depth"], r["width"]))
        require(base is not None and r["config"]["lr"] == base["chosen_lr"],
                f"run {r.get('key', '?')} of the extension is not at the chosen rate of its shape "
                f"({r['depth']} layers, width {r['width']})")
        require(r["seed"] not in seeds, f"run {r.get('key', '?')} of the extension repeats seed {r['seed']}")
        out.append({**r, "chosen_lr": base["chosen_lr"], "chosen": True, "chosen_at_edge": base["chosen_at_edge"]})
    return out


def power(rows: list[dict], target: float) -> dict:
    """How many points have a half-width of at most ``target``, of how many."""
    ok = sum(r["half_width"] is not None and r["half_width"] <= target for r in rows)
    return {"within": ok, "points": len(rows), "share": ok / len(rows) if rows else None}


def seed_spread(records: list[dict]) -> list[dict]:
    """Per shape (depth, width) at its chosen rate: the seeds' held-out losses, their number and
    standard deviation (what the pilot measures against run length)."""
    by: dict[tuple, list] = {}
    for r in reported(records):
        if r["status"] == "completed" and r["eval_loss"] is not None:
            by.setdefault((r["depth"], r["width"], r["target_budget"]), []).append(r["eval_loss"])
    return [{"depth": L, "width": d, "target_budget": b, "n": len(v),
             "std": float(np.std(v, ddof=1)) if len(v) > 1 else None, "mean": float(np.mean(v))}
            for (L, d, b), v in sorted(by.items())]


def pilot(records: list[dict], shallow: int, deep: int, level: float) -> dict:
    """What a pilot of a pair at one budget measured: each depth's seed spread (standard
    deviation of the held-out loss over seeds), the per-seed gaps' spread, and the paired
    interval's half-width with all the pilot's seeds, at the run length of ``records``."""
    rows = points(records, shallow, deep, level)
    require(len(rows) == 1, f"a pilot is one pair at one budget; these records hold {len(rows)} budgets")
    row = rows[0]
    spread = {s["depth"]: s for s in seed_spread(records)}
    tokens = sorted({r["tokens"] for r in reported(records)})
    return {"tokens": tokens[0] if len(tokens) == 1 else tokens, "seeds": row["n"], "mean_gap": row["mean"],
            "gap_std": float(np.std(list(row["gaps"].values()), ddof=1)), "half_width": row["half_width"],
            "seed_std": {L: spread[L]["std"] for L in (shallow, deep)},
            "widths": {L: spread[L]["width"] for L in (shallow, deep)}}
