"""What the experiments verdicts rest on, recomputed from the stored runs independently of the
dwlib functions the chapters call: a shape whose seeds split at its chosen rate (and the caveat on
every pair it belongs to), the pilot's half-widths, the GPU pilot read with and without its largest
budget, the depths of Kaplan et al.'s figure that can lie below their threshold at a real width,
and the introduction's sentence on the paper's Figure 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dwlib import fmt
from dwlib.book import claims, discussion, figure2, intro
from dwlib.book import pairs_verdicts as pv
from dwlib.experiments import pairs
from dwlib.viz import pairs as vp

ROOT = Path(__file__).resolve().parents[1]
RULE = json.loads((ROOT / "dwlib" / "data" / "rules" / "cpu-pairs.json").read_text())


def _runs(name):
    lines = (ROOT / "dwlib" / "data" / "sweeps" / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def _half(gaps):
    g = np.asarray(gaps, float)
    return float(stats.t.ppf(0.5 + RULE["level"] / 2, g.size - 1) * g.std(ddof=1) / math.sqrt(g.size))


def _complete_shapes():
    """(budget, depth) -> {seed: loss} at the chosen rate, over the budgets with every seed of every depth,
    in the design the chapters read (tests/test_claims_rule.py checks which that is)."""
    runs = [r for r in _runs(pv.lead()) if r.get("chosen") and r["status"] == "completed"]
    by = {}
    for r in runs:
        by.setdefault((r["target_budget"], r["depth"]), {})[r["seed"]] = r["eval_loss"]
    seeds = {r["seed"] for r in runs}
    budgets = {b for b, _ in by if all(set(by.get((b, L), {})) == seeds for L in (2, 4, 8))}
    return {k: v for k, v in by.items() if k[0] in budgets}


def test_a_split_shape_is_found_from_the_runs_and_its_caveat_is_carried():
    target = RULE["half_width_target"]
    split = []
    for (b, L), losses in _complete_shapes().items():
        mine = [losses[s] for s in (0, 1)]
        rest = [v for s, v in losses.items() if s > 1]
        if max(min(rest) - max(mine), min(mine) - max(rest)) > target:
            split.append((b, L, np.mean(rest) - np.mean(mine)))
    found = [g for g in pv.seed_groups() if g["split"]]
    assert [(g["target_budget"], g["depth"]) for g in found] == [(b, L) for b, L, _ in sorted(split)]
    text, caveat = pv.split_sentence(), pv.split_caveat()
    if not split:
        assert caveat == "" and "does not split" in text
        return
    b, L, gap = sorted(split)[0]
    assert (f"At {fmt.count(b)} the {L}-layer network's six seeds split" in text
            or (f"of the {L}-layer network at {fmt.count(b)}" in text and "split at their chosen rate" in text))
    assert f"{abs(gap):.2f}" in text and "on average" in text
    pair = next(f"{s} vs {d}" for s, d in RULE["pairs"] if L in (s, d))
    assert f"of {pair}" in caveat
    # what the split leaves of the gap, recomputed: its sign stands when every seed's gap and the
    # interval of the seeds that did not choose the rate lie on one side of zero; else nothing
    shapes = _complete_shapes()
    s_, d_ = (int(x) for x in pair.split(" vs "))
    gaps = [shapes[(b, d_)][k] - shapes[(b, s_)][k] for k in shapes[(b, s_)]]
    later = [shapes[(b, d_)][k] - shapes[(b, s_)][k] for k in shapes[(b, s_)] if k > 1]
    lo, hi = np.mean(later) - _half(later), np.mean(later) + _half(later)
    kept = (all(g > 0 for g in gaps) and lo > 0) or (all(g < 0 for g in gaps) and hi < 0)
    if kept:
        assert f"the gap's size uncertain by about {abs(gap):.2f} nats, not its sign" in text
        assert f"the gap of {pair} at {fmt.count(b)} keeps its sign" in caveat
        assert f"{np.mean(later):+.3f}".replace("-", "\N{MINUS SIGN}") in text
    else:
        assert "measure of depth" in text and f"at {fmt.count(b)} is no measure of depth" in caveat
    # the chapter's opening counts the points that rest on split seeds and leaves the account below
    n = sum(len(p["points"]) for p in figure2.reading()["pairs"])
    k = pv.split_points()
    assert f"{pv.words(k)} of the {pv.words(n)} points rest{'s' * (k == 1)} on seeds that split" in figure2.result_sentence().lower()
    # the Discussion names the split where a point it reads rests on it (its smallest size), once
    rest = discussion.numbers()["ds_rest"]
    at_smallest = {(name, *k): v for name in pv.DESIGNS for k, v in pv.split_at(name).items()
                   if k[2] == min(pv.read(name)["budgets"])}  # the Discussion reads both designs
    for (_, s, d, _), depth in at_smallest.items():
        assert f"{s} vs {d}, the {depth}-layer network's seeds split" in rest
    assert "seeds split" not in rest or at_smallest
    assert caveat not in rest
    assert fmt.count(b) in pv.split_pointer()
    assert ("no measure of depth" in pv.split_pointer()) != ("not its sign" in pv.split_pointer())
    smallest = min(pv.read(pv.lead())["budgets"])  # the row reads the smallest size, so its caveat is that size's
    book = claims.worse_row()["book"]
    for (s, d, at), depth in pv.split_at().items():
        if at == smallest:  # said beside the pair, in a few words
            assert f"its {depth}-layer seeds split" in book.split(f"{s} vs {d} ", 1)[1].split(";")[0], book


def test_a_seed_apart_from_its_shape_is_named_with_the_half_widths_with_and_without_it():
    """A seed whose distance to its shape's nearest other seed exceeds both the others' spread
    and the target (shapes that split left to the test above) is named, and the half-width of
    each pair it belongs to is given with it and without it; the verdicts keep it."""
    target, shapes = RULE["half_width_target"], _complete_shapes()
    split = {(g["target_budget"], g["depth"]) for g in pv.seed_groups() if g["split"]}
    apart = []
    for (b, L), losses in sorted(shapes.items()):
        if (b, L) in split:
            continue
        for seed, loss in sorted(losses.items()):
            rest = [v for t, v in losses.items() if t != seed]
            if min(abs(loss - v) for v in rest) > max(max(rest) - min(rest), target):
                apart.append((b, L, seed))
    assert [(x["target_budget"], x["depth"], x["seed"]) for x in pv.lone_seeds()] == apart
    text = pv.lone_seed_sentence()
    assert (text == "") == (not apart)
    for b, L, seed in apart:
        assert f"at {fmt.count(b)} seed {seed} of the {L}-layer network (" in text
        for s, d in RULE["pairs"]:
            if L in (s, d):
                gaps = {k: shapes[(b, d)][k] - shapes[(b, s)][k] for k in shapes[(b, s)]}
                with_it, without = _half(list(gaps.values())), _half([v for k, v in gaps.items() if k != seed])
                assert f"{with_it:.3f} and {without:.3f} nats for {s} vs {d}" in text
    if apart:
        assert "The verdicts keep" in text and figure2.numbers()["fx_lone"] == text
        terms = pv.spread_terms()
        assert f"({target:g} nats)" in terms and "*lies apart*" in terms and "*split*" in terms
        assert figure2.numbers()["fx_spread_terms"] == terms


def test_the_pilots_half_widths_are_given():
    text = figure2.pilot_sentence()
    for name in figure2.PILOTS:
        runs = {(r["depth"], r["seed"]): r["eval_loss"] for r in _runs(name)}
        gaps = [runs[(8, s)] - runs[(4, s)] for s in range(6)]
        assert f"{_half(gaps):.3f} nats at" in text
    assert "likely" in text


def test_the_gpu_pilot_reads_every_budget_and_says_what_leaving_its_largest_out_gives():
    runs = {(r["depth"], r["target_budget"], r["seed"]): r["eval_loss"] for r in _runs("gpu-slice")}
    budgets = sorted({b for _, b, _ in runs})
    row = next(x for x in figure2.earlier_rows() if x["sweep"] == "the GPU pilot" and x["pair"] == "6 vs 12")
    gaps = {b: [runs[(12, b, s)] - runs[(6, b, s)] for s in (0, 1) if (12, b, s) in runs and (6, b, s) in runs]
            for b in budgets}
    top, prev = budgets[-2], budgets[-3]
    if len(gaps[top]) > 1 and np.mean(gaps[top]) + _half(gaps[top]) < 0 < np.mean(gaps[prev]) - _half(gaps[prev]) \
            and np.mean(gaps[budgets[-1]]) > 0:
        assert row["crosses by the rule"] == f"no (yes without {fmt.count(budgets[-1])})"
        text = pv.gpu_pilot_sentence()
        assert f"between {fmt.count(prev)} and {fmt.count(top)}" in text
        assert f"{abs(np.mean(gaps[top])):.3f}" in text
        # said there once: the chapter's verdict on Figure 2 does not repeat it
        assert f"between {fmt.count(prev)} and {fmt.count(top)}" not in figure2.numbers()["fx_reproduced"]


def test_the_introductions_statement_counts_the_declared_points_and_says_where_the_fit_puts_a_transition():
    """The introduction says what the declared rule gives and no more: no crossing, each (pair,
    size) point counted by its verdict, the pilot predating the rule left to the chapter, and
    whether the sizes read reach the authors' fit's first transition."""
    text = figure2.intro_sentence()
    r = figure2.reading()
    verdicts = [x["verdict"] for p in r["pairs"] for x in p["points"]]
    assert "Figure 2" in text and "declared" in text and "GPU pilot" not in text
    worse, better = verdicts.count(pairs.WORSE), verdicts.count(pairs.BETTER)
    unresolved = len(verdicts) - worse - better
    if worse == len(verdicts):
        assert f"the deeper network is worse at all {pv.words(worse)} (pair, size) points" in text
    else:
        def said(k):
            return pv.words(k) if k else "none"
        assert (f"worse at {said(worse)} of the {pv.words(len(verdicts))} (pair, size) points, not resolved at "
                f"{said(unresolved)} and better at {said(better)}") in text
    assert "at 0" not in text
    power = r["power"]
    assert f"is reached at {pv.words(power['within'])} of the {pv.words(power['points'])} points" in text
    assert "rather than comparably" not in text
    # where the authors' fit places a transition follows as a paragraph of its own
    fit = intro.numbers()["intro_fit"]
    lo, hi = min(figure2.authors_range(*p) for p in r["rule"]["pairs"])
    assert f"between {fmt.count(lo)} and {fmt.count(hi)}" in fit
    assert ("so they test the paper's first regime" in fit) == (max(r["budgets"]) < lo)


def test_only_the_depths_below_their_threshold_at_a_real_width_are_named():
    models = json.loads((ROOT / "dwlib" / "data" / "models.json").read_text())
    items = models if isinstance(models, list) else models.get("models", models)
    widest = max(m["width"] for m in items if isinstance(m, dict) and "width" in m)
    below = [L for L in discussion.FIGURE1_DEPTHS if 3 ** L < widest]
    n = discussion.numbers()
    assert n["f1_widest_width"] == widest
    assert n["f1_only"] == (f"only depth {below[0]}" if len(below) == 1 else n["f1_only"])


def test_no_depth_is_drawn_in_a_verdicts_colour():
    assert not set(vp.DEPTH_COLOURS) & set(vp.VERDICT_COLOURS.values())


def test_figure_7_1s_caption_is_under_150_words():
    assert len(figure2.caption().split()) < 150


def test_the_bounds_table_marks_trained_and_planned_rows():
    shapes = _complete_shapes()
    for row in figure2.bounds_rows():
        s, d = (int(x) for x in row["pair"].split(" vs "))
        if (row["budget"], s) in shapes and (row["budget"], d) in shapes:
            assert row["trained"] == "in full"
        else:
            assert row["trained"] in ("in part", "not yet")


@pytest.mark.parametrize("text", ["predict no advantage", "It does so also"])
def test_the_discussions_fixed_wording(text):
    nb = json.loads((ROOT / "book" / "discussion.ipynb").read_text())
    prose = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert text not in prose and text not in " ".join(str(v) for v in discussion.numbers().values())
