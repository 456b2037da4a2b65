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
from dwlib.experiments.presets import get_preset
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
    if not v["budgets"]:
        return f"{name}: not decided yet, since no budget has every seed of both depths."
    if t is None:
        return f"{name}: no transition within the range measured ({_sizes(v['budgets'])}), by the declared rule."
    low, high = t["between"]
    return (f"{name}: a transition between {fmt.count(low)} and {fmt.count(high)} non-embedding parameters, "
            "where the deeper network goes from worse to better and stays ahead at every larger size.")


# ---------------------------------------------------------------------------------------------
# Every stored sweep read by the one declared rule

#: the sweep whose rule file declares the rule every doubling pair of the book is read by
RULE_SWEEP = "cpu-pairs"
#: the name a reader meets for each stored sweep
NAMES = {"cpu-pairs": "the CPU doubling-pairs sweep", "cpu-fig2": "the earlier CPU sweep",
         "mini": "the first CPU grid", "gpu-slice": "the GPU pilot"}
#: the doubling pairs each earlier sweep trained (its depths, adjacent)
EARLIER_PAIRS = {"mini": ((1, 2), (2, 4), (4, 8)), "cpu-fig2": ((1, 2), (2, 4)), "gpu-slice": ((6, 12), (12, 24))}


def read_by_rule(sweep: str) -> dict:
    """Any stored sweep read by the declared rule of :data:`RULE_SWEEP`: the doubling sweep over
    its complete budgets (:func:`read`); an earlier sweep over every budget both depths of a
    pair reach, with the seeds it has (one seed gives no interval, so no verdict either way)."""
    if sweep == RULE_SWEEP:
        return read(sweep)
    rule = pairs.rule(RULE_SWEEP)
    records = stored_results(sweep)
    out = {"rule": rule, "budgets": None, "pairs": []}
    for shallow, deep in EARLIER_PAIRS[sweep]:
        rows = pairs.points(records, shallow, deep, rule["level"])
        out["pairs"].append({"shallow": shallow, "deep": deep, "points": rows, "verdict": pairs.pair_verdict(rows)})
    return out


def crossing(reading: dict) -> list[dict]:
    """The pairs of a reading with a transition by the rule."""
    return [p for p in reading["pairs"] if p["verdict"]["transition"] is not None]


def of(n: int, total: int, noun: str, verb: str, verbs: str | None = None) -> str:
    """'1 of the 2 pairs crosses', 'none of the 3 pairs crosses', 'both pairs cross':
    ``verb`` for one, ``verbs`` (default: ``verb`` less its final s) for several."""
    if verbs is None:
        stem = verb[:-2] if verb.endswith("es") else verb
        verbs = stem if stem.endswith(("ss", "sh", "ch", "x")) else verb[:-1] if verb.endswith("s") else verb
    if total == 2 and n == 2:
        return f"both {noun}s {verbs}"
    if n == 0:
        return f"none of the {total} {noun}s {verb}"
    if n == total:
        return f"all {total} {noun}s {verbs}"
    return f"{n} of the {total} {noun}s {verb if n == 1 else verbs}"


def progress_sentence(sweep: str = RULE_SWEEP) -> str:
    """How far the doubling sweep has come, from its stored runs: the budgets complete (every
    depth, every seed) of those its preset plans."""
    planned = get_preset(sweep).budgets
    done = read(sweep)["budgets"]
    name = _cap(NAMES[sweep])
    if not done:
        return (f"{name} is declared, with its rule, and under way: none of its {len(planned)} budgets "
                "has every seed of every depth yet.")
    if len(done) == len(planned):
        return f"{name} is complete: all {len(planned)} budgets ({_sizes(done)}) have every seed of every depth."
    return (f"{name} is declared, with its rule, and under way: {len(done)} of its {len(planned)} budgets "
            f"({_sizes(done)}) {'has' if len(done) == 1 else 'have'} every seed of every depth.")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
