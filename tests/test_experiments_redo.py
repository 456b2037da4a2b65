"""The experiments chapter's section on the redone CPU sweep (dwlib.book.experiments_redo), on
the stored ``cpu-fig2`` runs: the rate a table shows as chosen is the one with the lowest
validation loss, the comparisons read the chosen runs only, and the quoted numbers are those of
the tables."""

from __future__ import annotations

import math

import pytest

from dwlib.book import experiments_redo as redo
from dwlib.errors import InputError
from dwlib.experiments import transition as tr
from dwlib.experiments.presets import WIDE


def test_each_shape_chose_the_rate_with_the_lowest_validation_loss():
    table = redo.selection_table()
    rates = [c for c in table.columns if c.startswith("validation loss at ")]
    assert len(rates) == len(redo.redo().preset.lrs)
    for _, row in table.iterrows():
        losses = {float(c.removeprefix("validation loss at ")): row[c] for c in rates}
        assert row["chosen rate"] == min(losses, key=losses.get)
        at_edge = row["chosen rate"] in (min(losses), max(losses))
        assert row["at the grid's edge"] == ("yes" if at_edge else "no")
    assert set(table[f"width under {WIDE}"]) <= {"yes", "no"}


def test_the_comparisons_read_the_runs_at_the_chosen_rates():
    s = redo.redo()
    assert s.chosen and all(r["lr"] == r["chosen_lr"] for r in s.chosen)
    seeds = {(r["depth"], r["width"]): set() for r in s.chosen}
    for r in s.chosen:
        seeds[(r["depth"], r["width"])].add(r["seed"])
    assert all(v == set(s.preset.seeds) for v in seeds.values())  # every seed at its shape's rate
    assert [(t["shallow"], t["deep"]) for t in s.results] == s.pairs == tr.adjacent_pairs(s.preset.depths)
    rows = tr.loss_table(s.records)
    assert all(row["seeds"] == len(s.preset.seeds) for row in rows)  # one run per seed, not per rate


def test_the_quoted_numbers_are_those_of_the_tables():
    n, s = redo.numbers(), redo.redo()
    table = redo.interval_table()
    for t in s.results:
        key = f"{t['shallow']}_{t['deep']}"
        row = table.loc[f"{t['shallow']} vs {t['deep']}"]
        assert row["gap at smallest N"] == round(n[f"rd_gap_low_{key}"], 3)
        assert row["gap at largest N"] == round(n[f"rd_gap_high_{key}"], 3)
        assert row["outcome"] == n[f"rd_status_{key}"]
    assert n["rd_n_crossing"] == sum(table["outcome"] == "crossing")
    assert n["rd_points"] == len(redo.selection_table())
    assert 0 < n["rd_train_share"] < 1  # no run reads its training split more than once
    assert math.isclose(n["rd_tokens_m"] * 1e6, s.records[0]["tokens"])
    before = redo.before_after_table()
    assert list(before.columns[:2]) == ["mini: one rate", "cpu-fig2: rate per shape"]
    assert str(len(before.dropna())) in n["rd_before_after_text"]


def test_an_unknown_split_size_is_refused(monkeypatch):
    """The share of the training split is quoted only for the corpus whose split sizes are recorded."""
    s = redo.redo()
    other = [{**r, "config": {**r["config"], "corpus": "sotu"}} for r in s.records]
    monkeypatch.setattr(redo, "redo", lambda name=redo.NAME: type(s)(**{**vars(s), "records": other}))
    with pytest.raises(InputError, match="split sizes are not recorded"):
        redo.numbers()
