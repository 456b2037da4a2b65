"""The context chapter's computed captions (the wide-deep and induction figures) say what to
conclude, and follow the quoted table and the stored scores (that the chapter holds them:
tests/test_captions.py)."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from dwlib.book import context as chapter
from dwlib.errors import InputError
from dwlib.experiments import context


def test_the_induction_conclusion_follows_the_scores():
    assert chapter.attention_conclusion(0.07, 0.52).startswith("Only the two-layer model attends")
    assert "0.52" in chapter.attention_conclusion(0.07, 0.52) and "0.07" in chapter.attention_conclusion(0.07, 0.52)
    assert chapter.attention_conclusion(0.5, 0.1).startswith("Only the one-layer model")
    assert chapter.attention_conclusion(0.2, 0.3).startswith("Neither model stands out")


def _numbers(wide, deep, ties, wide_avg, deep_avg):
    return {"bw_pairs": wide + deep + ties, "bw_wide_wins": wide, "bw_deep_wins": deep, "bw_ties": ties,
            "bw_wide_avg": wide_avg, "bw_deep_avg": deep_avg}


def test_the_conclusion_follows_the_counts():
    assert chapter.brown_conclusion(_numbers(22, 16, 2, 61.3, 61.0)).startswith("The points hug the diagonal")
    assert "22 of the 40 pairs" in chapter.brown_conclusion(_numbers(22, 16, 2, 61.3, 61.0))
    assert chapter.brown_conclusion(_numbers(35, 5, 0, 66.0, 61.0)).startswith("The single wide layer is ahead")
    assert chapter.brown_conclusion(_numbers(5, 35, 0, 58.0, 61.0)).startswith("The eight-layer network is ahead")
    assert "tie" not in chapter.brown_conclusion(_numbers(20, 20, 0, 61.0, 61.0))


def _tables():
    return {k: context.quoted_table(k) for k in ("brown2022wide", "liu2020very", "clark2019heads")}


def test_each_quoted_tables_caption_says_what_was_checked_against_its_paper():
    t = _tables()
    captions = {"brown2022wide": chapter.brown_table(t["brown2022wide"]).caption,
                "liu2020very": chapter.liu_table(t["liu2020very"])[0].caption,
                "clark2019heads": chapter.clark_table(t["clark2019heads"]).caption}
    for name, caption in captions.items():
        check = chapter.table_check(name)
        assert "survey" in caption
        if not check["values"]:
            assert chapter.UNCHECKED in caption
        else:  # a partial check says how many numbers of how many, and never that none was checked
            n = len(check["values"])
            total = int(t[name][check["columns"]].notna().to_numpy().sum())
            assert chapter.UNCHECKED not in caption and n < total
            assert f"{n} of its {total} numbers checked against {check['source']}" in caption
            assert "the rest are as the survey gives them" in caption
            for v in check["values"]:  # every value said to be checked is the table's, and the paper's
                mask = pd.concat([t[name][k] == x for k, x in v["row"].items()], axis=1).all(axis=1)
                assert mask.sum() == 1 and t[name].loc[mask, v["column"]].iloc[0] == v["paper"]
    assert "not checked" in chapter.brown_caption(t["brown2022wide"])
    # the abstract's average advantage, said beside the table's own, computed from it
    n = chapter.brown_numbers(t["brown2022wide"])
    assert f"differ by {n['bw_wide_avg'] - n['bw_deep_avg']:.1f} points" in captions["brown2022wide"]


def test_the_provenance_follows_the_check_and_fails_on_a_value_the_table_does_not_hold():
    liu = context.quoted_table("liu2020very")
    check = copy.deepcopy(chapter.table_check("liu2020very"))
    assert chapter.provenance(liu, dict(check, values=[])) == chapter.UNCHECKED
    # a table whose every number is checked cites the paper alone
    one = liu[liu["model"] == "6L-6L ADMIN"].head(1)[["model", "benchmark", "BLEU"]]
    full = {"source": "the paper", "columns": ["BLEU"],
            "values": [{"row": {"model": "6L-6L ADMIN", "benchmark": one["benchmark"].iloc[0]},
                        "column": "BLEU", "paper": float(one["BLEU"].iloc[0])}]}
    assert chapter.provenance(one, full) == "Every number checked against the paper."
    # a value corrected from the survey's copy is said, with both values
    full["values"][0]["survey"] = 99.9
    assert "the survey gives 99.9, the paper" in chapter.provenance(one, full)
    # a checked value that the table does not hold is an error, not a caption
    bent = copy.deepcopy(check)
    bent["values"][0]["paper"] = 43.9
    with pytest.raises(InputError, match="the table holds 43.8"):
        chapter.provenance(liu, bent)
    bent["values"][0]["row"] = {"model": "no such"}
    with pytest.raises(InputError, match="not one cell"):
        chapter.provenance(liu, bent)
