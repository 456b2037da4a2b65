"""Which bound is the tightest, as the vocabulary chapter's prose and its depth figure's caption
say it, read again from the stored measurements: at r = 1 the polynomial-space bound at width r
at every depth; at r = 2 and 3 the 2020 bound at the full width below the depth from which both
bounds at width r lie below it (a tie at depth 1 and r = 2); from that depth on, both bounds at
width r below the full-width one."""

from __future__ import annotations

import json
from pathlib import Path

from dwlib.book import vocabulary
from dwlib.experiments import vocab_sweep

BOOK = Path(__file__).resolve().parents[1] / "book" / "vocabulary.ipynb"
TIE = 1e-9


def _tightest(m: dict) -> set[str]:
    """The names of the bounds (of three) that are the smallest for one measurement."""
    bounds = {"poly": m["log3_upper_rank"], "full": m["log3_upper_full"]}
    if m["log3_upper_eq8_rank"] is not None:
        bounds["eq8"] = m["log3_upper_eq8_rank"]
    low = min(bounds.values())
    return {k for k, v in bounds.items() if v <= low + TIE}


def statements(data: dict) -> list[str]:
    """The chapter's statements about the bounds that the data contradict (empty: all hold)."""
    recs = vocabulary.depth_records(data)
    cross = vocabulary.numbers(data)["vb_cross_L"]
    wrong = []
    for m in recs:
        r, L, best = m["embedding_rank"], m["depth"], _tightest(m)
        if r == 1 and best != {"poly"}:
            wrong.append(f"r = 1, depth {L}: the tightest is {best}, not the polynomial-space bound")
        if r >= 2 and L < cross:
            want = {"full", "poly"} if (r, L) == (2, 1) else {"full"}
            if best != want:
                wrong.append(f"r = {r}, depth {L}: the tightest is {best}, not {want}")
        if L >= cross and not max(m["log3_upper_rank"], m["log3_upper_eq8_rank"] or 0) < m["log3_upper_full"]:
            wrong.append(f"r = {r}, depth {L}: a bound at width r is not below the full-width one")
    return wrong


def test_the_chapter_says_which_bound_is_tightest_as_the_measurements_have_it():
    data = vocab_sweep.load()
    assert vocabulary.numbers(data)["vb_cross_L"] == 3  # the caption names depth 3
    assert statements(data) == []
    nb = json.loads(BOOK.read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "polynomial-space bound at width $r$ is the tightest of the three at every depth" in text
    assert "is the tighter of them" not in text
    caption = next(c["metadata"]["mystnb"]["figure"]["caption"] for c in nb["cells"]
                   if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-vocab-depth")
    assert "at $r = 1$ the polynomial-space bound at width $r$ is the tightest at every depth" in caption
    assert "from depth 3 on" in caption


def test_the_check_fails_where_the_measurements_would_say_otherwise():
    data = json.loads(json.dumps(vocab_sweep.load()))
    recs = vocabulary.depth_records(data)  # the records themselves, inside data
    m = next(m for m in recs if m["embedding_rank"] == 1 and m["depth"] == 1)
    m["log3_upper_rank"] = m["log3_upper_full"] + 0.5  # the full-width bound tighter at r = 1
    assert any("r = 1, depth 1" in w for w in statements(data))
    data = json.loads(json.dumps(vocab_sweep.load()))
    m = next(m for m in vocabulary.depth_records(data) if m["embedding_rank"] == 3 and m["depth"] == 2)
    m["log3_upper_full"] = m["log3_upper_rank"] + 1  # the polynomial-space bound tighter at r = 3
    assert any("r = 3, depth 2" in w for w in statements(data))
