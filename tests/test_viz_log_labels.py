"""Logarithmic axes labelled as a reader writes powers of ten (10⁻⁶, not 1e-6): the shared label
expression, and the measured-ranks and context charts that use it, drawn by Vega itself."""

from __future__ import annotations

import json
import re

import altair as alt
import pandas as pd
import pytest

from dwlib.viz.layout import power_of_ten_labels

vlc = pytest.importorskip("vl_convert")


def _axis_texts(spec: dict) -> list[str]:
    svg = vlc.vegalite_to_svg(json.dumps(spec))
    return [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_the_labels_are_powers_of_ten_in_superscripts():
    df = pd.DataFrame({"x": [1, 2, 3], "y": [1e-7, 1e-3, 5.0]})
    chart = alt.Chart(df).mark_point().encode(
        x="x:Q", y=alt.Y("y:Q", scale=alt.Scale(type="log"), axis=alt.Axis(labelExpr=power_of_ten_labels())))
    texts = _axis_texts(chart.to_dict())
    assert "10\u207b\u2076" in texts and "1" in texts and "10\u207b\u00b3" in texts
    assert not any(re.fullmatch(r"\d(\.\d+)?e[-+]?\d+", t) for t in texts)


def test_the_books_log_axes_use_them():
    from dwlib.book import seprank_measurements
    from dwlib.experiments import context, seprank_sweep
    from dwlib.viz import context as vc
    from dwlib.viz import seprank as vs

    sv = vs.singular_value_chart(seprank_measurements.worst_float_case(seprank_sweep.load())).to_dict()
    collapse = vc.collapse_chart(context.load_collapse_grid()["rows"]).to_dict()
    for spec in (sv, collapse):
        assert power_of_ten_labels() in json.dumps(spec, ensure_ascii=False)
        texts = _axis_texts(spec)
        assert any(t.startswith("10\u207b") for t in texts) and not any("e-" in t for t in texts), texts
