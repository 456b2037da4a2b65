"""The guidelines chapter's borderline verdicts and the models' notes' citations."""

from __future__ import annotations

import pandas as pd

from dwlib.book import guidelines
from dwlib.core.fit import DEFAULT_ABS_TOL, DEFAULT_REL_TOL
from dwlib.experiments.catalogue import load_models


def test_borderline_models_are_those_near_the_band_edge_recomputed():
    rows = {m["name"]: m for m in guidelines.borderline_models()}
    models = pd.DataFrame(load_models())
    models = models[models.get("verdict_meaningful", pd.Series(True, index=models.index)).ne(False)]
    for _, m in models.iterrows():
        half = max(DEFAULT_REL_TOL * m["optimal_depth"], DEFAULT_ABS_TOL) / m["optimal_depth"]
        near = min(abs(m["depth_ratio"] - (1 - half)), abs(m["depth_ratio"] - (1 + half))) <= guidelines.BORDERLINE
        assert (m["name"] in rows) == near, m["name"]
    text = guidelines.borderline_sentence()
    for name, m in rows.items():
        assert f"{name} at {m['depth_ratio']:.3f}" in text


def test_a_verdict_that_the_projections_slope_changes_is_said():
    text = guidelines.borderline_sentence()
    for m in guidelines.borderline_models():
        assert (f"{m['name']} becomes {m['verdict_b92']}" in text) == (m["verdict_b92"] != m["verdict"])


def test_a_wider_margin_names_more_and_none_is_said_when_none():
    assert len(guidelines.borderline_models(margin=0.2)) >= len(guidelines.borderline_models())
    assert guidelines.borderline_sentence(margin=0.0) == "No verdict lies within 0% of L* of an edge of the near-optimal band."


def test_the_notes_cite_the_arxiv_version_with_the_citation_role():
    assert guidelines.model_note("shape chosen with the Levine et al. (2020) guideline") == \
        "Shape chosen with the {cite:t}`levine2020interplay` guideline."
    note = guidelines.model_note("fit d_x = exp(5.039) exp(0.0555 L) at L = 70")
    assert note.startswith("Fit of eq. {ref}`(G1) <eq-fit>`, a = 5.039 and b = 0.0555,")
