"""The verdicts of a sweep read by its declared rule, as the sentences every chapter quotes.

One place turns :mod:`dwlib.experiments.pairs` into words, so that the experiments chapter, the
claims table, the Discussion, the guidelines and the introduction say the same thing: per pair,
where the deeper network is no better (the paper's first regime), where it is better, and
whether a transition (as the rule defines it) lies within the range; plus how many points met
the rule's half-width target. Budgets read as "100K", "1.6M".
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from dwlib import fmt
from dwlib.errors import InputError, require
from dwlib.experiments import pairs
from dwlib.experiments.presets import get_preset
from dwlib.experiments.records import stored_results
from dwlib.experiments.transition import size_limited
from dwlib.store import packaged_json
from dwlib.train.data import load_corpus


def _sizes(budgets) -> str:
    names = [fmt.count(b) for b in budgets]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def read(sweep: str, seeds=None, extended: bool = False) -> dict:
    """The rule of ``sweep`` applied to its stored runs: the complete budgets (every depth, every
    seed), per pair its points and verdict, and the power reached. ``seeds``: only these seeds
    (the verdicts without the rate-choosing seeds). ``extended``: with the runs of the seed
    extension the rule file declares for it (:func:`extension_entry`), read as its own."""
    rule = pairs.rule(sweep)
    records = stored_results(sweep)
    if extended:
        records = pairs.with_extension(records, stored_results(extension_entry(sweep)["sweep"]))
    depths = sorted({d for p in rule["pairs"] for d in p})
    all_seeds = sorted({r["seed"] for r in records})
    budgets = pairs.complete_budgets(records, depths, all_seeds)
    out = {"rule": rule, "budgets": budgets, "pairs": [], "seeds": seeds, "extended": extended}
    for shallow, deep in rule["pairs"]:
        rows = pairs.points(records, shallow, deep, rule["level"], seeds=seeds, budgets=budgets)
        out["pairs"].append({"shallow": shallow, "deep": deep, "points": rows, "verdict": pairs.pair_verdict(rows)})
    rows = [r for p in out["pairs"] for r in p["points"]]
    out["power"] = pairs.power(rows, rule["half_width_target"])
    return out


def extension_entry(sweep: str) -> dict | None:
    """The seed extension the rule file declares for ``sweep`` (its ``applies_to`` entry's
    ``extension``: the sweep that trains it, why, what, how it is read), or None."""
    entry = (pairs.rule(RULE_SWEEP).get("applies_to") or {}).get(sweep) or {}
    return entry.get("extension")


def extended(sweep: str) -> dict | None:
    """The reading of ``sweep`` with its declared seed extension, once the extension has every new
    seed of every depth at every size the six-seed reading covers: ``six`` (:func:`read`), ``all``
    (every seed), ``later`` (without the rate-choosing seeds), ``new`` (the added seeds); None
    while it has not (no extension declared, none published, or a size still without them), so
    that no chapter reads a part of it."""
    entry = extension_entry(sweep)
    if entry is None:
        return None
    try:
        extra = stored_results(entry["sweep"])
    except InputError:  # not published
        return None
    six, full = read(sweep), read(sweep, extended=True)
    if not six["budgets"] or full["budgets"] != six["budgets"]:
        return None
    preset = get_preset(sweep)
    new = tuple(sorted({r["seed"] for r in extra}))
    later = tuple(s for s in preset.seeds + new if s not in preset.grid_seeds())
    return {"six": six, "all": full, "later": read(sweep, seeds=later, extended=True), "new": new,
            "seeds": preset.seeds + new, "later_seeds": later}


def regime_sentence(pair: dict) -> str:
    """The rule's regime 1 for one pair, in one sentence (the rule's label, not the paper's words)."""
    v, name = pair["verdict"], f"{pair['deep']} layers against {pair['shallow']}"
    if not v["budgets"]:
        return f"{name}: no budget has every seed of both depths yet."
    if not v["better"]:
        return (f"{name}: the deeper network is no better at every size measured ({_sizes(v['budgets'])}); "
                + (f"it is worse at {_sizes(v['worse'])}" if v["worse"] else "no difference is resolved")
                + ", the rule's regime 1.")
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
#: the two designs of the CPU doubling pairs the rule file declares, in the order declared: the
#: output layer tied to the input embedding, then untied (its ``applies_to`` entry)
DESIGNS = ("cpu-pairs", "cpu-pairs-untied")


def lead_of(complete: dict[str, int]) -> str:
    """Which design leads, from the number of budgets at which each has every seed of every depth,
    as the rule file's entry for the second design declares: the second once it has as many such
    budgets as the first (and at least one); until then the first."""
    first, second = DESIGNS
    n = complete.get(second, 0)
    return second if n and n >= complete.get(first, 0) else first


@functools.cache
def lead() -> str:
    """The design the experiments chapter leads with (:func:`lead_of` of the stored runs): its
    Figure 2 and its verdicts are this design's, the other's beside them."""
    complete = {}
    for name in DESIGNS:
        try:
            complete[name] = len(read(name)["budgets"])
        except InputError:  # a design with no published run
            complete[name] = 0
    return lead_of(complete)


def second() -> str:
    """The design that does not lead (:func:`lead`), reported beside the one that does."""
    return next(name for name in DESIGNS if name != lead())
#: the name a reader meets for each stored sweep, in every chapter: what sets it apart (the two
#: declared designs' output layer, tied or untied; the earlier sweeps' run length, their single
#: learning rate). Neither design is named as "the" doubling-pairs sweep: which one leads changes.
NAMES = {"cpu-pairs": "the tied doubling-pairs sweep", "cpu-fig2": "the one-million-token CPU sweep",
         "mini": "the one-rate CPU grid", "gpu-slice": "the GPU pilot",
         "cpu-pairs-untied": "the untied doubling-pairs sweep"}
#: the doubling pairs each earlier sweep trained (its depths, adjacent)
EARLIER_PAIRS = {"mini": ((1, 2), (2, 4), (4, 8)), "cpu-fig2": ((1, 2), (2, 4)), "gpu-slice": ((6, 12), (12, 24))}


def read_by_rule(sweep: str) -> dict:
    """Any stored sweep read by the declared rule of :data:`RULE_SWEEP`: the doubling sweep over
    its complete budgets (:func:`read`); an earlier sweep over every budget both depths of a
    pair reach, with the seeds it has (one seed gives no interval, so no verdict either way)."""
    if sweep == RULE_SWEEP or sweep in pairs.rule(RULE_SWEEP).get("applies_to", {}):
        return read(sweep)  # a design the rule file names: read by it, over its complete budgets
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
    """'one of the two pairs crosses', 'none of the three pairs crosses', 'both pairs cross' (counts
    up to ten in words):
    ``verb`` for one, ``verbs`` (default: ``verb`` less its final s) for several."""
    if verbs is None:
        stem = verb[:-2] if verb.endswith("es") else verb
        verbs = stem if stem.endswith(("ss", "sh", "ch", "x")) else verb[:-1] if verb.endswith("s") else verb
    if total == 2 and n == 2:
        return f"both {noun}s {verbs}"
    if n == 0:
        return f"none of the {words(total)} {noun}s {verb}"
    if n == total:
        return f"all {words(total)} {noun}s {verbs}"
    return f"{words(n)} of the {words(total)} {noun}s {verb if n == 1 else verbs}"



# ---------------------------------------------------------------------------------------------
# The sentences the experiments, claims and Discussion chapters quote (one per fact, in English)


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def words(n: int) -> str:
    """A small count in words ('two'), a larger one in figures."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def none_or(n: int) -> str:
    """A count after 'at' or 'in': 'none', 'one', 'two', ... ('at none', not 'at no')."""
    return "none" if n == 0 else words(n)


def counted(n: int, noun: str) -> str:
    """'one pair', 'five pairs', '12 versions': a count in :func:`words` with its noun."""
    return f"{words(n)} {noun}{'s' * (n != 1)}"


def span(budgets, planned=None) -> str:
    """Where a set of budgets lies, for a reader: 'at 100K'; 'from 100K to 400K' when they are
    consecutive among ``planned`` (default: they are); 'at 100K, 200K and 800K' otherwise."""
    budgets = sorted(budgets)
    require(bool(budgets), "a span needs at least one budget")
    if len(budgets) == 1:
        return f"at {fmt.count(budgets[0])}"
    planned = sorted(planned) if planned is not None else budgets
    i = planned.index(budgets[0]) if budgets[0] in planned else -1
    if i >= 0 and planned[i:i + len(budgets)] == budgets:
        return f"from {fmt.count(budgets[0])} to {fmt.count(budgets[-1])}"
    return f"at {_sizes(budgets)}"


def coverage_sentence(sweep: str | None = None) -> str:
    """Which of the sweep's sizes the stored runs cover, as one plain fact: where every depth has
    every seed (the sizes the verdicts read), where some runs are stored, and where none are."""
    sweep = sweep or lead()
    planned = sorted(get_preset(sweep).budgets)
    done = read(sweep)["budgets"]
    some = {r["target_budget"] for r in stored_results(sweep) if r.get("status") == "completed"} - set(done)
    partial = [b for b in planned if b in some]
    empty = [b for b in planned if b not in done and b not in some]
    parts = []
    if done:
        parts.append(f"every seed of every depth at {_sizes(done)} non-embedding parameters, "
                     f"{'the size' if len(done) == 1 else 'the sizes'} the verdicts read")
    if partial:
        parts.append(f"some runs at {_sizes(partial)}, which the verdicts do not use")
    if empty:
        parts.append(f"no run at {_sizes(empty).replace(' and ', ' or ')}")
    if not done:
        parts.insert(0, "no size with every seed of every depth, so the rule gives no verdict")
    body = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return f"The stored results of {NAMES[sweep]} hold {body}."


def _interval_text(x: dict) -> str:
    return f"{x['low']:+.3f} to {x['high']:+.3f} nats"


def pair_sentence(pair: dict, brief: bool = False) -> str:
    """One sentence for one pair: at each size, which network the rule puts ahead, with the mean
    gap and its paired interval where there is one size (unless ``brief``: a table gives the
    numbers), and the transition if there is one."""
    deep, shallow, pts = pair["deep"], pair["shallow"], pair["points"]
    d, s = f"{deep}-layer", f"{shallow}-layer"
    if not pts:
        return f"The {d} and {s} networks have no size with results for every seed of both."
    if len(pts) == 1 and not brief:
        x = pts[0]
        at = f"At {fmt.count(x['target_budget'])}"
        if x["verdict"] == pairs.UNRESOLVED:
            return (f"{at}, the {d} network's held-out loss is {abs(x['mean']):.3f} nats "
                    f"{'lower' if x['mean'] < 0 else 'higher'} than the {s} network's on average, but the "
                    f"paired interval ({_interval_text(x)}) contains zero: the pair is not resolved, and with a "
                    f"half-width of {x['half_width']:.3f} nats the runs could resolve only a gap larger than that.")
        better = x["verdict"] == pairs.BETTER
        return (f"{at}, the {d} network is {'better' if better else 'worse'} than the {s} one: its held-out loss "
                f"is {abs(x['mean']):.3f} nats {'lower' if better else 'higher'} (paired interval "
                f"{_interval_text(x)}).")
    v = pair["verdict"]
    parts = []
    if v["worse"]:
        parts.append(f"worse than the {s} network at {_sizes(v['worse'])}")
    if v["unresolved"]:
        parts.append(f"{'not resolved from it' if parts else f'not resolved from the {s} network'} "
                     f"at {_sizes(v['unresolved'])}")
    if v["better"]:
        parts.append(f"{'better' if parts else f'better than the {s} network'} at {_sizes(v['better'])}")
    body = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    t = v["transition"]
    tail = "" if t is None else (f"; it crosses between {fmt.count(t['between'][0])} and "
                                 f"{fmt.count(t['between'][1])}, and stays ahead at every larger size")
    return f"The {d} network is {body}{tail}."


def regime_summary(reading: dict) -> str:
    """The rule's regime 1 ('no better': the interval not entirely below zero) set against the
    paper's first regime ('perform comparably'), in one sentence: the rule's label is quoted as
    the rule's; an unresolved pair is never called agreement with the paper."""
    prs = [p for p in reading["pairs"] if p["points"]]
    if not prs:
        return "No pair has a size with results for every seed of both networks."
    name = {id(p): f"{p['shallow']} vs {p['deep']}" for p in prs}
    worse = [f"{name[id(p)]} at {_sizes(p['verdict']['worse'])}" for p in prs if p["verdict"]["worse"]]
    unresolved = [f"{name[id(p)]} at {_sizes(p['verdict']['unresolved'])}" for p in prs if p["verdict"]["unresolved"]]
    better = [f"{name[id(p)]} at {_sizes(p['verdict']['better'])}" for p in prs if p["verdict"]["better"]]
    no_better = [p for p in prs if p["verdict"]["no_better"]]
    parts = []
    if no_better and worse and not unresolved:
        # every "no better" point resolved worse: one finding, not the paper's (the points are listed above)
        who = "both pairs" if len(no_better) == 2 == len(prs) else fmt.listed([name[id(p)] for p in no_better])
        clause = reading["rule"]["regime_1"].split(". ")[0].rstrip(".")
        n = sum(len(p["verdict"]["worse"]) for p in prs)
        text = (f"The rule's regime 1 (\"{clause[:1].lower() + clause[1:]}\") holds for {who}"
                + (" at every size" if not better else "")
                + ", but not in the sense of the paper's first regime: at "
                + (f"{'all ' if not better else 'the '}{words(n)} points" if n > 1 else "the one point")
                + (" where it holds" if better else "")
                + " the deeper network is resolved worse, while the paper has the two \"perform comparably\"")
        if better:
            text += f"; the deeper network is resolved better in {fmt.listed(better)}"
        text += "."
        if not better and len(reading.get("budgets") or []) > 1:
            text += (" The rule's transition runs from worse to better, the paper's from comparable to better; with "
                     "no point resolved better, neither would find one here.")
        return text
    if no_better:
        who = "both pairs" if len(no_better) == 2 == len(prs) else fmt.listed([name[id(p)] for p in no_better])
        clause = reading["rule"]["regime_1"].split(". ")[0].rstrip(".")
        parts.append(f"The rule's regime 1 (\"{clause[:1].lower() + clause[1:]}\") holds for {who}"
                     + (" at every size" if not better else "") + ", but that label joins two different findings")
    if worse:
        parts.append(f"the deeper network is resolved worse in {fmt.listed(worse)}, where the paper's first regime "
                     "says the two \"perform comparably\"")
    if unresolved:
        parts.append(f"{fmt.listed(unresolved)} {'is' if len(unresolved) == 1 else 'are'} not resolved, "
                     "which is neither agreement nor disagreement with the paper")
    if better:
        parts.append(f"the deeper network is resolved better in {fmt.listed(better)}")
    head, rest = (parts[0] + ": ", parts[1:]) if no_better else ("", parts)
    body = "; ".join(rest)
    text = head + body
    text = text[:1].upper() + text[1:] + "."
    if not better and len(reading.get("budgets") or []) > 1:
        text += (" The rule's transition runs from worse to better, the paper's from comparable to better; with no "
                 "point resolved better, neither would find one here.")
    return text


def paper_form(pair: dict) -> dict:
    """The paper's own form of the test on one pair: from some size on, the deeper network is
    resolved better at every larger size, and before it no size is resolved either way (the
    paper's "perform comparably"). ``{"from": size or None, "before": [...], "reason": ...}``:
    ``from`` is the first size of the run of "better" sizes that reaches the largest size, when
    every size below it is unresolved and there is at least one."""
    pts = sorted(pair["points"], key=lambda x: x["target_budget"])
    if not pts:
        return {"from": None, "before": [], "reason": "no size"}
    i = len(pts)
    while i > 0 and pts[i - 1]["verdict"] == pairs.BETTER:
        i -= 1
    if i == len(pts):
        return {"from": None, "before": [], "reason": "not better at the largest size"}
    before = [x["target_budget"] for x in pts[:i]]
    if not before:
        return {"from": pts[0]["target_budget"], "before": [], "reason": "better from the smallest size"}
    if any(x["verdict"] != pairs.UNRESOLVED for x in pts[:i]):
        return {"from": None, "before": before, "reason": "a resolved size before the better ones"}
    return {"from": pts[i]["target_budget"], "before": before, "reason": "transition"}


def paper_form_sentence(reading: dict) -> str:
    """The paper's own form of the test on every pair, in one sentence, beside the declared rule,
    and in what the declared rule is the stricter of the two."""
    prs = [p for p in reading["pairs"] if p["points"]]
    if not prs:
        return "With no size complete, the paper's own form of the test cannot be read either."
    found, other, flat = [], [], []
    for p in prs:
        f, name = paper_form(p), f"{p['shallow']} vs {p['deep']}"
        if f["reason"] == "transition":
            found.append(f"{name} from {fmt.count(f['from'])} on, after {_sizes(f['before'])}")
        elif f["reason"] == "better from the smallest size":
            other.append(f"{name} is better from the smallest size read, so its transition, if any, lies below it")
        elif f["reason"] == "not better at the largest size":
            flat.append(name)
        else:
            other.append(f"{name} is resolved at a smaller size before its better ones")
    if flat:
        top = fmt.count(max(reading["budgets"] or [x["target_budget"] for p in prs for x in p["points"]]))
        other.append(f"in {fmt.listed(flat)} the deeper network is not resolved better at {top}, the largest size read")
    n = len(found)
    head = ("By the paper's own form of the test (from some size on, the deeper network is resolved better at "
            "every larger size; before it, not resolved either way), ")
    if found:
        head += f"{of(n, len(prs), 'pair', 'shows', 'show')} the transition: {fmt.listed(found)}"
    else:
        head += "no pair shows the transition"
    if other:
        head += f" ({'; '.join(other)})"
    return (head + ". Before the transition the declared rule is the stricter of the two: it counts a "
            "transition only where the deeper network is resolved worse first, so a pair that goes from "
            "comparable to better, the paper's own picture, passes the paper's form but not the rule (after the "
            "transition the paper's form asks more: the deeper network resolved better at every larger size, "
            "where the rule asks only a lower mean).")


def count_of(n: int, total: int, noun: str) -> str:
    """'neither point', 'both points', 'one of the three points', 'none of the 4 points', 'all 4 points'."""
    if total == 2 and n == 0:
        return f"neither {noun}"
    if total == 2 and n == 2:
        return f"both {noun}s"
    if total == 1:
        return f"the one {noun}" if n == 1 else f"no {noun}"
    if n == 0:
        return f"none of the {words(total)} {noun}s"
    if n == total:
        return f"all {words(total)} {noun}s"
    return f"{words(n)} of the {words(total)} {noun}s"


def transition_summary(reading: dict) -> str:
    """Whether any pair crosses by the rule, in one sentence (a transition needs two sizes)."""
    budgets = sorted({b for p in reading["pairs"] for b in p["verdict"]["budgets"]})
    n = len(crossing(reading))
    total = len(reading["pairs"])
    if not budgets:
        return "With no size complete, the rule cannot place a transition."
    if len(budgets) == 1:
        return (f"A transition lies between two sizes, so none can be read {span(budgets)} alone; "
                "the rule finds none in either pair.")
    if n == 0:
        return f"Neither pair crosses {span(budgets)} by the rule." if total == 2 else \
            f"None of the {total} pairs crosses {span(budgets)} by the rule."
    return f"By the rule, {of(n, total, 'pair', 'crosses')} {span(budgets)}."


_AHEAD = {pairs.BETTER: "better than", pairs.WORSE: "worse than", pairs.UNRESOLVED: "not resolved from"}
_ALL = {pairs.BETTER: "put it ahead", pairs.WORSE: "put it behind", pairs.UNRESOLVED: "resolve no difference"}


def _by_budget(reading: dict) -> list[tuple[float, list[tuple[dict, dict]]]]:
    """The points of a reading grouped by target budget: (budget, [(point, pair), ...])."""
    out: dict[float, list] = {}
    for pr in reading["pairs"]:
        for x in pr["points"]:
            out.setdefault(x["target_budget"], []).append((x, pr))
    return sorted(out.items())



def verdict_changes(ref: dict, other: dict) -> list[str]:
    """Where reading ``other`` (of other seeds) gives another verdict than ``ref``, each in words:
    a point's verdict, or whether a pair crosses."""
    diffs = []
    for p, q in zip(ref["pairs"], other["pairs"]):
        want = {x["target_budget"]: x for x in p["points"]}
        for x in q["points"]:
            old = want.get(x["target_budget"])
            if old is not None and old["verdict"] != x["verdict"]:
                diffs.append(f"at {fmt.count(x['target_budget'])} the {p['deep']}-layer network is "
                             f"{_AHEAD[x['verdict']]} the {p['shallow']}-layer one, where all {words(old['n'])} seeds "
                             f"{_ALL[old['verdict']]}")
        if (p["verdict"]["transition"] is None) != (q["verdict"]["transition"] is None):
            diffs.append(f"the pair of {p['shallow']} and {p['deep']} layers "
                         f"{'crosses' if q['verdict']['transition'] else 'does not cross'}")
    return diffs


def _differ(diffs: list[str]) -> str:
    """'one verdict differs', 'two verdicts differ': how many of :func:`verdict_changes` there are."""
    return "one verdict differs" if len(diffs) == 1 else f"{words(len(diffs))} verdicts differ"


def extension_sentence(sweep: str | None = None) -> str:
    """The declared seed extension of ``sweep`` (default: the leading design) in words: why and
    when it was declared and what it trains; once it is complete (:func:`extended`), the reading on
    every seed (the precision against the rule's target, every verdict against the declared
    reading's, the verdicts without the rate-choosing seeds). '' when none is declared."""
    sweep = sweep or lead()
    entry = extension_entry(sweep)
    if entry is None:
        return ""
    preset, extra = get_preset(sweep), get_preset(entry["sweep"])
    declared, added = words(len(preset.seeds)), words(len(preset.seeds) + len(extra.seeds))
    head = (f"After this {declared}-seed reading fell short of the precision target, and before any of the runs it "
            f"adds, a further entry of the declared rule added seeds {extra.seeds[0]} to {extra.seeds[-1]} to every "
            f"shape at its chosen rate, not only to the points short of the target. The {declared}-seed verdicts "
            "above remain the primary reading.")
    x = extended(sweep)
    if x is None:
        level = pairs.rule(sweep)["level"]
        t = [stats.t.ppf(0.5 + level / 2, n - 1) / math.sqrt(n) for n in (len(preset.seeds),
                                                                          len(preset.seeds) + len(extra.seeds))]
        return (f"{head} Once every size has the added seeds, the book reads the verdicts on all {added} seeds beside them, names any "
                f"point whose verdict differs, and judges the precision target on {added} seeds; more seeds alone "
                f"narrow an interval, by a factor of about {t[1] / t[0]:.2f} at the same spread of the gaps.")
    full, n = x["all"], words(len(x["seeds"]))
    p, target = full["power"], full["rule"]["half_width_target"]
    pts = [(q, pr) for pr in full["pairs"] for q in pr["points"] if q["half_width"] is not None]
    widest, pr = max(pts, key=lambda t: t[0]["half_width"])
    power = (f"On all {n} seeds the half-width is at most {target:g} nats at {count_of(p['within'], p['points'], 'point')} "
             f"(the widest {widest['half_width']:.3f} nats, {pr['shallow']} vs {pr['deep']} at "
             f"{fmt.count(widest['target_budget'])}), {'meeting' if meets_target(full) else 'short of'} the target.")
    diffs = verdict_changes(x["six"], full)
    same = (f"Every verdict is the same as on {declared} seeds." if not diffs else
            f"{fmt.capitalised(_differ(diffs))} "
            f"from the {declared}-seed reading's: " + "; ".join(diffs) + ".")
    return " ".join([head, power, same, seeds_sentence(full, x["later"], x["later_seeds"])])


def seeds_sentence(all_seeds: dict, some: dict, seeds) -> str:
    """The verdicts on some seeds (those that did not choose the rates) against those on all:
    one sentence, saying what differs if anything does."""
    first, last = min(seeds), max(seeds)
    diffs = verdict_changes(all_seeds, some)
    if not diffs:
        return (f"The same verdicts hold on seeds {first} to {last} alone, without the two seeds that chose the "
                "learning rates.")
    return (f"On seeds {first} to {last} alone, without the two seeds that chose the learning rates, "
            f"{_differ(diffs)}: "
            + "; ".join(diffs) + ".")


def power_sentence(reading: dict, planned: int | None = None) -> str:
    """How many points meet the rule's precision target, the measured half-widths, and what falling
    short means, in one sentence; with ``planned`` (the (pair, size) points the design plans), a
    second sentence when the points already short of the target leave it out of reach."""
    rule, p = reading["rule"], reading["power"]
    groups = [(b, [(x, pr) for x, pr in g if x["half_width"] is not None]) for b, g in _by_budget(reading)]
    groups = [(b, g) for b, g in groups if g]
    if not groups:
        return "No size is complete, so the precision the rule asks for cannot be checked."
    target, share = rule["half_width_target"], rule["half_width_share"]
    ok = meets_target(reading)
    names = [[f"{pr['shallow']} vs {pr['deep']}" for _, pr in g] for _, g in groups]
    if len(groups) > 1 and all(n == names[0] for n in names):  # the pairs named once, then each size's values
        halves = (f"for {fmt.listed(names[0])}: " + "; ".join(
            fmt.listed([f"{x['half_width']:.3f}" for x, _ in g]) + f"{' nats' if i == 0 else ''} at {fmt.count(b)}"
            for i, (b, g) in enumerate(groups)))
    else:
        halves = "; ".join(f"at {fmt.count(b)}, " + fmt.listed([f"{x['half_width']:.3f} nats for {pr['shallow']} vs {pr['deep']}"
                                                         for x, pr in g]) for b, g in groups)
    head = f"The half-width is at most {target} nats at {count_of(p['within'], p['points'], 'point')} ({halves})"
    if ok:
        return head + ", meeting the target."
    then = precision_consequence(reading)
    text = (head + f", short of the target. Where a point's half-width is wider than {target} nats, a true gap "
            "smaller than that half-width could not be told from zero" + (f"; here {then}." if then else "."))
    missed = p["points"] - p["within"]
    if planned and planned > p["points"] and planned - missed < share * planned:
        text += (f" Of the {planned} points the design plans, {missed} already miss it, so the target of "
                 f"{share:.0%} can no longer be met, whatever the sizes still to come give.")
    return text


def meets_target(reading: dict) -> bool:
    """Whether a reading's points meet the rule's precision target: the half-width within its
    bound at no fewer than the rule's share of the points."""
    p = reading["power"]
    return p["within"] >= reading["rule"]["half_width_share"] * p["points"]


def share_words(share: float) -> str:
    """The rule's share of points, as a reader says it: 0.75 -> 'three quarters'."""
    return {0.5: "half", 0.75: "three quarters", 0.8: "four fifths", 0.9: "nine tenths"}.get(share, f"{share:.0%}")


def signed(x: float) -> str:
    """A gap with its sign, the minus a true minus sign (+0.215, −0.061)."""
    return f"{x:+.3f}".replace("-", "\N{MINUS SIGN}")


def precision_consequence(reading: dict) -> str:
    """What a reading's shortfall of the rule's precision target does to its verdicts, as a clause
    ('' when the target is met or nothing is read): when every interval lies clear of zero, that it
    moves no verdict (with the interval end nearest zero); otherwise how many intervals contain
    zero, with their widest half-width, where the verdict stays open."""
    pts = [x for p in reading["pairs"] for x in p["points"] if x["half_width"] is not None]
    if not pts or meets_target(reading):
        return ""
    open_ = [x for x in pts if x["verdict"] == pairs.UNRESOLVED]
    if not open_:
        if all(x["low"] > 0 for x in pts):
            where = f"above zero (the lowest end at {signed(min(x['low'] for x in pts))} nats)"
        elif all(x["high"] < 0 for x in pts):
            where = f"below zero (the highest end at {signed(max(x['high'] for x in pts))} nats)"
        else:
            near = min(min(abs(x["low"]), abs(x["high"])) for x in pts)
            where = f"clear of zero (the nearest end {near:.3f} nats from it)"
        return f"every interval lies {where}, so the shortfall moves no verdict"
    n, widest = len(open_), max(x["half_width"] for x in open_)
    return (f"{count_of(n, len(pts), 'interval')} contain{'s' * (n == 1)} zero (half-width"
            f"{'s up to' if n > 1 else ''} {widest:.3f} nats), so there the verdict stays open")


def extension_clause(reading: dict, form: str = "full") -> str:
    """For the declared six-seed reading of a design whose seed extension is complete
    (:func:`extended`), the precision on every seed and how many verdicts differ, if any, as a
    clause to follow the six-seed one (``form``: "full", "brief" for a caption, "short" for a
    table's cell); '' otherwise."""
    sweep = reading["rule"].get("sweep")
    if sweep is None or reading.get("seeds") is not None or reading.get("extended") or not reading.get("budgets"):
        return ""
    x = extended(sweep)
    if x is None or x["six"]["budgets"] != reading["budgets"]:
        return ""
    p, n, ok = x["all"]["power"], words(len(x["seeds"])), meets_target(x["all"])
    diffs = verdict_changes(x["six"], x["all"])
    if form == "short":
        return f", {p['within']} of {p['points']} on {n} seeds" + (f" ({_differ(diffs)})" if diffs else "")
    if form == "brief":
        return f"; on {n} seeds, {p['within']} of {p['points']}" + (f", and {_differ(diffs)}" if diffs else "")
    return (f"; on all {n} seeds ({words(len(x['new']))} more per shape, declared after that reading) the half-width "
            f"is within the target at {count_of(p['within'], p['points'], 'point')}, "
            f"{'meeting' if ok else 'still short of'} it"
            + (f", and {_differ(diffs)} from the {words(len(x['seeds']) - len(x['new']))}-seed reading's" if diffs
               else ", with every verdict unchanged"))


def precision_clause(reading: dict, short: bool = False, brief: bool = False) -> str:
    """The precision a reading reached against the rule's target, and what a shortfall does to its
    verdicts (:func:`precision_consequence`), as one clause to begin or end a sentence: 'the
    paired 95% half-width is at most 0.03 nats at 7 of the 10 points, short of the rule's target of
    three quarters, but every interval lies above zero (...), so the shortfall moves no verdict'.
    ``short``: a few words, for a table's cell; ``brief``: the same clause in fewer words, for a
    caption. '' when nothing is read."""
    pts = [x for p in reading["pairs"] for x in p["points"] if x["half_width"] is not None]
    if not pts:
        return ""
    rule, power = reading["rule"], reading["power"]
    ok, then = meets_target(reading), precision_consequence(reading)
    target, share = rule["half_width_target"], share_words(rule["half_width_share"])
    if short:
        head = (f"half-width within {target:g} nats at {power['within']} of {power['points']} points "
                f"({'meeting' if ok else 'short of'} the target)")
        n = sum(x["verdict"] == pairs.UNRESOLVED for x in pts)
        tail = (f"; {n} of {len(pts)} intervals contain zero" if n else
                f"; {then.split(' (')[0].replace(' lies', '')}" if then else "")
        return head + tail + extension_clause(reading, "short")
    if brief:
        head = (f"the half-width is within the rule's {target:g} nats at "
                f"{count_of(power['within'], power['points'], 'point')}, "
                + ("meeting its target" if ok else f"short of its {share}"))
        then = (then.replace(" (the lowest end at ", " (lowest end ").replace(" (the highest end at ", " (highest end ")
                .replace("so the shortfall moves no verdict", "so no verdict moves"))
        # an interval around zero is a point 'not resolved', which a caption says beside it
        return head + (", but " + then if then.startswith("every") else "") + extension_clause(reading, "brief")
    head = (f"the paired {rule['level']:.0%} half-width is at most {target:g} nats at "
            f"{count_of(power['within'], power['points'], 'point')}, {'meeting' if ok else 'short of'} the rule's "
            f"target of {share}")
    if then:
        head += (", but " if then.startswith("every") else "; ") + then
    return head + extension_clause(reading)


def size_sentence(reading: dict, head_size: int) -> str:
    """Widths are whole numbers of heads, so the two networks of a pair differ in size: at each
    size read, by how much and in which direction, per pair, from the records' budgets (the
    deeper network's size against the shallower one's)."""
    parts, signs = [], set()
    by = _by_budget(reading)
    for b, g in by:
        items = []
        for x, pr in g:
            s, d = x["budgets"][pr["shallow"]], x["budgets"][pr["deep"]]
            rel = d / s - 1
            signs.add(rel > 0)
            signed = f"{rel:+.1%}".replace("-", "\N{MINUS SIGN}")
            items.append(f"{signed} for {pr['shallow']} vs {pr['deep']}" if len(by) == 1 or not parts else signed)
        parts.append(f"at {fmt.count(b)}, " + fmt.listed(items))
    if not parts:
        return ""
    tail = (" The difference runs both ways, favouring the deeper network at some points and the shallower one "
            "at others." if len(signs) == 2 else "")
    return (f"Rounding widths to whole heads of {head_size} leaves the two networks of a pair unequal in "
            f"non-embedding size; the deeper network's size against the shallower one's: {'; '.join(parts)}.{tail}")


# ---------------------------------------------------------------------------------------------
# What the verdicts of the doubling sweep rest on: the seeds of each shape at its chosen rate


def _rate(lr: float) -> str:
    return f"{lr:g}"


def _losses(values: list[float]) -> str:
    """'4.034 and 4.085'; four or more as a range, '4.286 to 4.375'."""
    v = sorted(values)
    if len(v) <= 2:
        return fmt.listed([f"{x:.3f}" for x in v])
    return f"{v[0]:.3f} to {v[-1]:.3f}"


def seed_groups(sweep: str | None = None) -> list[dict]:
    """Per shape at each size the verdicts read (every seed of every depth): the held-out loss of
    every seed at the shape's chosen rate, the rate-choosing seeds (the preset's first
    ``select_seeds``) set apart from the others, and the rate-choosing seeds' losses at every
    other rate they trained. A shape ``splits`` when the two groups do not overlap and the gap
    between them (the nearer ends) is wider than the rule's half-width target: then its seeds
    disagree about the shape by more than the design can resolve, and the rate was chosen by one
    side of the split. ``better_elsewhere``: the other rates at which every rate-choosing seed
    does better than every other seed at the chosen rate."""
    sweep = sweep or lead()
    preset = get_preset(sweep)
    target = pairs.rule(sweep)["half_width_target"]
    select = set(preset.seeds[:preset.select_seeds])
    done = set(read(sweep)["budgets"])
    records = [r for r in stored_results(sweep) if r.get("status") == "completed" and r.get("eval_loss") is not None
               and r["target_budget"] in done]
    out = []
    for key in sorted({(r["target_budget"], r["depth"], r["width"]) for r in records}):
        runs = [r for r in records if (r["target_budget"], r["depth"], r["width"]) == key]
        chosen = [r for r in runs if r.get("chosen")]
        if not chosen:
            continue
        lr = chosen[0]["lr"]
        mine = {r["seed"]: r["eval_loss"] for r in chosen if r["seed"] in select}
        rest = {r["seed"]: r["eval_loss"] for r in chosen if r["seed"] not in select}
        if not mine or not rest:
            continue
        apart = max(min(rest.values()) - max(mine.values()), min(mine.values()) - max(rest.values()))
        elsewhere = {}
        for r in runs:
            if r["lr"] != lr and r["seed"] in select:
                elsewhere.setdefault(r["lr"], {})[r["seed"]] = r["eval_loss"]
        better = sorted(x for x, v in elsewhere.items()
                        if set(v) == set(mine) and max(v.values()) < min(rest.values()))
        out.append({"target_budget": key[0], "depth": key[1], "width": key[2], "lr": lr, "select": mine,
                    "others": rest, "apart": apart, "split": apart > target,
                    "mean_split": float(np.mean(list(rest.values())) - np.mean(list(mine.values()))),
                    "elsewhere": elsewhere, "better_elsewhere": better})
    return out


def lone_seeds(sweep: str | None = None) -> list[dict]:
    """Seeds that lie apart from the rest of their shape at its chosen rate, in a shape whose seeds
    do not split (:func:`seed_groups`): the distance from the seed's held-out loss to the nearest
    other seed's is larger than both the spread of the others and the rule's half-width target.
    A description of the spread, not an exclusion: the verdicts keep every seed. Each carries,
    for every pair the shape belongs to at that size, the pair's half-width with and without the
    seed (``pairs``: [{"pair", "half_width", "without"}])."""
    sweep = sweep or lead()
    rule = pairs.rule(sweep)
    target, level = rule["half_width_target"], rule["level"]
    points = {(x["target_budget"], x["shallow"], x["deep"]): x for pr in read(sweep)["pairs"] for x in pr["points"]}
    out = []
    for g in seed_groups(sweep):
        losses = {**g["select"], **g["others"]}
        if g["split"] or len(losses) < 3:
            continue
        for seed, loss in sorted(losses.items()):
            rest = [v for s, v in losses.items() if s != seed]
            distance = min(abs(loss - v) for v in rest)
            if distance <= max(max(rest) - min(rest), target):
                continue
            affected = []
            for s, d in rule["pairs"]:
                x = points.get((g["target_budget"], s, d))
                if g["depth"] in (s, d) and x and seed in x["gaps"]:
                    without = [v for k, v in x["gaps"].items() if k != seed]
                    affected.append({"pair": f"{s} vs {d}", "half_width": x["half_width"],
                                     "without": pairs.interval(without, level)["half_width"]})
            out.append({"target_budget": g["target_budget"], "depth": g["depth"], "seed": seed, "loss": loss,
                        "others": (min(rest), max(rest)), "distance": distance, "pairs": affected})
    return out


def lone_seed_sentence(sweep: str | None = None) -> str:
    """:func:`lone_seeds` in words: what makes a seed lie apart, then each such seed with the
    half-widths of its pairs with and without it, and what the verdicts do with them; empty when
    there is none."""
    sweep = sweep or lead()
    seeds = lone_seeds(sweep)
    if not seeds:
        return ""
    out = []
    for x in seeds:
        lo, hi = x["others"]
        text = (f"at {fmt.count(x['target_budget'])} seed {x['seed']} of the {x['depth']}-layer network "
                f"({x['loss']:.3f} nats against {lo:.3f} to {hi:.3f}")
        if x["pairs"]:
            text += ("; half-width with and without it " + ", ".join(
                f"{a['half_width']:.3f} and {a['without']:.3f} nats for {a['pair']}" for a in x["pairs"]))
        out.append(text + ")")
    one = len(seeds) == 1
    return (f"{fmt.capitalised(words(len(seeds)))} seed{'s' * (not one)} lie{'s' * one} apart from the others of "
            f"{'its' if one else 'their'} shape at its chosen rate: " + "; ".join(out)
            + f". The verdicts keep {'it' if one else 'them'}, as the rule keeps every seed.")


def _split_pairs(g: dict, sweep: str) -> list[str]:
    return [f"{s} vs {d}" for s, d in pairs.rule(sweep)["pairs"] if g["depth"] in (s, d)]


def split_effects(g: dict, sweep: str) -> list[dict]:
    """For each pair a split shape (:func:`seed_groups`) belongs to, at its size: every seed's gap,
    the reading on the seeds that did not choose the rate, and whether the split leaves the gap's
    sign (``kept``: every seed's gap on one side of zero, and the interval of the other seeds
    wholly on that side), so that only its size is uncertain, by about the split."""
    others = tuple(sorted(g["others"]))
    full = {(p["shallow"], p["deep"]): p for p in read(sweep)["pairs"]}
    later = {(p["shallow"], p["deep"]): p for p in read(sweep, seeds=others)["pairs"]}
    out = []
    for s, d in pairs.rule(sweep)["pairs"]:
        if g["depth"] not in (s, d):
            continue
        x = next((q for q in full[(s, d)]["points"] if q["target_budget"] == g["target_budget"]), None)
        y = next((q for q in later[(s, d)]["points"] if q["target_budget"] == g["target_budget"]), None)
        if x is None or y is None:
            continue
        gaps = list(x["gaps"].values())
        up = all(v > 0 for v in gaps) and y["half_width"] is not None and y["low"] > 0
        down = all(v < 0 for v in gaps) and y["half_width"] is not None and y["high"] < 0
        out.append({"pair": f"{s} vs {d}", "target_budget": g["target_budget"], "gaps": (min(gaps), max(gaps)),
                    "later": y, "seeds": others, "kept": up or down, "split": abs(g["mean_split"])})
    return out


def split_effect_sentence(groups: dict | list[dict], sweep: str) -> str:
    """What split shapes' seeds leave of the gaps of their pairs, in words: the gaps that are no
    measure of depth, in one sentence; then each gap whose every seed and whose interval on the
    other seeds keep one sign, whose size the split leaves uncertain by about the split, not its
    sign."""
    groups = [groups] if isinstance(groups, dict) else groups
    effects = [(g, e) for g in groups for e in split_effects(g, sweep)]
    out = []
    lost = [(g, e) for g, e in effects if not e["kept"]]
    if lost:
        g, e = lost[0]
        n, seeds = len(g["select"]) + len(g["others"]), e["seeds"]
        by: dict[float, list[str]] = {}
        for _, x in lost:
            by.setdefault(x["target_budget"], []).append(x["pair"])
        where = fmt.listed([f"{fmt.listed(v)} at {fmt.count(b)}" for b, v in sorted(by.items())])
        out.append(f"The size of the gap{'s' * (len(lost) > 1)} of {where}, on all {words(n)} seeds or on seeds "
                   f"{seeds[0]} to {seeds[-1]} alone, is therefore no measure of depth.")
    for g, e in effects:
        if not e["kept"]:
            continue
        y, (lo, hi) = e["later"], e["gaps"]
        side = "above" if lo > 0 else "below"
        out.append(f"Every seed's gap of {e['pair']} at {fmt.count(e['target_budget'])} lies {side} zero ({signed(lo)} "
                   f"to {signed(hi)} nats), and so does the interval on seeds {e['seeds'][0]} to {e['seeds'][-1]} "
                   f"alone ({signed(y['mean'])} \N{PLUS-MINUS SIGN} {y['half_width']:.3f} nats): the split leaves "
                   f"the gap's size uncertain by about {e['split']:.2f} nats, not its sign.")
    return " ".join(out)


def split_effect_clause(groups: list[dict], sweep: str) -> str:
    """The same in one clause, for a caption or a short caveat: 'the gap's size is uncertain by
    about that much, not its sign', 'the gap is no measure of depth', or each point by name when
    the split shapes differ."""
    effects = [e for g in groups for e in split_effects(g, sweep)]
    if effects and all(e["kept"] for e in effects):
        return ("the gaps' sizes are uncertain by about the split, not their signs" if len(effects) > 1 else
                "the gap's size is uncertain by about the split, not its sign")
    if not any(e["kept"] for e in effects):
        return "the gap is no measure of depth"
    kept = fmt.listed([f"{e['pair']} at {fmt.count(e['target_budget'])}" for e in effects if e["kept"]])
    lost = fmt.listed([f"{e['pair']} at {fmt.count(e['target_budget'])}" for e in effects if not e["kept"]])
    return f"the gap is no measure of depth at {lost}, and at {kept} only its sign stands"


def spread_terms(sweep: str | None = None) -> str:
    """What the book calls a split shape (:func:`seed_groups`) and a seed that lies apart
    (:func:`lone_seeds`), in two clauses: descriptions of the spread, neither an exclusion; '' when
    the sweep has neither."""
    sweep = sweep or lead()
    if not any(g["split"] for g in seed_groups(sweep)) and not lone_seeds(sweep):
        return ""
    target = pairs.rule(sweep)["half_width_target"]
    return ("Two descriptions of the spread of seeds follow, neither of them an exclusion. A shape's seeds *split* "
            "at its chosen rate when the seeds that chose the rate and the others do not overlap there and the two "
            f"groups lie more than the rule's precision target ({target:g} nats) apart; a single seed *lies apart* "
            "when it is farther from every other seed of its shape than both their spread and that target.")


def split_sentence(sweep: str | None = None) -> str:
    """Each shape whose seeds split at its chosen rate (:func:`seed_groups`), in words: the
    losses of both groups, how far apart they lie, where the rate-choosing seeds do better, and
    what that leaves of the verdicts of the pairs it belongs to."""
    sweep = sweep or lead()
    groups = [g for g in seed_groups(sweep) if g["split"]]
    if not groups:
        return ("At every size read, the seeds that chose a shape's learning rate lie among the others at that "
                "rate, so the choice of rate does not split any shape's seeds.")
    if len(groups) > 1:  # the losses left to the table of every seed
        same = {(g["lr"], tuple(sorted(g["select"])), tuple(sorted(g["others"])),
                 tuple(g["better_elsewhere"][:1]), len(g["select"]) + len(g["others"])) for g in groups}
        rest = sorted(groups[0]["others"])
        tail = " " + split_effect_sentence(groups, sweep)
        if len(same) == 1:  # one sentence for every shape: same rate, same seeds on each side
            g = groups[0]
            mine = sorted(g["select"])
            shapes = fmt.listed([f"of the {x['depth']}-layer network at {fmt.count(x['target_budget'])}" for x in groups])
            text = (f"The {words(len(mine) + len(rest))} seeds {shapes} split at their chosen rate, {_rate(g['lr'])}: "
                    f"seeds {fmt.listed([str(x) for x in mine])} of each, which chose it, lie "
                    f"{fmt.listed(['%.2f' % abs(x['mean_split']) for x in groups])} nats respectively from seeds "
                    f"{rest[0]} to {rest[-1]} on average")
            if g["better_elsewhere"]:
                text += (f", and at {_rate(g['better_elsewhere'][0])} they beat every one of seeds {rest[0]} to "
                         f"{rest[-1]} at {_rate(g['lr'])}")
            return text + "." + tail
        out = []
        for g in groups:
            mine, rest = sorted(g["select"]), sorted(g["others"])
            seeds = fmt.listed([str(s) for s in mine])
            text = (f"At {fmt.count(g['target_budget'])} the {g['depth']}-layer network's {words(len(mine) + len(rest))} "
                    f"seeds split at its chosen rate, {_rate(g['lr'])}: seeds {seeds}, which chose it, lie "
                    f"{abs(g['mean_split']):.2f} nats from seeds {rest[0]} to {rest[-1]} on average")
            if g["better_elsewhere"]:
                text += (f" (at {_rate(g['better_elsewhere'][0])} they beat every one of seeds {rest[0]} to "
                         f"{rest[-1]} at {_rate(g['lr'])})")
            out.append(text + ".")
        return " ".join(out) + tail
    out = []
    for g in groups:
        mine, rest = sorted(g["select"]), sorted(g["others"])
        n = len(mine) + len(rest)
        text = (f"At {fmt.count(g['target_budget'])} the {g['depth']}-layer network's {words(n)} seeds split in two at "
                f"its chosen rate of {_rate(g['lr'])}: held-out losses of {_losses(list(g['select'].values()))} for "
                f"seeds {fmt.listed([str(s) for s in mine])}, which chose that rate, against "
                f"{_losses(list(g['others'].values()))} for seeds {rest[0]} to {rest[-1]}, "
                f"{abs(g['mean_split']):.2f} nats apart on average.")
        if g["better_elsewhere"]:
            lr = g["better_elsewhere"][0]
            text += (f" At {_rate(lr)}, seeds {fmt.listed([str(s) for s in mine])} reach "
                     f"{_losses(list(g['elsewhere'][lr].values()))}, lower than every one of seeds {rest[0]} to "
                     f"{rest[-1]} at the chosen rate: the chosen rate is probably one at which this shape's runs vary widely, "
                     f"and seeds {rest[0]} to {rest[-1]} would likely do better at {_rate(lr)}.")
        out.append(f"{text} {split_effect_sentence(g, sweep)}")
    return " ".join(out)


def retrained_sentence(sweep: str | None = None, part: str = "all") -> str:
    """For each shape whose seeds split, whether the split follows the code: when its rate-choosing
    seeds and the others were trained at different commits, what training the others again with
    the code that reproduces the rate-choosing seeds gave (the sweep's stored retraining,
    ``<sweep>.retrained-seeds.json``: benchmarks/device_parity.py --stage 2); '' when no shape
    splits or none was trained at two commits. ``part``: "split" (whether the split follows the
    code), "tail" (how far the runs moved when trained again, '' when little), or "all" (both)."""
    sweep = sweep or lead()
    groups = [g for g in seed_groups(sweep) if g["split"]]
    records = [r for r in stored_results(sweep) if r.get("chosen")]
    commit = {(r["depth"], r["target_budget"], r["seed"]): (r.get("git_commit") or "").split("+")[0] for r in records}
    mixed = [g for g in groups
             if {commit[(g["depth"], g["target_budget"], s)] for s in g["select"]}
             != {commit[(g["depth"], g["target_budget"], s)] for s in g["others"]}]
    if not mixed:
        return ""
    by_key = {run["key"]: run for run in _retrained_runs(sweep)}
    key = {(r["depth"], r["target_budget"], r["seed"]): r["key"] for r in records}
    shapes = fmt.listed(["the %d-layer network at %s" % (g["depth"], fmt.count(g["target_budget"])) for g in mixed])
    which = (f"In {NAMES[sweep]}, the {'first' if sweep == DESIGNS[0] else 'second'} design, the" if sweep in DESIGNS
             else "The")
    head = f"{which} rate-choosing seeds of {shapes} were trained with an earlier version of the code than the others."
    out, settled, moved, most = [], [], 0.0, ""
    for g in mixed:
        mine, rest = sorted(g["select"]), sorted(g["others"])
        again = [by_key.get(key[(g["depth"], g["target_budget"], s)]) for s in rest]
        chose = [by_key.get(key[(g["depth"], g["target_budget"], s)]) for s in mine]
        where = f"the {g['depth']}-layer network at {fmt.count(g['target_budget'])}"
        if not all(again):
            out.append(f"no new losses for seeds {rest[0]} to {rest[-1]} of {where}, which have not been trained again")
            continue
        live = [x["eval_loss_live"] for x in again]
        runs = again + [x for x in chose if x]
        seed_of = {key[(g["depth"], g["target_budget"], sd)]: sd for sd in [*mine, *rest]}
        for x in runs:
            if abs(x["eval_loss_live"] - x["eval_loss_stored"]) > moved:
                moved = abs(x["eval_loss_live"] - x["eval_loss_stored"])
                most = f"seed {seed_of[x['key']]} of {where}"
        seeds = fmt.listed([str(s) for s in mine])
        if all(chose):
            mine_live = [x["eval_loss_live"] for x in chose]
            side = _side(live, mine_live)
            # a run retrained on another kind of machine than the others (the parity check's GPU) is named
            kinds = {x["device"]["backend"] for x in again}
            elsewhere = sorted({x["device"]["backend"] for x in chose} - kinds)
            on = f", seeds {seeds} on a {elsewhere[0].upper()}" if elsewhere else ""
            out.append(f"{_losses(mine_live)} nats for seeds {seeds} and {_losses(live)} for seeds {rest[0]} to "
                       f"{rest[-1]}, {side} them ({where}{on})")
            settled.append(side != "among")
        else:
            select = list(g["select"].values())
            side = _side(live, select)
            out.append(f"{_losses(live)} nats for seeds {rest[0]} to {rest[-1]} of {where}, {side} the stored "
                       f"{_losses(select)} of seeds {seeds}, which have not been trained again")
            settled.append(False)
    text = head + " Trained again with one version, the shapes give " + "; ".join(out) + "."
    if settled and all(settled) and len(settled) == len(mixed):
        text += " The seeds split as before, so the split does not come from the code."
    tail = ""
    if moved >= 0.01:
        split_keys = {key[(g["depth"], g["target_budget"], sd)] for g in mixed for sd in [*g["select"], *g["others"]]}
        rest = [x for x in by_key.values() if x["key"] not in split_keys]
        rest_moved = [abs(x["eval_loss_live"] - x["eval_loss_stored"]) for x in rest]
        rec = {r["key"]: r for r in stored_results(sweep)}
        rates = sorted({rec[x["key"]]["lr"] for x in rest if x["key"] in rec})
        seeds_ = sorted({rec[x["key"]]["seed"] for x in rest if x["key"] in rec})
        # the other runs, said by what they are when they share a description: the rates not chosen
        chosen = {g["lr"] for g in mixed}
        what = (f"the {words(len(rest))} runs trained again at the rates not chosen (seeds "
                f"{fmt.listed([str(x) for x in seeds_])} at {fmt.listed([f'{x:g}' for x in rates])})"
                if rates and not chosen & set(rates) else f"the {words(len(rest))} other runs trained again")
        tail = (f"Trained again, the runs of {'this shape' if len(mixed) == 1 else 'these shapes'} at the chosen "
                f"rate move by up to {moved:.3f} nats ({most})"
                + (f", {what} by at most {max(rest_moved):.4f}" if rest_moved else "")
                + ": at the chosen rate these shapes' runs are sensitive to small changes in the computation.")
    return {"split": text, "tail": tail, "all": f"{text} {tail}".strip()}[part]


def _side(values: list[float], others: list[float]) -> str:
    """Where ``values`` lie against ``others``: 'above' or 'below' all of them, else 'among'."""
    return "above" if min(values) > max(others) else "below" if max(values) < min(others) else "among"


def _retrained_runs(sweep: str) -> list[dict]:
    """Every stored run of ``sweep`` trained again (the sweep's parity files: the rate grid on
    another machine, ``<sweep>.parity.json``, and groups retrained with later code,
    ``<sweep>.retrained-seeds.json``), each with its stored and retrained losses."""
    runs = []
    for name, many in ((f"{sweep}.parity.json", False), (f"{sweep}.retrained-seeds.json", True)):
        try:
            data = packaged_json("sweeps", name)
        except FileNotFoundError:
            continue
        for item in (data if many else [data]):
            runs += item["runs"]
    return runs


def split_caveat(sweep: str | None = None, budgets=None) -> str:
    """The same caveat in one short clause, for the chapters that repeat the verdict: '' when no
    shape splits (``budgets``: only the shapes at these target budgets)."""
    sweep = sweep or lead()
    groups = [g for g in seed_groups(sweep) if g["split"] and (budgets is None or g["target_budget"] in budgets)]
    if not groups:
        return ""
    parts = []
    for g in groups:
        effects = split_effects(g, sweep)
        at = fmt.count(g["target_budget"])
        said = []
        kept, lost = [e["pair"] for e in effects if e["kept"]], [e["pair"] for e in effects if not e["kept"]]
        if lost:
            said.append(f"the size of the gap{'s' * (len(lost) > 1)} of {fmt.listed(lost)} at {at} is no measure of "
                        "depth")
        if kept:
            one = len(kept) == 1
            said.append(f"the gap{'s' * (not one)} of {fmt.listed(kept)} at {at} keep{'s' * one} "
                        f"{'its sign' if one else 'their signs'}, {'its size' if one else 'their sizes'} uncertain by "
                        "about that much")
        parts.append(f"the {g['depth']}-layer network's seeds split by {abs(g['mean_split']):.2f} nats at its chosen "
                     f"rate, so {' and '.join(said)}")
    return "; ".join(parts)


def split_points(sweep: str | None = None) -> int:
    """How many (pair, size) points rest on a shape whose seeds split at its chosen rate."""
    sweep = sweep or lead()
    return sum(len(_split_pairs(g, sweep)) for g in seed_groups(sweep) if g["split"])


def split_at(sweep: str | None = None) -> dict[tuple[int, int, float], int]:
    """Each (pair, size) point that rests on a shape whose seeds split at its chosen rate, as
    (shallower depth, deeper depth, target budget), mapped to that shape's depth."""
    sweep = sweep or lead()
    return {(s, d, g["target_budget"]): g["depth"] for g in seed_groups(sweep) if g["split"]
            for s, d in pairs.rule(sweep)["pairs"] if g["depth"] in (s, d)}


def split_pointer(sweep: str | None = None) -> str:
    """The shortest form of :func:`split_caveat`, for chapters that point back to the experiments
    chapter rather than repeat it: which points rest on seeds that split ('' when none)."""
    sweep = sweep or lead()
    groups = [g for g in seed_groups(sweep) if g["split"]]
    if not groups:
        return ""
    points = [f"{fmt.listed(_split_pairs(g, sweep))} at {fmt.count(g['target_budget'])}" for g in groups]
    n = sum(len(_split_pairs(g, sweep)) for g in groups)
    one = n == 1
    return (f"{words(n)} of {NAMES[sweep]}'s points ({'; '.join(points)}) rest{'s' * one} on seeds that split at their chosen "
            f"rate, so {split_effect_clause(groups, sweep)}")


# ---------------------------------------------------------------------------------------------
# The GPU pilot's largest budget: read by the rule with it, and what leaving it out would give

GPU_PILOT = "gpu-slice"


def gpu_pilot_readings(name: str = GPU_PILOT) -> dict:
    """The GPU pilot read by the declared rule at every budget it trained (``with``: the book's
    reading, since the rule leaves out no run for a rising loss), and without the budgets at which
    a depth's loss stops falling with size (``without``,
    :func:`dwlib.experiments.transition.size_limited`), with the budgets left out, the pairs that
    cross in each reading, and each such pair's gap at the larger budget of its crossing."""
    rule = pairs.rule(RULE_SWEEP)
    records = stored_results(name)
    limited = size_limited(records)
    dropped = sorted({r["target_budget"] for r in records} - {r["target_budget"] for r in limited})
    out = {"with": read_by_rule(name), "dropped": dropped, "without": {"rule": rule, "pairs": []}}
    for shallow, deep in EARLIER_PAIRS[name]:
        rows = pairs.points(limited, shallow, deep, rule["level"])
        out["without"]["pairs"].append({"shallow": shallow, "deep": deep, "points": rows,
                                        "verdict": pairs.pair_verdict(rows)})
    return out


def gpu_pilot_sentence(name: str = GPU_PILOT) -> str:
    """The one treatment of the GPU pilot's largest budget, said once for every chapter: the rule
    reads every budget (it declares no exclusion for a rising loss); what leaving out the budgets
    where every depth's loss rises would give, and why that reading would be weak."""
    g = gpu_pilot_readings(name)
    label = NAMES[name]
    if not g["dropped"]:
        return (f"{fmt.capitalised(label)} predates the declared rule; read after the fact by its criteria, every budget it "
                "trained counts, and its losses fall with size at each.")
    records = stored_results(name)
    dropped = _sizes(g["dropped"])
    with_cross = {(p["shallow"], p["deep"]) for p in crossing(g["with"])}
    parts = []
    for p in crossing(g["without"]):
        if (p["shallow"], p["deep"]) in with_cross:
            continue
        lo, hi = p["verdict"]["transition"]["between"]
        x = next(x for x in p["points"] if x["target_budget"] == hi)
        last = hi == max(y["target_budget"] for y in p["points"])
        passes = max(r["tokens"] for r in records) / train_split_tokens(records)
        after = [y for q in g["with"]["pairs"] if (q["shallow"], q["deep"]) == (p["shallow"], p["deep"])
                 for y in q["points"] if y["target_budget"] in g["dropped"]]
        back = (f"; with it, {'the single seed' if all(y['n'] == 1 for y in after) else 'the seeds'} at "
                f"{_sizes([y['target_budget'] for y in after])} put{'s' if all(y['n'] == 1 for y in after) else ''} "
                f"the {p['deep']}-layer network behind again "
                f"({fmt.listed([format(y['mean'], '+.3f') + ' nats' for y in after])})" if after and all(y["mean"] > 0 for y in after)
                else "")
        parts.append(
            f"without {dropped}, the rule would read a {p['shallow']} vs {p['deep']} crossing between "
            f"{fmt.count(lo)} and {fmt.count(hi)}, resting on {words(x['n'])} seeds, a gap of "
            f"{abs(x['mean']):.3f} nats, a training set passed over about {words(round(passes))} times"
            + (", and the last budget read, so that no larger budget could confirm it" if last else "")
            + back)
    rise = [r for r in _rising(records, g["dropped"]) if r["rises"]]
    why = ("every depth's loss rises" if rise and len(rise) == len({r['depth'] for r in records})
           else "a depth's loss rises" if rise else "a depth's loss stops falling")
    head = (f"{fmt.capitalised(label)} predates the declared rule and was not designed for it. Read after the fact by the "
            f"rule's criteria, which exclude nothing, it counts every budget it trained, {dropped} included, "
            f"although there {why} with size.")
    if not parts:
        return head + f" Leaving {dropped} out would change no verdict."
    return (head + " " + " ".join(fmt.capitalised(x) + "." for x in parts)
            + f" Either way, {label} does not decide whether the pair crosses.")


def _rising(records: list[dict], dropped: list[float]) -> list[dict]:
    """Each depth's mean loss at the largest budget kept and at the first one left out."""
    kept = sorted({r["target_budget"] for r in records} - set(dropped))
    if not kept or not dropped:
        return []
    out = []
    for depth in sorted({r["depth"] for r in records}):
        def mean(b):
            v = [r["eval_loss"] for r in records if r["depth"] == depth and r["target_budget"] == b
                 and r["eval_loss"] is not None and np.isfinite(r["eval_loss"])]
            return float(np.mean(v)) if v else None
        before, after = mean(kept[-1]), mean(dropped[0])
        if before is not None and after is not None:
            out.append({"depth": depth, "before": before, "after": after, "rises": after > before})
    return out


def train_split_tokens(records: list[dict]) -> int:
    """The size of the training split the runs of a sweep read (its corpus, tokenised at its
    vocabulary)."""
    cfg = records[0]["config"]
    return len(load_corpus(cfg["corpus"], cfg["vocab_size"], verbose=False).train)
