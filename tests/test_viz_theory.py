"""The corollaries' and the Discussion's charts draw what eq. (7) and d_x > 3^L give, and the
experiments chapter's table of what the bounds separate compares the right bounds."""

from __future__ import annotations

import math

import pytest

from dwlib.book import corollaries, discussion, figure2
from dwlib.core import bounds


def _rows(chart):
    data = chart.to_dict()["datasets"]
    return [row for rows in data.values() for row in rows]


def test_corollary1_chart_solves_eq7_as_printed():
    """Shallow upper bound (3^Ls - 1)/2 log3(d_s + H) equated to the deep lower bound, by hand."""
    W, H, L = 1000, 16, 6
    target = 3 ** (L - 2) * (math.log(W - H, 3) - L + 2 - math.log(2, 3))
    drawn = {r["shallow depth"]: r["log10 width"] for r in _rows(corollaries.width_chart()) if "shallow depth" in r}
    assert sorted(drawn) == [1, 2, 3]  # depth 4 has L_s > log3 d_s: Theorem 1 says nothing there
    for Ls, log10_w in drawn.items():
        assert log10_w == pytest.approx(math.log10(3 ** (target / ((3 ** Ls - 1) / 2)) - H), rel=1e-6)


def test_figure1_chart_draws_three_to_the_depth():
    drawn = {r["depth"]: r["log10 width"] for r in _rows(discussion.figure1_chart()) if "depth" in r}
    assert drawn and all(v == pytest.approx(int(L) * math.log10(3)) for L, v in drawn.items())
    assert "207" not in drawn


def test_bounds_table_separates_only_where_one_lower_bound_exceeds_the_other_upper():
    rows = figure2.bounds_rows()
    assert len(rows) == 10
    for r in rows:
        s, d = (int(x) for x in r["pair"].split(" vs "))
        ws, wd = (int(x) for x in r["widths"].split(", "))
        lo_d = bounds.separation_rank_bounds(d, wd, wd // 8)["lower"]
        up_s = bounds.separation_rank_bounds(s, ws, ws // 8)["upper"]
        assert (r["separated"] == "deeper more expressive") == (lo_d > up_s)
        for L, w in ((s, ws), (d, wd)):  # the nearest whole number of heads of size 8
            assert w % 8 == 0 and abs(w - math.sqrt(r["budget"] / (12 * L))) <= 4
