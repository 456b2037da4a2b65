"""The Discussion's generated sentences against the stored runs, recomputed here: the budgets the
GPU pilot's reading leaves out and the gaps there, and the doubling sweep entering the gap table
only at the sizes its rule reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dwlib import fmt
from dwlib.book import discussion
from dwlib.book import pairs_verdicts as pv
from dwlib.experiments import transition as tr
from dwlib.experiments.records import stored_results

ROOT = Path(__file__).resolve().parents[1]


def test_the_gpu_pilot_is_read_at_every_budget_and_the_other_reading_is_said():
    """One treatment of the GPU pilot's largest budget: the gap table reads every budget, and the
    sentence says what leaving out the budgets where the losses rise would give, from the runs."""
    records = stored_results("gpu-slice")
    rows = discussion.gap_rows("gpu-slice")
    assert max(r["target_budget"] for r in rows) == max(r["target_budget"] for r in records)
    dropped = sorted({r["target_budget"] for r in records} - {r["target_budget"] for r in tr.size_limited(records)})
    text = pv.gpu_pilot_sentence("gpu-slice")
    if not dropped:
        assert "at every budget it trained" in text
        return
    for b in dropped:
        assert fmt.count(b) in text
    loss = {(r["depth"], r["target_budget"], r["seed"]): r["eval_loss"] for r in records
            if r["eval_loss"] is not None and math.isfinite(r["eval_loss"])}
    kept = sorted({b for (_, b, _) in loss} - set(dropped))
    gaps = [loss[(12, kept[-1], s)] - loss[(6, kept[-1], s)] for s in (0, 1)
            if (12, kept[-1], s) in loss and (6, kept[-1], s) in loss]
    if gaps and max(gaps) < 0:
        assert f"a gap of {abs(sum(gaps) / len(gaps)):.3f} nats" in text
        assert "the last budget read" in text
    # said once, where the GPU pilot is described: no other number of the experiments chapter and
    # none of the chapters that count crossings repeats what leaving its largest budget out gives
    from dwlib.book import claims, figure2, guidelines
    numbers = figure2.numbers()
    assert numbers["fx_gpu_pilot"] == text
    dropped = pv.gpu_pilot_readings()["dropped"]
    others = [v for k, v in numbers.items() if k != "fx_gpu_pilot"]
    others += [*discussion.numbers().values(), *claims.numbers().values(), *guidelines.numbers().values()]
    others += [str(v) for row in claims.rows() for v in row.values()]
    for b in dropped:
        said = (f"Without {fmt.count(b)}", f"{fmt.count(b)} budget left out")
        assert not any(s in v for v in others if isinstance(v, str) for s in said)


def test_the_doubling_sweep_enters_the_gap_table_at_its_complete_sizes_only():
    lines = (ROOT / "dwlib" / "data" / "sweeps" / "cpu-pairs.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines if x.strip()]
    recs = [r for r in recs if r.get("chosen") and r["status"] == "completed" and r.get("eval_loss") is not None]
    seeds = {r["seed"] for r in recs}
    want = {(L, s) for L in (2, 4, 8) for s in seeds}
    have: dict[float, set] = {}
    for r in recs:
        have.setdefault(r["target_budget"], set()).add((r["depth"], r["seed"]))
    complete = sorted(b for b, got in have.items() if want <= got)
    rows = discussion.gap_rows(pv.RULE_SWEEP)
    assert {r["target_budget"] for r in rows} <= set(complete)
    if complete:
        assert {r["target_budget"] for r in rows if r["end"] in ("smallest", "only")} == {complete[0]}
        assert fmt.count(complete[0]) in discussion.rule_scope()
    else:
        assert not rows


@pytest.mark.parametrize("word", ["under way", "so far", " yet"])
def test_no_progress_bulletin(word):
    assert word not in discussion.rule_scope() and word not in pv.gpu_pilot_sentence("gpu-slice")


def test_the_discussion_counts_the_pairs_as_the_claims_row_does():
    """Both chapters read each pair at its smallest size by the seeds' paired interval: the
    Discussion's reading of every pair is the claims row's, its 'worse' count theirs, and a
    one-seed pair is never counted as worse."""
    from dwlib.book import claims
    from dwlib.experiments import pairs
    target = pairs.rule(pv.RULE_SWEEP)["half_width_target"]
    want = {}
    for name in discussion.sweeps():
        for p in pv.read_by_rule(name)["pairs"]:
            want[(name, p["shallow"], p["deep"])] = claims.small_size_reading(p["points"][0] if p["points"] else None,
                                                                              target)
    small = [r for name in discussion.sweeps() for r in discussion.gap_rows(name) if r["end"] in ("smallest", "only")]
    assert {(r["sweep"], r["shallow"], r["deep"]): r["reading"] for r in small} == want
    assert all(r["reading"] != claims.SMALL_WORSE for r in small if r["n_seeds"] == 1)
    n = discussion.numbers()
    assert n["ds_n_pairs"] == len(want)
    assert n["ds_n_worse"] == sum(v == claims.SMALL_WORSE for v in want.values())
    # the answer and the claims row's verdict are the declared sweep's alone
    mine = {k: v for k, v in want.items() if k[0] == pv.lead()}
    worse = [f"{s} vs {d}" for (_, s, d), v in mine.items() if v == claims.SMALL_WORSE]
    expected = "Yes" if len(worse) == len(mine) else "Partly" if worse else "No"
    assert n["ds_answer"] == expected
    assert claims.worse_row()["agreement"] == {"Yes": "agrees", "Partly": "partly"}.get(expected, claims.worse_row()["agreement"])
    for pair in worse:
        assert pair in n["ds_rule_small"].split("behind in", 1)[1].split("does not")[0]


def test_the_gap_table_flags_narrow_widths_and_writes_signs_as_a_reader_does():
    """Each pair at its smallest size only (the experiments chapter reads the rest), every width
    under the rule's flag marked with the note under the table that says what the mark means,
    and a negative gap written with a minus sign."""
    import html
    from dwlib.experiments.presets import WIDE
    table = discussion.gap_table()
    frame = table.frame
    rows = [r for name in discussion.sweeps() for r in discussion.gap_rows(name) if r["end"] != "largest"]
    assert len(frame) == len(rows)
    for r, cell in zip(rows, frame["widths, against the threshold"]):
        for width, text in zip((r["width_shallow"], r["width_deep"]), cell.split(", ")):
            assert text.startswith(f"{width}{discussion.NARROW_MARK}" if width < WIDE else f"{width} ")
    narrow = any(min(r["width_shallow"], r["width_deep"]) < WIDE for r in rows)
    assert (table.note == discussion.NARROW_NOTE) if narrow else table.note is None
    assert str(WIDE) in discussion.NARROW_NOTE and html.escape(discussion.NARROW_NOTE) in table._repr_html_()
    gaps = frame["gap, deep \N{MINUS SIGN} shallow (nats)"]
    assert not gaps.str.contains("-").any() and gaps.str.match("[+\N{MINUS SIGN}]").all()


def test_the_figure1_table_and_chart_write_powers_of_ten_with_superscripts():
    table = discussion.figure1_table()
    chart = discussion.figure1_chart().to_dict()
    labels = [r["width"] for d in chart["datasets"].values() for r in d if "width" in r]
    for text in [*table.to_numpy().ravel(), *labels]:
        assert "^" not in str(text), text
    assert "8.0 \N{MULTIPLICATION SIGN} 10\N{SUPERSCRIPT TWO}\N{SUPERSCRIPT TWO}" in labels
    # the tallest bar's label has room under the title: the axis reaches past the tallest bar
    (top,) = {tuple(v["encoding"]["y"]["scale"]["domain"])[1] for v in chart["layer"] if "scale" in v.get("encoding", {}).get("y", {})}
    assert top >= 1.1 * max(r["log10 width"] for d in chart["datasets"].values() for r in d if "log10 width" in r)
