"""The discussion chapter's numbers and tables: what the theory says about the depths of the
paper's Figure 1 (Kaplan et al.'s ablation, whose data were published only as a plot), and
whether this book's stored sweeps show the authors' open observation, deeper networks doing
worse at small sizes, with the seed-to-seed spread of each gap.

:func:`numbers` gives every value the prose quotes (glue name -> value) in one call.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import bounds, sizes
from dwlib.book import Table, claims
from dwlib.book import pairs_verdicts as pv
from dwlib.book.experiments import learning_rate_check
from dwlib.experiments import pairs as pairs_rule
from dwlib.experiments import transition as tr
from dwlib.experiments.catalogue import gpt3_table, load_models
from dwlib.experiments.presets import WIDE, get_preset
from dwlib.experiments.records import stored_results
from dwlib.viz.theory import threshold_width_chart

#: Figure 1 of the paper: its panel (b) shows widths d >= 200, and its caption names the depths
#: of the L > 6 curve, 12, 24, 36, 48 and 207 (section 1); depth 6 is the last of the curves
#: the authors read as depth-efficient (L <= 6).
FIGURE1_MIN_WIDTH = 200
FIGURE1_DEPTHS = (6, 12, 24, 36, 48, 207)
#: the stored sweeps, each read at every budget it trained, as the declared rule reads them (it
#: leaves out no run for a loss that rises with size; what leaving out the GPU pilot's largest
#: budget would give is said apart, :func:`dwlib.book.pairs_verdicts.gpu_pilot_sentence`)


def sweeps() -> dict[str, str]:
    """Every stored sweep the chapter reads, by name, with the name a reader meets: the design of
    the doubling pairs that leads first (:func:`dwlib.book.pairs_verdicts.lead`), then the other."""
    return {name: pv.NAMES[name].removeprefix("the ")
            for name in (pv.lead(), pv.second(), "mini", "cpu-fig2", "gpu-slice")}


def _log10_pow3(L: int) -> float:
    return L * math.log10(3.0)


def figure1_rows() -> list[dict]:
    """For each depth of Figure 1: the width a network of that depth needs to lie wholly below its
    threshold (d_x > 3^L, Theorem 1's regime), the non-embedding size 12 L d_x^2 at that width,
    and that size as a multiple of GPT-3 175B's (all as log10, so that depth 207 fits a float)."""
    gpt3 = next(g for g in gpt3_table() if g["name"] == "GPT-3 175B")
    rows = []
    for L in FIGURE1_DEPTHS:
        log_w = _log10_pow3(L)
        log_n = math.log10(sizes.PARAMS_PER_LAYER * L) + 2 * log_w
        rows.append({"depth": L, "log10_width": log_w, "log10_size": log_n,
                     "log10_vs_gpt3": log_n - math.log10(gpt3["budget"])})
    return rows


def figure1_table() -> pd.DataFrame:
    """:func:`figure1_rows` as the chapter shows it."""
    return pd.DataFrame([{
        "depth L": r["depth"],
        "width needed (above 3ᴸ)": fmt.power_of_ten(r["log10_width"], superscript=True),
        "size at that width, 12 L dₓ²": fmt.power_of_ten(r["log10_size"], superscript=True),
        "that size / GPT-3 175B's": fmt.power_of_ten(r["log10_vs_gpt3"], superscript=True),
    } for r in figure1_rows()]).set_index("depth L")


def _records(name: str) -> list[dict]:
    """A sweep's records as the chapter reads them: the doubling sweep at the sizes its rule reads
    (every seed of every depth), every other sweep at every budget."""
    records = stored_results(name)
    if name in pv.DESIGNS:
        complete = set(pv.read(name)["budgets"])
        return [r for r in records if r["target_budget"] in complete]
    return records


def gap_rows(name: str) -> list[dict]:
    """Each adjacent pair of a stored sweep at the smallest and the largest target budget both
    depths reach: widths, the regime of each network (:func:`dwlib.core.bounds.regime`), the
    deep-minus-shallow loss of each seed (runs of one seed see the same data,
    :func:`dwlib.experiments.transition.paired_gaps`), its mean and spread, the two sizes, and
    the reading of the seeds' paired interval that the claims table makes
    (:func:`dwlib.book.claims.small_size_reading`: worse, comparable, better or not resolved)."""
    records = _records(name)
    width = {(r["depth"], r["target_budget"]): r["width"] for r in records}
    size = {(r["depth"], r["target_budget"]): r["budget"] for r in records}
    target = pairs_rule.rule(pv.RULE_SWEEP)["half_width_target"]
    points = {(p["shallow"], p["deep"], x["target_budget"]): x
              for p in pv.read_by_rule(name)["pairs"] for x in p["points"]}
    rows = []
    for shallow, deep in tr.adjacent_pairs(get_preset(name).depths):
        gaps = tr.paired_gaps(records, shallow, deep)
        if not gaps:
            continue
        for end, g in ((("smallest", gaps[0]), ("largest", gaps[-1])) if len(gaps) > 1 else (("only", gaps[0]),)):
            n = g["target_budget"]
            w_s, w_d = width[(shallow, n)], width[(deep, n)]
            values = np.array(list(g["gaps"].values()))
            point = points.get((shallow, deep, n))
            rows.append({
                "sweep": name, "shallow": shallow, "deep": deep, "end": end, "target_budget": n,
                "width_shallow": w_s, "width_deep": w_d,
                "regime_shallow": bounds.regime(shallow, w_s), "regime_deep": bounds.regime(deep, w_d),
                "gaps": values, "mean": float(values.mean()),
                "std": float(values.std(ddof=1)) if values.size > 1 else None,
                "n_seeds": int(values.size), "n_deeper_worse": int((values > 0).sum()),
                "params_shallow": size[(shallow, n)], "params_deep": size[(deep, n)],
                "half_width": point["half_width"] if point else None,
                "reading": claims.small_size_reading(point, target),
            })
    return rows


def _regime_text(regime: str) -> str:
    return {"depth-efficient": "below", "depth-inefficient": "above", "threshold": "on"}[regime]


def reading_text(r: dict, split: int | None = None) -> str:
    """A row's interval reading in words: 'worse', 'not resolved (one seed)', 'not resolved
    (half-width 0.16 nats)'; ``split``: the depth of a network of the pair whose seeds split at
    their chosen rate (:func:`dwlib.book.pairs_verdicts.split_at`), said in the parenthesis."""
    if r["reading"] != claims.SMALL_UNRESOLVED:
        return r["reading"]
    if r["n_seeds"] == 1:
        return "not resolved (one seed)"
    apart = f"; the {split}-layer network's seeds split" if split else ""
    return f"not resolved (half-width {r['half_width']:.2f} nats{apart})"


def size_difference(r: dict) -> float:
    """How much larger the deeper network of a row is than the shallower one, as a fraction
    (-0.11: 11% fewer parameters)."""
    return r["params_deep"] / r["params_shallow"] - 1


#: the mark of a width under the rule's flag (:data:`dwlib.experiments.presets.WIDE`) in the gap
#: table, and the note under the table that says what it means
NARROW_MARK = "\N{DAGGER}"
NARROW_NOTE = (f"{NARROW_MARK} A width under {WIDE}, the narrowest width of the paper's Figure 1(b): the "
               "declared rule flags such networks rather than leaving them out.")


def _width_text(width: int, regime: str) -> str:
    """'64† below': a width, marked when under the rule's flag, and its network against its threshold."""
    return f"{width}{NARROW_MARK * (width < WIDE)} {_regime_text(regime)}"


def gap_table() -> Table:
    """Each adjacent pair of every stored sweep at the smallest budget both depths reach
    (:func:`gap_rows`; whether the gap closes at larger sizes is the experiments chapter's
    verdict), as the chapter shows it: few columns, so that the table reads on a phone, and
    widths under the rule's flag marked, with a note under the table."""
    out = []
    for name, label in sweeps().items():
        for r in gap_rows(name):
            if r["end"] == "largest":
                continue
            spread = f"{r['mean']:+.3f}" + (f" (sd {r['std']:.3f})" if r["std"] is not None else "")
            apart = pv.split_at(name).get((r["shallow"], r["deep"], r["target_budget"])) if name in pv.DESIGNS else None
            out.append({
                "pair": f"{label}, {r['shallow']} vs {r['deep']}",
                "smallest size": fmt.count(r["target_budget"]),
                "widths, against the threshold": f"{_width_text(r['width_shallow'], r['regime_shallow'])}, "
                                                 f"{_width_text(r['width_deep'], r['regime_deep'])}",
                "gap, deep \N{MINUS SIGN} shallow (nats)": spread.replace("-", "\N{MINUS SIGN}"),
                "deeper, by the seeds' interval": reading_text(r, apart),
            })
    frame = pd.DataFrame(out).set_index("pair")
    narrow = frame["widths, against the threshold"].str.contains(NARROW_MARK).any()
    return Table(frame, None, note=NARROW_NOTE if narrow else None)


def precision_sentence() -> str:
    """The precision the leading design reached against its rule's target, and what a shortfall does
    to its verdicts, in one sentence ('' when nothing is read)."""
    clause = pv.precision_clause(pv.read(pv.lead()))
    if not clause:
        return ""
    clause = clause.replace(" points,", " (pair, size) points,", 1)
    return f"In {pv.NAMES[pv.lead()]}, the design that chapter leads with, {clause}."


def rule_scope() -> str:
    """Where the doubling sweep enters the table: the sizes its rule reads, in one sentence."""
    done = pv.read(pv.lead())["budgets"]
    name = pv.NAMES[pv.lead()]
    if not done:
        return f"{name[:1].upper() + name[1:]} has no size with every seed of every depth, so it is not in the table."
    return (f"{name[:1].upper() + name[1:]} enters {pv.span(done, get_preset(pv.lead()).budgets)}, "
            f"the size{'s' * (len(done) > 1)} at which every depth has every seed.")


def numbers() -> dict:
    """Every number the chapter's prose quotes (glue name -> value)."""
    fig1 = {r["depth"]: r for r in figure1_rows()}
    named = sweeps()
    rows = [r for name in named for r in gap_rows(name)]
    small = [r for r in rows if r["end"] in ("smallest", "only")]
    large = [r for r in rows if r["end"] in ("largest", "only")]
    both_below = [r for r in small if r["regime_shallow"] == r["regime_deep"] == "depth-efficient"]
    both_above = [r for r in small if r["regime_shallow"] == r["regime_deep"] == "depth-inefficient"]
    first = {(r["sweep"], r["shallow"]): r for r in small}
    closing = [r for r in large if r["end"] == "largest" and r["mean"] < first[(r["sweep"], r["shallow"])]["mean"]]
    crossed = [r for r in large if r["mean"] < 0]

    def pairs(rs):  # grouped by sweep: "the one-million-token CPU sweep's 1 vs 2 and 2 vs 4"
        by: dict[str, list[str]] = {}
        for r in rs:
            by.setdefault(r["sweep"], []).append(f"{r['shallow']} vs {r['deep']}")
        names = [f"the {named[k]}'s {fmt.listed(v)}" for k, v in by.items()]
        if len(names) == 2:
            return " and ".join(names)
        return (names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", and " + names[-1]) if names else "none"

    worse = _worse
    split = {name: pv.split_at(name) for name in pv.DESIGNS}

    def unresolved_text(rs):  # where a pair that is not resolved rests on seeds that split, in a clause
        apart = [(r, split[r["sweep"]][key]) for r in rs if r["sweep"] in split
                 and (key := (r["shallow"], r["deep"], r["target_budget"])) in split[r["sweep"]]]
        return "; ".join(f"in {pairs([r])}, the {depth}-layer network's seeds split at their chosen rate"
                         for r, depth in apart)

    def worse_text(rs):  # how many pairs of a group have the deeper network resolved worse, in English
        yes, rest = [r for r in rs if worse(r)], [r for r in rs if not worse(r)]
        if not rs:
            return "no pair is in this group"
        if not rest:
            return ("the seeds' interval puts the deeper network behind in "
                    + ("both" if len(rs) == 2 else f"all {pv.words(len(rs))}")
                    if len(rs) > 1 else "the seeds' interval puts the deeper network behind")
        if not yes:
            return "no difference is resolved in " + ("either" if len(rs) == 2 else "any of them")
        return (f"the seeds' interval puts the deeper network behind in {pv.words(len(yes))} of them, while "
                + _others_text(rest))

    def size_text(rs):  # where the two networks of a pair differ in size by more than 5%, counted
        fewer = [r for r in rs if size_difference(r) < -0.05]
        more = [r for r in rs if size_difference(r) > 0.05]
        parts = []
        for group, word in ((fewer, "fewer"), (more, "more")):
            if group:
                pct = sorted({math.floor(abs(size_difference(r)) * 100 + 0.5) for r in group})
                how = f"{pct[0]}%" if len(pct) == 1 else f"{pct[0]}% to {pct[-1]}%"
                where = (("both" if len(rs) == 2 else "all of them") if len(group) == len(rs)
                         else f"{pv.words(len(group))} of them")
                parts.append(f"about {how} {word} {'' if parts else 'non-embedding parameters than the shallower one '}in {where}")
        if not parts:
            return "The two networks of each of these pairs are within 5% of one size."
        return ("The two networks of a pair are not of one size: the deeper network has "
                + " and ".join(parts)
                + (", so where the deeper network is the smaller one, part of its deficit may come from its size."
                   if fewer else "."))

    def separated(r):  # eqs. (7)/(8) put the deeper network's lower bound above the shallower one's upper
        heads = get_preset(r["sweep"]).head_size
        lo = bounds.separation_rank_bounds(r["deep"], r["width_deep"], r["width_deep"] // heads)["lower"]
        return lo > bounds.separation_rank_bounds(r["shallow"], r["width_shallow"], r["width_shallow"] // heads)["upper"]

    declared = [r for r in small if r["sweep"] == pv.lead()]
    readings = [pv.read_by_rule(name) for name in named]
    n_rule = sum(len(r["pairs"]) for r in readings)
    n_rule_cross = sum(len(pv.crossing(r)) for r in readings)
    gpt3 = next(g for g in gpt3_table() if g["name"] == "GPT-3 175B")
    lr, lr_records = learning_rate_check()
    shallow, deep = lr["shallow"], lr["deep"]
    return {
        "f1_min_width": FIGURE1_MIN_WIDTH,
        "f1_layers_below_min_width": math.floor(bounds.depth_threshold(FIGURE1_MIN_WIDTH)),
        "f1_lth_min_width": float(bounds.depth_threshold(FIGURE1_MIN_WIDTH)),
        "f1_width_6": round(10 ** fig1[6]["log10_width"]),
        "f1_size_6_m": 10 ** fig1[6]["log10_size"] / 1e6,
        "f1_width_12": round(10 ** fig1[12]["log10_width"]),
        "f1_size_12_vs_gpt3": 10 ** fig1[12]["log10_vs_gpt3"],
        "f1_depths_above": ", ".join(str(L) for L in FIGURE1_DEPTHS[1:]),
        **_real_widths(),
        "ds_n_pairs": len(small),
        # the answer to "do this book's sweeps show it?", from the sweep run under the declared
        # rule (the claims table's verdict): the deeper network resolved worse in all, some or none
        "ds_answer": "Yes" if all(map(worse, declared)) else "Partly" if any(map(worse, declared)) else "No",
        "ds_rule_small": _declared_sentence(declared),
        "ds_n_worse": sum(map(worse, small)),
        # the range of the mean gap where the deeper network is resolved worse
        "ds_gap_min": min((r["mean"] for r in small if worse(r)), default=float("nan")),
        "ds_gap_max": max((r["mean"] for r in small if worse(r)), default=float("nan")),
        "ds_not_worse": pairs([r for r in small if not worse(r)]),
        "ds_rest": _rest_sentence(small, unresolved_text),
        # the Takeaway's short form: how many put the deeper network ahead, how many are not resolved
        "ds_rest_short": (f"ahead in {pv.none_or(sum(r['reading'] == claims.SMALL_BETTER for r in small))}, "
                          f"{pv.words(sum(r['reading'] == claims.SMALL_UNRESOLVED for r in small))} not resolved"),
        "ds_rule_scope": rule_scope(),
        "ds_std_max": max(r["std"] for r in small if r["std"] is not None),
        "ds_one_seed": pairs([r for r in small if r["n_seeds"] == 1]),
        "ds_both_below": pairs(both_below),
        "ds_n_both_below": pv.counted(len(both_below), "pair"),
        "ds_below_sep_n": sum(map(separated, both_below)),
        "ds_below_sep_text": ((("in neither" if len(both_below) == 2 else "in none of them")
                               if not sum(map(separated, both_below)) else
                               f"in {pv.words(sum(map(separated, both_below)))} of the {pv.words(len(both_below))}")),
        "ds_rule_cross": pv.of(n_rule_cross, n_rule, "pair", "crosses"), "ds_precision": precision_sentence(),
        "ds_lr_seeds": _seeds_text(lr_records),
        "ds_below_worse": worse_text(both_below),
        # the Takeaway's sentence on the pairs below their thresholds
        "ds_below_takeaway": (
            f"The deeper network is also behind in {pairs([r for r in both_below if worse(r)])}, where both networks lie below "
            "their thresholds, though there the bounds are too loose to rank them."
            if any(map(worse, both_below)) else
            "In no pair where both networks lie below their thresholds is the deeper network resolved behind."),
        "ds_both_above": pairs(both_above),
        "ds_n_both_above": pv.counted(len(both_above), "pair"),
        "ds_above_worse": worse_text(both_above),
        "ds_above_sizes": size_text(both_above),
        "ds_closing": pairs(closing),
        "ds_crossed": pairs(crossed),
        "ds_n_crossed": len(crossed),
        "gpt3_depth": gpt3["depth"],
        "gpt3_width": gpt3["width"],
        "gpt3_lth": float(bounds.depth_threshold(gpt3["width"])),
        "ds_lr_shallow": shallow,
        "ds_lr_deep": deep,
        "ds_lr_size_shallow": next(r["budget"] for r in lr_records if r["depth"] == shallow),
        "ds_lr_size_deep": next(r["budget"] for r in lr_records if r["depth"] == deep),
        "ds_lr_gap_common": lr["gap_at_reference"],
        "ds_lr_gap_best": lr["gap_at_best"],
    }


def _seeds_text(records: list[dict]) -> str:
    """How many seeds each rate of a rate check trained: 'one seed', 'two seeds'."""
    n = {len({r["seed"] for r in records if r.get("lr", r["config"].get("lr")) == lr})
         for lr in {r.get("lr", r["config"].get("lr")) for r in records}}
    k = min(n)
    return pv.counted(k, "seed") + ("" if len(n) == 1 else " or more")


def _real_widths() -> dict:
    """Which depths of Kaplan et al.'s figure can lie wholly below their threshold (d_x > 3^L) at
    the width of the widest network in the book's catalogue of published models."""
    widest = max(load_models(), key=lambda m: m["width"])
    below = [L for L in FIGURE1_DEPTHS if 3 ** L < widest["width"]]
    return {"f1_real_depths": fmt.listed([str(L) for L in below]) if below else "none",
            "f1_real_n": len(below), "f1_widest_name": widest["name"], "f1_widest_width": widest["width"],
            "f1_widest_lth": float(bounds.depth_threshold(widest["width"])),
            "f1_figure_depths": fmt.listed([str(L) for L in FIGURE1_DEPTHS]),
            "f1_only": (f"only depth {below[0]}" if len(below) == 1 else
                        f"only depths {fmt.listed([str(L) for L in below])}" if below else "no depth")}


def _worse(r: dict) -> bool:
    """The seeds' paired interval lies above zero: the deeper network resolved worse."""
    return r["reading"] == claims.SMALL_WORSE


def _declared_sentence(declared: list[dict]) -> str:
    """The sweep run under the declared rule at its smallest size: which pairs put the deeper
    network behind and which do not, in one sentence (the claims table's verdict)."""
    name = pv.NAMES[pv.lead()]
    if not declared:
        return f"{fmt.capitalised(name)} has no size with every seed of every depth yet."
    behind = [f"{r['shallow']} vs {r['deep']}" for r in declared if _worse(r)]
    rest = [f"{r['shallow']} vs {r['deep']}" for r in declared if not _worse(r)]
    at = fmt.count(min(r["target_budget"] for r in declared))
    parts = []
    if behind:
        parts.append(f"puts the deeper network behind in {fmt.listed(behind)}")
    if rest:
        parts.append(f"does not in {fmt.listed(rest)}")
    return (f"In {name}, the book's main sweep, the seeds' interval at {at} "
            + " and ".join(parts) + ".")


#: how the table's readings other than 'worse' read after a count ('two are not resolved')
_OTHER_READINGS = ((claims.SMALL_UNRESOLVED, "not resolved"),
                   (claims.SMALL_COMPARABLE, "comparable within the rule's precision"),
                   (claims.SMALL_BETTER, "resolved with the deeper network ahead"))


def _others_text(rest: list[dict]) -> str:
    """The pairs a sentence has not counted as worse, by their reading: 'the other is not
    resolved', 'the other two are not resolved', 'one is not resolved and one is comparable ...'."""
    groups = [(phrase, n) for reading, phrase in _OTHER_READINGS
              if (n := sum(r["reading"] == reading for r in rest))]
    if len(groups) == 1:
        phrase, n = groups[0]
        return f"the other {'is' if n == 1 else pv.words(n) + ' are'} {phrase}"
    return fmt.listed(f"{pv.words(n)} {'is' if n == 1 else 'are'} {phrase}" for phrase, n in groups)


def _rest_sentence(small: list[dict], unresolved_text) -> str:
    """The pairs that the interval does not put behind: how many are not resolved (the table says
    why), whether any is resolved better or comparable, and where one rests on seeds that split,
    in one sentence."""
    rest = [r for r in small if not _worse(r)]
    if not rest:
        return "No pair is left unresolved or resolved the other way."
    unresolved = [r for r in rest if r["reading"] == claims.SMALL_UNRESOLVED]
    better = [r for r in rest if r["reading"] == claims.SMALL_BETTER]
    n = len(rest)
    if len(unresolved) == n:
        text = (f"The other {pv.words(n)} {'is' if n == 1 else 'are'} not resolved (the table gives "
                + ("its half-width, or its single seed)" if n == 1 else "each one's half-width, or its single seed)"))
    else:
        text = f"Of the other {pv.words(n)}, " + _others_text(rest)
    if not better:
        text += ", and in none is the deeper network resolved better"
    apart = unresolved_text(unresolved)
    return text + (f"; {apart}" if apart else "") + "."


def figure1_chart(max_depth: int = 48):
    """The theory's reading of Figure 1 as a picture: for each depth of the figure (up to
    ``max_depth``; depth 207 needs a width of 10^98.8 and would flatten the rest), log10 of the
    width at which a network of that depth lies wholly below its threshold, beside the widest
    network of the paper's time (GPT-3 175B) and the zoom's narrowest width."""
    gpt3 = next(g for g in gpt3_table() if g["name"] == "GPT-3 175B")
    rows = [{"depth": str(r["depth"]), "log10 width": r["log10_width"],
             "width": fmt.sci(r["log10_width"], superscript=True) if r["log10_width"] >= 6 else f"{10 ** r['log10_width']:,.0f}"}
            for r in figure1_rows() if r["depth"] <= max_depth]
    refs = [{"y": math.log10(gpt3["width"]), "what": f"GPT-3 175B, width {gpt3['width']:,}"},
            {"y": math.log10(FIGURE1_MIN_WIDTH), "what": f"narrowest width of the paper's Figure 1(b), {FIGURE1_MIN_WIDTH}"}]
    return threshold_width_chart(rows, refs)
