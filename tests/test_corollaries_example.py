"""The corollaries chapter's example of Corollary 1 is shown as a short table whose values are
those the bounds compute, written for readers (no raw dictionary, no 15-digit floats)."""

from __future__ import annotations

import math
import re

from dwlib.book import corollaries
from dwlib.core import bounds


#: Unicode superscript digits and minus back to ASCII
_PLAIN = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-")


def _number(text: str) -> float:
    """'7.34 × 10¹⁵' (the exponent in superscripts, as a reader writes it) or '76,088'."""
    m = re.fullmatch(r"([\d.,]+)(?: × 10([\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207b]+))?", text)
    assert m, text
    return float(m.group(1).replace(",", "")) * 10.0 ** int((m.group(2) or "0").translate(_PLAIN))


def test_example_table_shows_what_the_bounds_compute():
    for shallow in (2, 3):
        r = bounds.corollary1_width(1000, 16, 6, shallow)
        table = corollaries.corollary1_example(1000, 16, 6, shallow)
        assert table.shape == (4, 1)
        values = list(table.iloc[:, 0])
        assert float(values[0]) == round(r["log3_sep_target"], 2)
        assert math.isclose(_number(values[1]), r["width"], rel_tol=5e-3)
        assert math.isclose(_number(values[2]), r["width"] / 1000, rel_tol=5e-3)
        assert values[3] == "yes"
        assert all(len(v) < 20 for v in values), values
        assert f"depth-{shallow} network" in " ".join(table.index)


def test_example_table_says_when_a_row_is_void_or_needs_no_widening():
    void = corollaries.corollary1_example(1000, 16, 6, 4)
    assert not bounds.corollary1_width(1000, 16, 6, 4)["shallow_in_theorem1"]
    assert void.iloc[3, 0].startswith("no")
    assert bounds.corollary1_width(1000, 16, 6, 5)["any_width"]
    free = corollaries.corollary1_example(1000, 16, 6, 5)
    assert free.iloc[1, 0].startswith("any")
