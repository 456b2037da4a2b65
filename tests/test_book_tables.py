"""What the book's tables and readouts show a reader: sources as author and year, cells in
full, no NaN, and widths and budgets written as numbers (1,024, not 1.02e+3 or 1,023)."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dwlib.book import Table, references, setup
from dwlib.errors import InputError
from dwlib.store import packaged_json
from dwlib.viz import bounds as vb
from dwlib.viz import widgets
from test_viz_bounds import _calculates  # tests/test_viz_bounds.py: every calculate transform of a spec

ROOT = Path(__file__).resolve().parents[1]


def _publisher():
    """scripts/publish_references.py as a module (it needs pybtex, which the book build has)."""
    pytest.importorskip("pybtex")
    spec = importlib.util.spec_from_file_location("publish_references", ROOT / "scripts" / "publish_references.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_published_references_agree_with_the_bibliography():
    """Every entry of dwlib/data/references.json is what the script makes of book/references.bib
    now (an entry edited in the .bib without publishing again fails here)."""
    fresh = _publisher().entries()
    stored = packaged_json(references.DATA_FILE)["entries"]
    assert stored and {k: fresh.get(k) for k in stored} == stored


def test_every_source_dwlib_cites_has_an_author_year():
    keys = {m["source"] for m in packaged_json("models.json")["models"]}
    keys |= {t["source"] for t in packaged_json("context_tables.json").values()}
    keys.add("brown2020language")  # the GPT-3 family (dwlib.experiments.catalogue.gpt3_table)
    for key in keys:
        text = references.author_year(key)
        # a year, with a letter where one author-year label names two works (2023a, 2023b)
        assert key not in text and re.fullmatch(r"\d{4}[a-z]?", text.split(", ")[-1]), (key, text)
    assert references.author_year("devlin2019bert") == "Devlin et al., 2019"
    assert references.author_year("cohen2017inductive") == "Cohen and Shashua, 2017"
    with pytest.raises(InputError, match="no reference"):
        references.author_year("nobody2099")


def test_the_author_year_rule():
    class Entry:  # what the script reads from a pybtex entry
        def __init__(self, *last, title="A Title"):
            from pybtex.database import Person
            self.persons = {"author": [Person(last=n) for n in last]} if last else {}
            self.fields = {"title": title}

    short = _publisher().short_authors
    assert short(Entry("Hackbusch")) == "Hackbusch"
    assert short(Entry("Cohen", "Shashua")) == "Cohen and Shashua"
    assert short(Entry("Levine", "Wies", "Sharir")) == "Levine et al."
    assert short(Entry(title="{A} Survey")) == "A Survey"


def test_setup_shows_long_cells_in_full():
    setup()
    long = "x" * 49 + " and more words than pandas shows by default"
    html = pd.DataFrame({"text": [long]})._repr_html_()
    assert long in html and "..." not in html


def test_table_keeps_its_caption_and_writes_missing_values_as_a_dash():
    t = Table(pd.DataFrame({"a": [1.5, np.nan], "b": ["y" * 80, "z"]}), "Scores <quoted> & more")
    html = t._repr_html_()
    assert "<caption>Scores &lt;quoted&gt; &amp; more</caption>" in html
    assert "\N{EM DASH}" in html and "NaN" not in html and "y" * 80 in html
    assert repr(t).startswith("Scores <quoted> & more\n") and "NaN" not in repr(t)


def test_chapter_tables_cite_by_author_and_year():
    from dwlib.book import guidelines, intro, two_regimes
    from dwlib.experiments.catalogue import load_models

    for table in (intro.models_table(), two_regimes.placed_models(), guidelines.models_frame(load_models())):
        assert not table["source"].isin(packaged_json(references.DATA_FILE)["entries"]).any()
        assert table["source"].str.fullmatch(r".+, \d{4}[a-z]?").all()


def test_log_slider_reads_an_integer_or_significant_digits():
    width = widgets.log_slider("width d_x", 1024.0, 1, 6, 0.05)
    budget = widgets.log_slider("budget N", 175e9, 6, 13, 0.05, digits=3)
    # plain numbers: ipywidgets reads an edited readout back with parseFloat ("1,024" -> 1)
    assert width.readout_format == ".0f" and budget.readout_format == ".3r"
    assert widgets.readout(width) == "1,024" and widgets.readout(budget) == "175,000,000,000"
    box = widgets.explorer(lambda width, budget: "<p></p>", width=width, budget=budget)
    assert "width d_x = 1,024, budget N = 175,000,000,000" in box.snapshot_html()


def test_static_explorer_starts_at_the_requested_width():
    """The width the explorer chart computes from its slider's first value is the width asked
    for (a log10 slider rounded to 3.01 gave 1,023 for 1024), and it is an integer."""
    for width in (1024, 768):
        spec = vb.bounds_explorer_chart(width=width).to_dict()
        start = next(p["value"] for p in spec["params"] if p["name"] == "log2_width")
        expr = _calculates(spec)["w"]
        got = eval(expr, {"pow": math.pow, "round": round, "__builtins__": {}}, {"log2_width": start})
        assert got == width, (width, expr)
    assert "',.4~r'" in json.dumps(spec) and "~g'" not in json.dumps(spec)  # 70,800, not 7.08e+4


def test_models_table_gives_no_verdict_where_the_catalogue_calls_it_meaningless():
    from dwlib.book import guidelines
    from dwlib.experiments.catalogue import load_models

    models = load_models()
    meaningless = {m["name"] for m in models if m.get("verdict_meaningful") is False}
    assert "T5-11B" in meaningless  # 12 L d^2 misdescribes its size (its catalogue note says why)
    table = guidelines.models_frame(models)
    for name, row in table.iterrows():
        if name in meaningless:
            assert row["verdict"] == guidelines.NO_VERDICT and row["L / L*"] == "\N{EM DASH}", name
        else:
            assert row["verdict"] != guidelines.NO_VERDICT and row["L / L*"] != "\N{EM DASH}", name


def test_a_tables_labels_read_as_symbols_and_its_true_false_columns_as_yes_no():
    import pandas as pd

    from dwlib import fmt
    from dwlib.book import readable
    assert fmt.math_label("eq. (7) applies to it (L_s < log3 d_s)") == "eq. (7) applies to it (L\u209b < log\u2083 d\u209b)"
    assert fmt.math_label("beta1") == "\u03b2\u2081" and fmt.math_label("2C = 3^L - 1") == "2C = 3\u1d38 - 1"
    assert fmt.math_label("per layer / d_x^2") == "per layer / d\u2093\u00b2" and fmt.math_label(3) == 3
    assert fmt.math_label("database") == "database"  # whole symbols only
    frame = pd.DataFrame({"log3 sep": [1.0, 2.0], "ok": [True, False]}, index=pd.Index([1, 2], name="width d_x"))
    shown = readable(frame)
    assert list(shown.columns) == ["log\u2083 sep", "ok"] and shown.index.name == "width d\u2093"
    assert list(shown["ok"]) == ["yes", "no"]
    assert list(frame.columns) == ["log3 sep", "ok"] and frame["ok"].dtype == bool  # the frame itself is kept


def test_negative_numbers_in_tables_carry_a_minus_sign_not_a_hyphen():
    frame = pd.DataFrame({"gap": [-0.216, 0.094], "interval": ["-0.3 to -0.1", "+0.0 to +0.2"],
                          "label": ["eq-1", "x"]})
    shown = Table(frame, "gaps")._repr_html_()
    assert "\N{MINUS SIGN}0.216" in shown and "\N{MINUS SIGN}0.3 to \N{MINUS SIGN}0.1" in shown
    assert "-0." not in shown and "eq-1" in shown  # a hyphen inside a word stays
    from dwlib.book import _frame_html  # a plain frame as a chapter shows it
    assert "\N{MINUS SIGN}0.216" in _frame_html(frame) and "-0." not in _frame_html(frame)


def test_a_table_may_carry_a_note_under_it_and_no_caption():
    t = Table(pd.DataFrame({"width": ["64\N{DAGGER}"]}), None, note="\N{DAGGER} a width under 200 & more")
    html = t._repr_html_()
    assert "<caption>" not in html and html.rstrip().endswith('<p class="dw-table-note">\N{DAGGER} a width under 200 &amp; more</p>')
    assert repr(t).endswith("\n\N{DAGGER} a width under 200 & more") and not repr(t).startswith("None")
