"""The claims chapter's figure: one mark per row of the table, with its verdict, and a caption
that says what to conclude (that the chapter holds the computed caption: tests/test_captions.py)."""

from dwlib.book import claims


def _marks(chart) -> list[dict]:
    spec = chart.to_dict()
    return next(iter(spec["datasets"].values()))


def test_every_claim_is_one_mark_with_its_verdict():
    table = claims.rows()
    marks = _marks(claims.chart(table))
    assert len(marks) == len(table)
    assert sorted(m["verdict"] for m in marks) == sorted(r["agreement"] for r in table)
    untested = [m for m in marks if m["group"] == "not testable here"]
    assert len(untested) == sum(r["agreement"] == "not testable here" for r in table)
    assert all("$" not in m["claim"] and "\\" not in m["claim"] for m in marks)


def test_the_findings_count_the_rows_and_fit_a_phone():
    table = [{"kind": claims.TRAINED, "agreement": a, "claim": "c"} for a in ("agrees", "partly", "differs")]
    table += [{"kind": claims.ARITHMETIC, "agreement": "agrees", "claim": "c"}]
    assert claims.figure_findings(table) == ["the paper's formulas: 1 of 1 hold",
                                             "trained networks: 1 of 3 hold, 1 in part"]
    assert all(len(x) <= 48 for x in claims.figure_findings(claims.rows()))


def test_the_caption_says_what_to_conclude_from_the_verdicts():
    table = [{"kind": claims.ARITHMETIC, "agreement": "differs"}, {"kind": claims.COMPUTED, "agreement": "agrees"},
             {"kind": claims.TRAINED, "agreement": "not reproduced"}, {"kind": claims.TRAINED, "agreement": "agrees"}]
    cap = claims.figure_caption(table)
    assert cap.startswith("All but one of the paper's printed numbers follow from its formulas; every check of its "
                          "theory that can be computed at small sizes agrees; and one of the two trained claims")
    cap = claims.figure_caption([r | {"agreement": "agrees"} for r in table])
    assert "every trained claim the book could test holds" in cap and "All but" not in cap
