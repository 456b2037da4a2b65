"""Tests of dwlib.experiments.catalogue: the GPT-3 family as published, the authors' 1T
projection, and the table of real models with its sources in the book's bibliography."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dwlib.experiments.catalogue import gpt3_table, load_models, trillion_projection

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
NOTEBOOK = ROOT / "book" / "guidelines.ipynb"


def test_gpt3_table_as_published():
    rows = gpt3_table()
    # Brown et al. (2020), Table 2.1: n_layers, d_model, n_heads
    assert [(r["name"].removeprefix("GPT-3 "), r["depth"], r["width"], r["heads"]) for r in rows] == [
        ("Small", 12, 768, 12), ("Medium", 24, 1024, 16), ("Large", 24, 1536, 16),
        ("XL", 24, 2048, 24), ("2.7B", 32, 2560, 32), ("6.7B", 32, 4096, 32),
        ("13B", 40, 5140, 40), ("175B", 96, 12288, 96)]
    for r in rows:
        assert r["budget"] == 12 * r["depth"] * r["width"] ** 2
        assert r["suggested_width"] % 128 == 0
        # the non-embedding count 12 L d^2 is below the nominal size, and close to it at scale
        assert 0.6 * r["params"] < r["budget"] < 1.05 * r["params"]
    # the authors' summary: up to ~10B too shallow, 175B too deep
    assert [r["verdict"] for r in rows[:-1]] == ["too shallow"] * 7
    assert rows[-1]["verdict"] == "too deep"
    assert (rows[0]["suggested_depth"], round(rows[0]["optimal_width"])) == (23, 554)
    assert rows[-1]["suggested_depth"] == 80


def test_trillion_projection():
    p = trillion_projection()
    assert 94 < p["optimal_depth"] < 95.5
    assert 29_000 < p["optimal_width"] < 30_500  # "30K"
    assert (p["practical"]["depth"], p["practical"]["width"]) == (95, 29568)
    assert p["authors_budget"] == 12 * 92 * 30_000 ** 2
    assert p["authors_verdict"] == "near optimal"
    assert 0.95 < p["authors_depth_ratio"] < 1.0
    # counting a 50K-token embedding in the 1T changes the optimal depth by < 0.1 layer
    assert abs(p["if_total_with_embedding"]["optimal_depth"] - p["optimal_depth"]) < 0.1


def test_models_json_and_bibliography():
    models = load_models()
    keys = set(re.findall(r"@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8")))
    assert {"kaplan2020scaling", "levine2020depth", "brown2020language"} <= keys
    names = [m["name"] for m in models]
    assert len(names) == len(set(names)) >= 20
    catalogue = json.loads((ROOT / "dwlib" / "data" / "models.json").read_text())
    assert {catalogue["gpt3"]["source"], catalogue["authors_1t"]["source"]} <= keys
    assert not set(names) & {m["name"] for m in catalogue["gpt3"]["models"]}  # each shape stored once
    for m in models:
        assert m["source"] in keys, m["name"]
        assert isinstance(m["depth"], int) and isinstance(m["width"], int) and m["heads"] > 0
        assert m["budget"] == 12 * m["depth"] * m["width"] ** 2
        assert m["verdict"] in {"too shallow", "near optimal", "too deep"}
    by = {m["name"]: m for m in models}
    assert "note" in by["T5-11B"] and "poor description" in by["T5-11B"]["note"]
    assert (by["PaLM-540B"]["depth"], by["PaLM-540B"]["width"]) == (118, 18432)
    # designed with the fit: near optimal
    assert by["BloombergGPT"]["verdict"] == "near optimal"
    assert by["Jurassic-1 Jumbo"]["verdict"] == "near optimal"
    assert by["OPT-175B"]["verdict"] == "too deep"


def test_chapter_cites_every_model_source():
    """The guidelines chapter cites the source of every model shape it draws."""
    if not NOTEBOOK.exists():
        pytest.skip("book/guidelines.ipynb not written")
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    cited = {k.strip() for group in re.findall(r"\{cite\}`([^`]+)`", prose) for k in group.split(",")}
    needed = {m["source"] for m in load_models()} | {"brown2020language", "levine2020depth"}
    assert needed <= cited, sorted(needed - cited)
