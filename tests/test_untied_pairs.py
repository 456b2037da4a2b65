"""The second CPU design of Figure 2 (preset cpu-pairs-untied): cpu-pairs with an untied output
layer, read by the rule declared for cpu-pairs (an entry of its rule file, added before the
sweep's runs, that names the change and leaves the rule as it was)."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from dwlib.book import figure2
from dwlib.book import pairs_verdicts as pv
from dwlib.experiments import pairs
from dwlib.experiments import presets as ps
from dwlib.train.config import TrainConfig, run_key

ROOT = Path(__file__).resolve().parents[1]


def _entry() -> dict:
    rules = json.loads((ROOT / "dwlib" / "data" / "rules" / "cpu-pairs.json").read_text(encoding="utf-8"))
    return rules["applies_to"]["cpu-pairs-untied"]


def test_the_rule_is_cpu_pairs_word_for_word_with_its_model_named():
    tied, untied = pairs.rule("cpu-pairs"), pairs.rule("cpu-pairs-untied")
    assert untied["rule_file"] == "cpu-pairs" and untied["sweep"] == "cpu-pairs-untied"
    assert set(_entry()["design"]) == {"declared", "question", "model"} <= set(pairs.DESIGN)
    for key in set(tied) - {"sweep", "declared", "question", "model", "applies_to"}:
        assert untied[key] == tied[key], key
    assert "not the transposed input embedding" in untied["model"]
    # how the book reads the two sweeps is declared with the entry, before the runs
    note = _entry()["note"]
    assert "before any run of cpu-pairs-untied" in note and "neither pools with the other" in note


def test_the_preset_is_cpu_pairs_with_the_output_untied():
    a, b = ps.get_preset("cpu-pairs"), ps.get_preset("cpu-pairs-untied")
    same = {f.name for f in dataclasses.fields(a)} - {"name", "description", "train"}
    assert all(getattr(a, k) == getattr(b, k) for k in same)
    assert {k: v for k, v in b.train.items() if k != "tied"} == a.train
    assert b.train["tied"] is False and a.train.get("tied", True) is True


def test_its_runs_are_not_cpu_pairs_runs():
    """The tying is part of what a run computes: the two sweeps never share a run's key."""
    base = {"vocab_size": 1000, "depth": 2, "width": 88, "heads": 11, "lr": 2e-3, "steps": 977, "seed": 0}
    assert run_key(TrainConfig.from_dict({**base, "tied": True})) != run_key(TrainConfig.from_dict({**base, "tied": False}))


@pytest.mark.parametrize("lead", pv.DESIGNS)
def test_no_paragraph_of_the_experiments_chapter_is_left_empty_whichever_design_leads(monkeypatch, lead):
    """The chapter's paragraphs made only of glued text say something in either state of the lead
    (an empty one would print an empty paragraph), and every design's provenance that says
    something is in the chapter (none is glued where no paragraph shows it)."""
    monkeypatch.setattr(pv, "lead", lambda: lead)
    figure2.reading.cache_clear()
    try:
        numbers = figure2.numbers()
    finally:
        figure2.reading.cache_clear()
    nb = json.loads((ROOT / "book" / "experiments.ipynb").read_text(encoding="utf-8"))
    prose = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    shown = set(re.findall(r'glued\["(\w+)', prose))
    for para in prose.split("\n\n"):
        keys = re.findall(r'glued\["(\w+)', para)
        if keys and not re.sub(r"\{eval\}`[^`]*`", "", para).strip():
            assert any(str(numbers[k]).strip() for k in keys), f"an empty paragraph: {para!r}"
    for design in pv.DESIGNS:
        for part, text in figure2.provenance_parts(design).items():
            key = f"fx_{figure2.PROVENANCE_PREFIX[design]}_{part}"
            assert key in numbers and (key in shown or not text), f"{key} says something the chapter does not show"


@pytest.mark.parametrize("lead", pv.DESIGNS)
def test_every_chapter_that_reports_the_verdicts_says_the_precision_and_what_it_does(monkeypatch, lead):
    """Whichever design leads, the Result, the figure's caption, the Takeaway, the claims chapter
    and the Discussion say how many points meet the rule's precision target and, computed, what
    the shortfall does: no verdict moved when every interval lies clear of zero (with the lowest
    end), otherwise the intervals that contain zero (the caption leaves those to its counts)."""
    from dwlib.book import claims, discussion
    monkeypatch.setattr(pv, "lead", lambda: lead)
    figure2.reading.cache_clear()
    claims._readings.cache_clear()
    try:
        r = figure2.reading()
        power, pts = r["power"], [x for q in r["pairs"] for x in q["points"]]
        if pv.meets_target(r):
            return
        clear = all(x["low"] > 0 for x in pts)
        texts = {"result": figure2.result_sentence(r, "head"), "caption": figure2.caption(),
                 "takeaway": figure2.takeaway_sentence(r), "claims": claims.coverage_sentence(),
                 "claims caption": claims.figure_caption(), "discussion": discussion.precision_sentence()}
        low = pv.signed(min(x["low"] for x in pts))
        for where, text in texts.items():
            assert f"{pv.words(power['within'])} of" in text or f" {power['within']} of" in text, where
            if clear:
                assert ("moves no verdict" in text or "no verdict moves" in text) and low in text, where
            elif where != "caption":
                assert "contain zero" in text and "moves no verdict" not in text, where
        assert pv.NAMES[lead] in texts["result"] and pv.NAMES[lead] in texts["takeaway"]
        assert f"target met at {power['within']} of {power['points']} points" in claims.worse_row()["book"]
    finally:
        figure2.reading.cache_clear()
        claims._readings.cache_clear()
