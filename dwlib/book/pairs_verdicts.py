"""The verdicts of a sweep read by its declared rule, as the sentences every chapter quotes.

One place turns :mod:`dwlib.experiments.pairs` into words, so that the experiments chapter, the
claims table, the Discussion, the guidelines and the introduction say the same thing: per pair,
where the deeper network is no better (the paper's first regime), where it is better, and
whether a transition (as the rule defines it) lies within the range; plus how many points met
the rule's half-width target. Budgets read as "100K", "1.6M".
"""

from __future__ import annotations

from dwlib import fmt
from dwlib.experiments import pairs
from dwlib.experiments.records import stored_results


def _sizes(budgets) -> str:
    names = [fmt.count(b) for b in budgets]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def read(sweep: str, seeds=None) -> dict:
    """The rule of ``sweep`` applied to its stored runs: the complete budgets (every depth, every
    seed), per pair its points and verdict, and the power reached. ``seeds``: only these seeds
    (the verdicts without the rate-choosing seeds)."""
    rule = pairs.rule(sweep)
    records = stored_results(sweep)
    depths = sorted({d for p in rule["pairs"] for d in p})
    all_seeds = sorted({r["seed"] for r in records})
    budgets = pairs.complete_budgets(records, depths, all_seeds)
    out = {"rule": rule, "budgets": budgets, "pairs": []}
    for shallow, deep in rule["pairs"]:
        rows = pairs.points(records, shallow, deep, rule["level"], seeds=seeds, budgets=budgets)
        out["pairs"].append({"shallow": shallow, "deep": deep, "points": rows, "verdict": pairs.pair_verdict(rows)})
    rows = [r for p in out["pairs"] for r in p["points"]]
    out["power"] = pairs.power(rows, rule["half_width_target"])
    return out


def regime_sentence(pair: dict) -> str:
    """Regime 1 for one pair, in one sentence."""
    v, name = pair["verdict"], f"{pair['deep']} layers against {pair['shallow']}"
    if not v["budgets"]:
        return f"{name}: no budget has every seed of both depths yet."
    if not v["better"]:
        return (f"{name}: the deeper network is no better at every size measured ({_sizes(v['budgets'])}); "
                + (f"it is worse at {_sizes(v['worse'])}" if v["worse"] else "no difference is resolved")
                + ", as the paper's first regime has it.")
    return (f"{name}: the deeper network is better at {_sizes(v['better'])}"
            + (f" and no better at {_sizes(v['no_better'])}." if v["no_better"] else "."))


def transition_sentence(pair: dict) -> str:
    """The transition of one pair by the rule, in one sentence."""
    v, name = pair["verdict"], f"{pair['deep']} against {pair['shallow']} layers"
    t = v["transition"]
    if t is None:
        return f"{name}: no transition within the range, by the declared rule."
    low, high = t["between"]
    return (f"{name}: a transition between {fmt.count(low)} and {fmt.count(high)} non-embedding parameters, "
            "where the deeper network goes from worse to better and stays ahead at every larger size.")
