"""The measured-ranks chapter's generated sentences read as English, and what its opening and
its figure captions conclude holds for the stored measurements (and fails on bent ones)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from dwlib.book import seprank_measurements as sm
from dwlib.experiments import seprank_sweep

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "seprank_measurements.ipynb"


def test_counts_read_as_english():
    assert sm.among(2, 2) == "both" and sm.among(3, 3) == "all 3" and sm.among(1, 1) == "the one"
    assert sm.among(0, 4) == "none of them" and sm.among(2, 4) == "2 of them"
    assert sm.agree_sentence(14, 14) == "For every one of the 14 shapes the repeats gave the same rank."
    assert sm.agree_sentence(12, 14).startswith("For 2 of the 14 shapes the repeats gave different ranks")
    n = sm.numbers()
    assert n["sm_pd32_pct"].endswith("%") and n["sm_pd32_rank"] > 0


def conclusions(ranks) -> list[str]:
    """What the captions of the depth and width figures conclude, checked on a rank frame: the
    failures (empty: all hold)."""
    wrong = []
    for w, g in ranks.groupby("width"):
        seq = list(g.sort_values("depth")["rank"])
        if any(b <= a for a, b in zip(seq, seq[1:])):
            wrong.append(f"width {w}: the rank does not rise with depth")
    for m in ranks.itertuples():
        if m.rank > m.poly_dim or (not math.isnan(m.log3_upper) and math.log(m.rank, 3) > m.log3_upper + 1e-9):
            wrong.append(f"depth {m.depth}, width {m.width}: above a ceiling")
        if m.theorem == 2 and m.log3_lower >= 0:
            wrong.append(f"depth {m.depth}, width {m.width}: Theorem 2's lower bound says something")
        if m.depth == 1 and m.rank != m.width + 1:
            wrong.append(f"depth 1, width {m.width}: rank is not d_x + 1")
        if m.depth == 1 and m.theorem == 1 and abs(math.log(m.rank, 3) - m.log3_upper) > 1e-9:
            wrong.append(f"depth 1, width {m.width}: Theorem 1's upper bound is not met")
    return wrong


def test_the_captions_conclusions_hold_for_the_stored_measurements():
    ranks = sm.rank_frame(seprank_sweep.load())
    assert conclusions(ranks) == []
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    caps = {f["name"]: f["caption"] for c in nb["cells"] if (f := c["metadata"].get("mystnb", {}).get("figure"))}
    assert "rises steeply with depth and stays under every ceiling" in caps["fig-rank-depth"]
    assert "meets Theorem 1's upper bound" in caps["fig-rank-width"]
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "unit tests" not in text
    # the chapter opens with its result and its key figure, before any table
    kinds = [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]
    first_figure = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("mystnb", {}).get("figure"))
    first_table = next(i for i, (_, s) in enumerate(kinds) if s.startswith('tables["'))
    assert first_figure < first_table


@pytest.mark.parametrize("bend", ["flat", "over", "not d+1"])
def test_the_check_fails_on_bent_measurements(bend):
    ranks = sm.rank_frame(seprank_sweep.load()).copy()
    i = ranks.index[(ranks.depth == 2) & (ranks.width == 2)][0]
    if bend == "flat":
        ranks.loc[i, "rank"] = int(ranks[(ranks.depth == 1) & (ranks.width == 2)]["rank"].iloc[0])
    elif bend == "over":
        ranks.loc[i, "rank"] = int(ranks.loc[i, "poly_dim"]) + 1
    else:
        ranks.loc[ranks.index[(ranks.depth == 1) & (ranks.width == 5)][0], "rank"] = 5
    assert conclusions(ranks)


def test_the_tables_write_symbols_as_a_reader_does():
    """No "->", e-notation, "rtol" or hyphen-minus in the chapter's tables, and the grid growth in
    words: the rank at each grid size, the sizes named in the header."""
    tables = sm.chapter(seprank_sweep.load())[0]
    text = "\n".join(t.to_string() for t in tables.values())
    assert "->" not in text and "rtol" not in text and not re.search(r"\de[-+]?\d", text)
    assert not re.search(r"(?<![\w}])-\d", text)  # negative numbers carry a true minus sign
    assert "\N{MINUS SIGN}1.87" in text and "1 \N{RIGHTWARDS ARROW} 2" in text
    assert "rank (relative tolerance 10\u207b\u2076)" in tables["softmax"].columns
    header = "rank as the grid grew (M = 6, 10, 14, \N{HORIZONTAL ELLIPSIS})"
    assert header in tables["ranks"].columns
    assert tables["ranks"].loc[(3, 2), header] == "15, 45, 66, 105, 135, 209, 232, 232, 232"


def test_growths_of_other_sizes_name_the_size_of_each_rank():
    odd = [[(6, 2, 21), (10, 2, 21)], [(5, 3, 21), (9, 3, 21)]]
    assert sm.grid_sizes(odd) == [] and sm.growth_cell(odd[1], []) == "5: 3, 9: 3"
    assert sm.grid_sizes([[(6, 2, 21)], [(6, 2, 21), (10, 3, 21)]]) == [6, 10]
