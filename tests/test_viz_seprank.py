"""The measured-ranks chapter's rank charts: the legend lists only the quantities some panel draws."""

from __future__ import annotations

import pytest

from dwlib.book import seprank_measurements
from dwlib.experiments import seprank_sweep
from dwlib.viz import seprank as vs


@pytest.fixture(scope="module")
def ranks():
    return seprank_measurements.rank_frame(seprank_sweep.load())


def _legend_domain(spec: dict) -> list[str]:
    enc = spec["spec"]["layer"][0]["encoding"]
    colors, dashes = enc["color"]["scale"]["domain"], enc["strokeDash"]["scale"]["domain"]
    assert colors == dashes  # one legend: colour and dash name the same quantities
    return colors


def _drawn(spec: dict) -> set[str]:
    data = spec["datasets"][next(iter(spec["datasets"]))]
    return {row["quantity"] for row in data}


@pytest.mark.parametrize("against", ["depth", "width"])
def test_the_legend_names_only_what_a_panel_draws(ranks, against):
    spec = vs.rank_chart(ranks, against=against).to_dict()
    assert set(_legend_domain(spec)) == _drawn(spec)


@pytest.mark.parametrize("against", ["depth", "width"])
def test_the_subtitle_says_the_positions_and_heads_in_words(ranks, against):
    """The chapter's N and H in words, as its captions say them (4 positions, one head), from
    the measurements themselves: no "N = 4, H = 1"."""
    subtitle = vs.rank_chart(ranks, against=against).to_dict()["title"]["subtitle"]
    assert set(ranks["positions"]) == {4} and set(ranks["heads"]) == {1}
    assert subtitle.endswith(", 4 positions, 1 head") and "=" not in subtitle, subtitle


def test_the_depth_chart_draws_no_theorem_1_series_when_its_widths_never_meet_theorem_1(ranks):
    narrow = ranks[ranks["width"] <= 3]
    spec = vs.rank_chart(ranks, against="depth").to_dict()
    has_t1 = bool((narrow["theorem"] == 1).any())
    assert any(q.startswith("Theorem 1") for q in _legend_domain(spec)) == has_t1


def test_the_scales_keep_the_order_and_styles_of_the_quantities():
    colors, dashes = vs.scales(["Theorem 2 upper bound", "measured grid rank", "measured grid rank"])
    assert colors.domain == ["measured grid rank", "Theorem 2 upper bound"]
    assert colors.range == [vs.COLOR["measured grid rank"], vs.COLOR["Theorem 2 upper bound"]]
    assert dashes.range == [vs.DASHES["measured grid rank"], vs.DASHES["Theorem 2 upper bound"]]


def test_the_depth_figures_caption_says_whether_theorem_1_is_drawn(ranks):
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parents[1] / "book" / "seprank_measurements.ipynb").read_text())
    caption = next(c["metadata"]["mystnb"]["figure"]["caption"] for c in nb["cells"]
                   if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-rank-depth")
    has_t1 = bool((ranks[ranks["width"] <= 3]["theorem"] == 1).any())
    assert ("none of its bounds is drawn" in caption) == (not has_t1)
