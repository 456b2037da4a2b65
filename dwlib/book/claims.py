"""The paper's claims beside this book's numbers, one row per claim, in one table.

Each row names a claim, the paper's number with where it stands (the paper, or the authors'
summary of it), the book's number, computed here by the same dwlib code as the chapter that
checks it, and the agreement, decided by a stated rule from the two. The paper's numbers are the
constants dwlib already holds (:data:`dwlib.core.bounds.PAPER_COROLLARY1`,
:data:`dwlib.experiments.catalogue.AUTHORS_1T_DEPTH`, the fit of :mod:`dwlib.core.fit`) or, for
the qualitative claims, the paper's words. :func:`rows` builds the table, :func:`markdown` writes
it for the book (MyST: citations and chapter links), :func:`numbers` counts the verdicts.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

import pandas as pd
from flax import nnx

from dwlib import fmt
from dwlib.book import analysed_model, experiments, figure2, pairs_verdicts, seprank_measurements, two_regimes, vocabulary
from dwlib.core import bounds, sizes
from dwlib.core.fit import AUTHORS_FIT, DEFAULT_ABS_TOL, DEFAULT_REL_TOL
from dwlib.experiments import pairs, seprank_sweep
from dwlib.experiments import transition as tr
from dwlib.experiments.catalogue import AUTHORS_1T_DEPTH, AUTHORS_1T_WIDTH, gpt3_table, trillion_projection
from dwlib.experiments.presets import WIDE, get_preset
from dwlib.train.model import Decoder, ModelConfig, count_parameters
from dwlib.viz.claims import verdict_grid

#: the verdicts a row can have, in the order the chapter counts them
VERDICTS = ("agrees", "agrees within the tolerance", "partly", "differs", "not reproduced", "not testable here")
PAPER = "{cite}`levine2020depth`"
SUMMARY = "{cite}`levine2020summary`"
#: the arXiv version, which holds the experiments at depths 6 to 48, the fit, the GPT-3 table and the
#: 1-trillion projection
ARXIV = "{cite}`levine2020interplay`"


def _row(claim, chapter, paper, book, verdict, group):
    assert verdict in VERDICTS, verdict
    return {"group": group, "claim": claim, "chapter": chapter, "paper": paper, "book": book, "agreement": verdict}


# ---------------------------------------------------------------------------------------------
# Theory

def threshold_row() -> dict:
    """Corollary 1's example network (d_x = 1000, L = 6) lies below its depth threshold."""
    W, L = bounds.PAPER_COROLLARY1["width"], bounds.PAPER_COROLLARY1["depth"]
    th = bounds.depth_threshold(W)
    return _row(f"depth {L} at width {W:,} is below the depth threshold $\\log_3 d_x$", "two_regimes",
                f"yes, depth {L} \"under the depth-efficiency threshold\" (section 4.1) {PAPER}",
                f"$\\log_3 {W} = {th:.2f} > {L}$", "agrees" if L < th else "differs", "theory")


def corollary1_rows() -> list[dict]:
    """The widths Corollary 1 asks of a depth-2 and a depth-3 network replacing the paper's
    depth-6 example; the paper states one significant digit, so a width agrees when it rounds
    to the same (lies in [1.5, 2.5) x 10^k for the paper's 2 x 10^k)."""
    p = bounds.PAPER_COROLLARY1
    out = []
    for Ls, stated in sorted(p["shallow"].items()):
        w = bounds.corollary1_width(p["width"], p["heads"], p["depth"], Ls)["width"]
        lo, hi = 0.75 * stated, 1.25 * stated
        ok = lo <= w < hi
        gap = math.log10(stated / w)
        out.append(_row(f"Corollary 1: width a depth-{Ls} network needs to match depth {p['depth']} "
                        f"(width {p['width']:,}, {p['heads']} heads)", "corollaries",
                        f"≃ {fmt.sci(math.log10(stated), 1)} (section 4.1) {PAPER}",
                        f"{fmt.sci(math.log10(w))} (eq. (7) as printed)",
                        "agrees" if ok else "differs", "theory")
                   | {"note": "" if ok else f"{abs(gap):.1f} orders of magnitude {'smaller' if gap > 0 else 'larger'}"})
    return out


def double_exponential_row() -> dict:
    """How the log of the required width grows as a layer is removed (depth 3 to depth 2):
    from the paper's two stated widths, and from eq. (7) (where it is (3^3 - 1) / (3^2 - 1))."""
    p = bounds.PAPER_COROLLARY1
    H = p["heads"]
    paper = math.log(p["shallow"][2] + H) / math.log(p["shallow"][3] + H)
    w = {Ls: bounds.corollary1_width(p["width"], H, p["depth"], Ls)["width"] for Ls in (2, 3)}
    book = math.log(w[2] + H) / math.log(w[3] + H)
    return _row("Corollary 1: removing a layer multiplies $\\log(d_s + H)$ by about 3, so the width needed grows double-exponentially with the layers removed",
                "corollaries", f"{paper:.3f}, from its two widths (section 4.1) {PAPER}",
                f"{book:.3f}, from eq. (7)", "agrees" if abs(paper / book - 1) < 0.01 else "differs", "theory")


def layer_factor_row() -> dict:
    """Below the threshold each layer multiplies the bounds on log3 sep by about 3 (eq. 7's 3^L),
    at the chapter's network (width 1024, 16 heads), depth 5 to 6."""
    ratio = two_regimes.numbers()["tr_ratio"]
    return _row("below the threshold, a layer multiplies the logarithm of the separation rank by about 3 (Theorem 1)", "two_regimes",
                f"3, the factor $3^L$ of eq. (7) {PAPER}", f"{ratio:.3f} (upper bound, width 1,024, depth 5 to 6)",
                "agrees" if abs(ratio - 3) < 0.05 else "differs", "theory")


@functools.cache
def _seprank() -> tuple[dict, dict]:
    data = seprank_sweep.load()
    return data, seprank_measurements.chapter(data)[1]


def one_layer_row() -> dict:
    """One layer's separation rank is linear in d_x: the measured grid ranks at depth 1."""
    data, _ = _seprank()
    one = [r for r in data["ranks"] if r["depth"] == 1 and r["heads"] == 1]
    ok = bool(one) and all(r["rank"] == r["width"] + 1 for r in one)
    widths = sorted(r["width"] for r in one)
    return _row("one layer's separation rank is linear in the width (section 4.2)", "seprank_measurements",
                f"linear in the heads $H$ and the width $d_x$; eq. (7) at one layer: at most $d_x + H$ {PAPER}",
                f"measured $d_x + 1$ with one head, widths {widths[0]} to {widths[-1]} ({len(one)} of {len(one)})"
                if ok else "measured ranks are not all $d_x + 1$", "agrees" if ok else "differs", "theory")


def proposition1_row() -> dict:
    """Proposition 1: every balanced partition gives the same separation rank."""
    _, n = _seprank()
    ok = n["sm_p1_equal"] == "equal"
    return _row("Proposition 1: the same separation rank for every balanced partition", "seprank_measurements",
                f"equal (eq. (6)) {PAPER}", f"grid ranks {n['sm_p1_equal']} over {n['sm_p1_n']} balanced partitions",
                "agrees" if ok else "differs", "theory")


def counting_row() -> dict:
    """Eq. (4): C = (3^L - 1)/2 summed indices, read back from the network itself."""
    table, n = analysed_model.counting(depths=(1, 2, 3, 4), positions=(2, 3))
    depths = sorted({L for L, _ in table.index})
    return _row("eq. (4): a network of depth $L$ sums over $C = (3^L - 1)/2$ indices", "analysed_model",
                f"$C = (3^L - 1)/2$ {PAPER}", f"read back from the network's output at depths {depths[0]} to {depths[-1]}: "
                + ("all equal" if n["count_ok"] else "not all equal"), "agrees" if n["count_ok"] else "differs", "theory")


def _range(values) -> str:
    """'1 to 3', '1 and 2', '2'."""
    values = sorted(values)
    if len(values) == 1:
        return str(values[0])
    if len(values) == 2:
        return f"{values[0]} and {values[1]}"
    return f"{values[0]} to {values[-1]}" if values == list(range(values[0], values[-1] + 1)) else \
        ", ".join(map(str, values[:-1])) + f" and {values[-1]}"


def degree_row() -> dict:
    """The degree of the analysed network's output: the paper's 3^L - 1 against the measured
    degrees (total, and in one other position's input)."""
    table, _ = analysed_model.degrees()  # the depths the analysed-model chapter measures
    depths = sorted(int(L) for L in table.index)
    total = (table["degree in all inputs"] == table["3ᴸ"]).all()
    other = (table["degree in another position's input alone"] == table["2C = 3ᴸ − 1"]).all()
    verdict = "partly" if total and other else "differs"
    return _row("the output is a polynomial of degree $2C = 3^L - 1$ (proof sketch of Theorem 2)", "analysed_model",
                f"$3^L - 1$ {PAPER}", f"measured at depths {_range(depths)}: $3^L$ in all inputs together, $3^L - 1$ in one "
                "other position's input" if total and other else "measured degrees differ from both",
                verdict, "theory")


# ---------------------------------------------------------------------------------------------
# Experiments

def size_count_row(depth: int = 4, width: int = 64, heads: int = 8) -> dict:
    """The non-embedding size 12 L d_x^2, counted on the parameters of dwlib's decoder (their
    shapes: ``nnx.eval_shape`` builds the model without computing its initial weights)."""
    cfg = ModelConfig(vocab_size=1000, seq_len=64, depth=depth, width=width, heads=heads)
    model = nnx.eval_shape(lambda: Decoder(cfg, rngs=nnx.Rngs(0)))
    counted = count_parameters(model)["non_embedding"]
    formula = sizes.budget(depth, width)
    return _row("non-embedding size $N = 12 L d_x^2$ (section 1, the paper's Figure 2)", "experiments",
                f"$12 L d_x^2$ = {formula:,} at depth {depth}, width {width} {PAPER}",
                f"{counted:,} weight-matrix entries in the book's decoder of that shape",
                "agrees" if counted == formula else "differs", "experiments")


def figure1_row() -> dict:
    """Kaplan et al.'s ablation (the paper's Figure 1): published as a plot, not as data."""
    return _row("the paper's Figure 1: depth efficiency for L ≤ 6 at widths ≥ 200 in Kaplan et al.'s ablation", "discussion",
                f"read off Kaplan et al.'s plot {PAPER}; {{cite}}`kaplan2020scaling`",
                "not redrawn: the ablation's losses were published only as a plot", "not testable here", "experiments")


#: the stored sweeps the experiment rows read, each by the one declared rule
#: (:mod:`dwlib.book.pairs_verdicts`): the two designs of the doubling pairs, then the earlier sweeps
RULE_SWEEPS = (*pairs_verdicts.DESIGNS, "cpu-fig2", "mini", "gpu-slice")


@functools.cache
def _readings() -> dict:
    """Every sweep of :data:`RULE_SWEEPS` read by the rule, the design that leads first."""
    names = sorted(RULE_SWEEPS, key=lambda name: name != pairs_verdicts.lead())
    return {name: pairs_verdicts.read_by_rule(name) for name in names}



#: how one pair's smallest-size point reads for the claim "at small sizes a deeper network does
#: no better": worse (interval above zero), comparable (interval around zero and no wider than the
#: rule's half-width target), better (interval below zero), or not resolved (one seed, or an
#: interval around zero wider than the target: too noisy to call the two comparable)
SMALL_WORSE, SMALL_COMPARABLE, SMALL_BETTER, SMALL_UNRESOLVED = "worse", "comparable", "better", "not resolved"


def small_size_reading(point: dict | None, target: float) -> str:
    """One point's reading for the small-sizes claim (see :data:`SMALL_WORSE`): only a precise
    point (half-width at most ``target``) can count as comparable; a wide one that holds zero is
    not resolved, never agreement."""
    if point is None or point["half_width"] is None:
        return SMALL_UNRESOLVED
    if point["high"] < 0:
        return SMALL_BETTER
    if point["low"] > 0:
        return SMALL_WORSE
    return SMALL_COMPARABLE if point["half_width"] <= target else SMALL_UNRESOLVED


def comparable_verdict(readings: list[str]) -> str:
    """The verdict on "comparable" (the paper, section 5) from each pair's smallest-size reading:
    a comparable pair supports it, a pair resolved either way (worse or better) counts against
    it, an unresolved one neither. Agrees when some pair supports it and none counts against;
    differs when some count against and none supports it; partly when both; not testable when
    no pair is resolved or comparable."""
    support = readings.count(SMALL_COMPARABLE)
    against = readings.count(SMALL_WORSE) + readings.count(SMALL_BETTER)
    if not support and not against:
        return "not testable here"
    if not against:
        return "agrees"
    return "differs" if not support else "partly"


def worse_verdict(readings: list[str]) -> str:
    """The verdict on "worse" (the authors' summary) from each pair's smallest-size reading: a
    pair resolved worse supports it, one comparable or resolved better counts against it, an
    unresolved one neither. Agrees when every pair supports it; differs when none does and some
    count against; not testable when no pair is resolved or comparable; partly otherwise."""
    support = readings.count(SMALL_WORSE)
    against = readings.count(SMALL_COMPARABLE) + readings.count(SMALL_BETTER)
    if not support and not against:
        return "not testable here"
    if support == len(readings):
        return "agrees"
    return "differs" if not support else "partly"


def _pair_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def small_size_readings(seeds=None) -> list[dict]:
    """Each pair of every stored sweep at its smallest size (the doubling sweep: its smallest
    complete size) read by the declared rule's interval and its half-width target
    (:func:`small_size_reading`), one seed included; ``seeds``: the doubling sweep on these seeds
    only (the reading without the rate-choosing seeds)."""
    target = pairs.rule(pairs_verdicts.RULE_SWEEP)["half_width_target"]
    out = []
    for name, reading in _readings().items():
        if seeds is not None and name == pairs_verdicts.lead():
            reading = pairs_verdicts.read(name, seeds=seeds)
        for p in reading["pairs"]:
            first = p["points"][0] if p["points"] else None
            out.append({"sweep": name, "shallow": p["shallow"], "deep": p["deep"], "point": first,
                        "reading": small_size_reading(first, target)})
    return out


def _declared(items: list[dict]) -> list[dict]:
    """The pairs of the one sweep run under the declared rule: the small-size verdicts are theirs."""
    return [x for x in items if x["sweep"] == pairs_verdicts.lead()]


#: where the experiment rows' evidence is drawn: the doubling pairs' figure of the experiments
#: chapter, each (pair, size) point with its interval
EVIDENCE = "{figref}`fig-pairs`"
#: a small-size reading as the table's cells say it
_SMALL_WORDS = {SMALL_WORSE: "deeper worse", SMALL_COMPARABLE: "comparable within the target",
                SMALL_BETTER: "deeper better", SMALL_UNRESOLVED: "not resolved"}


def _signed(x: float) -> str:
    """A gap with its sign, the minus a true minus sign (+0.215, −0.061)."""
    return f"{x:+.3f}".replace("-", "\N{MINUS SIGN}")


def _gap(point: dict) -> str:
    """A point's mean gap and its paired interval: '+0.215 nats (95% interval +0.176 to +0.254)'."""
    level = pairs.rule(pairs_verdicts.RULE_SWEEP)["level"]
    return (f"{_signed(point['mean'])} nats ({level:.0%} interval {_signed(point['low'])} to "
            f"{_signed(point['high'])})")


def _declared_at(mine: list[dict]) -> str:
    """'The CPU doubling-pairs sweep at 100K': the declared sweep at the size its pairs are read."""
    sizes_ = sorted({x["point"]["target_budget"] for x in mine if x["point"] is not None})
    at = f" at {fmt.count(sizes_[0])}" if len(sizes_) == 1 else " at its smallest sizes"
    return fmt.capitalised(pairs_verdicts.NAMES[pairs_verdicts.lead()]) + at


def _pair_readings(mine: list[dict], notes: dict | None = None) -> str:
    """Each declared pair at its smallest size, the resolved ones first with their gap and
    interval (the decisive numbers): '4 vs 8 deeper worse, +0.215 nats (...); 2 vs 4 not
    resolved'. ``notes``: a clause to add after a pair, by (shallow, deep)."""
    order = (SMALL_WORSE, SMALL_BETTER, SMALL_COMPARABLE, SMALL_UNRESOLVED)
    parts = []
    for x in sorted(mine, key=lambda x: (order.index(x["reading"]), x["shallow"])):
        text = f"{x['shallow']} vs {x['deep']} {_SMALL_WORDS[x['reading']]}"
        if x["reading"] != SMALL_UNRESOLVED:
            text += f", {_gap(x['point'])}"
        elif x["point"] is None:
            text += " (no size with both depths)"
        elif x["point"]["half_width"] is None:
            text += " (one seed)"
        note = (notes or {}).get((x["shallow"], x["deep"]))
        parts.append(text + (f" ({note})" if note else ""))
    return "; ".join(parts)


def _widths_at_smallest() -> str:
    """The declared sweep's widths at its smallest size against the paper's: 'widths 32 to 64,
    narrower than the 200 the paper's Figure 1 calls sufficient'."""
    preset = get_preset(pairs_verdicts.lead())
    b = min(preset.budgets)
    widths = sorted(sizes.width_for_budget(b, L, preset.head_size) for L in preset.depths)
    said = f"widths {widths[0]} to {widths[-1]}"
    return said + (f", narrower than the {WIDE} the paper's Figure 1 calls sufficient" if widths[-1] < WIDE else "")


def comparable_row() -> dict:
    """At the smallest size of each pair of the declared sweep, do the two networks perform
    comparably (the paper's section 5)? By :func:`comparable_verdict`, on the declared sweep alone;
    the cell gives each pair's reading, the resolved ones' gaps, the widths against the paper's,
    and the figure that draws them."""
    mine = _declared(small_size_readings())
    text = f"{_declared_at(mine)}: {_pair_readings(mine)} ({EVIDENCE}); {_widths_at_smallest()}"
    return _row("at small sizes a deeper and a shallower network of equal size perform comparably (the paper's "
                "Figure 2)", "experiments", f"comparable, 6 vs 12 and 12 vs 24 (section 5) {PAPER}", text,
                comparable_verdict([x["reading"] for x in mine]), "experiments")


def worse_row() -> dict:
    """At the smallest size of each pair of the declared sweep, does the deeper network do worse
    (the authors' summary)? By :func:`worse_verdict`, on all seeds (the rule's reading); beside a
    pair, when its seeds split there, and how it reads without the rate-choosing seeds when that
    differs. The other sweeps are not counted (the experiments chapter reads them)."""
    mine = _declared(small_size_readings())
    later = experiments_later_seeds()
    notes: dict = {}
    smallest = {x["point"]["target_budget"] for x in mine if x["point"] is not None}
    for (s, d, b), depth in sorted(pairs_verdicts.split_at().items()):
        if b in smallest:  # a split at a larger size is not this row's
            notes.setdefault((s, d), []).append(f"its {depth}-layer seeds split")
    for a, b in zip(mine, _declared(small_size_readings(seeds=later))):
        if a["reading"] != b["reading"]:
            notes.setdefault((a["shallow"], a["deep"]), []).append(
                f"{_SMALL_WORDS[b['reading']]} on seeds {min(later)} to {max(later)} alone")
    text = (f"{_declared_at(mine)}: {_pair_readings(mine, {k: '; '.join(v) for k, v in notes.items()})} "
            f"({EVIDENCE}){_precision_note()}")
    return _row("at small sizes a deeper network does worse (the authors' summary)", "experiments",
                f"worse at small enough widths {SUMMARY}", text, worse_verdict([x["reading"] for x in mine]),
                "experiments")


def _precision_note() -> str:
    """The declared sweep's precision in a few words, for a row that reads it: where it falls short
    of the rule's target, how many points meet it, and, when every interval lies clear of zero,
    that no verdict hinges on it, unless the seeds of a declared extension, once read, meet the target
    (then their count instead); '' when the target is met."""
    r = pairs_verdicts.read(pairs_verdicts.lead())
    if not r["power"]["points"] or pairs_verdicts.meets_target(r):
        return ""
    clear = pairs_verdicts.precision_consequence(r).startswith("every")
    more = pairs_verdicts.extension_clause(r, "short")  # the precision on every seed, once read
    if more and pairs_verdicts.meets_target(pairs_verdicts.extended(pairs_verdicts.lead())["all"]):
        clear = False  # met on every seed: whether a verdict hinges on the shortfall no longer matters
    return (f"; half-width target met at {r['power']['within']} of {r['power']['points']} points" + more
            + (", no verdict hinging on it" if clear else ""))


def precision_sentence() -> str:
    """The declared sweep's precision against the rule's target, and what a shortfall does to its
    verdicts, as a sentence ('' when nothing is read)."""
    clause = pairs_verdicts.precision_clause(pairs_verdicts.read(pairs_verdicts.lead()))
    return f"{fmt.capitalised(clause.replace(' points,', ' (pair, size) points,', 1))}." if clause else ""


def experiments_later_seeds() -> tuple[int, ...]:
    """The doubling sweep's seeds that did not choose the learning rates."""
    preset = get_preset(pairs_verdicts.lead())
    return tuple(s for s in preset.seeds if s >= preset.select_seeds)


def _expected_but_worse(reading: dict) -> tuple[dict, dict, tuple[float, float]] | None:
    """The declared sweep's strongest evidence against a transition where the authors' fit expects
    one: the largest size read inside a pair's expected range (:func:`dwlib.book.figure2.authors_range`)
    at which the deeper network is resolved worse, as (pair, point, range); None when there is none."""
    best = None
    for p in reading["pairs"]:
        lo, hi = figure2.authors_range(p["shallow"], p["deep"])
        for x in p["points"]:
            if lo <= x["target_budget"] <= hi and x["verdict"] == pairs.WORSE and (
                    best is None or x["target_budget"] > best[1]["target_budget"]):
                best = (p, x, (lo, hi))
    return best


def transitions_row() -> dict:
    """Past a transition size the deeper network wins, for 6 vs 12 and 12 vs 24 (Figure 2): a
    transition counts only as the declared rule defines it (the seeds' interval above zero, then
    below it, and the sign held at every larger budget), in every stored sweep. The cell gives
    the crossings (or that there are none) and, where no pair of the declared sweep crosses, the
    largest size inside a pair's range from the authors' fit at which its deeper network is still
    resolved worse, with its gap."""
    readings = _readings()
    crossed = {name: pairs_verdicts.crossing(r) for name, r in readings.items()}
    n_cross = sum(map(len, crossed.values()))
    full = any(c and len(c) == len(readings[name]["pairs"]) for name, c in crossed.items())
    verdict = "agrees" if full else "partly" if n_cross else "not reproduced"
    if not n_cross:
        text = f"No pair of the {pairs_verdicts.words(len(readings))} stored sweeps crosses by the declared rule"
    else:
        where = [f"in {pairs_verdicts.NAMES[name]}, " + ", ".join(
            f"{p['shallow']} vs {p['deep']} between {fmt.count(p['verdict']['transition']['between'][0])} and "
            f"{fmt.count(p['verdict']['transition']['between'][1])}" for p in c) for name, c in crossed.items() if c]
        quiet = len(readings) - sum(bool(c) for c in crossed.values())
        text = (f"By the declared rule, pairs cross {'; '.join(where)}"
                + (f"; none in the other {pairs_verdicts.words(quiet)}" if quiet else ""))
    found = None if crossed[pairs_verdicts.lead()] else _expected_but_worse(readings[pairs_verdicts.lead()])
    if found:
        p, x, (lo, hi) = found
        text += (f". {p['shallow']} vs {p['deep']}'s deeper network is still worse at {fmt.count(x['target_budget'])}, "
                 f"{_gap(x)}, inside the {fmt.count(lo)} to {fmt.count(hi)} where the authors' fit expects its "
                 "transition")
    return _row("past a transition size the deeper network wins (the paper's Figure 2)", "experiments",
                f"both pairs, 6 vs 12 and 12 vs 24, cross {PAPER}", f"{text} ({EVIDENCE})", verdict, "experiments")


def transition_order_row() -> dict:
    """The 12 vs 24 transition lies at a larger size than the 6 vs 12 one (Figure 2's caption):
    testable only in a sweep where two doubling pairs both have a transition by the rule."""
    both = {name: pairs_verdicts.crossing(r) for name, r in _readings().items()}
    both = {name: c for name, c in both.items() if len(c) >= 2}
    if not both:
        n = sum(len(pairs_verdicts.crossing(r)) for r in _readings().values())
        return _row("the 12 vs 24 transition lies at a larger size than the 6 vs 12 one (the paper's Figure 2)", "experiments",
                    f"yes {PAPER}", f"needs two pairs of one sweep with a transition by the declared rule; "
                    f"{'no pair has one' if n == 0 else f'{n} pair has one' if n == 1 else f'{n} pairs have one, in different sweeps'}",
                    "not testable here", "experiments")
    name, crossed = next(iter(both.items()))
    crossed = sorted(crossed, key=lambda p: p["shallow"])
    lows = [p["verdict"]["transition"]["between"] for p in crossed]
    later = all(b[0] >= a[1] for a, b in zip(lows, lows[1:]))
    text = f"{pairs_verdicts.NAMES[name]}: " + ", ".join(
        f"{p['shallow']} vs {p['deep']} between {fmt.count(lo)} and {fmt.count(hi)}" for p, (lo, hi) in zip(crossed, lows))
    return _row("the 12 vs 24 transition lies at a larger size than the 6 vs 12 one (the paper's Figure 2)", "experiments",
                f"yes {PAPER}", fmt.capitalised(text), "agrees" if later else "differs", "experiments")


def fit_slope_row() -> dict:
    """The transition size grows exponentially with depth: the authors' fitted slope against a
    fit to this book's transitions, possible only in a sweep where two doubling pairs have a
    transition by the declared rule."""
    two = [name for name, r in _readings().items() if len(pairs_verdicts.crossing(r)) >= 2]
    own = {}
    for name in two:
        f = tr.fit_transitions(experiments.sweep(name).results)
        if f is not None:
            own[pairs_verdicts.NAMES[name]] = f.fit.depth_slope
    n_cross = sum(len(pairs_verdicts.crossing(r)) for r in _readings().values())
    text = ("; ".join(f"{k}: {b:.4f}" for k, b in own.items()) if own else
            ("no fit: no pair has a transition by the declared rule" if n_cross == 0 else
             "no fit: only one pair has a transition by the declared rule" if n_cross == 1 else
             f"no fit: {n_cross} pairs have a transition by the declared rule, in different sweeps")
            + ", and a slope needs two in one sweep")
    verdict = "not testable here" if not own else (
        "agrees" if any(abs(b / AUTHORS_FIT.depth_slope - 1) < 0.25 for b in own.values()) else "differs")
    return _row("the transition size grows exponentially with depth: slope b of log width per layer", "guidelines",
                f"$b$ = {AUTHORS_FIT.depth_slope} (fit over depths 6 to 48) {ARXIV}", fmt.capitalised(text), verdict, "experiments")


# ---------------------------------------------------------------------------------------------
# Guidelines

def gpt3_rows() -> list[dict]:
    """The authors' verdicts on GPT-3: the sizes up to about 10B too shallow, 175B too deep."""
    gpt3 = gpt3_table()
    small = [g for g in gpt3 if g["budget"] < 10e9]
    n_shallow = sum(g["verdict"] == "too shallow" for g in small)
    big = next(g for g in gpt3 if g["name"] == "GPT-3 175B")
    return [
        _row("GPT-3 models up to about 10B parameters are too shallow", "guidelines", f"too shallow {ARXIV}",
             f"{n_shallow} of {len(small)} below 10B too shallow, depth {min(g['depth_ratio'] for g in small):.2f} "
             f"to {max(g['depth_ratio'] for g in small):.2f} of the optimum",
             "agrees" if n_shallow == len(small) else "partly" if n_shallow else "differs", "guidelines"),
        _row("GPT-3 175B is too deep for its size", "guidelines", f"too deep {ARXIV}",
             f"{big['verdict']}: {big['depth']} layers against the optimum {big['optimal_depth']:.1f}",
             "agrees" if big["verdict"] == "too deep" else "differs", "guidelines"),
    ]


def trillion_rows() -> list[dict]:
    """The authors' 1-trillion projection against the fit's optimum: the depth within the
    verdict's tolerance, the width to the authors' two significant digits."""
    t = trillion_projection()
    L, d = t["optimal_depth"], t["optimal_width"]
    tol = max(DEFAULT_REL_TOL * L, DEFAULT_ABS_TOL)
    depth_ok = abs(L - AUTHORS_1T_DEPTH) <= tol
    width_ok = float(f"{d:.2g}") == AUTHORS_1T_WIDTH
    return [
        _row("optimal depth of a 1-trillion parameter network", "guidelines", f"{AUTHORS_1T_DEPTH} {ARXIV}",
             f"L* = {L:.1f}: {abs(L - AUTHORS_1T_DEPTH):.1f} layers ({abs(L - AUTHORS_1T_DEPTH) / AUTHORS_1T_DEPTH:.0%}) "
             f"from the authors' {AUTHORS_1T_DEPTH}, "
             + ("inside" if depth_ok else "outside") + f" the near-optimal band of ± {tol:.1f} layers",
             "agrees" if round(L) == AUTHORS_1T_DEPTH else "agrees within the tolerance" if depth_ok else "differs",
             "guidelines"),
        _row("optimal width of a 1-trillion parameter network", "guidelines", f"{AUTHORS_1T_WIDTH / 1e3:.0f}K {ARXIV}",
             f"d* = {d:,.0f}", "agrees" if width_ok else "differs", "guidelines"),
    ]


def vocabulary_rows() -> list[dict]:
    """The vocabulary chapter's claims (Wies et al., 2021), each verdict by its rule in
    :func:`dwlib.book.vocabulary.claims`."""
    return [_row(r["claim"], r["chapter"], r["paper"], r["book"], r["agreement"], "vocabulary")
            for r in vocabulary.claims()]


# ---------------------------------------------------------------------------------------------
# The table

#: what a row's check rests on: arithmetic of the paper's own formulas and fit (a consistency check
#: of the paper's text, not an independent confirmation), a computation on networks built here
#: (their separation ranks, degrees, summed indices, parameters), or trained networks
ARITHMETIC, COMPUTED, TRAINED = "arithmetic", "computed", "trained"
KINDS = {ARITHMETIC: "arithmetic of the paper's own formulas, consistency checks of its text rather than "
                     "independent confirmations",
         COMPUTED: "computed on networks built here", TRAINED: "rest on trained networks"}


def _vocabulary_kind(row: dict) -> str:
    """The vocabulary chapter's rows: a trained comparison rests on trained networks; the rest
    are the grid ranks of the analysed network or cannot be tested."""
    return TRAINED if "trained" in row["claim"] else COMPUTED


def rows() -> list[dict]:
    """Every claim's row, theory first, then the experiments, the guidelines and the vocabulary
    chapter, each with the kind of check it is (:data:`KINDS`)."""
    tagged = [(threshold_row(), ARITHMETIC), *((r, ARITHMETIC) for r in corollary1_rows()),
              (double_exponential_row(), ARITHMETIC), (layer_factor_row(), ARITHMETIC), (one_layer_row(), COMPUTED),
              (proposition1_row(), COMPUTED), (counting_row(), COMPUTED), (degree_row(), COMPUTED),
              (size_count_row(), COMPUTED), (figure1_row(), TRAINED), (comparable_row(), TRAINED), (worse_row(), TRAINED),
              (transitions_row(), TRAINED), (transition_order_row(), TRAINED), (fit_slope_row(), TRAINED),
              *((r, ARITHMETIC) for r in gpt3_rows()), *((r, ARITHMETIC) for r in trillion_rows()),
              *((r, _vocabulary_kind(r)) for r in vocabulary_rows())]
    return [r | {"kind": kind} for r, kind in tagged]


_POWER = re.compile(r"(\d+(?:\.\d+)?) × 10\^(-?\d+)")


_EQ = re.compile(r"\beq\. \((\d)\)")


def _cell(text: str) -> str:
    """A table cell in MyST: one line, 2 × 10^17 as math, every "eq. (7)" a link to the equation."""
    text = _POWER.sub(r"$\1 \\times 10^{\2}$", " ".join(str(text).split()))
    return _EQ.sub(lambda m: f"eq. {{ref}}`({m.group(1)}) <eq-{m.group(1)}>`", text)


def markdown(table: list[dict] | None = None) -> str:
    """The rows as a MyST list-table (class ``dw-claims``, whose cells wrap on a phone: see
    book/assets/dwbook.css): claim (linked to the chapter that checks it), the paper's number,
    the book's, the agreement."""
    table = rows() if table is None else table
    lines = ["```{list-table}", ":header-rows: 1", ":class: dw-claims", ":widths: 30 25 30 15", "",
             "* - claim", "  - paper", "  - this book", "  - agreement"]
    for r in table:
        book = r["book"] + (f": {r['note']}" if r.get("note") else "")
        lines += [f"* - {_cell(r['claim'])} ({{doc}}`{r['chapter']}`)", f"  - {_cell(r['paper'])}",
                  f"  - {_cell(book)}", f"  - **{r['agreement']}**"]
    return "\n".join(lines + ["```"])


def frame(table: list[dict] | None = None) -> pd.DataFrame:
    """The rows as a DataFrame (for tests and for reading in a notebook)."""
    return pd.DataFrame(rows() if table is None else table).set_index("claim")


_SUMMARY_WORDS = {"agrees": ("agrees", "agree"), "agrees within the tolerance": ("agrees within the stated tolerance",
                                                                           "agree within the stated tolerance"),
                  "partly": ("agrees in part", "agree in part"), "differs": ("differs", "differ"),
                  "not reproduced": ("is not reproduced by the book's trained networks",
                                     "are not reproduced by the book's trained networks"),
                  "not testable here": ("cannot be tested with what this book has",
                                        "cannot be tested with what this book has")}


def summary_sentence(table: list[dict]) -> str:
    """'Of the 20 claims, 12 agree, 1 agrees in part, ...': the verdicts counted, in words."""
    count = Counter(r["agreement"] for r in table)
    parts = [f"{count[v]} {_SUMMARY_WORDS[v][count[v] != 1]}" for v in VERDICTS if count.get(v)]
    body = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Of the {len(table)} claims, {body}."


def tally_sentence(table: list[dict]) -> str:
    """The verdicts counted by what each check rests on (:data:`KINDS`), the rows that cannot be
    tested apart: 'Of the 24 claims, 11 are arithmetic of the paper's own formulas, ...: 8 agree
    and 2 differ; ...'. Rows without a kind are counted as :func:`summary_sentence` does."""
    if not all("kind" in r for r in table):
        return summary_sentence(table)
    untested = [r for r in table if r["agreement"] == "not testable here"]
    parts = []
    for kind, words in KINDS.items():
        group = [r for r in table if r["kind"] == kind and r["agreement"] != "not testable here"]
        if not group:
            continue
        count = Counter(r["agreement"] for r in group)
        verdicts = [f"{'all' if count[v] == len(group) > 2 else 'both' if count[v] == len(group) == 2 else count[v]} "
                    f"{_SUMMARY_WORDS[v][count[v] != 1]}" for v in VERDICTS if count.get(v)]
        body = verdicts[0] if len(verdicts) == 1 else ", ".join(verdicts[:-1]) + " and " + verdicts[-1]
        parts.append(f"{len(group)} {'is' if len(group) == 1 and kind != TRAINED else 'are' if kind != TRAINED else ''}"
                     .rstrip() + f" {words}: {body}")
    if untested:
        parts.append(f"{len(untested)} {_SUMMARY_WORDS['not testable here'][len(untested) != 1]}")
    body = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return f"Of the {len(table)} claims, {body}."


def _tested(table: list[dict], kind: str) -> list[dict]:
    """The rows of one kind of check (:data:`KINDS`) that the book could test."""
    return [r for r in table if r.get("kind") == kind and r["agreement"] != "not testable here"]


def takeaway(table: list[dict]) -> str:
    """What a reader weighing the paper takes from the table, in words rather than its counts (the
    chapter's opening gives those): whether the checks of the theory computable at small sizes agree, whether
    the paper's printed numbers follow from its formulas, and whether its trained claims are borne
    out at the sizes trained here."""
    full = ("agrees", "agrees within the tolerance")
    computed, arithmetic, trained = (_tested(table, k) for k in (COMPUTED, ARITHMETIC, TRAINED))
    partly = sum(r["agreement"] == "partly" for r in computed)
    # the checks reach only networks small enough to compute (the double-exponential regime is
    # out of reach): the verdict says so rather than that the theory holds
    theory = ("every check of the paper's theory that can be computed at small sizes agrees with it as stated"
              if all(r["agreement"] in full for r in computed) else
              "every check of the paper's theory that can be computed at small sizes agrees with it, "
              f"{pairs_verdicts.words(partly)} only in part" if all(
                  r["agreement"] in (*full, "partly") for r in computed) else
              "some checks of the paper's theory computed at small sizes disagree with it")
    slips = [r for r in arithmetic if r["agreement"] not in full]
    printed = ("its printed numbers follow from its own formulas" if not slips else
               f"{pairs_verdicts.words(len(slips))} of its printed numbers do not follow from its formulas as printed, so "
               "a reader reusing them should recompute them")
    borne = [r for r in trained if r["agreement"] in full]
    experiments = ("and its trained claims are borne out at the sizes trained here" if len(borne) == len(trained) else
                   "and none of its trained claims that this book could test is borne out in full at the sizes "
                   "trained here, so its experimental picture rests on the authors' own runs" if not borne else
                   f"and {pairs_verdicts.of(len(borne), len(trained), 'trained claim', 'is', 'are')} borne out in full at "
                   "the sizes trained here")
    return f"Read together: {theory}; {printed}; {experiments}."


#: the figure's rows: the kinds of check, then the claims no check here can reach
GRID_ROWS = {ARITHMETIC: "the paper's own formulas", COMPUTED: "networks computed here",
             TRAINED: "networks trained here", "not testable here": "not testable here"}


def _grid_row(r: dict) -> str:
    return GRID_ROWS["not testable here" if r["agreement"] == "not testable here" else r["kind"]]


def _plain(text: str) -> str:
    """A claim as a tooltip shows it: the table's inline math in plain symbols."""
    return fmt.math_label(text.replace("$", "").replace("\\log_3", "log3").replace("\\log", "log")
                          .replace("\\", ""))


def figure_findings(table: list[dict]) -> list[str]:
    """The figure's finding, one short line per kind of check tested (short enough for a phone's
    column): how many of its claims hold in full, and in part."""
    short = {ARITHMETIC: "the paper's formulas", COMPUTED: "computed networks", TRAINED: "trained networks"}
    lines = []
    for kind in (ARITHMETIC, COMPUTED, TRAINED):
        group = _tested(table, kind)
        if not group:
            continue
        full = sum(r["agreement"] in ("agrees", "agrees within the tolerance") for r in group)
        part = sum(r["agreement"] == "partly" for r in group)
        lines.append(f"{short[kind]}: {full} of {len(group)} hold" + (f", {part} in part" if part else ""))
    return lines


def chart(table: list[dict] | None = None):
    """Every claim of the table as one mark, in a row by what its check rests on, coloured and
    shaped by its verdict; the subtitle gives the finding per row."""
    table = rows() if table is None else table
    order = {v: i for i, v in enumerate(VERDICTS)}
    data = []
    for name in GRID_ROWS.values():
        group = sorted((r for r in table if _grid_row(r) == name), key=lambda r: order[r["agreement"]])
        data += [{"group": name, "position": i, "verdict": r["agreement"], "claim": _plain(r["claim"])}
                 for i, r in enumerate(group)]
    return verdict_grid(pd.DataFrame(data), "Where the claims hold", figure_findings(table))


def figure_caption(table: list[dict] | None = None) -> str:
    """The figure's caption: what to conclude, per kind of check (the subtitle gives the counts),
    then the layout."""
    table = rows() if table is None else table
    full = ("agrees", "agrees within the tolerance")
    slips = sum(r["agreement"] not in full for r in _tested(table, ARITHMETIC))
    partly = sum(r["agreement"] == "partly" for r in _tested(table, COMPUTED))
    wrong = sum(r["agreement"] not in (*full, "partly") for r in _tested(table, COMPUTED))
    trained = _tested(table, TRAINED)
    borne = sum(r["agreement"] in full for r in trained)
    arithmetic = ("The paper's printed numbers follow from its formulas" if not slips else
                  f"All but {pairs_verdicts.words(slips)} of the paper's printed numbers follow from its formulas")
    theory = ("every check of its theory that can be computed at small sizes agrees" if not partly and not wrong
              else f"every check of its theory that can be computed at small sizes agrees, "
              f"{pairs_verdicts.words(partly)} only in part" if not wrong else
              "some checks of its theory computed at small sizes disagree with it")
    experiments = ("and every trained claim the book could test holds" if borne == len(trained) else
                   "and none of the trained claims the book could test holds in full at the sizes trained here"
                   if not borne else f"and {pairs_verdicts.of(borne, len(trained), 'trained claim', 'holds', 'hold')} "
                   "in full at the sizes trained here")
    return (f"{arithmetic}; {theory}; {experiments}.{_caption_precision()} Each mark is one claim of the table "
            "below, in a row by what its check rests on, coloured and shaped by the book's verdict; point at or tap a "
            "mark to read its claim.")


def _caption_precision() -> str:
    """For the figure's caption: the precision of the sweep the trained rows read, where it falls
    short of the rule's target, and whether that moves a verdict ('' when the target is met)."""
    lead = pairs_verdicts.lead()
    r = pairs_verdicts.read(lead)
    p = r["power"]
    if not p["points"] or pairs_verdicts.meets_target(r):
        return ""
    then = pairs_verdicts.precision_consequence(r)
    tail = f", but {then}" if then.startswith("every") else f"; {then}"
    return (f" The sweep behind the rows on the paper's Figure 2, {pairs_verdicts.NAMES[lead]}, reaches the "
            f"rule's precision at "
            f"{pairs_verdicts.words(p['within'])} of its {pairs_verdicts.words(p['points'])} points, short of the "
            f"target{tail}.")


def figure2_sentence(table: list[dict]) -> str:
    """What the table says of the transitions of the paper's Figure 2, from its rows (the
    transitions' verdict, and whether the two claims that rest on them could be tested)."""
    row = next(r for r in table if r["claim"].startswith("past a transition size"))
    head = {"agrees": "The transitions of the paper's Figure 2 are reproduced",
            "partly": "The transitions of the paper's Figure 2 are reproduced in part",
            "not reproduced": "The transitions of the paper's Figure 2 are not reproduced"}[row["agreement"]]
    order = [r for r in table if r["claim"].startswith("the 12 vs 24 transition")]
    if order and order[0]["agreement"] == "not testable here":
        return (f"{head} at the depths and sizes trained here, by the declared rule, so the two claims that rest on them, the order of the two "
                "transitions and the growth of the transition size with depth, cannot be tested here: both need "
                "a sweep in which two pairs cross.")
    return f"{head} at the depths and sizes trained here, by the declared rule."


def coverage_sentence() -> str:
    """How much of the doubling sweep the experiment rows read, as a plain fact."""
    planned = list(get_preset(pairs_verdicts.lead()).budgets)
    done = pairs_verdicts.read(pairs_verdicts.lead())["budgets"]
    name = fmt.capitalised(pairs_verdicts.NAMES[pairs_verdicts.lead()])
    if not done:
        return f"{name} has no size with results for every seed of every depth, so its rows give it no verdict."
    where = pairs_verdicts.span(done, planned)
    count = (f"all {pairs_verdicts.words(len(done))} of its sizes" if len(done) == len(planned) else
             f"{len(done)} of the {len(planned)} sizes it was designed for")
    precision = precision_sentence() if len(done) * len(pairs.rule(pairs_verdicts.lead())["pairs"]) > 1 else ""
    return (f"{name} has complete results at {count} ({where[where.index(' ') + 1:]} non-embedding parameters), "
            f"and its verdicts in the table cover {'that size' if len(done) == 1 else 'those sizes'}."
            + (f" {precision}" if precision else ""))


def numbers(table: list[dict] | None = None) -> dict:
    """The counts the chapter's prose quotes: rows, and rows per verdict, and the sentences
    that say them."""
    table = rows() if table is None else table
    count = Counter(r["agreement"] for r in table)
    keys = {"agrees": "cl_agree", "agrees within the tolerance": "cl_within", "partly": "cl_partly",
            "differs": "cl_differ", "not reproduced": "cl_unreproduced", "not testable here": "cl_untested"}
    return {"cl_rows": len(table), **{keys[v]: count.get(v, 0) for v in VERDICTS},
            "cl_differ_claims": "; ".join(r["claim"] for r in table if r["agreement"] == "differs") or "none",
            "cl_summary": tally_sentence(table), "cl_takeaway": takeaway(table),
            "cl_figure2": figure2_sentence(table) if any(r["claim"].startswith("past a transition size")
                                                          for r in table) else "",
            "cl_coverage": coverage_sentence(), "cl_lead": pairs_verdicts.NAMES[pairs_verdicts.lead()],
            "cl_target": pairs.rule(pairs_verdicts.RULE_SWEEP)["half_width_target"],
            # the two arithmetic rows the chapter names as examples of their kind
            "cl_example_width": bounds.PAPER_COROLLARY1["width"],
            "cl_example_depth": bounds.PAPER_COROLLARY1["depth"],
            "cl_example_threshold": float(bounds.depth_threshold(bounds.PAPER_COROLLARY1["width"])),
            "cl_layer_ratio": two_regimes.numbers()["tr_ratio"]}
