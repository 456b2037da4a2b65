"""The separation-rank chapter's and the proof sketches' figures draw what the chapters compute:
the partition chart one bar per function and partition with the table's ranks, and the count
chart's three series in the order the proofs put them (lower bound <= monomial count <= the
upper bound's count), the printed lower bound split at the threshold."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dwlib.book import proofs, separation_rank
from dwlib.core import bounds


def _rows(chart):
    data = chart.to_dict()["datasets"]
    return [row for rows in data.values() for row in rows]


def test_partition_chart_draws_the_tables_ranks():
    ranks = pd.DataFrame({"{1,2} | {3,4}": [1, 5], "{1,3} | {2,4}": [2, 5], "{1,4} | {2,3}": [3, 5]},
                         index=pd.Index(["local: neighbours first (convolution-like)",
                                         "self-attention, eq. (3), depth 1"]))
    drawn = {(r["function"], r["partition"]): r["rank"] for r in _rows(separation_rank.partition_chart(ranks))}
    assert drawn == {("local (neighbours)", "{1,2} | {3,4}"): 1, ("local (neighbours)", "{1,3} | {2,4}"): 2,
                     ("local (neighbours)", "{1,4} | {2,3}"): 3, ("self-attention, L = 1", "{1,2} | {3,4}"): 5,
                     ("self-attention, L = 1", "{1,3} | {2,4}"): 5, ("self-attention, L = 1", "{1,4} | {2,3}"): 5}


def test_count_chart_orders_the_bounds_as_the_proofs_do():
    width, heads = 1024, 16
    rows = proofs.count_chart_rows(width, heads, depths=range(2, 15))
    upper, count, lower = (rows[rows.series == s].set_index("depth L") for s in proofs.COUNT_SERIES)
    th = math.log(width, 3)
    for L in range(2, 15):
        assert upper.loc[L, "log3"] == pytest.approx((3 ** L - 1) / 2 * math.log(width + heads, 3))
        assert count.loc[L, "log3"] <= upper.loc[L, "log3"]
        if L in lower.index:
            assert lower.loc[L, "log3"] > 0 and lower.loc[L, "log3"] <= count.loc[L, "log3"] + 1e-9
            assert lower.loc[L, "theorem"] == (1 if L < th else 2)
            expected = bounds.theorem1_lower(L, width, heads) if L < th else bounds.theorem2_lower(L, width, heads)
            assert lower.loc[L, "log3"] == pytest.approx(expected)
    # equal at depth 2 (k = 1), and eq. (8)'s non-positive lower bound just above the threshold left out
    assert lower.loc[2, "log3"] == pytest.approx(count.loc[2, "log3"])
    assert 7 not in lower.index and bounds.theorem2_lower(7, width, heads) <= 0


def test_count_chart_draws_its_rows_and_the_threshold():
    spec = proofs.count_chart(1024, 16).to_dict()
    rows = [r for rows in spec["datasets"].values() for r in rows]
    assert {r["series"] for r in rows if "series" in r} == set(proofs.COUNT_SERIES)
    # the legend writes the symbols as a reader does, as the caption's C log_3(d_x + H)
    assert proofs.COUNT_SERIES[:2] == ("upper bound (P1): C log\u2083(d\u2093 + H)",
                                       "log\u2083 of the monomial count (P4)")
    assert [r["threshold"] for r in rows if "threshold" in r] == [pytest.approx(math.log(1024, 3))]
