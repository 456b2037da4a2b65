"""The claims table (dwlib.book.claims) and the discussion chapter's numbers (dwlib.book.discussion),
checked against computations written out here from the paper's formulas and the stored runs,
independently of the dwlib functions the rows call."""

from __future__ import annotations

import json
import math
import re

import pytest

from dwlib.book import analysed_model, claims, discussion
from dwlib.experiments.records import stored_results
from dwlib.store import packaged_text

A, B = 5.039, 0.0555  # the authors' fit, d_x(L) = exp(a + b L), as BloombergGPT states it


def _log3(x):
    return math.log(x) / math.log(3)


def _optimal_depth(budget):
    """L* with 12 L exp(2a + 2bL) = budget, by bisection (the fit's budget rises with L)."""
    lo, hi = 1e-6, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 12 * mid * math.exp(2 * A + 2 * B * mid) < budget else (lo, mid)
    return lo


def _number(text: str) -> float:
    """The first number of a row's text: '7.3 × 10^15 ...' -> 7.3e15, '196,608 ...' -> 196608."""
    m = re.search(r"(-?\d[\d,]*(?:\.\d+)?)(?: × 10\^(-?\d+))?", text)
    return float(m.group(1).replace(",", "")) * (10 ** int(m.group(2)) if m.group(2) else 1)


def test_threshold_row_against_log3():
    row = claims.threshold_row()
    assert f"{_log3(1000):.2f}" in row["book"]
    assert row["agreement"] == ("agrees" if 6 < _log3(1000) else "differs") == "agrees"


def test_corollary1_rows_solve_eq7_as_printed():
    """Equate eq. (7)'s shallow upper bound to its deep lower bound (d_x = 1000, H = 16, L = 6)
    and solve for the shallow width by hand; the paper's one significant digit decides."""
    target = 3 ** (6 - 2) * (_log3(1000 - 16) - 6 + 2 - _log3(2))
    for row, Ls, stated in zip(claims.corollary1_rows(), (2, 3), (2e17, 2e5)):
        width = 3 ** (target / ((3 ** Ls - 1) / 2)) - 16
        assert _number(row["book"]) == pytest.approx(width, rel=0.01)
        assert row["agreement"] == ("agrees" if 1.5 * stated / 2 <= width < 2.5 * stated / 2 else "differs")
        assert f"{abs(math.log10(stated / width)):.1f} orders" in row["note"]


def test_double_exponential_and_layer_factor_rows():
    """Both sides of eq. (7) at a fixed width scale with 3^L - 1 (upper) or 3^L (lower), so the
    shallow widths' logs differ by (3^3 - 1)/(3^2 - 1), and the upper bound from depth 5 to 6 by
    (3^6 - 1)/(3^5 - 1); the paper's ratio comes from its two stated widths."""
    row = claims.double_exponential_row()
    assert _number(row["book"]) == pytest.approx(26 / 8, abs=5e-4)
    assert _number(row["paper"]) == pytest.approx(math.log(2e17 + 16) / math.log(2e5 + 16), abs=5e-4)
    assert row["agreement"] == "agrees"
    factor = claims.layer_factor_row()
    assert _number(factor["book"]) == pytest.approx(728 / 242, abs=5e-4)


def test_one_layer_and_proposition1_rows_match_the_stored_measurements():
    data = json.loads(packaged_text("seprank.json"))
    one = [r for r in data["ranks"] if r["depth"] == 1 and r["heads"] == 1]
    expected = "agrees" if one and all(r["rank"] == r["width"] + 1 for r in one) else "differs"
    assert claims.one_layer_row()["agreement"] == expected
    settings = data["proposition1"]  # {setting: [one measurement per balanced partition]}
    equal = all(len({r["attention"] for r in rows}) == 1 for rows in settings.values())
    row = claims.proposition1_row()
    assert row["agreement"] == ("agrees" if equal else "differs")
    assert f"over {sum(len(rows) for rows in settings.values())} balanced partitions" in row["book"]


def test_size_row_counts_the_decoders_matrices():
    row = claims.size_count_row()
    assert f"{12 * 4 * 64 ** 2:,}" in row["paper"] and f"{12 * 4 * 64 ** 2:,}" in row["book"]
    assert row["agreement"] == "agrees"


def test_gpt3_and_trillion_rows_against_a_bisection_of_the_fit():
    """GPT-3 (Brown et al., Table 2.1) and the 1T projection, with the fit solved by bisection."""
    gpt3 = [("Small", 12, 768), ("Medium", 24, 1024), ("Large", 24, 1536), ("XL", 24, 2048),
            ("2.7B", 32, 2560), ("6.7B", 32, 4096), ("13B", 40, 5140), ("175B", 96, 12288)]
    ratios = {name: L / _optimal_depth(12 * L * d * d) for name, L, d in gpt3}
    small, big = claims.gpt3_rows()
    below_10b = [n for n, L, d in gpt3 if 12 * L * d * d < 10e9]
    assert small["agreement"] == ("agrees" if all(ratios[n] < 0.9 for n in below_10b) else "differs") == "agrees"
    assert f"{len(below_10b)} of {len(below_10b)}" in small["book"]
    assert f"{_optimal_depth(12 * 96 * 12288 ** 2):.1f}" in big["book"]
    assert big["agreement"] == ("agrees" if ratios["175B"] > 1.1 else "differs")
    depth, width = claims.trillion_rows()
    L = _optimal_depth(1e12)
    assert f"{L:.1f}" in depth["book"] and f"{math.exp(A + B * L):,.0f}" in width["book"]
    assert f"{abs(L - 92):.1f} layers ({abs(L - 92) / 92:.0%}) from the authors' 92" in depth["book"]
    assert ("inside" if abs(L - 92) <= 0.1 * L else "outside") + " the near-optimal band" in depth["book"]
    assert depth["agreement"] == ("agrees" if round(L) == 92 else
                                  "agrees within the tolerance" if abs(L - 92) <= 0.1 * L else "differs")
    assert width["agreement"] == ("agrees" if round(math.exp(A + B * L), -3) == 30_000 else "differs")


def test_figure1_rows_are_3_to_the_depth():
    for r in discussion.figure1_rows():
        L = r["depth"]
        assert r["log10_width"] == pytest.approx(L * math.log10(3))
        assert r["log10_size"] == pytest.approx(math.log10(12 * L) + 2 * L * math.log10(3))
    table = discussion.figure1_table()
    assert table.loc[6, "width needed (above 3ᴸ)"] == "729" and table.loc[12, "width needed (above 3ᴸ)"] == "531,441"
    assert not table.isna().any().any()


def _smallest_gaps(name, shallow, deep, records):
    """Deep minus shallow eval loss, seed by seed, at the smallest target budget both depths reach."""
    by = {(r["depth"], r["target_budget"], r["seed"]): r["eval_loss"] for r in records}
    common = sorted({b for L, b, _ in by if L == shallow} & {b for L, b, _ in by if L == deep})
    n = common[0]
    return n, [by[(deep, n, s)] - by[(shallow, n, s)] for L, b, s in sorted(by)
               if L == shallow and b == n and (deep, n, s) in by]


def test_gap_rows_at_the_smallest_budget_match_the_stored_runs():
    """The CPU grid's gaps at its smallest budget, recomputed from the stored records."""
    records = [r for r in stored_results("mini") if r["eval_loss"] is not None and math.isfinite(r["eval_loss"])]
    rows = [r for r in discussion.gap_rows("mini") if r["end"] == "smallest"]
    assert rows
    for r in rows:
        n, gaps = _smallest_gaps("mini", r["shallow"], r["deep"], records)
        assert r["target_budget"] == n and r["n_seeds"] == len(gaps)
        assert r["mean"] == pytest.approx(sum(gaps) / len(gaps))
        assert r["n_deeper_worse"] == sum(g > 0 for g in gaps)


def test_the_markdown_table_of_some_rows():
    rows = [claims.threshold_row(), *claims.corollary1_rows(), claims.figure1_row()]
    text = claims.markdown(rows)
    assert text.startswith("```{list-table}") and text.endswith("```")
    assert text.count("\n* - ") == len(rows) + 1  # the header and one item per row
    assert r"$2 \times 10^{17}$" in text and "{doc}`corollaries`" in text and "nan" not in text.lower()
    counts = claims.numbers(rows)
    assert counts["cl_rows"] == len(rows) and sum(counts[k] for k in
                                                  ("cl_agree", "cl_within", "cl_partly", "cl_differ", "cl_unreproduced",
                                                   "cl_untested")) == len(rows)


@pytest.mark.slow
def test_every_row_is_complete():
    """Builds the whole table (about 30 s on 2 shared cores: the transitions' bootstraps and the
    measured degrees): every row has every column, a known verdict, and no NaN or ellipsis."""
    rows = claims.rows()
    assert len(rows) >= 15
    for r in rows:
        assert r["agreement"] in claims.VERDICTS
        for key in ("claim", "paper", "book", "chapter"):
            text = str(r[key])
            assert text and "nan" not in text.lower().split() and not text.endswith(("...", "…")), (key, r)


def test_the_tally_counts_each_kind_of_check_apart():
    """Arithmetic of the paper's formulas, computations on networks and trained networks are
    counted apart, so that a count of agreements never mixes them; untested rows stand alone."""
    def row(kind, agreement):
        return {"claim": "c", "chapter": "x", "paper": "p", "book": "b", "agreement": agreement, "kind": kind}
    table = [row(claims.ARITHMETIC, "agrees"), row(claims.ARITHMETIC, "agrees"), row(claims.ARITHMETIC, "differs"),
             row(claims.COMPUTED, "agrees"), row(claims.TRAINED, "partly"), row(claims.TRAINED, "not testable here")]
    text = claims.tally_sentence(table)
    assert text.startswith("Of the 6 claims, 3 are arithmetic of the paper's own formulas")
    assert ": 2 agree and 1 differs;" in text and "1 is computed on networks built here: 1 agrees;" in text
    assert "1 rest on trained networks: 1 agrees in part; and 1 cannot be tested" in text
    assert "3 agree" not in text
    # rows without a kind: the plain count
    plain = [{k: v for k, v in r.items() if k != "kind"} for r in table]
    assert claims.tally_sentence(plain) == claims.summary_sentence(plain)


def test_the_theory_rows_are_of_their_kind_and_link_their_equations():
    """The threshold and the layer factor are arithmetic of eq. (7); every 'eq. (n)' of the
    generated table is a link to the equation."""
    text = claims.markdown([claims.threshold_row(), claims.layer_factor_row(), claims.proposition1_row(),
                            claims.counting_row()])
    assert "eq. (" not in text.replace("eq. {ref}`(", "")
    assert "eq. {ref}`(7) <eq-7>`" in text and "eq. {ref}`(6) <eq-6>`" in text and "eq. {ref}`(4) <eq-4>`" in text


def test_the_degree_row_reads_the_depths_the_chapter_measures():
    table, _ = analysed_model.degrees()
    depths = sorted(int(L) for L in table.index)
    assert len(depths) >= 3
    assert f"measured at depths {depths[0]} to {depths[-1]}" in claims.degree_row()["book"]


def test_the_takeaway_reads_the_verdicts_by_kind_without_repeating_the_counts():
    def row(kind, agreement):
        return {"kind": kind, "agreement": agreement, "claim": "c"}
    A, C, T = claims.ARITHMETIC, claims.COMPUTED, claims.TRAINED
    table = [row(A, "agrees"), row(A, "differs"), row(A, "differs"), row(C, "agrees"), row(C, "partly"),
             row(T, "differs"), row(T, "not reproduced"), row(T, "not testable here")]
    text = claims.takeaway(table)
    assert "theory that can be computed at small sizes agrees with it, one only in part" in text
    assert "two of its printed numbers do not follow from its formulas as printed" in text
    assert "none of its trained claims that this book could test is borne out in full" in text
    assert not any(ch.isdigit() for ch in text)  # words, not the opening's counts
    table = [row(A, "agrees"), row(C, "agrees"), row(T, "agrees"), row(T, "partly")]
    text = claims.takeaway(table)
    assert "computed at small sizes agrees with it as stated" in text and "printed numbers follow" in text
    assert "one of the two trained claims is borne out in full" in text
    table = [row(A, "agrees"), row(C, "agrees"), row(T, "agrees")]
    assert "its trained claims are borne out at the sizes trained here" in claims.takeaway(table)
