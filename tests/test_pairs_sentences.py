"""The doubling sweep's sentences (dwlib.book.pairs_verdicts) on synthetic readings: coverage as a
plain fact (no progress bulletin), one sentence per pair, the seeds 2-5 reading as one sentence,
the precision reached with its half-widths, and the size difference of each pair with its
direction."""

from __future__ import annotations

import math

import pytest

from dwlib.book import pairs_verdicts as pv
from dwlib.experiments import pairs

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
    rule = {"half_width_target": 0.03, "half_width_share": 0.75}
    rows = [x for p in prs for x in p["points"]]
    return {"rule": rule, "pairs": prs, "budgets": sorted({x["target_budget"] for x in rows}),
            "power": pairs.power(rows, 0.03)}


def test_span_says_at_for_one_size_and_from_to_for_a_range():
    assert pv.span([1e5]) == "at 100K"
    assert pv.span([1e5, 2e5, 4e5], [1e5, 2e5, 4e5, 8e5]) == "from 100K to 400K"
    assert pv.span([1e5, 4e5], [1e5, 2e5, 4e5]) == "at 100K and 400K"


@pytest.mark.parametrize("done, expected", [
    ([1e5], "Results are complete at 1 of the 5 planned sizes (100K non-embedding parameters); "
            "the verdicts below cover that size."),
    ([1e5, 2e5, 4e5], "Results are complete at 3 of the 5 planned sizes (100K to 400K non-embedding "
                      "parameters); the verdicts below cover those sizes."),
    ([1e5, 2e5, 4e5, 8e5, 1.6e6], "Results are complete at all 5 planned sizes (100K to 1.6M non-embedding "
                                  "parameters); the verdicts below cover them all."),
])
def test_coverage_is_a_plain_fact(monkeypatch, done, expected):
    monkeypatch.setattr(pv, "read", lambda sweep, seeds=None: {"budgets": done})
    text = pv.coverage_sentence("cpu-pairs")
    assert text == expected
    assert not any(w in text for w in BULLETIN)


def test_one_sentence_per_pair_at_one_size():
    unresolved = _pair(2, 4, [_point(1e5, -0.061, 0.155)])
    worse = _pair(4, 8, [_point(1e5, 0.215, 0.039, sizes=(110592, 98304))])
    a, b = pv.pair_sentence(unresolved), pv.pair_sentence(worse)
    assert a.count(".") - a.count("0.") == 1 and "contains zero: no difference is resolved" in a
    assert "0.061 nats lower" in a and "-0.216 to +0.094" in a
    assert b.startswith("At 100K, the 8-layer network is worse than the 4-layer one") and "0.215 nats higher" in b
    r = _reading([unresolved, worse])
    assert pv.regime_summary(r) == "So in both pairs the deeper network is no better at 100K, as the paper's first regime describes."
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
        == "By the rule, 1 of the 2 pairs crosses from 100K to 200K."


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
    assert "at 0 of the 2 points" in text and "0.155 nats for 2 vs 4" in text and "0.039 nats for 4 vs 8" in text
    assert "short of the target" in text and "cannot be told from zero" in text
    ok = _reading([_pair(2, 4, [_point(1e5, -0.06, 0.02)])])
    assert pv.power_sentence(ok).endswith("meeting the target.")


def test_sizes_differ_and_the_direction_is_said_per_pair():
    r = _reading([_pair(2, 4, [_point(1e5, 0.0, 0.1, sizes=(98304, 110592))]),
                  _pair(4, 8, [_point(1e5, 0.0, 0.1, sizes=(110592, 98304))])])
    text = pv.size_sentence(r, 8)
    assert "the 4-layer network has 110,592 against the 2-layer network's 98,304 (12.5% more)" in text
    assert "the 8-layer network has 98,304 against the 4-layer network's 110,592 (11.1% fewer)" in text
    assert "favours the deeper network in one pair and the shallower one in the other" in text
    same = _reading([_pair(2, 4, [_point(1e5, 0.0, 0.1, sizes=(98304, 110592))])])
    assert "favours" not in pv.size_sentence(same, 8)
