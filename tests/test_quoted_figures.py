"""The figures the analysed-model chapter quotes from other papers: stored once as data
(dwlib/data/quoted_figures.json), each with its source's key in the book's bibliography, and
quoted in the chapter only through glue, beside a citation of that source."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dwlib.book import analysed_model

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
NOTEBOOK = ROOT / "book" / "analysed_model.ipynb"


def _prose() -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_every_figure_names_its_source_and_where_it_was_read():
    keys = set(re.findall(r"@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8")))
    figures = analysed_model.quoted_figures()
    assert figures
    for name, f in figures.items():
        assert f["source"] in keys, name
        assert f["read_in"].split(",")[0] in keys, name
        assert isinstance(f["value"], (int, float)) and f["measures"] and f["check"], name


def test_the_paper_quotes_the_perplexities_as_stored():
    """Section 2.3 of the paper: 18.82 (self-attention first), 18.63 +- 0.26 (interleaved, five
    seeds), 29.2 (the best LSTM-based result)."""
    n = analysed_model.cited_numbers()
    assert n == {"ppl_sa_first": 18.82, "ppl_interleaved": 18.63, "ppl_interleaved_pm": 0.26, "ppl_lstm": 29.2}


def test_the_chapter_glues_the_figures_and_cites_their_sources():
    prose = _prose()
    for name in analysed_model.cited_numbers():
        assert f'glued["{name}' in prose, name
    cited = {k.strip() for group in re.findall(r"\{cite(?::t)?\}`([^`]+)`", prose) for k in group.split(",")}
    assert {f["source"] for f in analysed_model.quoted_figures().values()} <= cited
    for typed in ("18.82", "18.63", "0.26", "29.2"):
        assert typed not in prose, typed
