"""The doubling sweep's sentences (dwlib.book.pairs_verdicts) on synthetic readings: coverage as a
plain fact (no progress bulletin), one sentence per pair, the seeds 2-5 reading as one sentence,
the precision reached with its half-widths, and the size difference of each pair with its
direction."""

from __future__ import annotations

import math

import pytest

from dwlib.book import pairs_verdicts as pv
from dwlib.experiments import pairs

#: the declared rule, as the readings of the book carry it
RULE = pairs.rule(pv.RULE_SWEEP)

BULLETIN = ("under way", "so far", "as its budgets complete", "yet")


def _point(b, mean, half, sizes=(98304, 110592), n=6):
    lo, hi = (mean - half, mean + half) if half is not None else (-math.inf, math.inf)
    iv = {"mean": mean, "half_width": half, "low": lo, "high": hi, "n": n}
    return {"target_budget": b, **iv, "verdict": pairs.point_verdict(iv), "budgets": None, "_sizes": sizes}


def _pair(shallow, deep, pts):
    for p in pts:
        s, d = p.pop("_sizes")
        p["budgets"] = {shallow: s, deep: d}
    return {"shallow": shallow, "deep": deep, "points": pts, "verdict": pairs.pair_verdict(
        [{**p, "deep": deep} for p in pts])}


def _reading(prs, within=0):
    rule = {k: RULE[k] for k in ("half_width_target", "half_width_share", "level", "regime_1")}
    rows = [x for p in prs for x in p["points"]]
    return {"rule": rule, "pairs": prs, "budgets": sorted({x["target_budget"] for x in rows}),
            "power": pairs.power(rows, 0.03)}


def test_span_says_at_for_one_size_and_from_to_for_a_range():
    assert pv.span([1e5]) == "at 100K"
    assert pv.span([1e5, 2e5, 4e5], [1e5, 2e5, 4e5, 8e5]) == "from 100K to 400K"
    assert pv.span([1e5, 4e5], [1e5, 2e5, 4e5]) == "at 100K and 400K"


@pytest.mark.parametrize("done, some, expected", [
    ([1e5], [2e5], "The stored results of the tied doubling-pairs sweep hold every seed of every depth at 100K "
                   "non-embedding parameters, the size the verdicts read; some runs at 200K, which the verdicts "
                   "do not use; and no run at 400K, 800K or 1.6M."),
    ([1e5, 2e5, 4e5], [], "The stored results of the tied doubling-pairs sweep hold every seed of every depth at "
                          "100K, 200K and 400K non-embedding parameters, the sizes the verdicts read; and no run at "
                          "800K or 1.6M."),
    ([1e5, 2e5, 4e5, 8e5, 1.6e6], [], "The stored results of the tied doubling-pairs sweep hold every seed of every "
                                      "depth at 100K, 200K, 400K, 800K and 1.6M non-embedding parameters, the sizes "
                                      "the verdicts read."),
])
def test_coverage_is_a_plain_fact(monkeypatch, done, some, expected):
    """Which sizes the stored runs cover, said once as a fact: no progress report ('planned',
    'complete at')."""
    monkeypatch.setattr(pv, "read", lambda sweep, seeds=None: {"budgets": done})
    monkeypatch.setattr(pv, "stored_results", lambda sweep: [{"target_budget": b, "status": "completed"}
                                                             for b in done + some])
    text = pv.coverage_sentence("cpu-pairs")
    assert text == expected
    assert not any(w in text for w in BULLETIN + ("planned", "complete at"))


def test_one_sentence_per_pair_at_one_size():
    unresolved = _pair(2, 4, [_point(1e5, -0.061, 0.155)])
    worse = _pair(4, 8, [_point(1e5, 0.215, 0.039, sizes=(110592, 98304))])
    a, b = pv.pair_sentence(unresolved), pv.pair_sentence(worse)
    assert a.count(".") - a.count("0.") == 1 and "contains zero: the pair is not resolved" in a
    assert "could resolve only a gap larger than that" in a and "0.155 nats" in a
    assert "0.061 nats lower" in a and "-0.216 to +0.094" in a
    assert b.startswith("At 100K, the 8-layer network is worse than the 4-layer one") and "0.215 nats higher" in b
    r = _reading([unresolved, worse])
    summary = pv.regime_summary(r)
    # the rule's label is quoted as the rule's; an unresolved pair is never agreement with the paper,
    # and the paper's "comparably" is set against the resolved "worse"
    assert "first regime describes" not in summary and "regime 1" in summary
    assert "2 vs 4 at 100K is not resolved, which is neither agreement nor disagreement" in summary
    assert "resolved worse in 4 vs 8 at 100K, where the paper's first regime says the two \"perform comparably\"" \
        in summary
    t = pv.transition_summary(r)
    assert t.count("transition") == 1 and "none can be read at 100K alone" in t


def test_a_pair_over_several_sizes_and_its_transition():
    p = _pair(2, 4, [_point(1e5, 0.1, 0.02), _point(2e5, 0.0, 0.05), _point(4e5, -0.1, 0.02)])
    text = pv.pair_sentence(p)
    assert text == ("The 4-layer network is worse than the 2-layer network at 100K, not resolved from it at 200K "
                    "and better at 400K.")
    q = _pair(2, 4, [_point(1e5, 0.1, 0.02), _point(2e5, -0.1, 0.02)])
    assert "it crosses between 100K and 200K" in pv.pair_sentence(q)
    assert pv.transition_summary(_reading([q, _pair(4, 8, [_point(1e5, 0.1, 0.02), _point(2e5, 0.1, 0.02)])])) \
        == "By the rule, one of the two pairs crosses from 100K to 200K."


def test_seeds_reading_is_one_sentence_and_names_what_differs():
    full = _reading([_pair(2, 4, [_point(1e5, -0.06, 0.155)])])
    same = _reading([_pair(2, 4, [_point(1e5, -0.05, 0.16, n=4)])])
    other = _reading([_pair(2, 4, [_point(1e5, -0.15, 0.1, n=4)])])
    assert pv.seeds_sentence(full, same, (2, 3, 4, 5)) == (
        "The same verdicts hold on seeds 2 to 5 alone, without the two seeds that chose the learning rates.")
    text = pv.seeds_sentence(full, other, (2, 3, 4, 5))
    assert text.startswith("On seeds 2 to 5 alone") and "one verdict differs" in text
    assert "the 4-layer network is better than the 2-layer one, where all six seeds resolve no difference" in text


def test_power_states_the_half_widths_and_what_falling_short_means():
    r = _reading([_pair(2, 4, [_point(1e5, -0.06, 0.155)]), _pair(4, 8, [_point(1e5, 0.2, 0.039)])])
    text = pv.power_sentence(r)
    assert "at neither point" in text and "0.155 nats for 2 vs 4" in text and "0.039 nats for 4 vs 8" in text
    two = _reading([_pair(2, 4, [_point(1e5, -0.06, 0.155), _point(2e5, 0.1, 0.02)]),
                    _pair(4, 8, [_point(1e5, 0.2, 0.039), _point(2e5, 0.1, 0.01)])])
    assert "(for 2 vs 4 and 4 vs 8: 0.155 and 0.039 nats at 100K; 0.020 and 0.010 at 200K)" in pv.power_sentence(two)
    assert "short of the target" in text and "a true gap smaller than that half-width could not be told from zero" in text
    # what the shortfall does: an interval around zero leaves its point open
    assert "one of the two intervals contains zero (half-width 0.155 nats), so there the verdict stays open" in text
    ok = _reading([_pair(2, 4, [_point(1e5, -0.06, 0.02)])])
    assert pv.power_sentence(ok).endswith("meeting the target.")
    # two of the points read miss the target: with 10 planned, 8 can still meet 75%; with 6, not
    assert "can no longer be met" not in pv.power_sentence(r, planned=10)
    assert pv.power_sentence(r, planned=6).endswith(
        "Of the 6 points the design plans, 2 already miss it, so the target of 75% can no longer be met, "
        "whatever the sizes still to come give.")
    assert "can no longer be met" not in pv.power_sentence(r, planned=2)  # every planned point read


def test_sizes_differ_and_the_direction_is_said_per_pair():
    r = _reading([_pair(2, 4, [_point(1e5, 0.0, 0.1, sizes=(98304, 110592))]),
                  _pair(4, 8, [_point(1e5, 0.0, 0.1, sizes=(110592, 98304))])])
    text = pv.size_sentence(r, 8)
    assert "at 100K, +12.5% for 2 vs 4 and \N{MINUS SIGN}11.1% for 4 vs 8." in text
    assert "favouring the deeper network at some points and the shallower one at others" in text
    same = _reading([_pair(2, 4, [_point(1e5, 0.0, 0.1, sizes=(98304, 110592))])])
    assert "favouring" not in pv.size_sentence(same, 8)


@pytest.mark.parametrize("n, total, expected", [
    (0, 2, "neither point"), (2, 2, "both points"), (1, 2, "one of the two points"), (0, 1, "no point"),
    (1, 1, "the one point"), (0, 4, "none of the four points"), (4, 4, "all four points"), (3, 12, "three of the 12 points"),
])
def test_counts_read_as_english(n, total, expected):
    assert pv.count_of(n, total, "point") == expected


def _u(b, mean=0.0):
    return _point(b, mean, 0.1)


def _b(b):
    return _point(b, -0.2, 0.05)


def _w(b):
    return _point(b, 0.2, 0.05)


def test_the_papers_own_form_of_the_test():
    """From some size on the deeper network is resolved better at every larger size, and before
    it nothing is resolved either way (the paper's "perform comparably")."""
    comparable_then_better = _pair(2, 4, [_u(1e5), _u(2e5), _b(4e5), _b(8e5)])
    assert pv.paper_form(comparable_then_better) == {"from": 4e5, "before": [1e5, 2e5], "reason": "transition"}
    # the declared rule does not count it (no resolved "worse" first): the paper's form does
    assert comparable_then_better["verdict"]["transition"] is None
    assert pv.paper_form(_pair(2, 4, [_u(1e5), _b(2e5), _u(4e5)]))["from"] is None
    assert pv.paper_form(_pair(2, 4, [_w(1e5), _b(2e5)]))["reason"] == "a resolved size before the better ones"
    assert pv.paper_form(_pair(2, 4, [_b(1e5), _b(2e5)]))["reason"] == "better from the smallest size"
    assert pv.paper_form(_pair(2, 4, [_u(1e5)]))["from"] is None
    text = pv.paper_form_sentence(_reading([comparable_then_better, _pair(4, 8, [_w(1e5), _w(2e5), _u(4e5), _u(8e5)])]))
    assert "one of the two pairs shows the transition: 2 vs 4 from 400K on, after 100K and 200K" in text
    assert "in 4 vs 8 the deeper network is not resolved better at 800K" in text
    assert "the declared rule is the stricter of the two" in text
    none = pv.paper_form_sentence(_reading([_pair(2, 4, [_u(1e5, -0.06)]), _pair(4, 8, [_w(1e5)])]))
    assert "no pair shows the transition" in none


def _rule_reading(prs):
    r = _reading(prs)
    r["rule"] |= {"level": 0.95}
    return r


def test_the_result_says_not_resolved_and_what_the_seeds_without_the_rate_choice_show(monkeypatch):
    """The experiments chapter's Result: an unresolved pair is 'not resolved', with its interval and
    how far its half-width is from the design's target; where seeds 2-5 resolve it, the Result says
    so; a resolved 'worse' is set against the paper's 'comparably', with the size difference of
    whole heads (a synthetic reading, said as the tied design's)."""
    from dwlib.book import figure2
    monkeypatch.setattr(pv, "lead", lambda: "cpu-pairs")
    r = _rule_reading([_pair(2, 4, [_point(1e5, -0.061, 0.155)]),
                       _pair(4, 8, [_point(1e5, 0.215, 0.039, sizes=(110592, 98304))])])
    later = _rule_reading([_pair(2, 4, [_point(1e5, -0.149, 0.100, n=4)]),
                           _pair(4, 8, [_point(1e5, 0.2, 0.05, sizes=(110592, 98304), n=4)])])
    text = figure2.verdict_sentence(r, later, (2, 3, 4, 5))
    assert "no better" not in text and "first regime describes" not in text
    assert "2 vs 4 layers: not resolved (-0.061 nats, interval -0.216 to +0.094;" in text
    assert "its half-width, 0.155 nats, is about five times the design's 0.03-nat target" in text
    assert ("on seeds 2 to 5 alone, which did not choose the learning rates, the deeper network is resolved "
            "better (-0.149 nats, interval -0.249 to -0.049), with about 12% more non-embedding parameters") in text
    assert ("4 vs 8 layers: the deeper network is worse (+0.215 nats, interval +0.176 to +0.254), where the "
            "paper's first regime has the two \"perform comparably\"; here the deeper network has about 11% "
            "fewer non-embedding parameters than the shallower one (widths are whole heads)") in text
    assert "cannot show a transition" in text
    # without a differing later reading nothing about seeds 2 to 5 is said
    assert "seeds 2 to 5" not in figure2.verdict_sentence(r, r, (2, 3, 4, 5))
    sub = figure2.chart_conclusion(r)
    assert sub == "2 vs 4: not resolved (-0.061 \u00b1 0.155); 4 vs 8: deeper worse (+0.215 \u00b1 0.039); one size, no curve"
    cap = figure2.caption(r, later, (2, 3, 4, 5))
    assert cap.startswith("At the first size of the tied doubling-pairs sweep, 100K non-embedding parameters, one "
                          "size cannot show a transition, and the deeper network is resolved better at none of the two "
                          "points (on seeds 2 to 5 alone, which did not choose the rates, at one: 2 vs 4 at 100K). "
                          "It is worse at one, where the paper expects the two to perform comparably, and not "
                          "resolved at one.")
    assert "One row per pair: held-out loss" in cap and "form of the paper" not in cap


def test_the_chapters_result_is_the_computed_one():
    """The Result's glued sentence is the computed verdict, not a progress report (Figure 7.2's
    caption, computed too: tests/test_captions.py)."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "book" / "experiments.ipynb").read_text())
    result = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("**The result.**"))
    assert "fx_result" in result and "fx_coverage" not in result
    # the Takeaway summarises rather than repeats the Result
    takeaway = next("".join(c["source"]) for c in nb["cells"] if ":class: tip" in "".join(c["source"]))
    assert "fx_result" not in takeaway and "fx_verdict" not in takeaway


def test_the_figures_subtitle_opens_with_its_conclusion_one_pair_a_line():
    from dwlib.book import figure2
    lines = figure2.chart_conclusion(figure2.reading()).split("; ")
    subtitle = figure2.chart().to_dict()["title"]["subtitle"]
    assert subtitle[:len(lines)] == lines and all(len(x) <= 48 for x in lines)


def test_the_subtitle_has_one_short_line_per_pair_and_size():
    from dwlib.book import figure2
    r = _rule_reading([_pair(2, 4, [_point(1e5, 0.1, 0.02), _point(1.6e6, -0.061, 0.155)]),
                       _pair(4, 8, [_point(1e5, 0.2, 0.05), _point(1.6e6, 0.01, 0.05)])])
    lines = figure2.chart_conclusion(r).split("; ")
    assert lines == ["2 vs 4 at 100K: deeper worse (+0.100 \u00b1 0.020)", "2 vs 4 at 1.6M: not resolved (-0.061 \u00b1 0.155)",
                     "4 vs 8 at 100K: deeper worse (+0.200 \u00b1 0.050)", "4 vs 8 at 1.6M: not resolved (+0.010 \u00b1 0.050)"]
    assert all(len(x) <= 48 for x in lines)


def test_the_fit_clause_says_what_the_verdicts_inside_a_range_leave_of_it():
    """Inside the authors' range for 2 vs 4 (714K to 1.78M) the deeper network resolved worse at
    800K and 1.6M: by the rule a transition can lie only above 1.6M."""
    from dwlib.book import figure2
    r = _reading([_pair(2, 4, [_point(8e5, 0.205, 0.015), _point(1.6e6, 0.089, 0.088)]),
                  _pair(4, 8, [_point(8e5, 0.274, 0.01), _point(1.6e6, 0.257, 0.011)])])
    r["rule"]["pairs"] = [[2, 4], [4, 8]]
    text = figure2.fit_reach_clause(r)
    assert text.startswith("the authors' fit, read as placing a pair's transition between the sizes at which its "
                           "two depths are optimal (an expectation from other scales, not a verdict), places 2 vs 4's "
                           "transition between 714K and 1.78M and 4 vs 8's between 1.78M and 5.56M")
    assert "inside 2 vs 4's range the sizes read are 800K and 1.6M, where the deeper network is worse at both" in text
    assert "a 2 vs 4 transition, if there is one, lies above 1.6M: between it and 1.78M, or beyond the range" in text
    assert "4 vs 8's range lies above the sizes read" in text
    # a point inside the range that is not resolved says so, and bounds nothing
    r = _reading([_pair(2, 4, [_point(8e5, 0.01, 0.1)]), _pair(4, 8, [_point(8e5, 0.274, 0.01)])])
    r["rule"]["pairs"] = [[2, 4], [4, 8]]
    text = figure2.fit_reach_clause(r)
    assert "where the deeper network is not resolved" in text and "if there is one" not in text


def test_the_second_design_is_read_on_its_own_and_said_with_its_reason(monkeypatch):
    from dwlib.book import figure2
    from dwlib.book import pairs_verdicts as pv
    monkeypatch.setattr(pv, "lead", lambda: "cpu-pairs")  # the tied design leads: the untied one is second
    assert figure2.second_sentence(False) == ""  # nothing published: nothing said
    u = _reading([_pair(2, 4, [_point(1e5, 0.05, 0.02)]), _pair(4, 8, [_point(1e5, 0.01, 0.04)])])
    text = figure2.second_sentence(u)
    design = figure2.second_design_sentence()
    assert "never pooled with the tied design" in design and "output layer of its own" in design
    assert text.startswith("The second design has complete results at one of the five sizes (100K).")
    # the reading without the rate-choosing seeds, as the rule asks: same, or where it changes
    same = figure2.second_sentence(u, later=u, seeds=(2, 3, 4, 5))
    assert same.endswith("On seeds 2 to 5 alone, which did not choose the rates, every verdict is the same.")
    other = _reading([_pair(2, 4, [_point(1e5, 0.0, 0.02)]), _pair(4, 8, [_point(1e5, 0.01, 0.04)])])
    changed = figure2.second_sentence(u, later=other, seeds=(2, 3, 4, 5))
    assert changed.endswith("the verdict changes at 2 vs 4 at 100K from deeper worse to not resolved (+0.000 \N{PLUS-MINUS SIGN} 0.020 nats).")
    assert ("By the rule, the 4-layer network is worse than the 2-layer network at 100K; the 8-layer network is "
            "not resolved from the 4-layer network at 100K. The table below") in text
    table = figure2.points_table(u)
    assert table.loc[("2 vs 4", "100K")].tolist() == ["64*, 48*", "+0.050", "+0.030 to +0.070", "0.020",
                                                     "deeper worse"]
    assert table.loc[("4 vs 8", "100K")].tolist() == ["48*, 32*", "+0.010", "-0.030 to +0.050", "0.040", "not resolved"]
    assert "The half-width is at most 0.03 nats at one of these two points" in text
    assert not any(w in text for w in BULLETIN)


def test_a_point_that_repeats_the_vocabulary_control_is_said_to_be_no_independent_evidence():
    """The untied design's 2 vs 4 at 200K has the vocabulary control's run keys: the book says so,
    computed from the two sweeps' stored keys."""
    from dwlib.book import figure2
    from dwlib.experiments.records import stored_results
    control = {r["key"] for r in stored_results("vocab-full") if r.get("chosen")}
    untied = [r for r in stored_results("cpu-pairs-untied") if r.get("chosen")]
    shared = sorted({(r["depth"], r["target_budget"]) for r in untied if r["key"] in control})
    text = figure2._repeats("cpu-pairs-untied")
    if not shared:
        assert "run for run" not in text
        return
    assert "run for run, the settings of 2 vs 4 at 200K here" in text and "no evidence independent" in text


def test_the_lead_passes_to_the_untied_design_when_it_has_as_many_complete_sizes():
    """The rule file's entry for the second design: the chapter leads with it once it has every
    seed of every depth at as many budgets as the first; until then with the first."""
    from dwlib.book import pairs_verdicts as pv
    first, second = pv.DESIGNS
    assert pv.lead_of({first: 5, second: 4}) == first
    assert pv.lead_of({first: 5, second: 5}) == second
    assert pv.lead_of({first: 4, second: 5}) == second
    assert pv.lead_of({first: 0, second: 0}) == first  # nothing complete: the first, as declared
    assert pv.lead_of({first: 5}) == first  # the second not published
    assert pv.lead() in pv.DESIGNS and pv.second() in pv.DESIGNS and pv.lead() != pv.second()


def test_when_the_untied_design_leads_the_chapter_says_so(monkeypatch):
    """With the untied design leading (forced here; the stored runs decide it in the book), the
    chapter's sentences describe it: its output layer, its name, and the tied design as the other."""
    from dwlib.book import claims, discussion, figure2, guidelines
    from dwlib.book import pairs_verdicts as pv
    monkeypatch.setattr(pv, "lead", lambda: "cpu-pairs-untied")
    figure2.reading.cache_clear()
    claims._readings.cache_clear()
    try:
        assert pv.second() == "cpu-pairs"
        assert figure2.output_clause().startswith("an output layer: in the untied design, which leads this chapter, "
                                                  "a matrix of vocabulary by width; in the tied design, the token "
                                                  "embedding, transposed")
        said = figure2.embedding_sentence()
        assert "through an output layer of its own" in said and "in the untied design" in said
        design = figure2.second_design_sentence()
        assert "The first tied the output layer to the input embedding" in design
        assert "the first design's results follow" in design
        text = figure2.second_sentence()
        assert text.startswith("The first design has complete results at")
        assert "the untied doubling-pairs sweep" in figure2.caption() or "the untied" in figure2.takeaway_sentence()
        assert list(discussion.sweeps())[:2] == ["cpu-pairs-untied", "cpu-pairs"]
        n = figure2.numbers()
        assert n["fx_output"].startswith("an output layer: in the untied design, which leads")
        # the chapters that repeat the verdicts follow the lead
        assert claims.numbers()["cl_coverage"].startswith("The untied doubling-pairs sweep has")
        d = discussion.numbers()
        assert "the book's main sweep" in d["ds_rule_small"]
        assert d["ds_rule_scope"].startswith("The untied doubling-pairs sweep enters")
        assert "the untied doubling-pairs sweep" in guidelines.scope_sentence(None) or not guidelines.scope_sentence(None)
    finally:
        figure2.reading.cache_clear()
        claims._readings.cache_clear()


def test_the_precision_clause_says_what_a_shortfall_does_to_the_verdicts():
    """Short of the target with every interval clear of zero: the shortfall moves no verdict, with
    the interval end nearest zero; with an interval around zero, the verdict there stays open."""
    clear = _reading([_pair(2, 4, [_point(1e5, 0.1, 0.05), _point(2e5, 0.2, 0.01)]),
                      _pair(4, 8, [_point(1e5, 0.3, 0.04), _point(2e5, 0.1, 0.02)])])
    text = pv.precision_clause(clear)
    assert text.startswith("the paired 95% half-width is at most 0.03 nats at two of the four points, short of the "
                           "rule's target of three quarters, but every interval lies above zero (the lowest end at "
                           "+0.050 nats), so the shortfall moves no verdict")
    assert "no verdict" in pv.precision_clause(clear, brief=True) and "lowest end +0.050" in pv.precision_clause(
        clear, brief=True)
    assert pv.precision_clause(clear, short=True) == ("half-width within 0.03 nats at 2 of 4 points (short of the "
                                                      "target); every interval above zero")
    open_ = _reading([_pair(2, 4, [_point(1e5, 0.01, 0.05), _point(2e5, 0.2, 0.01)]),
                      _pair(4, 8, [_point(1e5, 0.3, 0.04), _point(2e5, 0.1, 0.02)])])
    text = pv.precision_clause(open_)
    assert "one of the four intervals contains zero (half-width 0.050 nats), so there the verdict stays open" in text
    assert "moves no verdict" not in text
    met = _reading([_pair(2, 4, [_point(1e5, 0.1, 0.02)])])
    assert pv.precision_clause(met).endswith("meeting the rule's target of three quarters")
    assert pv.precision_consequence(met) == ""


def test_regime_one_when_every_point_is_worse_is_one_finding_said_without_the_sizes():
    r = _reading([_pair(2, 4, [_w(1e5), _w(2e5)]), _pair(4, 8, [_w(1e5), _w(2e5)])])
    text = pv.regime_summary(r)
    assert "joins two different findings" not in text and "100K" not in text
    assert "at all four points the deeper network is resolved worse" in text and "perform comparably" in text
    mixed = pv.regime_summary(_reading([_pair(2, 4, [_w(1e5), _u(2e5)]), _pair(4, 8, [_w(1e5), _w(2e5)])]))
    assert "joins two different findings" in mixed and "2 vs 4 at 200K is not resolved" in mixed
