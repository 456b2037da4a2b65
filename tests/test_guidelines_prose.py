"""The guidelines chapter's generated sentences read as English for readers, and its figure
caption's verdicts follow the catalogue: model notes as mathematics and words (no code names),
the doubling sweep's scope as one plain fact (no progress bulletin), counts as natural phrases."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dwlib.book import guidelines as g
from dwlib.experiments.catalogue import gpt3_table, load_models

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "guidelines.ipynb"


def _outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", " ", text)


def test_model_notes_have_no_code_names():
    notes = g.model_notes(load_models())
    assert notes.count("\n") >= 5
    prose = _outside_math(notes)
    for bad in ("_", "~", ">>", "d_model", "d^2", "exp(", "^"):
        assert bad not in prose, bad
    assert "a feed-forward width of 65,536" in notes and "12 L d\N{SUPERSCRIPT TWO}" in notes
    assert "$" not in notes and "\\" not in notes  # no TeX: the PDF prints a Markdown output as it is
    # the rewriting is what removes them: a raw note keeps its code names
    raw = "its ~11B parameters come from d_ff = 65536 (16384 >> d_model), so 12 L d^2 (~0.3B)"
    assert "_" in _outside_math(raw)
    assert g.model_note(raw) == ("Its roughly 11B parameters come from a feed-forward width of 65,536 "
                                 "(16,384, far above the width), so 12 L d\N{SUPERSCRIPT TWO} (about 0.3B).")


@pytest.mark.parametrize("done, want", [
    ([], "has no budget at which every seed of every depth is stored"),
    ([1e5], "rests on one budget, 100K non-embedding parameters, the only one at which"),
    ([1e5, 2e5], "rests on 2 of its 5 budgets, 100K and 200K non-embedding parameters, the only ones"),
    ([1e5, 2e5, 4e5, 8e5, 1.6e6], ""),
])
def test_the_sweeps_scope_is_one_plain_sentence(monkeypatch, done, want):
    class Preset:
        budgets = (1e5, 2e5, 4e5, 8e5, 1.6e6)
    monkeypatch.setattr(g, "get_preset", lambda name: Preset)
    monkeypatch.setattr(g.pv, "read", lambda name: {"budgets": done})
    text = g.scope_sentence("cpu-pairs")
    assert (want in text) if want else text == ""
    for narration in ("under way", "so far", "yet", "declared"):
        assert narration not in text
    assert text.count(". ") == 0 and (not text or text.endswith("."))


def test_counts_read_as_english():
    assert g._all_or_some(7, 7) == "all 7" and g._all_or_some(6, 7) == "6 of the 7"
    assert g._all_or_some(0, 7) == "none of the 7"
    assert g._pairs_text(4, 9, 0) == "The four stored sweeps with a verdict hold nine doubling pairs, and none of them crosses"
    assert g._pairs_text(1, 2, 1).endswith("one of them crosses")
    assert g._pairs_text(2, 2, 2).endswith("all two cross")
    n = {**g.numbers(), **g.precision_numbers()}
    assert "under way" not in n["own_scope"] and "so far" not in n["own_scope"]
    assert not re.search(r"all (\d+) of the \1", n["fp_exp_above"])


def test_figure_captions_conclusions_follow_the_verdicts():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    caps = {f["name"]: f["caption"] for c in nb["cells"]
            if (f := c["metadata"].get("mystnb", {}).get("figure"))}
    cap = caps["fig-models-optimal"]
    verdicts = {m["name"]: m["verdict"] for m in load_models() + gpt3_table()}
    for name in ("Gopher-280B", "Jurassic-1 Jumbo", "BloombergGPT"):
        assert verdicts[name] == "near optimal" and name.split("-280B")[0] in cap
    for name in ("PaLM-540B", "GPT-3 175B", "LLaMA-65B", "Llama-2-70B", "Chinchilla-70B"):
        assert verdicts[name] == "too deep"
    assert verdicts["BLOOM-176B"] == "too shallow"
    models = load_models() + gpt3_table()
    small = [m for m in models if m["budget"] < 1e10 and m.get("verdict_meaningful") is not False]
    assert sum(m["verdict"] == "too shallow" for m in small) > len(small) / 2  # "most ... too shallow"
    big = [m for m in models if m["budget"] > 4e10]
    assert {m["verdict"] for m in big} == {"near optimal", "too deep", "too shallow"}  # "split"
    assert min(m["budget"] for m in big if m["verdict"] == "near optimal") > 4e10
    assert "hover" not in cap.lower() and "Hover" not in "".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "most of a larger budget goes into width" in caps["fig-advisor"]


def test_a_shape_reads_as_a_table_of_rounded_values():
    from dwlib.book import guidelines as g
    from dwlib.core.fit import optimal_shape, verdict
    t = g.shape_frame(verdict(96, 12288))["value"]
    assert t["depth L"] == "96" and t["width d"] == "12,288" and t["verdict"] == "too deep"
    assert t["optimal depth L*"] == f"{verdict(96, 12288)['optimal_depth']:.1f}" and t["L / L*"].count(".") == 1
    o = g.shape_frame(optimal_shape(175e9))["value"]
    assert list(o.index) == ["budget 12 L d²", "depth L", "width d"] and o["budget 12 L d²"] == "175B"


def test_the_own_fits_table_is_one_row_a_sweep_with_its_crossing_pairs():
    """Compact: the pairs' verdicts are the experiments chapter's; this table only names, for
    each sweep, the pairs that cross by the declared rule (the fit's inputs), or 'none'."""
    from dwlib.book import guidelines as g
    from dwlib.book import pairs_verdicts as pv
    frame = g.own_fits_table()
    readings = g.own_readings()
    assert len(frame) == len(readings) and list(frame.columns) == ["doubling pairs", "crossing by the rule"]
    for (label, r), (_, row) in zip(readings.items(), frame.iterrows()):
        crossing = pv.crossing(r)
        assert (row["crossing by the rule"] == "none") == (not crossing) or row["crossing by the rule"].startswith("not read")
        for p in r["pairs"]:
            assert f"{p['shallow']} vs {p['deep']}" in row["doubling pairs"]


def test_the_chapters_tables_write_symbols_as_a_reader_does():
    from dwlib.book import guidelines as g
    from dwlib.core.fit import verdict
    labels = [*g.trillion_table().index, *g.precision_table().index, *g.gpt3_frame().columns,
              *g.models_frame(load_models()).columns]
    cells = [*g.trillion_table()["value"], *g.gpt3_frame()["suggested shape"]]
    for text in labels + cells:
        assert not re.search(r"\d e\d|\de\d|\^| x \d", text), text
    assert "fit: optimal depth L* for N = 10\N{SUPERSCRIPT ONE}\N{SUPERSCRIPT TWO}" in labels
    rule = g.shape_frame(verdict(96, 12288))["value"]["rule"]
    assert rule.startswith("near optimal when |L \N{MINUS SIGN} L*| \N{LESS-THAN OR EQUAL TO} max(")
    assert g.shape_frame(verdict(40, 12288))["value"]["L \N{MINUS SIGN} L*"].startswith("\N{MINUS SIGN}")


def test_the_shell_example_runs_on_the_budget_the_prose_quotes():
    """The command line example is GPT-3 175B's non-embedding budget, 12 L d² (the one the prose
    gives a shape for), and its saved output suggests the depth and width the prose quotes."""
    from dwlib.core.sizes import budget
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    (command,) = re.findall(r"^dwlib advise (\d+)$", text, re.M)
    assert int(command) == budget(96, 12288)
    (cell,) = [c for c in nb["cells"] if c["cell_type"] == "code" and 'main(["advise"' in "".join(c["source"])]
    out = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    n = g.numbers()
    assert (f"suggested: depth {n['gpt3_175b_sugg_depth']}, width {n['gpt3_175b_sugg_width']} "
            f"({n['gpt3_175b_sugg_heads']} heads of {n['head_size']})") in out


def test_the_crossing_count_says_what_the_split_seeds_do_not_change():
    """The split seeds qualify the size of some gaps, not whether a pair crosses: the count of
    crossings does not repeat the caveat that the experiments chapter and the claims table give."""
    from dwlib.book import guidelines as g
    own = g._own_numbers()
    assert own["own_pairs_text"] and all("split" not in str(v) for v in own.values())
