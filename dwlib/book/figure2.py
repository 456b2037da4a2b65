"""The experiments chapter's lead: the paper's Figure 2 beside the CPU doubling pairs (the design
that leads, :func:`dwlib.book.pairs_verdicts.lead`), read by their declared rule, and what the
earlier sweeps could and could not decide.

:func:`chart` draws the doubling pairs over the budgets the rule reads (every seed of every
depth), or, while no budget is complete, the runs stored so far; :func:`numbers` gives every
value and sentence the chapter's prose quotes; :func:`earlier_table` reads the earlier sweeps by
the same rule; :func:`bounds_table` says where eqs. (7) and (8) separate the two networks of a
pair at the trained shapes.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book import pairs_verdicts as pv
from dwlib.core import bounds, sizes
from dwlib.errors import InputError
from dwlib.core.fit import AUTHORS_FIT, optimal_width
from dwlib.experiments import pairs
from dwlib.experiments.presets import WIDE, get_preset
from dwlib.experiments.records import stored_results
from dwlib.store import packaged_json
from dwlib.train import corpora
from dwlib.viz import pairs as vp

#: the earlier sweeps, in the order the chapter gives them
EARLIER = ("cpu-fig2", "mini", "gpu-slice")


@functools.cache
def reading() -> dict:
    """The doubling sweep read by its rule (:func:`dwlib.book.pairs_verdicts.read`)."""
    return pv.read(pv.lead())


def chart():
    """The two-pair figure over the complete budgets, or every stored run while none is complete."""
    r = reading()
    lines = chart_conclusion(r).split("; ")
    chart = vp.figure2(stored_results(pv.lead()), r["rule"], budgets=r["budgets"] or None, conclusion=lines[0])
    # the conclusion one pair a line, so that each line fits a phone's column
    title = chart.title
    title.subtitle = [*lines, *title.subtitle[1:]]
    return chart.properties(title=title)


#: each point's verdict in the figure's and the tables' few words
SIDES = {pairs.WORSE: "deeper worse", pairs.BETTER: "deeper better", pairs.UNRESOLVED: "not resolved"}


def _short(p: dict) -> list[str]:
    """One pair's finding in a few words for the subtitle: at one or two sizes, a line per size
    with its side and mean gap with its half-width; at more, one line counting the sizes on each
    side (the gap panel beside it shows each)."""
    side = SIDES
    if len(p["points"]) > 2:
        n = {k: sum(x["verdict"] == k for x in p["points"]) for k in side}
        first, *rest = [k for k in (pairs.WORSE, pairs.BETTER, pairs.UNRESOLVED) if n[k]]
        return [f"{p['shallow']} vs {p['deep']}: {side[first]} at {n[first]} of {len(p['points'])}"
                + "".join(f", {n[k]} {side[k].removeprefix('deeper ')}" for k in rest)]
    one = len(p["points"]) == 1
    return [f"{p['shallow']} vs {p['deep']}{'' if one else ' at ' + fmt.count(x['target_budget'])}: "
            f"{side[x['verdict']]} ({x['mean']:+.3f}"
            + (f" \u00b1 {x['half_width']:.3f})" if x["half_width"] is not None else ")") for x in p["points"]]


def chart_conclusion(r: dict) -> str:
    """The figure's finding, short enough for its subtitle: per pair, the side each size's
    interval puts ahead and the mean gap with its half-width."""
    if not r["budgets"]:
        return "no size complete: no verdict"
    return "; ".join(line for p in r["pairs"] for line in _short(p)) + (
        "; one size, no curve" if len(r["budgets"]) == 1 else "")


def caption(r: dict | None = None, others: dict | None = None, seeds=()) -> str:
    """Figure 7.2's caption (the measured pairs): what to conclude first (the rule's reading in
    counts; the points themselves are in the chart and the verdict section), with the reading on
    the seeds that did not choose the rates where it differs, then the layout as drawn."""
    if r is None:
        r, seeds = reading(), later_seeds()
        others = pv.read(pv.lead(), seeds=seeds)
    level = r["rule"]["level"]
    layout = (f"One row per pair: held-out loss (nats per token) against non-embedding size, seed means with "
              f"{level:.0%} intervals, hollow marks for networks narrower than 200; beside it, the paired "
              "deeper-minus-shallower gap: orange triangles (up) resolved worse, blue (down) resolved better, grey "
              "circles not resolved.")
    if not r["budgets"]:
        return ("No size has every seed of every depth, so the figure draws the runs stored and no verdict is read "
                "from it. " + layout)
    points = [x for p in r["pairs"] for x in p["points"]]
    n = {k: sum(x["verdict"] == k for x in points) for k in SIDES}
    where = pv.span(r["budgets"], get_preset(pv.lead()).budgets)
    one = len(r["budgets"]) == 1
    crossed = pv.crossing(r)
    head = (f"At the first size of {pv.NAMES[pv.lead()]}, {where[3:]} non-embedding parameters, one size "
            "cannot show a transition" if one else
            f"In {pv.NAMES[pv.lead()]}, by the declared rule " + ("no pair crosses" if not crossed else
                                       pv.of(len(crossed), len(r["pairs"]), "pair", "crosses"))
            + f" {where} non-embedding parameters")
    later = []
    if others is not None:
        later = [f"{p['shallow']} vs {p['deep']} at {fmt.count(y['target_budget'])}"
                 for p, q in zip(r["pairs"], others["pairs"]) for x, y in zip(p["points"], q["points"])
                 if y["verdict"] == pairs.BETTER and x["verdict"] != pairs.BETTER]
    better = (f"the deeper network is resolved better at {pv.none_or(n[pairs.BETTER])} of "
              f"the {pv.words(len(points))} points" if len(points) > 1 else
              "the deeper network is " + ("resolved better" if n[pairs.BETTER] else "not resolved better"))
    if later:
        better += (f" (on seeds {min(seeds)} to {max(seeds)} alone, which did not choose the rates, "
                   + (f"also at {fmt.listed(later)})" if n[pairs.BETTER] else
                      f"at {pv.words(len(later))}: {fmt.listed(later)})"))
    rest = []
    if n[pairs.WORSE]:
        every = "all " if n[pairs.WORSE] == len(points) > 2 else ""
        rest.append(f"worse at {every}{pv.words(n[pairs.WORSE])}, where the paper expects the two to perform comparably")
    if n[pairs.UNRESOLVED]:
        rest.append(f"not resolved at {pv.words(n[pairs.UNRESOLVED])}")
    if n[pairs.WORSE] == len(points) > 1 and not later:  # one finding: said once
        text = (f"{head}, and the deeper network is resolved worse at all {pv.words(len(points))} points, where the paper "
                "expects the two to perform comparably.")
    else:
        text = f"{head}, and {better}." + (f" It is {', and '.join(rest)}." if rest and len(points) > 1 else "")
    precision = pv.precision_clause(r, brief=True) if len(points) > 1 else ""
    if precision:
        text += f" {fmt.capitalised(precision)}."
    split = [g for g in pv.seed_groups(pv.lead()) if g["split"]] if others is not None else []
    if split:
        text += (" Where a shape's seeds split ("
                 + fmt.listed([f"the {g['depth']}-layer network at {fmt.count(g['target_budget'])} by "
                               f"{abs(g['mean_split']):.2f} nats" for g in split])
                 + f"), {pv.split_effect_clause(split, pv.lead())}.")
    return f"{text} {layout}"


def authors_range(shallow: int, deep: int) -> tuple[float, float]:
    """The authors' fit read as in the rule file: depth L is optimal at N(L) = 12 L d(L)^2, so the
    pair (L, 2L) crosses between N(L) and N(2L)."""
    return tuple(12 * L * float(optimal_width(L, AUTHORS_FIT)) ** 2 for L in (shallow, deep))


def authors_reach(r: dict | None = None) -> str:
    """Where the authors' fit places each pair's transition against the sweep's sizes (and,
    while some lack runs, which of them have all their runs), in one sentence."""
    r = r or reading()
    sizes_ = sorted(get_preset(pv.lead()).budgets)
    parts = []
    for s, d in (tuple(p) for p in r["rule"]["pairs"]):
        lo, hi = authors_range(s, d)
        inside = [b for b in sizes_ if lo <= b <= hi]
        above = [b for b in sizes_ if b > hi]
        name = f"the {s} vs {d} range"
        if inside:
            done = [b for b in inside if b in r["budgets"]]
            parts.append(f"{name} holds the sweep's {'size' if len(inside) == 1 else 'sizes'} {pv._sizes(inside)}"
                         + ("" if len(done) == len(inside) else
                            ", which do not have all their runs yet" if not done else
                            f", of which {pv._sizes(done)} {'has' if len(done) == 1 else 'have'} all their runs")
                         + _inside_verdicts(r, s, d, done))
        elif above:
            parts.append(f"{name} lies below the sweep's sizes above {fmt.count(above[0])}")
        else:
            parts.append(f"{name} lies beyond the sweep's largest size, {fmt.count(sizes_[-1])}")
    return fmt.capitalised("; ".join(parts)) + "."


def _inside_verdicts(r: dict, s: int, d: int, budgets) -> str:
    """What the rule reads at the sizes inside a pair's range from the authors' fit, as a clause:
    where the deeper network is worse at each and better at none, that a transition, if any, lies
    above the largest of them (by the rule a transition needs the deeper network ahead at every
    larger size); '' when none is read."""
    pts = [x for p in r["pairs"] if (p["shallow"], p["deep"]) == (s, d) for x in p["points"]
           if x["target_budget"] in budgets]
    if not pts:
        return ""
    worse = [x["target_budget"] for x in pts if x["verdict"] == pairs.WORSE]
    better = [x["target_budget"] for x in pts if x["verdict"] == pairs.BETTER]
    if better:
        return f", where the deeper network is better at {pv._sizes(better)}"
    if not worse:
        return ", where the deeper network is not resolved from the shallower one"
    said = ("worse at both" if len(pts) == 2 == len(worse) else "worse at each" if len(worse) == len(pts) > 2
            else "worse" if len(pts) == 1 else f"worse at {pv._sizes(worse)} and not resolved at the other"
            + ("s" * (len(pts) - len(worse) > 1)))
    return (f", where the deeper network is {said}, so a {s} vs {d} transition, if there is one, lies above "
            f"{fmt.count(max(worse))}")


def bounds_rows(sweep: str | None = None, shallow_deep=None, budgets=None) -> list[dict]:
    """At each target budget and pair of a sweep's preset: both networks' widths (the preset's
    rounding to whole heads), the bounds on log3 sep that apply to each (eq. (7) below its
    threshold log3 d_x, eq. (8) above), and whether they separate the two (one network's lower
    bound above the other's upper bound)."""
    sweep = sweep or pv.lead()
    preset = get_preset(sweep)
    prs = shallow_deep or (pv.EARLIER_PAIRS.get(sweep) or [tuple(p) for p in pairs.rule(pv.lead())["pairs"]])
    runs: dict[tuple, set] = {}
    for r in pairs.reported(stored_results(sweep)):
        if r.get("status") == "completed" and r.get("eval_loss") is not None:
            runs.setdefault((r["target_budget"], r["depth"]), set()).add(r["seed"])
    rows = []
    for b in budgets or preset.budgets:
        for s, d in prs:
            w = {L: sizes.width_for_budget(b, L, preset.head_size) for L in (s, d)}
            bd = {L: bounds.separation_rank_bounds(L, w[L], w[L] // preset.head_size) for L in (s, d)}
            deeper = bd[d]["lower"] > bd[s]["upper"]
            shallower = bd[s]["lower"] > bd[d]["upper"]
            have = [runs.get((b, L), set()) for L in (s, d)]
            trained = ("in full" if all(h >= set(preset.seeds) for h in have) else
                       "in part" if all(have) else "not yet")
            rows.append({"pair": f"{s} vs {d}", "budget": b, "trained": trained, "widths": f"{w[s]}, {w[d]}",
                         "shallow eq.": 7 if bd[s]["theorem"] == 1 else 8, "deep eq.": 7 if bd[d]["theorem"] == 1 else 8,
                         "shallow upper": bd[s]["upper"], "deep lower": bd[d]["lower"],
                         "separated": "deeper more expressive" if deeper else "shallower more expressive"
                         if shallower else "not separated"})
    return rows


def bounds_table() -> pd.DataFrame:
    """:func:`bounds_rows` of the doubling sweep, as the chapter shows it."""
    df = pd.DataFrame(bounds_rows())
    preset = get_preset(pv.lead())
    df["widths"] = [_widths(preset, b, [int(x) for x in p.split(" vs ")]) for p, b in zip(df["pair"], df["budget"])]
    df["budget"] = [fmt.count(b) for b in df["budget"]]
    if (df["trained"] == "in full").all():  # every row trained: the column says nothing
        df = df.drop(columns="trained")
    df = df.rename(columns={"widths": f"widths (* below {WIDE})", "shallow upper": "shallow: upper bound",
                            "deep lower": "deep: lower bound", "shallow eq.": "shallow: eq.", "deep eq.": "deep: eq."})
    return df.set_index(["pair", "budget"]).round(2)


def earlier_rows() -> list[dict]:
    """Each earlier sweep's doubling pairs read by the declared rule: budgets, seeds, the median
    paired half-width, the point verdicts counted, and whether the pair crosses."""
    rows = []
    g = pv.gpu_pilot_readings()
    # the GPU pilot's pairs that would cross only without the budgets where every loss rises
    alt_pilot = {(p["shallow"], p["deep"]): g["dropped"] for p in pv.crossing(g["without"])}
    for name in EARLIER:
        r = pv.read_by_rule(name)
        alt = alt_pilot if name == pv.GPU_PILOT else {}
        for p in r["pairs"]:
            pts = p["points"]
            halves = [x["half_width"] for x in pts if x["half_width"] is not None]
            v = p["verdict"]
            rows.append({"sweep": pv.NAMES[name], "pair": f"{p['shallow']} vs {p['deep']}",
                         "budgets": f"{fmt.count(pts[0]['target_budget'])} to {fmt.count(pts[-1]['target_budget'])}",
                         "seeds": "-".join(sorted({str(x["n"]) for x in pts}, key=int)),
                         "mean gaps (nats)": f"{min(x['mean'] for x in pts):+.3f} to {max(x['mean'] for x in pts):+.3f}",
                         "median half-width (nats)": f"{np.median(halves):.3f}" if halves else "none (one seed)",
                         "deeper worse / unresolved / better": f"{len(v['worse'])} / {len(v['unresolved'])} / {len(v['better'])}",
                         "crosses by the rule": "yes" if v["transition"] else
                         f"no (yes without {pv._sizes(alt[p['shallow'], p['deep']])})"
                         if (p["shallow"], p["deep"]) in alt else "no"})
    return rows


def earlier_table() -> pd.DataFrame:
    return pd.DataFrame(earlier_rows()).set_index(["sweep", "pair"]).round(3)


def _seed_std(name: str) -> float:
    return float(np.nanmedian([s["std"] for s in pairs.seed_spread(stored_results(name)) if s["std"] is not None]))


def _gap_text(x: dict) -> str:
    return f"{x['mean']:+.3f} nats, interval {x['low']:+.3f} to {x['high']:+.3f}"


def _size_note(x: dict, p: dict) -> str:
    """The deeper network's size against the shallower one's at a point, where whole heads make
    them differ by more than 5% in the direction of the verdict (fewer where it is worse, more
    where it is better)."""
    rel = x["budgets"][p["deep"]] / x["budgets"][p["shallow"]] - 1
    if abs(rel) <= 0.05 or x["verdict"] == pairs.UNRESOLVED or (rel > 0) != (x["verdict"] == pairs.BETTER):
        return ""
    return f", with about {abs(rel):.0%} {'more' if rel > 0 else 'fewer'} non-embedding parameters"


def _point_clause(x: dict, p: dict, other: dict | None, seeds, target: float) -> str:
    at = "" if len(p["points"]) == 1 else f" at {fmt.count(x['target_budget'])}"
    if x["verdict"] == pairs.WORSE:
        note = _size_note(x, p)
        text = (f"the deeper network is worse{at} ({_gap_text(x)}), where the paper's first regime has the two "
                "\"perform comparably\"" + (f"; here the deeper network has{note[len(', with'):]} than the "
                                            "shallower one (widths are whole heads)" if note else ""))
    elif x["verdict"] == pairs.BETTER:
        text = f"the deeper network is better{at} ({_gap_text(x)}){_size_note(x, p)}"
    else:
        ratio = x["half_width"] / target
        text = (f"not resolved{at} ({_gap_text(x)}; its half-width, {x['half_width']:.3f} nats, is "
                f"{'about ' + pv.words(round(ratio)) + ' times' if ratio >= 1.5 else 'about'} the design's "
                f"{target}-nat target, so only a larger gap could be resolved)")
    if other is not None and other["verdict"] != x["verdict"]:
        side = {pairs.WORSE: "resolved worse", pairs.BETTER: "resolved better", pairs.UNRESOLVED: "not resolved"}
        text += (f"; on seeds {min(seeds)} to {max(seeds)} alone, which did not choose the learning rates, the "
                 f"deeper network is {side[other['verdict']]} ({_gap_text(other)}){_size_note(other, p)}")
    return text


def verdict_sentence(r: dict, others: dict | None = None, seeds=()) -> str:
    """The rule's verdict on the doubling sweep over the sizes it reads, pair by pair, in the
    words the evidence allows: an unresolved pair is "not resolved", with its interval, how far its
    half-width is from the design's target, and the reading without the rate-choosing seeds where
    that differs; a resolved "worse" is set against the paper's "perform comparably"."""
    if not r["budgets"]:
        return ("No size has results for every seed of every depth, so the declared rule gives no verdict, "
                "and the figure shows the runs stored without drawing one from them.")
    where = pv.span(r["budgets"], get_preset(pv.lead()).budgets)
    target = r["rule"]["half_width_target"]
    parts = []
    for i, p in enumerate(r["pairs"]):
        want = {x["target_budget"]: x for x in others["pairs"][i]["points"]} if others else {}
        clauses = [_point_clause(x, p, want.get(x["target_budget"]), seeds, target) for x in p["points"]]
        parts.append(f"{p['shallow']} vs {p['deep']} layers: " + "; ".join(clauses) + ".")
    head = f"{where[:1].upper() + where[1:]} non-embedding parameters, by the declared rule: "
    if len(r["budgets"]) == 1:
        tail = " One size has no curve, so it cannot show a transition."
    else:
        n = len(pv.crossing(r))
        tail = (" Neither pair crosses by the declared rule." if n == 0 and len(r["pairs"]) == 2 else
                f" By the declared rule, {pv.of(n, len(r['pairs']), 'pair', 'crosses')}.")
    return head + " ".join(parts) + tail


def separated_text(rows: list[dict], head_size: int) -> str:
    """Each point at which the bounds separate the two networks, with why: which equation bounds
    each network there and where the shallower one sits against its threshold log3 d_x."""
    out = []
    for x in rows:
        s, d = (int(v) for v in x["pair"].split(" vs "))
        w_s, w_d = (int(v) for v in x["widths"].split(", "))
        th = float(bounds.depth_threshold(w_s))
        side = "just above" if s - 1 < th < s else "above" if th < s else "below"
        out.append(f"{x['pair']} at {fmt.count(x['budget'])}, where the {s}-layer network's width of {w_s} puts it "
                   f"{side} its threshold of {th:.2f} layers (the base-3 logarithm of {w_s}), so that its upper bound, from the bound "
                   f"{'below' if x['shallow eq.'] == 7 else 'above'} the threshold, is {x['shallow upper']:.1f}, below the {d}-layer network's lower bound of {x['deep lower']:.1f}"
                   + ("" if x.get("trained", "in full") == "in full" else
                      f" (a pair the sweep plans but has {'trained only in part' if x['trained'] == 'in part' else 'not trained yet'})")
                   if x["separated"] == "deeper more expressive" else
                   f"{x['pair']} at {fmt.count(x['budget'])}, where the shallower network is the more expressive")
    return "; ".join(out)


def reproduced_sentence(r: dict, earlier: list[dict]) -> str:
    """Whether any stored sweep reproduces the paper's Figure 2 (both pairs of one sweep crossing
    by the rule), in one sentence."""
    own = len(pv.crossing(r))
    old = sum(x["crosses by the rule"] == "yes" for x in earlier)
    if own and own == len(r["pairs"]):
        return f"{fmt.capitalised(pv.NAMES[pv.lead()])} reproduces the paper's Figure 2 at its scale: both pairs cross."
    if own:
        return (f"{fmt.capitalised(pv.NAMES[pv.lead()])} reproduces the paper's Figure 2 in part: "
                f"{pv.of(own, len(r['pairs']), 'pair', 'crosses')}.")
    return ("None of this book's sweeps reproduces the paper's Figure 2 at the depths and sizes they trained: " +
            ("the earlier sweeps, read by the same rule, show no crossing either." if not old else
             f"of the earlier sweeps' pairs, read by the same rule, {pv.of(old, len(earlier), 'pair', 'crosses')}."))


def result_sentence(r: dict | None = None, part: str = "all") -> str:
    """The chapter's result in three sentences: each pair's verdict at the sizes read, the sizes not
    yet with all their runs, and the caveat of a shape whose seeds split at its chosen rate. ``part``:
    "head" (the first sentence, the verdict in counts), "detail" (the rest), or "all"."""
    r = r or reading()
    if not r["budgets"]:
        return "No size has every seed of every depth yet, so the declared rule gives no verdict."
    where = pv.span(r["budgets"], get_preset(pv.lead()).budgets)
    bits, worse = [], False
    one = len(r["budgets"]) == 1
    for p in r["pairs"]:
        v, name = p["verdict"], f"{p['shallow']} vs {p['deep']}"
        parts = []  # one clause a pair: "in 2 vs 4 the deeper network is worse at 200K (...) and not resolved at 100K"
        if v["worse"]:
            worse = True
            xs = [x for x in p["points"] if x["verdict"] == pairs.WORSE]
            gaps = [f"{x['mean']:+.3f} nats, interval {x['low']:+.3f} to {x['high']:+.3f}" if k == 0
                    else f"{x['mean']:+.3f}, {x['low']:+.3f} to {x['high']:+.3f}" for k, x in enumerate(xs)]
            parts.append(f"worse ({gaps[0]})" if one else
                         "worse at " + fmt.listed([f"{fmt.count(x['target_budget'])} ({g})" for x, g in zip(xs, gaps)]))
        if v["better"]:
            parts.append(f"better{'' if one else ' at ' + pv._sizes(v['better'])}")
        if v["unresolved"]:
            parts.append(f"not resolved{'' if one else ' at ' + pv._sizes(v['unresolved'])}")
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]
        bits.append(f"in {name} the deeper network is {joined}")
    points = [x["verdict"] for p in r["pairs"] for x in p["points"]]
    n_better = points.count(pairs.BETTER)
    narrow = widths_below()
    crossed = pv.crossing(r)
    head = (("neither pair crosses" if len(r["pairs"]) == 2 else "no pair crosses") if not crossed else
            pv.of(len(crossed), len(r["pairs"]), "pair", "crosses"))
    head = (f"In {design_name()}, {head} by the declared rule: {where} non-embedding parameters the deeper network "
            f"is {counts_phrase(r)}"
            + (", while the paper reports that at small sizes the two perform comparably; "
               f"{narrow[0]} of the {narrow[1]} networks are narrower than 200, the width the paper's Figure 1 calls "
               "sufficient." if worse and not n_better
               else "."))
    precision = pv.precision_clause(r)
    if precision and len(points) > 1:
        head += f" {fmt.capitalised(precision)}."
    planned = sorted(get_preset(pv.lead()).budgets)
    missing = [b for b in planned if b not in r["budgets"]]
    text = f"{head} {fmt.capitalised('; '.join(bits))}."
    if missing:
        text += (f" {pv._sizes(missing)} {'does' if len(missing) == 1 else 'do'} not have all {'its' if len(missing) == 1 else 'their'} runs yet"
                 + (", so no transition can be read." if len(r["budgets"]) == 1 else "."))
    k = pv.split_points(pv.lead())  # the full account follows in the chapter
    if k:
        text += (f" {fmt.capitalised(pv.words(k))} of the {pv.words(len(points))} points rest{'s' * (k == 1)} on seeds that "
                 "split at their chosen rate (see below).")
    return {"all": text, "head": head, "detail": text[len(head):].strip()}[part]


def design_name(sweep: str | None = None) -> str:
    """A design by its name and what sets it apart, for the places that first name it: 'the untied
    doubling-pairs sweep, whose output layer is a matrix of its own'."""
    sweep = sweep or pv.lead()
    return pv.NAMES[sweep] + (", whose output layer is the transposed input embedding" if tied(sweep) else
                              ", whose output layer is a matrix of its own")


def lead_sentence() -> str:
    """Which design the verdicts that follow are, and where the other one is read."""
    text = f"The verdicts below are those of {design_name()}"
    if second_reading() is None:
        return text + "."
    return text + f"; {pv.NAMES[pv.second()]} is read apart, in the section on tied and untied output layers."


def counts_phrase(r: dict) -> str:
    """A reading's (pair, size) points counted by verdict, after 'the deeper network is': 'worse at
    all ten (pair, size) points', 'worse at seven of the ten (pair, size) points, not resolved at
    three and better at none'."""
    points = [x["verdict"] for p in r["pairs"] for x in p["points"]]
    n = {k: points.count(k) for k in (pairs.WORSE, pairs.UNRESOLVED, pairs.BETTER)}
    total = len(points)
    every = f"all {pv.words(total)} (pair, size) points" if total > 2 else \
        "both (pair, size) points" if total == 2 else "the one (pair, size) point"
    for k, word in ((pairs.WORSE, "worse"), (pairs.BETTER, "better")):
        if n[k] == total:
            return f"{word} at {every}"
    return (f"worse at {pv.none_or(n[pairs.WORSE])} of the {pv.words(total)} (pair, size) points, not resolved at "
            f"{pv.none_or(n[pairs.UNRESOLVED])} and better at {pv.none_or(n[pairs.BETTER])}")


def takeaway_sentence(r: dict | None = None) -> str:
    """The doubling sweep in one sentence for the Takeaway: at how many of its sizes it has all its
    runs, whether that can show a transition, and whether the deeper network is resolved better
    anywhere."""
    r = r or reading()
    n, total = len(r["budgets"]), len(get_preset(pv.lead()).budgets)
    if not n:
        return f"{fmt.capitalised(pv.NAMES[pv.lead()])} has no size with all its runs yet."
    points = [x["verdict"] for p in r["pairs"] for x in p["points"]]
    name = pv.NAMES[pv.lead()]
    where = (f"At all {pv.words(n)} sizes of {name}" if n == total else
             f"At the {pv.words(n)} of its {pv.words(total)} sizes where {name} has all its runs")
    against = (", where the paper has the two performing comparably at smaller sizes and the deeper one better at "
               "larger ones" if pairs.WORSE in points and pairs.BETTER not in points else "")
    precision = pv.precision_clause(r)
    return (where + (", too few to show a transition," if n == 1 else ",")
            + f" the deeper network of a pair is resolved {counts_phrase(r)}{against}."
            + (f" {fmt.capitalised(precision)}." if precision and len(points) > 1 else ""))



def widths_below(sweep: str | None = None, limit: int = 200) -> tuple[int, int]:
    """How many of the sweep's shapes (depth, budget) have a width below ``limit``, of how many."""
    sweep = sweep or pv.lead()
    preset = get_preset(sweep)
    w = [sizes.width_for_budget(b, L, preset.head_size) for b in preset.budgets for L in preset.depths]
    return sum(x < limit for x in w), len(w)


def _machine(hw: dict) -> str:
    """'a 2-core CPU', 'one NVIDIA H200' (a device's name without its memory: 'NVIDIA H100 80GB
    HBM3' is 'NVIDIA H100')."""
    if hw.get("backend") == "cpu":
        return f"a {hw.get('cpu_count') or hw.get('devices')}-core CPU"
    n = hw.get("devices", 1)
    kind = re.sub(r"\s+\d+\s*GB\b.*$", "", hw.get("device_kind") or hw.get("backend", "").upper())
    return f"{pv.words(n) if n > 1 else 'one'} {kind}"


def _nats(x: float) -> str:
    """A small difference in nats to two significant digits: '0.00027', and below 10⁻⁴ as a
    reader writes it ('7.2 × 10⁻⁶')."""
    if x >= 1e-4:
        return f"{x:.2g}" if x < 0.01 else f"{x:.3f}"
    return fmt.sci(math.log10(x), 2, superscript=True) if x > 0 else "0"


def _which_runs(runs: list[dict], by_key: dict) -> str:
    """The runs of a parity check by shape, seeds and rates: 'seeds 0 and 1 of the 2-layer network
    at 100K at the rates 0.001, 0.002 and 0.004'."""
    shapes: dict[tuple, dict] = {}
    for x in runs:
        r = by_key.get(x.get("key"))
        if r is not None:
            g = shapes.setdefault((r["depth"], r["target_budget"]), {"seeds": set(), "lrs": set()})
            g["seeds"].add(r["seed"])
            g["lrs"].add(r["lr"])
    out = []
    for (depth, b), g in sorted(shapes.items()):
        seeds = sorted(g["seeds"])
        lrs = sorted(g["lrs"])
        out.append(f"{'seed' if len(seeds) == 1 else 'seeds'} {fmt.listed([str(x) for x in seeds])} of the "
                   f"{depth}-layer network at {fmt.count(b)}"
                   + (f" at the rates {fmt.listed([f'{x:g}' for x in lrs])}" if len(lrs) > 1 else f" at {lrs[0]:g}"))
    return "; ".join(out)


def hardware_sentence(sweep: str | None = None) -> str:
    """:func:`hardware_parts` in one paragraph."""
    return " ".join(x for x in hardware_parts(sweep) if x)


def hardware_parts(sweep: str | None = None) -> tuple[str, str]:
    """Where the stored runs trained, and, when some trained elsewhere than the rest, how closely
    runs trained again on another machine match their stored losses (the sweep's parity file:
    benchmarks/device_parity.py), set against the spread between seeds of one shape; then, apart,
    what a difference of that size could do to the gaps that pair runs from two machines ('' when
    none does)."""
    sweep = sweep or pv.lead()
    records = stored_results(sweep)
    by_machine: dict[str, list[dict]] = {}
    for r in records:
        by_machine.setdefault(_machine(r.get("hardware") or {}), []).append(r)
    dtypes = sorted({r["config"].get("dtype", "float32") for r in records})
    name = pv.NAMES.get(sweep, sweep)
    if len(by_machine) == 1:
        return f"{fmt.capitalised(name)} trains on {next(iter(by_machine))} in {' and '.join(dtypes)}.", ""
    main, *rest = sorted(by_machine, key=lambda m: -len(by_machine[m]))
    parts = [f"{len(by_machine[main])} of its runs on {main}"]
    for m in rest:
        sizes = sorted({r["target_budget"] for r in by_machine[m]})
        where = "; ".join(
            f"{sum(r['target_budget'] == b for r in by_machine[m])} of the "
            f"{sum(r['target_budget'] == b for r in records)} runs at {fmt.count(b)}" for b in sizes)
        parts.append(f"{len(by_machine[m])} on {m} ({where})")
    text = f"{fmt.capitalised(name)} trains in {' and '.join(dtypes)}: {fmt.listed(parts)}."
    try:
        parity = packaged_json("sweeps", f"{sweep}.parity.json")
    except FileNotFoundError:
        return text + " No run was trained on both to compare them.", ""
    worst = parity["largest_abs_diff"]["eval_loss"]
    runs = parity["runs"]
    by_key = {r.get("key"): r for r in records}
    backends = sorted({x["device"]["backend"] for x in runs if x.get("device")})
    again = (rest[0] if len(rest) == 1 else
             f"a {backends[0].upper()}" if len(backends) == 1 else "another machine")
    which = _which_runs(runs, by_key)
    text += (f" Trained again on {again}, {pv.words(len(runs))} runs first trained on {main}"
             f"{f' ({which})' if which else ''} matched their held-out losses within {_nats(worst)} nats, against "
             f"a median spread of {_seed_std(sweep):.3f} nats between seeds of one shape: there the machine moves a "
             "result far less than the seed does.")
    machine = {r.get("key"): _machine(r.get("hardware") or {}) for r in records}
    r = pv.read(sweep)
    gaps = {}  # each gap of the verdicts: whether its two runs trained on two machines
    for p in r["pairs"]:
        for b in r["budgets"]:
            for rec in records:
                if rec.get("chosen") and rec["target_budget"] == b and rec["depth"] == p["shallow"]:
                    deep = [x for x in records if x.get("chosen") and x["target_budget"] == b
                            and x["depth"] == p["deep"] and x["seed"] == rec["seed"]]
                    if deep:
                        gaps.setdefault(b, []).append(machine[rec.get("key")] != machine[deep[0].get("key")])
    mixed = sorted(b for b, v in gaps.items() if any(v))
    if not mixed:
        return text, ""
    ends = [abs(e) for p in r["pairs"] for x in p["points"] if x["target_budget"] in mixed
            and x["half_width"] is not None and x["verdict"] != pairs.UNRESOLVED
            for e in (x["low"], x["high"]) if (e > 0) == (x["mean"] > 0)]
    if not ends:
        return text, ""
    close = min(ends)
    every = all(all(gaps[b]) for b in mixed)
    return text, (f"At {pv._sizes(mixed)}, where {'every gap pairs' if every else 'some gaps pair'} runs from two "
                   f"machines, the resolved interval end nearest zero lies {close:.3f} nats from it; a machine "
                   f"difference of {_nats(worst)} nats in each run moves a gap by at most {_nats(2 * worst)} nats, "
                   + ("less than that: it would move no verdict there, if the runs of those shapes differ between "
                      "machines as little as the runs trained on both, though none of them was trained on both."
                      if close > 2 * worst else
                      "enough to move a verdict there; none of the runs of those shapes was trained on both."))


def _versions(records: list[dict]) -> tuple[set[str], list[dict]]:
    """The versions of the code that trained ``records`` (their commits), and the runs that record
    uncommitted changes beside theirs (a commit marked '+dirty')."""
    commits = [r.get("git_commit") or "" for r in records]
    return ({c.split("+")[0] for c in commits},
            [r for r, c in zip(records, commits) if c.endswith("+dirty")])


def _hours(records: list[dict]) -> float:
    """The runs' hours of training, summed."""
    return sum(r.get("wall_seconds") or 0 for r in records) / 3600


def versions_sentence(sweep: str | None = None) -> str:
    """Which versions of the code trained the stored runs: how many, and how many runs record
    uncommitted changes beside their version (a commit marked '+dirty'), by size."""
    sweep = sweep or pv.lead()
    records = stored_results(sweep)
    versions, dirty = _versions(records)
    text = (f"Each run records the version of the code that trained it; the {len(records)} runs of "
            f"{pv.NAMES.get(sweep, sweep)} come from {pv.counted(len(versions), 'version')}.")
    if not dirty:
        return text
    by = {}
    for r in dirty:
        by[r["target_budget"]] = by.get(r["target_budget"], 0) + 1
    total = {b: sum(r["target_budget"] == b for r in records) for b in by}
    where = fmt.listed([("every run" if n == total[b] else f"{n} of the {total[b]} runs") + f" at {fmt.count(b)}"
                        for b, n in sorted(by.items())])
    return text + (f" Of them, {len(dirty)} ({where}) were trained with edits to the code not yet recorded in its "
                   "history, so they can be traced only to the version those edits were made on.")


def _embedding_facts(sweep: str, r: dict) -> dict | None:
    """For one design read by the rule (``r``): the embeddings' share of every parameter at the sizes
    read, how much larger the shallower network of each pair is counting every parameter, the
    widths and the vocabulary; None when nothing is read."""
    records = [x for x in stored_results(sweep) if x.get("chosen")]
    total = {(x["depth"], x["target_budget"]): x["total_params"] for x in records}
    shares = [total[(p["shallow"], x["target_budget"])] / total[(p["deep"], x["target_budget"])] - 1
              for p in r["pairs"] for x in p["points"]]
    if not shares:
        return None
    read = [x for x in records if x["target_budget"] in r["budgets"]]
    embed = [x["parameters"]["embeddings"] / x["parameters"]["total"] for x in read]
    return {"shares": shares, "embed": (min(embed), max(embed)), "widths": sorted({x["width"] for x in read}),
            "vocab": records[0]["config"]["vocab_size"]}


def _larger(shares: list[float], design: str, first: bool = True) -> str:
    """Where the shallower network is the larger counting every parameter, in a clause: 'at every
    point read in the untied design, by 2% to 27%'."""
    larger = sum(v > 0 for v in shares)
    read = " read" if first else ""
    if larger == len(shares):
        return f"at every point{read} in the {design} design, by {min(shares):.0%} to {max(shares):.0%}"
    return (f"at {pv.words(larger)} of the {pv.words(len(shares))} points{read} in the {design} design, from {abs(min(shares)):.0%} "
            f"{'smaller' if min(shares) < 0 else 'larger'} to {max(shares):.0%} larger")


def embedding_sentence(r: dict | None = None) -> str:
    """What the non-embedding size leaves out at these small shapes, for the design that leads and,
    in brackets, the other: the embeddings' share of the parameters (an untied output layer counts
    with them), how much larger the shallower (wider) network of each pair read is counting every
    parameter, and the rank its output is capped at (its width, against the vocabulary), whether
    read through the tied embedding or an output layer of its own."""
    r = r or reading()
    lead = _embedding_facts(pv.lead(), r)
    if lead is None:
        return ""
    u = second_reading()
    other = _embedding_facts(pv.second(), u) if u else None
    word = {True: "tied", False: "untied"}
    mine, theirs = word[tied(pv.lead())], word[tied(pv.second())]
    (lo, hi), vocab, widths = lead["embed"], lead["vocab"], lead["widths"]
    share = f"{lo:.0%} to {hi:.0%} of them in the {mine} design"
    if not tied(pv.lead()):
        share += ", whose output layer counts with them"
    if other:
        share += f", and {other['embed'][0]:.0%} to {other['embed'][1]:.0%} in the {theirs} one"
    who = f"the shallower network is the larger {_larger(lead['shares'], mine)}"
    if other:
        who += f", and {_larger(other['shares'], theirs, False).replace(' design', ' one', 1)}"
    through = ("read through its embedding or through an output layer of its own" if other else
               "read through its embedding" if tied(pv.lead()) else "read through an output layer of its own")
    return (f"The paper chose a vocabulary of {vocab:,} tokens so that the embeddings would be a small fraction of "
            f"the parameters (its section 5); at these sizes they are {share}. Counting every parameter, {who}; and "
            f"a network's output, {through}, has rank at most its width ({widths[0]} to {widths[-1]} here, against "
            f"{vocab:,} tokens). Both tend to favour the wider, shallower network, so a gap at these sizes measures "
            "depth together with them.")


def output_clause(sweep: str | None = None) -> str:
    """How each design reads its output, the leading one first, for the runs section's description
    of the network."""
    sweep = sweep or pv.lead()
    own = "an output layer of its own (a matrix of vocabulary by width)"
    via = "the output read through the token embedding"
    if sweep not in pv.DESIGNS:
        return via if tied(sweep) else own
    other = next(x for x in pv.DESIGNS if x != sweep)
    kind = {True: ("tied", "the token embedding, transposed"), False: ("untied", "a matrix of vocabulary by width")}
    return (f"an output layer: in the {kind[tied(sweep)][0]} design, which leads this chapter, {kind[tied(sweep)][1]}; "
            f"in the {kind[tied(other)][0]} design, {kind[tied(other)][1]}")


def later_seeds() -> tuple[int, ...]:
    """The seeds that did not choose the learning rates."""
    preset = get_preset(pv.lead())
    return tuple(s for s in preset.seeds if s >= preset.select_seeds)


def numbers() -> dict:
    """Every value and sentence the chapter's prose quotes, from the stored runs."""
    r = reading()
    preset = get_preset(pv.lead())
    others_seeds = later_seeds()
    others = pv.read(pv.lead(), seeds=others_seeds)
    rule = r["rule"]
    narrow = widths_below()
    ranges = {tuple(p): authors_range(*p) for p in rule["pairs"]}
    bd = bounds_rows()
    sep = [x for x in bd if x["separated"] != "not separated"]
    old = bounds_rows("cpu-fig2", budgets=(max(get_preset("cpu-fig2").budgets),))
    one_two = next(x for x in old if x["pair"] == "1 vs 2")
    earlier = earlier_rows()
    return {
        "fx_verdict": verdict_sentence(r, others, others_seeds),
        "fx_result": result_sentence(r), "fx_result_head": result_sentence(r, "head"),
        "fx_result_detail": result_sentence(r, "detail"), "fx_split": pv.split_sentence(pv.lead()),
        **{f"fx_{PROVENANCE_PREFIX[d]}_{part}": text for d in pv.DESIGNS for part, text in provenance_parts(d).items()},
        "fx_lone": pv.lone_seed_sentence(pv.lead()), "fx_repeats": _repeats(pv.lead()),
        "fx_lead_intro": lead_sentence(),
        "fx_spread_terms": pv.spread_terms(pv.lead()), "fx_second_design": second_design_sentence(),
        "fx_second": second_sentence(), "fx_second_notes": second_notes(),
        "fx_pilot": pilot_sentence(r, "head"), "fx_pilot_why": pilot_sentence(r, "why"),
        "fx_gpu_pilot": pv.gpu_pilot_sentence(), "fx_authors_reach": authors_reach(r),
        "fx_takeaway": takeaway_sentence(r),
        "fx_regime": pv.regime_summary(r),
        "fx_paper_form": pv.paper_form_sentence(r), "fx_caption": caption(r, others, others_seeds),
        # where a pair crosses (the result's counts say whether any does)
        "fx_transitions": pv.transition_summary(r) if pv.crossing(r) else "",
        "fx_power": pv.power_sentence(r, planned=len(r["rule"]["pairs"]) * len(get_preset(pv.lead()).budgets)),
        "fx_others": pv.seeds_sentence(r, others, others_seeds), "fx_extension": pv.extension_sentence(),
        "fx_sizes": pv.size_sentence(r, preset.head_size),
        "fx_share": rule["half_width_share"],
        "fx_tokens_per_param_small": rule["tokens_per_run"] / min(preset.budgets),
        "fx_tokens_per_param_large": rule["tokens_per_run"] / max(preset.budgets),
        "fx_largest": fmt.count(max(preset.budgets)),
        "fx_narrow": narrow[0], "fx_shapes": narrow[1],
        "fx_sep_detail": separated_text(sep, preset.head_size) or "none",
        "fx_old_cross_text": pv.of(sum(x["crosses by the rule"] == "yes" for x in earlier), len(earlier), "pair", "crosses"),
        "fx_reproduced": reproduced_sentence(r, earlier),
        "fx_budgets": pv._sizes(preset.budgets), "fx_n_seeds": len(preset.seeds),
        "fx_n_select": preset.select_seeds, "fx_n_select_words": pv.words(preset.select_seeds),
        "fx_n_seeds_words": pv.words(len(preset.seeds)), "fx_tokens_m": rule["tokens_per_run"] / 1e6,
        "fx_rates": ", ".join(f"{x:g}" for x in preset.lrs), "fx_level": rule["level"],
        "fx_target": rule["half_width_target"],
        "fx_authors": "; ".join(f"{s} vs {d} between {fmt.count(lo)} and {fmt.count(hi)}"
                                for (s, d), (lo, hi) in ranges.items()),
        "fx_sep_n": len(sep), "fx_sep_points": len(bd),
        "fx_sep_n_words": f"{pv.none_or(len(sep))} of them",
        "fx_sep_text": ("; ".join(f"{x['pair']} at {fmt.count(x['budget'])}: {x['separated']}" for x in sep)
                        or "at none of them"),
        "fx_old_upper": one_two["shallow upper"], "fx_old_lower": one_two["deep lower"],
        "fx_old_budget": fmt.count(one_two["budget"]),
        "fx_old_n": len(earlier), "fx_old_cross": sum(x["crosses by the rule"] == "yes" for x in earlier),
        "fx_gpu_lead": -min(x["mean"] for x in pv.read_by_rule("gpu-slice")["pairs"][0]["points"]),
        "fx_embedding": embedding_sentence(r), "fx_output": output_clause(),
        "fx_corpus_version": corpora.LINUX_DOC_RECORD["version"],
        "fx_std_fig2": _seed_std("cpu-fig2"), "fx_std_mini": _seed_std("mini"), "fx_std_gpu": _seed_std("gpu-slice"),
    }


# ---------------------------------------------------------------------------------------------
# The pilot that set the run length, and why the sweep fell short of its precision

#: the pilot's stored sweeps, by run length, as the rule file names them
PILOTS = ("cpu-pairs-pilot-2m", "cpu-pairs-pilot-1m")


def pilot_rows() -> list[dict]:
    """What each pilot measured (:func:`dwlib.experiments.pairs.pilot`): tokens a run, seeds, the
    mean gap of its pair and its paired half-width, and the one rate it trained at."""
    level = pairs.rule(pv.lead())["level"]
    out = []
    for name in PILOTS:
        recs = stored_results(name)
        shallow, deep = get_preset(name).depths
        p = pairs.pilot(recs, shallow, deep, level)
        out.append({**p, "sweep": name, "shallow": shallow, "deep": deep,
                    "budget": recs[0]["target_budget"], "lr": sorted({r["lr"] for r in recs})})
    return sorted(out, key=lambda x: -x["tokens"])


def rate_spread(sweep: str | None = None) -> dict:
    """For each peak rate, the median over the sweep's shapes of how far apart the rate-choosing
    seeds land (largest minus smallest held-out loss), from every stored run at that rate."""
    sweep = sweep or pv.lead()
    preset = get_preset(sweep)
    select = set(preset.seeds[:preset.select_seeds])
    by: dict[tuple, list] = {}
    for r in stored_results(sweep):
        if r.get("status") == "completed" and r.get("eval_loss") is not None and r["seed"] in select:
            by.setdefault((r["lr"], r["target_budget"], r["depth"]), []).append(r["eval_loss"])
    spread: dict[float, list] = {}
    for (lr, _, _), v in by.items():
        if len(v) == len(select):
            spread.setdefault(lr, []).append(max(v) - min(v))
    return {lr: {"median": float(np.median(v)), "shapes": len(v)} for lr, v in sorted(spread.items())}


def pilot_sentence(r: dict | None = None, part: str = "all") -> str:
    """The pilot's half-widths against the sweep's, and the likely reason for the difference (the
    rates the sweep chose against the pilot's), said as likely, from the stored runs, with the
    points the rate does not explain. ``part``: "head" (the pilot and the run length it set),
    "why" (the sweep's half-widths against the pilot's, and why), or "all"."""
    text = _pilot_text(r or reading())
    i = text.find(" The sweep's half-width")
    head, why = (text, "") if i < 0 else (text[:i], text[i + 1:])
    return {"all": text, "head": head,
            "why": why or "No point of the sweep is read yet to set against the pilot."}[part]


def _pilot_text(r: dict) -> str:
    rows = pilot_rows()
    first = rows[0]
    lengths = fmt.listed([f"{x['half_width']:.3f} nats at {x['tokens'] / 1e6:.0f}M tokens a run" for x in rows])
    pilot_lr = first["lr"][0] if len(first["lr"]) == 1 else None
    within = [x for x in rows if x["half_width"] <= r["rule"]["half_width_target"]]
    text = (f"The run length came from a pilot: the pair {first['shallow']} vs {first['deep']} at "
            f"{fmt.count(first['budget'])}, {pv.words(first['seeds'])} seeds"
            + (f" at one rate, {pilot_lr:g}" if pilot_lr is not None else "")
            + f". Its paired half-width was {lengths}, so "
            + (f"{within[0]['tokens'] / 1e6:.0f}M tokens a run, the one length within the target, was taken."
               if len(within) == 1 else "the shorter of the lengths within the target was taken."))
    pts = [(x, p) for p in r["pairs"] for x in p["points"] if x["half_width"] is not None]
    if not pts:
        return text
    wide = [(x, p) for x, p in pts if x["half_width"] > first["half_width"]]
    wider = [x["half_width"] for x, _ in wide]
    if not wider:
        return text + " The sweep's half-widths are as small as the pilot's or smaller."
    text += (f" The sweep's half-width is wider than the pilot's at {pv.count_of(len(wider), len(pts), 'point')} "
             f"(up to {max(wider):.3f} nats)")
    chosen = sorted({g["lr"] for g in pv.seed_groups(pv.lead())})
    spread = rate_spread()
    if pilot_lr is None or chosen == [pilot_lr] or pilot_lr not in spread:
        return text + "."
    other = [lr for lr in chosen if lr != pilot_lr and lr in spread]
    where = ("every shape at the sizes read chose " + fmt.listed([f"{x:g}" for x in chosen])
             if pilot_lr not in chosen else "some shapes chose " + fmt.listed([f"{x:g}" for x in other]))
    # a rate counts as noisier only where its seeds land clearly farther apart: twice the pilot
    # rate's spread and more than the design's target
    noisier = [lr for lr in other
               if spread[lr]["median"] > max(2 * spread[pilot_lr]["median"], r["rule"]["half_width_target"])]
    if not noisier:  # no rate's seeds land clearly farther apart: nothing points to the rate
        return text + "."
    lr = noisier[0]
    # the wider points the rate cannot explain: both networks at the pilot's own rate
    rate = {(g["depth"], g["target_budget"]): g["lr"] for g in pv.seed_groups(pv.lead())}
    same = [(x, p) for x, p in wide if rate.get((p["shallow"], x["target_budget"])) == pilot_lr
            == rate.get((p["deep"], x["target_budget"]))]
    other_design = tied(PILOTS[0]) != tied(pv.lead())
    why = "The learning rate is a likely part of the reason" if same else "The likely reason is the learning rate"
    text += (f". {why}: "
             f"the pilot trained at {pilot_lr:g}, while {where}, and over the shapes trained the two rate-choosing "
             f"seeds land a median of {spread[lr]['median']:.3f} nats apart at {lr:g} against "
             f"{spread[pilot_lr]['median']:.3f} at {pilot_lr:g}; a rate at which runs vary more needs more seeds for "
             "the same precision.")
    if same:
        by: dict[float, list[str]] = {}
        for x, p in same:
            by.setdefault(x["target_budget"], []).append(f"{p['shallow']} vs {p['deep']}")
        at = "; ".join(f"{fmt.listed(v)} at {fmt.count(b)}" for b, v in sorted(by.items()))
        text += (f" It does not explain {'that point' if len(wide) == 1 else 'every such point'}: at "
                 f"{pv.count_of(len(same), len(wide), 'point')} wider than the pilot's ({at}) both networks trained "
                 f"at {pilot_lr:g}, the pilot's own rate")
        text += "."
    if other_design:
        text += (f" The pilot's output layer {_pilot_output()}, so its half-width was never a direct forecast for "
                 "this design.")
    return text


def _pilot_output() -> str:
    """How the pilot read its output, after 'the pilot's output layer'."""
    return "was tied to the input embedding" if tied(PILOTS[0]) else "was a matrix of its own"


def seed_table() -> pd.DataFrame:
    """The held-out loss of every seed of every shape at the sizes the verdicts read, at the
    shape's chosen rate, the rate-choosing seeds marked: where one shape's seeds split."""
    preset = get_preset(pv.lead())
    rows = []
    for g in pv.seed_groups(pv.lead()):
        losses = {**g["select"], **g["others"]}
        row = {"size": fmt.count(g["target_budget"]), "depth": g["depth"],
               f"width (* below {WIDE})": f"{g['width']}{'*' if g['width'] < WIDE else ''}", "rate": f"{g['lr']:g}"}
        row |= {f"seed {s}{' (chose the rate)' if s < preset.select_seeds else ''}": round(v, 3)
                for s, v in sorted(losses.items())}
        rows.append(row)
    return pd.DataFrame(rows).set_index(["size", "depth"])


# ---------------------------------------------------------------------------------------------
# One sentence for the introduction


def fit_reach_clause(r: dict | None = None, sizes: str = "the sizes read") -> str:
    """Where the authors' fit places each pair's transition against the sizes read in full, and
    what the rule's verdicts inside a range leave of it (the fit is an expectation, not part of the
    rule): 'the authors' fit places 2 vs 4's transition between 714K and 1.78M and 4 vs 8's between
    1.78M and 5.56M; inside 2 vs 4's range the sizes read are 800K and 1.6M, where the deeper
    network is worse at both, so a 2 vs 4 transition, if there is one, lies above 1.6M: between it
    and 1.78M, or beyond the range'. By the rule a transition needs the deeper network ahead at
    every larger size read, so none lies at or below a size where it is resolved worse."""
    r = r or reading()
    top = max(r["budgets"]) if r["budgets"] else 0.0
    ranges = sorted((authors_range(*p), p) for p in (tuple(q) for q in r["rule"]["pairs"]))
    parts = [f"{s} vs {d}'s{' transition' if i == 0 else ''} between {fmt.count(lo)} and {fmt.count(hi)}"
             for i, ((lo, hi), (s, d)) in enumerate(ranges)]
    text = ("the authors' fit, read as placing a pair's transition between the sizes at which its two depths are "
            "optimal (an expectation from other scales, not a verdict), places " + fmt.listed(parts))
    if not top:
        return text
    if top < ranges[0][0][0]:
        return text + f", above {sizes}, so they test the paper's first regime, not its transition"
    points = {(p["shallow"], p["deep"]): p["points"] for p in r["pairs"]}
    notes = []
    for (lo, hi), (s, d) in ranges:
        inside = [x for x in points.get((s, d), []) if lo <= x["target_budget"] <= hi]
        if not inside:
            if lo > top:
                notes.append(f"{s} vs {d}'s range lies above {sizes}")
            continue
        at = pv._sizes([x["target_budget"] for x in inside])
        worse = [x for x in inside if x["verdict"] == pairs.WORSE]
        better = [x for x in inside if x["verdict"] == pairs.BETTER]
        said = (("worse at both" if len(inside) == 2 else "worse at each" if len(inside) > 2 else "worse")
                if len(worse) == len(inside) else
                f"better at {pv._sizes([x['target_budget'] for x in better])}" if better else
                f"worse at {pv._sizes([x['target_budget'] for x in worse])} and not resolved elsewhere" if worse else
                "not resolved")
        note = (f"inside {s} vs {d}'s range {sizes} {'are' if len(inside) > 1 else 'is'} {at}, where the deeper "
                f"network is {said}")
        last_worse = max((x["target_budget"] for x in worse), default=None)
        if last_worse is not None and not better:
            note += (f", so a {s} vs {d} transition, if there is one, lies above {fmt.count(last_worse)}"
                     + (f": between it and {fmt.count(hi)}, or beyond the range" if last_worse < hi else
                        ", beyond the range"))
        notes.append(note)
    return text + ("; " + "; ".join(notes) if notes else f", within {sizes}")


def _crossings(r: dict) -> tuple[int, int]:
    """How many doubling pairs of all stored sweeps cross by the declared rule, of how many: the
    declared sweep's (``r``) and the earlier sweeps' (:func:`earlier_rows`)."""
    earlier = earlier_rows()
    return (len(pv.crossing(r)) + sum(x["crosses by the rule"] == "yes" for x in earlier),
            len(r["pairs"]) + len(earlier))


def intro_short() -> str:
    """The introduction's Takeaway on the book's own training, in one sentence (its opening gives
    the counts): whether any pair of the stored sweeps crosses by the declared rule."""
    r = reading()
    n, total = _crossings(r)
    if not n:
        return ("In none of the book's trained sweeps does a doubling pair cross by the declared rule, so the book "
                "cannot confirm the transitions of the paper's Figure 2 at the sizes it trains; the experiments "
                "chapter gives the evidence and its limits.")
    return (f"In the book's trained sweeps {pv.of(n, total, 'doubling pair', 'crosses')} by the declared rule; the "
            "experiments chapter gives the evidence and its limits.")


def intro_sentence(head: bool = True) -> str:
    """What the book's own trained sweeps show about the paper's Figure 2, for the introduction,
    no stronger than the evidence: whether any stored sweep crosses by the declared rule's
    criteria (``head``; left out where the page has said it, :func:`intro_short`); in the sweep
    designed for the rule, its (pair, size) points counted by verdict at the sizes read in full,
    and the precision reached."""
    r = reading()
    n, total = _crossings(r)
    said = head
    if n:
        head = ("The book's trained sweeps show the transitions of the paper's Figure 2 only in part: by the "
                f"declared rule's criteria, {pv.of(n, total, 'pair', 'crosses')}.")
    else:
        head = ("The book's trained sweeps show no transition of the paper's Figure 2: no pair crosses by the "
                "declared rule's criteria.")
    if not r["budgets"]:
        return head
    where = pv.span(r["budgets"], get_preset(pv.lead()).budgets)
    counts = f"the deeper network is {counts_phrase(r)}"
    power, target = r["power"], r["rule"]["half_width_target"]
    precision = (f"Its declared precision, a half-width of at most {target:g} nats, is reached at "
                 f"{pv.words(power['within'])} of the {pv.words(power['points'])} points")
    if not pv.meets_target(r):
        precision += f", short of the {pv.share_words(r['rule']['half_width_share'])} the rule asks for"
        then = pv.precision_consequence(r)
        precision += (", but " if then.startswith("every") else "; ") + then if then else ""
    precision += pv.extension_clause(r)
    k = pv.split_points(pv.lead())
    if k:
        precision += (f". At {pv.counted(k, 'point')} the seeds of a network fall into two groups at its "
                      "chosen rate")
    every = len(r["budgets"]) == len(get_preset(pv.lead()).budgets)
    scope = "" if every else (" (the only size with all its runs)" if len(r["budgets"]) == 1 else
                              " (the sizes with all their runs)")
    body = f"{where} non-embedding parameters{scope}, {counts}. {precision}."
    design = (" (the design with the output layer tied to the input embedding)" if tied(pv.lead()) else
              " (the design with an output layer of its own)")
    return (head + f" In the book's main sweep{design}, " if said
            else f"In the book's main sweep, read by a rule declared before its runs{design}, ") + body


# ---------------------------------------------------------------------------------------------
# The other design of the CPU doubling pairs (the rule file declares two: the output layer tied to
# the input embedding, then untied), reported beside the one that leads (:func:`pv.lead`)


def tied(sweep: str) -> bool:
    """Whether a design's output layer is the transposed input embedding."""
    return get_preset(sweep).train.get("tied", True)


def second_reading() -> dict | None:
    """The design that does not lead read by the declared rule (:func:`dwlib.book.pairs_verdicts.read`),
    or None while none of its runs is published."""
    try:
        return pv.read(pv.second())
    except InputError:  # not published yet
        return None


def _widths(preset, b: float, depths) -> str:
    """The widths of the networks of ``depths`` at target budget ``b``, those below WIDE marked '*'."""
    return ", ".join(f"{w}{'*' if w < WIDE else ''}" for w in (sizes.width_for_budget(b, L, preset.head_size)
                                                                for L in depths))


def points_table(r: dict, sweep: str | None = None) -> pd.DataFrame:
    """Every (pair, size) point of a reading of ``sweep``: both widths (narrow ones marked), the
    mean deeper-minus-shallower gap, its paired 95% interval and half-width (nats), and the rule's
    verdict, one row each."""
    sweep = sweep or pv.lead()
    said = SIDES
    level = f"{r['rule']['level']:.0%}"
    preset = get_preset(sweep)
    rows = [{"pair": f"{p['shallow']} vs {p['deep']}", "size": fmt.count(x["target_budget"]),
             f"widths (* below {WIDE})": _widths(preset, x["target_budget"], (p["shallow"], p["deep"])),
             "mean gap": f"{x['mean']:+.3f}",
             f"{level} interval": (f"{x['low']:+.3f} to {x['high']:+.3f}" if x["half_width"] is not None else "none"),
             "half-width": (f"{x['half_width']:.3f}" if x["half_width"] is not None else "none"),
             "verdict": said[x["verdict"]]}
            for p in r["pairs"] for x in p["points"]]
    return pd.DataFrame(rows).set_index(["pair", "size"]) if rows else pd.DataFrame()


def second_table() -> pd.DataFrame:
    """The other design's points (:func:`points_table`); empty while none is published."""
    u = second_reading()
    return points_table(u, pv.second()) if u else pd.DataFrame()


def second_design_sentence() -> str:
    """What the two designs are, why the rule file added the second and how the book reads them:
    which leads, and why."""
    first, second = pv.DESIGNS
    n = pv.words(len(pv.read(first)["budgets"]))
    if pv.lead() == first:
        return ("A second design was declared in writing before any of its runs: the same sweep with an output "
                "layer of its own instead of one tied to the input embedding. Its reasons are the seed split above "
                "and the vocabulary chapter's untied control, whose seeds lay close together. It is read by the same "
                "rule on its own and never pooled with the tied design. It leads this chapter once it has every seed "
                f"of every depth at as many sizes as the tied design ({n}).")
    return ("Two designs of this sweep were declared in writing, each before its runs. The first tied the output "
            "layer to the input embedding; "
            "at two of its shapes the seeds split at the chosen rate. The second, the design above, was declared after "
            "the first design's results had been read and before any of its own runs: the same sweep with an output "
            "layer of its own, prompted by that split and by the vocabulary chapter's untied control, whose seeds lay "
            "close together. Each is read by the same rule on its own and never pooled with the other. The same "
            "declaration made the second the chapter's main design once it had every seed at as many sizes as the "
            f"first ({n}); the first design's results follow.")


#: the prefix of each design's provenance paragraphs in the chapter's glue (fx_<prefix>_<part>)
PROVENANCE_PREFIX = {"cpu-pairs": "tied", "cpu-pairs-untied": "untied"}


def provenance_parts(sweep: str) -> dict[str, str]:
    """One design's provenance, paragraph by paragraph: which sizes its stored runs cover, how many
    they are and their hours of training (``coverage``), where they trained (``hardware``) and
    what that can do to its gaps (``gaps``, :func:`hardware_parts`), from which versions of the code
    (``versions``), and, for shapes whose seeds split, what training them again gave (``retrained``,
    ``retrained_tail``: :func:`pairs_verdicts.retrained_sentence`; '' where no shape needs it).
    The chapter gives each design's paragraphs in the order the designs were declared, whichever
    leads, so that no paragraph's place depends on the lead."""
    hardware, gaps = hardware_parts(sweep)
    records = stored_results(sweep)
    coverage = (f"{pv.coverage_sentence(sweep)} They are {len(records):,} runs, {_hours(records):.1f} hours of "
                "training summed.")
    return {"coverage": coverage, "hardware": hardware, "gaps": gaps, "versions": versions_sentence(sweep),
            "retrained": pv.retrained_sentence(sweep, "split"), "retrained_tail": pv.retrained_sentence(sweep, "tail"),
            "extension": extension_provenance(sweep)}


def extension_provenance(sweep: str) -> str:
    """Where and from which versions of the code the seeds of ``sweep``'s declared extension
    trained, once the book reads them (:func:`pairs_verdicts.extended`); '' before then."""
    entry = pv.extension_entry(sweep)
    if entry is None or pv.extended(sweep) is None:
        return ""
    records = pv.stored_results(entry["sweep"])  # what pv.extended read
    extra = get_preset(entry["sweep"])
    machines = Counter(_machine(r.get("hardware") or {}) for r in records)
    where = (f"on {next(iter(machines))}" if len(machines) == 1 else
             "; ".join(f"{n} on {m}" for m, n in machines.most_common()))
    versions, dirty = _versions(records)
    return (f"The seeds {extra.seeds[0]} to {extra.seeds[-1]} that the rule's later entry added are "
            f"{len(records):,} further runs, {_hours(records):.1f} hours of training summed, trained {where} in "
            f"{' and '.join(sorted({r['config'].get('dtype', 'float32') for r in records}))} with "
            f"{pv.counted(len(versions), 'version')} of the code"
            + (f" ({pv.words(len(dirty))} of the runs with edits not yet recorded in its history)" if dirty else "")
            + f", each at the rate its shape chose on seeds "
            f"{fmt.listed([str(x) for x in range(get_preset(sweep).select_seeds)])}.")


def second_sentence(u: dict | None | bool = None, later: dict | None = None, seeds=()) -> str:
    """The other design's verdicts at the sizes it has complete, per pair, with the precision
    reached and whether seeds split (a table gives each point's numbers); '' while nothing is
    published. ``u``: a reading (default: :func:`second_reading`, with ``later`` its reading on
    the seeds that did not choose the rates, ``seeds``), or False for none."""
    if u is None:
        u = second_reading()
        if u:
            seeds = later_seeds()
            later = pv.read(pv.second(), seeds=seeds)
    if not u:
        return ""
    planned = sorted(get_preset(pv.second()).budgets)
    done = u["budgets"]
    if not done:
        return "None of its sizes has every seed of every depth yet."
    power, target = u["power"], u["rule"]["half_width_target"]
    crossed = pv.crossing(u)
    verdicts = "; ".join((x := pv.pair_sentence(p, brief=True))[:1].lower() + x[1:-1] for p in u["pairs"] if p["points"])
    which = "first" if pv.second() == pv.DESIGNS[0] else "second"
    text = (f"The {which} design has complete results at {pv.count_of(len(done), len(planned), 'size')}"
            + ("" if len(done) == len(planned) else f" ({pv._sizes(done)})")
            + f". By the rule, {verdicts}. The table below gives each point's gap. The half-width is at most "
            f"{target:g} nats at {pv.words(power['within'])} of these {pv.words(power['points'])} points, "
            f"{'meeting' if pv.meets_target(u) else 'short of'} the rule's target of "
            + _share_words(u["rule"]["half_width_share"])
            + _second_split()
            + ("" if len(done) < 2 else
               f"; {'no pair crosses' if not crossed else pv.of(len(crossed), len(u['pairs']), 'pair', 'crosses')}")
            + ".")
    if later is not None:
        moved = [f"at {p['shallow']} vs {p['deep']} at {fmt.count(x['target_budget'])} from {SIDES[x['verdict']]} to "
                 f"{SIDES[y['verdict']]} ({pv.signed(y['mean'])}"
                 + (f" \N{PLUS-MINUS SIGN} {y['half_width']:.3f} nats)" if y["half_width"] is not None else " nats)")
                 for p, q in zip(u["pairs"], later["pairs"]) for x, y in zip(p["points"], q["points"])
                 if x["verdict"] != y["verdict"]]
        text += (f" On seeds {min(seeds)} to {max(seeds)} alone, which did not choose the rates, every verdict is the same"
                 if not moved else f" On seeds {min(seeds)} to {max(seeds)} alone, which did not choose the rates, the "
                 f"verdict{'s' * (len(moved) > 1)} change{'s' * (len(moved) == 1)} {fmt.listed(moved)}") + "."
    return text


def second_notes() -> str:
    """What qualifies the other design's points: a seed that lies apart, and the points that
    repeat the vocabulary chapter's untied control ('' when neither, or nothing is published)."""
    if not second_reading():
        return ""
    return " ".join(x for x in (pv.lone_seed_sentence(pv.second()), _repeats(pv.second())) if x)


def _repeats(sweep: str, control: str = "vocab-full") -> str:
    """Where a complete point of ``sweep`` has, run for run, the settings of the vocabulary
    chapter's untied control (the same run keys at the chosen rates), so that it is no evidence
    independent of the control that prompted the untied design: one sentence, '' when none."""
    try:
        theirs = {r["key"]: r["eval_loss"] for r in stored_results(control) if r.get("chosen")}
    except InputError:
        return ""
    mine = [r for r in stored_results(sweep) if r.get("chosen")]
    same = []
    for s, d in pairs.rule(sweep)["pairs"]:
        for b in sorted({r["target_budget"] for r in mine}):
            runs = [r for r in mine if r["target_budget"] == b and r["depth"] in (s, d)]
            if runs and all(r["key"] in theirs for r in runs):
                diff = max(abs(r["eval_loss"] - theirs[r["key"]]) for r in runs)
                same.append((f"{s} vs {d} at {fmt.count(b)}", diff))
    if not same:
        return ""
    worst = max(d for _, d in same)
    return (f"The vocabulary chapter's untied control has, run for run, the settings of "
            f"{fmt.listed([n for n, _ in same])} here (trained "
            f"again, the held-out losses agree within {worst:.4f} nats), so "
            f"{'that point is' if len(same) == 1 else 'those points are'} no evidence independent of the control "
            f"that prompted {'this' if sweep == pv.lead() else 'the untied'} design.")


def _share_words(share: float) -> str:
    """The rule's share of points, as a reader says it: 0.75 -> 'three quarters'."""
    return pv.share_words(share)


def _second_split() -> str:
    """Whether any shape of the other design splits its seeds at its chosen rate, as a clause."""
    split = [g for g in pv.seed_groups(pv.second()) if g["split"]]
    if not split:
        return ", and no shape's seeds split at its chosen rate"
    return (", and the seeds of " + fmt.listed([f"{'' if i == 0 else 'of '}the {g['depth']}-layer network at "
                                                f"{fmt.count(g['target_budget'])}" for i, g in enumerate(split)])
            + (" split at its chosen rate" if len(split) == 1 else " split at their chosen rates"))
