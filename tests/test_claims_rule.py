"""The claims table's experiment rows follow the one declared rule (the rule file of the CPU
doubling-pairs sweep), recomputed here from the stored runs and the rule file's own words,
independently of the dwlib functions the rows call: the paired interval mean +/- t s / sqrt(n)
over seeds, a point's verdict by which side of zero the interval lies, and a transition only
where the interval lies above zero at one budget and below it at the next, with the mean gap
negative at every larger budget."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats

from dwlib import fmt
from dwlib.book import claims
from dwlib.book import pairs_verdicts as pv

ROOT = Path(__file__).resolve().parents[1]
RULE = json.loads((ROOT / "dwlib" / "data" / "rules" / "cpu-pairs.json").read_text())
SWEEPS = {"cpu-pairs": [tuple(p) for p in RULE["pairs"]], "cpu-pairs-untied": [tuple(p) for p in RULE["pairs"]],
          "cpu-fig2": [(1, 2), (2, 4)],
          "mini": [(1, 2), (2, 4), (4, 8)], "gpu-slice": [(6, 12), (12, 24)]}


def _records(name):
    lines = (ROOT / "dwlib" / "data" / "sweeps" / f"{name}.jsonl").read_text().splitlines()
    recs = [json.loads(line) for line in lines if line.strip()]
    if any("chosen" in r for r in recs):  # a sweep that chooses a rate per shape: its chosen runs only
        recs = [r for r in recs if r.get("chosen")]
    return [r for r in recs if r["status"] == "completed" and r.get("eval_loss") is not None
            and math.isfinite(r["eval_loss"])]


def _complete(recs, depths):
    seeds = {r["seed"] for r in recs}
    want = {(L, s) for L in depths for s in seeds}
    have = {}
    for r in recs:
        have.setdefault(r["target_budget"], set()).add((r["depth"], r["seed"]))
    return {b for b, got in have.items() if want <= got}


def _points(recs, shallow, deep, budgets=None):
    """Per budget both depths reach (of ``budgets``): (budget, n, mean, low, high)."""
    loss = {(r["depth"], r["target_budget"], r["seed"]): r["eval_loss"] for r in recs}
    out = []
    for b in sorted({b for L, b, _ in loss if L == shallow} & {b for L, b, _ in loss if L == deep}):
        if budgets is not None and b not in budgets:
            continue
        gaps = [loss[(deep, b, s)] - loss[(shallow, b, s)] for L, bb, s in loss
                if L == shallow and bb == b and (deep, b, s) in loss]
        n, mean = len(gaps), sum(gaps) / len(gaps)
        if n < 2:
            out.append((b, n, mean, -math.inf, math.inf))
            continue
        sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (n - 1))
        half = stats.t.ppf(0.5 + RULE["level"] / 2, n - 1) * sd / math.sqrt(n)
        out.append((b, n, mean, mean - half, mean + half))
    return out


def _crosses(points):
    for i in range(len(points) - 1):
        (_, _, m1, lo1, _), (_, _, m2, _, hi2) = points[i], points[i + 1]
        if m1 > 0 > m2 and lo1 > 0 and hi2 < 0 and all(p[2] < 0 for p in points[i + 1:]):
            return True
    return False


def _readings():
    out = {}
    for name, prs in SWEEPS.items():
        recs = _records(name)
        # the designs the rule file names are read over their complete budgets; earlier sweeps at every one
        budgets = _complete(recs, {d for p in prs for d in p}) if name in ("cpu-pairs", "cpu-pairs-untied") else None
        out[name] = {p: _points(recs, *p, budgets=budgets) for p in prs}
    return out


@pytest.fixture(scope="module")
def readings():
    return _readings()


def _lead() -> str:
    """The design the chapters read, by the rule file's entry for the untied design: it leads once
    it has every seed of every depth at as many budgets as the tied design (counted here)."""
    depths = {d for p in RULE["pairs"] for d in p}
    tied, untied = (len(_complete(_records(name), depths)) for name in ("cpu-pairs", "cpu-pairs-untied"))
    return "cpu-pairs-untied" if untied and untied >= tied else "cpu-pairs"


def test_the_chapters_read_the_design_the_rule_file_puts_first():
    assert pv.lead() == _lead()


def test_the_rule_file_states_what_is_recomputed_here():
    assert RULE["level"] == 0.95 and "entirely above zero" in RULE["transition"]
    assert "negative at every budget above b2" in RULE["transition"]


def test_figure2_transitions_row_counts_only_the_rules_crossings(readings):
    row = claims.transitions_row()
    crossed = {name: sum(_crosses(pts) for pts in r.values()) for name, r in readings.items()}
    full = any(c == len(readings[name]) and c for name, c in crossed.items())
    expected = "agrees" if full else "partly" if sum(crossed.values()) else "not reproduced"
    assert row["agreement"] == expected
    # a sweep whose seeds disagree, or whose sign turns back, is never counted as a crossing: the
    # cell says how many sweeps it read when none crosses, and names each that does
    if not any(crossed.values()):
        assert f"No pair of the {pv.words(len(readings))} stored sweeps crosses by the declared rule" in row["book"]
    for name, c in crossed.items():
        assert (f"in {pv.NAMES[name]}, " in row["book"]) == bool(c), name
    assert "none of the" not in row["book"] and ": none" not in row["book"]
    assert len(row["book"].split()) <= 45 and "{figref}`fig-pairs`" in row["book"]


def test_the_transitions_row_gives_the_largest_worse_point_inside_the_authors_range(readings):
    """Where no pair of the declared sweep crosses, the cell quotes the largest size inside a
    pair's range from the authors' fit (depth L optimal at 12 L exp(2a + 2bL)) at which the deeper
    network is resolved worse, with its mean gap: recomputed here from the stored runs."""
    if any(_crosses(pts) for pts in readings[_lead()].values()):
        pytest.skip("a pair of the declared sweep crosses")
    a, b = 5.039, 0.0555
    best = None
    for (s, d), pts in readings[_lead()].items():
        lo, hi = (12 * L * math.exp(2 * a + 2 * b * L) for L in (s, d))
        for budget, n, mean, low, high in pts:
            if lo <= budget <= hi and low > 0 and (best is None or budget > best[1]):
                best = ((s, d), budget, mean, low, high)
    row = claims.transitions_row()
    if best is None:
        assert "where the authors' fit expects" not in row["book"]
        return
    (s, d), budget, mean, low, high = best
    said = (f"{s} vs {d}'s deeper network is still worse at {fmt.count(budget)}, {mean:+.3f} nats "
            f"(95% interval {low:+.3f} to {high:+.3f})").replace("-", "\N{MINUS SIGN}")
    assert said in row["book"]


def test_the_gpu_pilots_6_vs_12_is_no_crossing_by_the_rule(readings):
    """Its deeper network leads at one budget only, and the sign turns back at the next."""
    pts = readings["gpu-slice"][(6, 12)]
    assert any(p[4] < 0 for p in pts) and pts[-1][2] > 0 and not _crosses(pts)


def test_the_gpu_pilots_crossing_without_its_largest_budget_is_said_once_where_the_pilot_is_described(readings):
    """Without its last budget the 6 vs 12 pair crosses by the rule: the GPU pilot's paragraph in
    the experiments chapter says so, and the transitions row, which counts by the rule, does not."""
    from dwlib.book import pairs_verdicts as pv
    pts = readings["gpu-slice"][(6, 12)]
    if _crosses(pts[:-1]) and not _crosses(pts):
        lo, hi = pts[-3][0], pts[-2][0]
        said = f"6 vs 12 crossing between {fmt.count(lo)} and {fmt.count(hi)}"
        assert said in pv.gpu_pilot_sentence()
        assert "6 vs 12 cross" not in claims.transitions_row()["book"]


def test_order_and_slope_need_two_crossings_in_one_sweep(readings):
    two = [name for name, r in readings.items() if sum(_crosses(p) for p in r.values()) >= 2]
    order, slope = claims.transition_order_row(), claims.fit_slope_row()
    if not two:
        assert order["agreement"] == "not testable here" and slope["agreement"] == "not testable here"
    else:
        assert order["agreement"] in ("agrees", "differs")


def _small(point):
    """A smallest-size point (budget, n, mean, low, high) read for the small-sizes claim, from the
    rule file: agreement needs the interval above zero, or around zero no wider than the target."""
    _, n, _, low, high = point
    if n < 2:
        return "not resolved"
    if high < 0:
        return "better"
    if low > 0:
        return "worse"
    return "comparable" if (high - low) / 2 <= RULE["half_width_target"] else "not resolved"


def _firsts(readings, only=None):
    return [_small(pts[0]) if pts else "not resolved" for name, r in readings.items() if only in (None, name)
            for pts in r.values()]


def test_comparable_row_follows_its_rule_from_the_stored_runs(readings):
    """'Comparable' (the paper): a precise interval around zero supports it, a resolved side counts
    against it; the verdict follows from the recomputed readings of the declared sweep alone, and
    the earlier sweeps are counted apart."""
    firsts = _firsts(readings, _lead())
    support = firsts.count("comparable")
    against = firsts.count("worse") + firsts.count("better")
    expected = ("not testable here" if not support and not against else "agrees" if not against
                else "differs" if not support else "partly")
    row = claims.comparable_row()
    assert row["agreement"] == expected
    assert "section 5" in row["paper"]
    assert row["book"].startswith(pv.NAMES[_lead()][:1].upper() + pv.NAMES[_lead()][1:])
    _names_each_pair_with_its_reading(readings, row["book"])
    assert len(row["book"].split()) <= 45 and "{figref}`fig-pairs`" in row["book"]


_SAID = {"worse": "deeper worse", "comparable": "comparable within the target", "better": "deeper better",
         "not resolved": "not resolved"}


def _names_each_pair_with_its_reading(readings, text):
    """Each pair of the declared sweep is named with its recomputed smallest-size reading and,
    where that is resolved, its mean gap and interval."""
    for (s, d), pts in readings[_lead()].items():
        reading = _small(pts[0]) if pts else "not resolved"
        assert f"{s} vs {d} {_SAID[reading]}" in text, (s, d, reading)
        if reading != "not resolved":
            _, _, mean, low, high = pts[0]
            said = f"{mean:+.3f} nats (95% interval {low:+.3f} to {high:+.3f})".replace("-", "\N{MINUS SIGN}")
            assert f"{s} vs {d} {_SAID[reading]}, {said}" in text


def test_worse_row_follows_its_rule_from_the_stored_runs(readings):
    """'Worse' (the authors' summary): a resolved 'worse' supports it, comparable or better counts
    against it, an unresolved pair neither; the verdict is the declared sweep's, and each of its
    pairs is named with its reading (the other sweeps, not counted, are the experiments chapter's)."""
    firsts = _firsts(readings, _lead())
    support = firsts.count("worse")
    against = firsts.count("comparable") + firsts.count("better")
    expected = ("not testable here" if not support and not against else "agrees" if support == len(firsts)
                else "differs" if not support else "partly")
    row = claims.worse_row()
    assert row["agreement"] == expected
    _names_each_pair_with_its_reading(readings, row["book"])
    for name in readings:
        if name != _lead():
            assert pv.NAMES[name] not in row["book"], name  # not counted, so not said here
    assert len(row["book"].split()) <= 45 and "{figref}`fig-pairs`" in row["book"]


def test_the_two_small_size_claims_are_separate_rows():
    table = claims.frame([claims.comparable_row(), claims.worse_row()])
    assert len(table) == 2 and set(table["paper"].str.contains("summary")) == {True, False}


def test_noisy_points_never_count_as_agreement():
    """An interval around zero wider than the rule's target is not resolved, however the mean
    falls; only a precise one is 'comparable'; one seed gives no interval."""
    target = RULE["half_width_target"]
    wide = {"mean": 0.01, "half_width": 0.3, "low": -0.29, "high": 0.31}
    tight = {"mean": 0.01, "half_width": target / 2, "low": 0.01 - target / 2, "high": 0.01 + target / 2}
    one_seed = {"mean": 0.2, "half_width": None, "low": -math.inf, "high": math.inf}
    assert claims.small_size_reading(wide, target) == claims.SMALL_UNRESOLVED
    assert claims.small_size_reading(one_seed, target) == claims.SMALL_UNRESOLVED
    assert claims.small_size_reading(tight, target) == claims.SMALL_COMPARABLE
    assert claims.small_size_reading({**wide, "low": 0.01, "high": 0.61}, target) == claims.SMALL_WORSE
    assert claims.small_size_reading({**wide, "low": -0.61, "high": -0.01}, target) == claims.SMALL_BETTER
    noisy = [claims.small_size_reading(wide, target)] * 4
    for verdict in (claims.comparable_verdict, claims.worse_verdict):
        assert verdict(noisy) == "not testable here"
    assert claims.worse_verdict(noisy + [claims.SMALL_WORSE]) == "partly"
    assert claims.worse_verdict([claims.SMALL_WORSE, claims.SMALL_WORSE]) == "agrees"
    assert claims.worse_verdict([claims.SMALL_COMPARABLE, claims.SMALL_UNRESOLVED]) == "differs"
    assert claims.comparable_verdict(noisy + [claims.SMALL_COMPARABLE]) == "agrees"
    assert claims.comparable_verdict([claims.SMALL_WORSE, claims.SMALL_UNRESOLVED]) == "differs"
    assert claims.comparable_verdict([claims.SMALL_WORSE, claims.SMALL_COMPARABLE]) == "partly"
