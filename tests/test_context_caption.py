"""The context chapter's wide-deep figure: its caption (in the cell's metadata, where nothing can
be glued) is the one computed from the quoted table, and says what to conclude."""

from __future__ import annotations

import json
from pathlib import Path

from dwlib.book import context as chapter
from dwlib.experiments import context

ROOT = Path(__file__).resolve().parents[1]


def test_the_wide_deep_caption_is_the_computed_one():
    nb = json.loads((ROOT / "book" / "context.ipynb").read_text())
    captions = [c["metadata"]["mystnb"]["figure"]["caption"] for c in nb["cells"]
                if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-wide-deep"]
    assert captions == [chapter.brown_caption(context.quoted_table("brown2022wide"))]


def _numbers(wide, deep, ties, wide_avg, deep_avg):
    return {"bw_pairs": wide + deep + ties, "bw_wide_wins": wide, "bw_deep_wins": deep, "bw_ties": ties,
            "bw_wide_avg": wide_avg, "bw_deep_avg": deep_avg}


def test_the_conclusion_follows_the_counts():
    assert chapter.brown_conclusion(_numbers(22, 16, 2, 61.3, 61.0)).startswith("The points hug the diagonal")
    assert "22 of the 40 pairs" in chapter.brown_conclusion(_numbers(22, 16, 2, 61.3, 61.0))
    assert chapter.brown_conclusion(_numbers(35, 5, 0, 66.0, 61.0)).startswith("The single wide layer is ahead")
    assert chapter.brown_conclusion(_numbers(5, 35, 0, 58.0, 61.0)).startswith("The eight-layer network is ahead")
    assert "tie" not in chapter.brown_conclusion(_numbers(20, 20, 0, 61.0, 61.0))


def test_every_quoted_table_says_its_numbers_are_the_surveys_unchecked():
    brown, liu, clark = (context.quoted_table(k) for k in ("brown2022wide", "liu2020very", "clark2019heads"))
    tables = [chapter.brown_table(brown), chapter.liu_table(liu)[0], chapter.clark_table(clark)]
    for table in tables:
        assert table.caption.endswith(chapter.UNCHECKED) and "survey" in table.caption
    assert "not checked" in chapter.brown_caption(brown)
