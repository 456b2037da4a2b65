"""The declared seed extension of cpu-pairs-untied: seeds 6 to 11 at each shape's chosen rate.

Its rule-file entry ("extension" under cpu-pairs-untied) was committed before any of its runs;
these tests hold the preset to that entry and to the sweep it extends, and check that the runner
trains every shape at the rate that sweep's stored runs chose.
"""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from dwlib.errors import InputError
from dwlib.experiments import group_sweep, pairs, selection
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import stored_results
from dwlib.book import claims, figure2, prose
from dwlib.book import pairs_verdicts as pv
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


def _stand_in_extension(budgets=None, shift=None):
    """Seeds 6 to 11 for every shape (at ``budgets`` only, when given): the stored runs of seeds 0
    to 5 at the chosen rate under new seeds, ``shift`` (depth, budget) -> added to that shape's
    held-out loss."""
    out = []
    for r in stored_results(PARENT.name):
        if r["chosen"] and (budgets is None or r["target_budget"] in budgets):
            loss = r["eval_loss"] + (shift or {}).get((r["depth"], r["target_budget"]), 0.0)
            out.append({k: v for k, v in r.items() if not k.startswith("chosen")}
                       | {"seed": r["seed"] + 6, "config": {**r["config"], "seed": r["seed"] + 6}, "eval_loss": loss,
                          "key": f"stand-in-{r['key']}"})
    return out


@pytest.fixture
def extension(monkeypatch):
    """Publish a stand-in extension to the book's reader: call with the runs."""
    real = pv.stored_results

    def use(runs):
        monkeypatch.setattr(pv, "stored_results", lambda name: runs if name == EXTRA.name else real(name))
    return use


def test_no_chapter_reads_an_extension_before_every_size_has_its_new_seeds(extension):
    extension(_stand_in_extension(budgets={1e5, 2e5}))
    assert pv.extended(PARENT.name) is None
    text = pv.extension_sentence(PARENT.name)
    assert "The six-seed verdicts above remain the primary reading. Once every size has the added seeds" in text
    assert "judges the precision target on 12 seeds" in text and "factor of about 0.61" in text  # t(11)/t(5)/sqrt 2
    assert pv.extension_clause(pv.read(PARENT.name)) == ""
    assert figure2.extension_provenance(PARENT.name) == ""


def test_the_provenance_says_where_a_complete_extension_trained(extension):
    runs = _stand_in_extension()
    for r in runs:
        r["hardware"] = {"backend": "cpu", "device_kind": "cpu", "devices": 2, "cpu_count": 2}
        r["wall_seconds"], r["git_commit"] = 360.0, "0" * 40
    runs[0]["git_commit"] = "1" * 40 + "+dirty"
    extension(runs)
    text = figure2.extension_provenance(PARENT.name)
    assert text == ("The seeds 6 to 11 that the rule's later entry added are 90 further runs, 9.0 hours of training "
                    "summed, trained on a 2-core CPU in float32 with two versions of the code (one of the runs with "
                    "edits not yet recorded in its history), each at the rate its shape chose on seeds 0 and 1.")
    assert figure2.provenance_parts(PARENT.name)["extension"] == text
    assert figure2.provenance_parts("cpu-pairs")["extension"] == ""


def test_a_complete_extension_is_read_on_twelve_seeds_beside_the_declared_six(extension):
    extension(_stand_in_extension())
    x = pv.extended(PARENT.name)
    assert x["new"] == tuple(range(6, 12)) and x["later_seeds"] == tuple(range(2, 12))
    assert all(len(q["gaps"]) == 12 for p in x["all"]["pairs"] for q in p["points"])
    assert x["six"]["power"] == pv.read(PARENT.name)["power"]  # the declared reading is untouched
    # the same gaps twice over: every interval narrower, every verdict the same
    for p, q in zip(x["six"]["pairs"], x["all"]["pairs"]):
        for a, b in zip(p["points"], q["points"]):
            assert b["half_width"] < a["half_width"] and a["verdict"] == b["verdict"]
    text = pv.extension_sentence(PARENT.name)
    assert "After this six-seed reading fell short of the precision target, and before any of the runs it adds" in text
    assert "added seeds 6 to 11 to every shape at its chosen rate, not only to the points short of the target" in text
    assert "Once every size" not in text
    p = x["all"]["power"]
    assert f"On all {pv.words(12)} seeds the half-width is at most 0.03 nats at {pv.count_of(p['within'], 10, 'point')}" in text
    assert "Every verdict is the same as on six seeds." in text and "seeds 2 to 11 alone" in text
    clause = pv.precision_clause(pv.read(PARENT.name))
    assert clause.endswith(f"on all {pv.words(12)} seeds (six more per shape, declared after that reading) the "
                           f"half-width is within the target at {pv.count_of(p['within'], 10, 'point')}, "
                           f"{'meeting' if pv.meets_target(x['all']) else 'still short of'} it, with every verdict unchanged")
    assert pv.precision_clause(pv.read(PARENT.name), brief=True).endswith(f"; on {pv.words(12)} seeds, {p['within']} of 10")
    # the claims table's cell: the six-seed count, then the twelve-seed one
    six = pv.read(PARENT.name)["power"]["within"]
    assert claims._precision_note() == (f"; half-width target met at {six} of 10 points, {p['within']} of 10 on 12 "
                                        "seeds" + ("" if pv.meets_target(x["all"]) else ", no verdict hinging on it"))
    # the clause follows only the declared reading, never a reading of other seeds
    assert pv.extension_clause(pv.read(PARENT.name, seeds=(2, 3, 4, 5))) == ""
    assert pv.extension_clause(x["all"]) == ""


def test_a_verdict_the_new_seeds_change_is_named(extension):
    # the new seeds put the 4-layer network far ahead at 100K: 2 vs 4 there is no longer resolved
    extension(_stand_in_extension(shift={(4, 1e5): -0.25}))
    text = pv.extension_sentence(PARENT.name)
    assert "One verdict differs from the six-seed reading's: at 100K" in text
    assert "at 100K the 4-layer network is not resolved from the 2-layer one, where all six seeds put it behind" \
        in text
    # the summaries that give the twelve-seed precision say that a verdict differs
    six = pv.read(PARENT.name)
    assert pv.extension_clause(six).endswith(", and one verdict differs from the six-seed reading's")
    assert pv.extension_clause(six, "brief").endswith(", and one verdict differs")
    assert pv.extension_clause(six, "short").endswith(" on 12 seeds (one verdict differs)")


def test_a_design_without_a_declared_extension_says_nothing_of_one():
    assert pv.extension_entry("cpu-pairs") is None and pv.extension_sentence("cpu-pairs") == ""
    assert pv.extension_clause(pv.read("cpu-pairs")) == ""


#: the longest paragraph a chapter may have (tests/browser/test_reading.py counts the built pages)
MAX_WORDS = 150
#: what a role renders as, at its longest, for a word count: a citation, a figure or equation
#: reference, a chapter's title
_ROLE_WORDS = {"cite": "[Authors et al., 2020]", "figref": "Figure 7.2", "ref": "eq. (8)", "doc": "Trained depth-width sweeps"}


def _paragraph_words(notebook: str, glued: dict) -> dict[str, int]:
    """Each prose paragraph of ``notebook`` with ``glued`` (name -> value) in place of its inline
    expressions: its opening words -> its word count."""
    nb = json.loads((ROOT / "book" / notebook).read_text(encoding="utf-8"))
    out = {}
    for c in nb["cells"]:
        if c["cell_type"] != "markdown":
            continue
        # values the computed numbers do not hold (a live replay's, say) as the chapter stored them
        stored = prose.stored(c)

        def value(m):
            name, spec = prose.parse(m.group(1))
            return prose.format_value(glued[name], spec) if name in glued else stored[m.group(1)]
        # an admonition's body is prose (its option lines are not); any other fenced block is not
        text = re.sub(r"```\{(?:admonition|note|tip|important|warning)\}[^\n]*\n(.*?)```",
                      lambda m: re.sub(r"^:\w+:.*$", "", m.group(1), flags=re.M), "".join(c["source"]), flags=re.S)
        text = prose.ROLE.sub(value, re.sub(r"```.*?```", "", text, flags=re.S))
        text = re.sub(r"\{(\w+)\}`[^`]*`", lambda m: _ROLE_WORDS.get(m.group(1), "x"), text)
        for para in re.split(r"\n\s*\n", text):
            if para.strip() and not para.lstrip().startswith(("#", ":", "```")):
                out[" ".join(para.split()[:8])] = len(para.split())
    return out


def test_no_paragraph_outgrows_the_page_once_the_extension_is_read(extension):
    """Once read, the extension adds a clause to the Result, the precision paragraph, the seeds
    paragraph, the takeaway and the summaries of the introduction, the claims and the Discussion:
    each paragraph, an admonition's included, stays within the length a page allows."""
    from dwlib.book import discussion, intro
    extension(_stand_in_extension(shift={(4, 1e5): -0.25}))  # a changed verdict: the longest wording
    figure2.reading.cache_clear()
    try:
        for notebook, glued in (("experiments.ipynb", figure2.numbers()), ("intro.ipynb", intro.numbers()),
                                ("claims.ipynb", claims.numbers()), ("discussion.ipynb", discussion.numbers())):
            long = {k: n for k, n in _paragraph_words(notebook, glued).items() if n > MAX_WORDS}
            assert not long, f"{notebook}: {long}"
    finally:
        figure2.reading.cache_clear()


def test_the_published_extension_is_the_declared_one_complete():
    """The stored runs of the extension: seeds 6 to 11 for each of the 15 shapes, each at the rate
    its shape chose, all from one version of the code; so the book reads all twelve seeds."""
    runs = stored_results(EXTRA.name)
    chosen = {(r["depth"], r["width"]): r["chosen_lr"] for r in stored_results(PARENT.name)}
    by_shape = {}
    for r in runs:
        assert r["status"] == "completed" and r["config"]["lr"] == chosen[(r["depth"], r["width"])]
        by_shape.setdefault((r["depth"], r["width"]), []).append(r["seed"])
    assert len(by_shape) == 15 and all(sorted(s) == list(EXTRA.seeds) for s in by_shape.values())
    assert len({r["git_commit"] for r in runs}) == 1
    x = pv.extended(PARENT.name)
    assert x is not None and x["all"]["budgets"] == sorted(PARENT.budgets)
    assert all(len(q["gaps"]) == 12 for p in x["all"]["pairs"] for q in p["points"])
