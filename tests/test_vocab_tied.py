"""The full-rank trained pair of the vocabulary chapter against the same pair in the doubling
sweep, whose output layer is tied to its input embedding: recomputed here from the stored runs,
and said (or left unsaid) as the runs allow."""

from __future__ import annotations

import json
import math
from pathlib import Path

from dwlib.book import figure2, vocabulary
from dwlib.book import pairs_verdicts as pv

ROOT = Path(__file__).resolve().parents[1]


def _chosen(name):
    lines = (ROOT / "dwlib" / "data" / "sweeps" / f"{name}.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, filter(str.strip, lines)) if r.get("chosen") and r["status"] == "completed"
            and r.get("eval_loss") is not None and math.isfinite(r["eval_loss"])]


def _gap(records, budget=None):
    loss = {(r["depth"], r["seed"]): r["eval_loss"] for r in records if budget in (None, r["target_budget"])}
    seeds = sorted({s for (L, s) in loss if L == 2} & {s for (L, s) in loss if L == 4})
    return sum(loss[(4, s)] - loss[(2, s)] for s in seeds) / len(seeds)


def test_the_comparison_is_the_stored_runs():
    full, pairs = _chosen("vocab-full"), _chosen("cpu-pairs")
    t = vocabulary.tied_comparison()
    budget = t["budget"]
    assert {r["target_budget"] for r in full} == {budget}
    assert {r["config"]["tied"] for r in full} == {False}
    assert {r["config"]["tied"] for r in pairs if r["target_budget"] == budget} == {True}
    assert math.isclose(t["gap_untied"], _gap(full), abs_tol=1e-9)
    assert math.isclose(t["gap_tied"], _gap(pairs, budget), abs_tol=1e-9)
    # the two designs share widths, rates, tokens and seeds: only the tying differs
    key = lambda r: (r["depth"], r["width"], r["lr"], r["tokens"], r["seed"])  # noqa: E731
    assert t["same_design"] == ({key(r) for r in full}
                                == {key(r) for r in pairs if r["target_budget"] == budget and r["depth"] in (2, 4)})
    text = vocabulary.tied_sentence(t)
    for part in (f"{t['gap_untied']:+.3f} nats", f"{t['gap_tied']:+.3f}"):
        assert part in text
    # said once: the experiments chapter points to the control and repeats none of its numbers
    assert "fx_tied" not in figure2.numbers()
    # (but for the experiments chapter's own measurement of the same point, when the untied design leads)
    own = {f"{x['mean']:+.3f}" for p in pv.read(pv.lead())["pairs"] for x in p["points"]}
    parts = [x for x in (f"{t['gap_untied']:+.3f}", f"{t['shapes'][t['deep']]['untied_range']:.3f} nats") if x not in own]
    assert all(part not in str(v) for v in figure2.numbers().values() for part in parts)


def test_nothing_is_said_without_the_doubling_sweeps_budget():
    full = _chosen("vocab-full")
    others = [r for r in _chosen("cpu-pairs") if r["target_budget"] != full[0]["target_budget"]]
    t = vocabulary.tied_comparison(full=full, doubling=others)
    assert t is None
    assert vocabulary.tied_sentence(t) == ""


def test_a_design_that_differs_says_so():
    full = _chosen("vocab-full")
    pairs = [dict(r, lr=r["lr"] * 2) if r["depth"] == 4 else r for r in _chosen("cpu-pairs")]
    t = vocabulary.tied_comparison(full=full, doubling=pairs)
    assert not t["same_design"] and "not every rate" in vocabulary.tied_sentence(t)
