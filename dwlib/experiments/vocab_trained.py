"""The vocabulary bottleneck, trained: the pair 2 vs 4 layers at input-embedding ranks 8, 32 and
full, read by the rule declared before its runs (``dwlib/data/rules/vocab-trained.json``).

Each rank is its own sweep (the presets ``vocab-r8``, ``vocab-r32``, ``vocab-full``: the rate is
chosen per shape, and per rank, on the validation split). Everything here is a pure function of
their records and the rule, whose parameters (the pair, the budget, the ranks, the interval's
level, the verdicts) are read from the file, never from constants of this module:

- per rank, the pair's gap seed by seed (deeper minus shallower held-out loss, at the shapes'
  chosen rates: :func:`dwlib.experiments.transition.paired_gaps`), its paired interval and which
  side that puts ahead (:func:`dwlib.experiments.pairs.point_verdict`);
- per small rank, the difference of gaps (gap at r minus gap at full rank, seed by seed, over the
  seeds that have all four runs), its paired interval and its reading: ``supported`` (the interval
  lies below zero: the deeper network gains more at small rank), ``against`` (above zero) or
  ``undecided`` (it contains zero); the verdict is the primary rank's reading.
"""

from __future__ import annotations

from dwlib.errors import InputError, require
from dwlib.experiments import pairs
from dwlib.experiments.presets import get_preset
from dwlib.experiments.records import stored_results
from dwlib.experiments.transition import paired_gaps, reported

RULE = "vocab-trained"
SUPPORTED, AGAINST, UNDECIDED = "supported", "against", "undecided"


def rule() -> dict:
    """The declared rule (its packaged rule file), checked for what this module reads from it."""
    out = pairs.rule(RULE)
    require(set(out["verdicts"]) == {SUPPORTED, AGAINST, UNDECIDED}, "the vocabulary rule names other verdicts")
    require(set(out["sweeps"]) == {str(r) for r in out["ranks"]}, "the vocabulary rule's sweeps are not its ranks")
    return out


def rank_of(label: str):
    """The ``embedding_rank`` of a rank's runs: None for "full", else the integer."""
    return None if label == "full" else int(label)


def reading(iv: dict) -> str:
    """The rule's reading of the interval of a difference of gaps."""
    if iv["high"] < 0:
        return SUPPORTED
    if iv["low"] > 0:
        return AGAINST
    return UNDECIDED


def _check(label: str, records: list[dict]) -> None:
    want = rank_of(label)
    for r in records:
        got, tied = r["config"].get("embedding_rank"), r["config"].get("tied", True)
        if got != want or tied:
            raise InputError(f"run {r.get('key', '?')} has embedding rank {got} and tied {tied}; "
                             f"the {label} runs need rank {want} and an untied output")


def gaps(records: list[dict], shallow: int, deep: int, budget: float, seeds=None) -> dict:
    """Seed: gap (deeper minus shallower held-out loss) at ``budget``, at the chosen rates
    (seeds: only these, when given)."""
    rows = [r for r in paired_gaps(records, shallow, deep) if r["target_budget"] == float(budget)]
    found = rows[0]["gaps"] if rows else {}
    return {s: g for s, g in found.items() if seeds is None or s in seeds}


def shape_losses(records: list[dict], budget: float) -> list[dict]:
    """Per shape at ``budget``: depth, width, chosen rate, the seeds' held-out losses and their mean."""
    by: dict[tuple, dict] = {}
    for r in reported(records):
        if r["target_budget"] == float(budget) and r["status"] == "completed" and r["eval_loss"] is not None:
            row = by.setdefault((r["depth"], r["width"]), {"depth": r["depth"], "width": r["width"],
                                                           "lr": r["config"].get("lr"), "losses": {}})
            row["losses"][r["seed"]] = r["eval_loss"]
    return [{**row, "mean": sum(row["losses"].values()) / len(row["losses"])} for _, row in sorted(by.items())]


def read(records_by_rank: dict, rule_: dict, seeds=None, seeds_planned: int | None = None) -> dict:
    """The rule applied to the runs of each rank (``{"8": records, "32": ..., "full": ...}``, as
    the rule's ``sweeps`` name them). ``seeds``: only these seeds (the reading without the seeds
    that chose the rates). ``seeds_planned``: how many seeds the design trains (a difference is
    ``complete`` when it has them all). Returns ``ranks`` (per rank: gaps, interval, verdict,
    shape losses), ``differences`` (per small rank: per-seed differences, interval, reading,
    complete) and ``verdict`` (the primary rank's reading; None before any seed has all its runs)."""
    level, (shallow, deep), budget = rule_["level"], rule_["pair"], rule_["target_budget"]
    labels = [str(r) for r in rule_["ranks"]]
    require(set(records_by_rank) <= set(labels), f"unknown rank(s) {sorted(set(records_by_rank) - set(labels))}; "
                                                 f"the rule's ranks are {', '.join(labels)}")
    out = {"ranks": {}, "differences": {}}
    per_rank = {}
    for label in labels:
        records = records_by_rank.get(label, [])
        _check(label, records)
        g = gaps(records, shallow, deep, budget, seeds)
        per_rank[label] = g
        iv = pairs.interval(g.values(), level) if g else None
        out["ranks"][label] = {"gaps": g, "interval": iv, "verdict": pairs.point_verdict(iv) if iv else None,
                               "shapes": shape_losses(records, budget)}
    full = per_rank["full"]
    for r in rule_["small_ranks"]:
        label = str(r)
        common = sorted(set(per_rank[label]) & set(full))
        diffs = {s: per_rank[label][s] - full[s] for s in common}
        iv = pairs.interval(diffs.values(), level) if diffs else None
        out["differences"][label] = {"differences": diffs, "interval": iv, "reading": reading(iv) if iv else None,
                                     "complete": seeds_planned is not None and len(diffs) >= seeds_planned}
    out["verdict"] = out["differences"][str(rule_["primary_rank"])]["reading"]
    return out


def read_stored(seeds=None) -> dict:
    """:func:`read` on the published records of the rule's three sweeps (InputError, one line,
    while one is not published)."""
    r = rule()
    records = {label: stored_results(name) for label, name in r["sweeps"].items()}
    planned = len(get_preset(r["sweeps"]["full"]).seeds) if seeds is None else len(seeds)
    return {"rule": r, **read(records, r, seeds, planned)}
