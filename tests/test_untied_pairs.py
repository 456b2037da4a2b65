"""The second CPU design of Figure 2 (preset cpu-pairs-untied): cpu-pairs with an untied output
layer, read by the rule declared for cpu-pairs (an entry of its rule file, added before the
sweep's runs, that names the change and leaves the rule as it was)."""

import dataclasses
import json
from pathlib import Path

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
