"""The declared seed extension of cpu-pairs-untied: seeds 6 to 11 at each shape's chosen rate.

Its rule-file entry ("extension" under cpu-pairs-untied) was committed before any of its runs;
these tests hold the preset to that entry and to the sweep it extends, and check that the runner
trains every shape at the rate that sweep's stored runs chose.
"""

import dataclasses
import json
from pathlib import Path

import pytest

from dwlib.errors import InputError
from dwlib.experiments import group_sweep, pairs, selection
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import stored_results
from dwlib.experiments.transition import reported

ROOT = Path(__file__).resolve().parents[1]
EXTRA, PARENT = get_preset("cpu-pairs-untied-extra"), get_preset("cpu-pairs-untied")


def _entry() -> dict:
    rules = json.loads((ROOT / "dwlib" / "data" / "rules" / "cpu-pairs.json").read_text(encoding="utf-8"))
    return rules["applies_to"]["cpu-pairs-untied"]["extension"]


def test_the_rule_file_declares_the_extension_the_preset_trains():
    entry = _entry()
    assert entry["sweep"] == EXTRA.name and EXTRA.rates_from == PARENT.name
    assert "Seeds 6 to 11 for every shape" in entry["what"] and EXTRA.seeds == tuple(range(6, 12))
    assert "before any run of seeds 6 to 11" in entry["declared"]
    assert not set(EXTRA.seeds) & set(PARENT.seeds)
    # the same design in every other respect: shapes, run length, training settings, exclusions
    same = {f.name for f in dataclasses.fields(Sweep)} - {"name", "seeds", "lrs", "select_seeds", "extend_edges",
                                                          "rates_from", "description"}
    assert all(getattr(EXTRA, f) == getattr(PARENT, f) for f in same)


def test_every_shape_trains_its_new_seeds_at_the_rate_it_chose_in_the_stored_sweep(tmp_path):
    records = stored_results(PARENT.name)
    chosen = {(r["depth"], r["width"]): r["chosen_lr"] for r in records}
    found = group_sweep.groups(EXTRA, tmp_path)
    assert len(found) == len(PARENT.points()) == 15
    for g in found:
        p = g["point"]
        lr = chosen[(p.depth, p.width)]
        assert [r["config"].seed for r in g["rows"]] == list(range(6, 12))
        # each run is the run the extended sweep itself would train for that seed at its chosen rate
        assert [r["config"] for r in g["rows"]] == [PARENT.config(p, s, lr) for s in EXTRA.seeds]
    parent_keys = {r["key"] for r in records}
    assert not parent_keys & {r["key"] for g in found for r in g["rows"]}


def test_the_extension_trains_one_budget_at_a_time_from_the_smallest(tmp_path):
    first = group_sweep._next_group(EXTRA, tmp_path, (0, 1), set())
    assert first["point"].target_budget == min(EXTRA.budgets) and first["point"].depth == min(EXTRA.depths)


def test_a_shape_without_a_chosen_rate_is_refused_in_one_line(tmp_path, monkeypatch):
    records = [r for r in stored_results(PARENT.name) if not (r["depth"] == 8 and r["target_budget"] == 1.6e6)]
    monkeypatch.setattr(group_sweep, "stored_results", lambda name: records)
    with pytest.raises(InputError, match=r"8 layers and width 128 has no chosen rate in the stored sweep"):
        group_sweep.groups(EXTRA, tmp_path)


def test_the_stored_rates_are_the_rule_s_rate_choice():
    # chosen again from the runs (grid seeds 0 and 1, the rule's exclusions): what the runs record
    records = stored_results(PARENT.name)
    choice = selection.choose(records, PARENT.grid_seeds(), PARENT.exclude)
    assert {k: c["lr"] for k, c in choice.items()} == {(r["depth"], r["width"]): r["chosen_lr"] for r in records}


def test_rates_from_refuses_a_grid_of_its_own():
    with pytest.raises(InputError, match="rates_from"):
        dataclasses.replace(EXTRA, lrs=(1e-3, 2e-3))


def _fake_extra(seed=6, lr_factor=1.0):
    """Runs of seed ``seed`` for every shape: copies of the stored seed-0 runs at the chosen rate."""
    out = []
    for r in stored_results(PARENT.name):
        if r["seed"] == 0 and r["chosen"]:
            cfg = {**r["config"], "lr": r["config"]["lr"] * lr_factor, "seed": seed}
            out.append({k: v for k, v in r.items() if not k.startswith("chosen")} | {"seed": seed, "config": cfg})
    return out


def test_the_extension_reads_as_runs_at_the_chosen_rate():
    records = stored_results(PARENT.name)
    both = pairs.with_extension(records, _fake_extra())
    assert len(both) == len(records) + 15
    added = both[len(records):]
    assert all(r["chosen"] and r["seed"] == 6 for r in added)
    assert len(reported(both)) == len(reported(records)) + 15
    # the pairs read the new seed: one more gap per point
    rows = pairs.points(reported(both), 2, 4, 0.95)
    assert all(len(r["gaps"]) == 7 and 6 in r["gaps"] for r in rows)


def test_an_extension_run_at_another_rate_or_seed_is_refused():
    records = stored_results(PARENT.name)
    with pytest.raises(InputError, match="not at the chosen rate"):
        pairs.with_extension(records, _fake_extra(lr_factor=2.0))
    with pytest.raises(InputError, match="repeats seed 0"):
        pairs.with_extension(records, _fake_extra(seed=0))
