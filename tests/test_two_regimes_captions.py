"""The two-regimes chapter's bounds figures: their captions (computed, and held by the chapter:
tests/test_captions.py) give the lower bound's own growth per layer, and name the
explorer's colours as the chart draws them."""

from __future__ import annotations


import numpy as np

from dwlib.book import two_regimes
from dwlib.core import bounds
from dwlib.viz import bounds as viz


def test_the_lower_bound_grows_by_less_than_threefold():
    r = two_regimes.lower_ratios()
    lower, _ = bounds.theorem1_bounds(np.arange(1, 7), two_regimes.WIDTH, two_regimes.HEADS)
    assert np.allclose(r, lower[1:] / lower[:-1])
    assert (r < 2.6).all() and (np.diff(r) < 0).all()
    words = two_regimes.growth_words()
    assert f"{r[0]:.1f}" in words and f"{r[-1]:.1f}" in words and "upper bound about threefold" in words


def test_the_explorer_caption_names_the_charts_colours():
    # the eq.-(8) band is Okabe-Ito vermilion (reads orange), the depth line reddish purple (reads pink)
    assert (viz.VERMILION, viz.PURPLE) == ("#d55e00", "#cc79a7")
    cap = two_regimes.explorer_caption()
    assert "orange band" in cap and "pink solid line" in cap
    assert "red band" not in cap and "purple" not in cap


def test_the_captions_stay_short():
    for cap in (two_regimes.bounds_depth_caption(), two_regimes.explorer_caption()):
        assert len(cap.split()) <= 125
