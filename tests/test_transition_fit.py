"""Tests of dwlib.experiments.transition_fit: a Fit from measured transition budgets."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dwlib.core.fit import AUTHORS_FIT, Fit, budget_for_depth, optimal_depth
from dwlib.errors import InputError
from dwlib.experiments.transition_fit import fit_from_transitions


def test_recovers_an_exact_fit():
    true = Fit(4.2, 0.071)
    depths = np.array([6, 12, 18, 24, 30, 36, 48], dtype=float)
    tf = fit_from_transitions(depths, budget_for_depth(depths, fit=true))
    assert tf.fit.log_width_intercept == pytest.approx(4.2, abs=1e-9)
    assert tf.fit.depth_slope == pytest.approx(0.071, abs=1e-11)
    assert tf.depth_slope_se == pytest.approx(0, abs=1e-9)
    # the log-budget slope is ~ 2b + 1/L over the range (the log L term)
    assert 2 * 0.071 < tf.beta < 2 * 0.071 + 1 / 6
    # usable everywhere a Fit is
    assert optimal_depth(budget_for_depth(30, fit=true), fit=tf.fit) == pytest.approx(30)
    assert set(tf.to_dict()) >= {"alpha", "beta", "alpha_se", "beta_se", "fit"}


def test_noisy_transitions_bracket_the_true_fit():
    rng = np.random.default_rng(0)
    depths = np.repeat([6.0, 12, 18, 24, 30, 36, 48], 3)
    noisy = budget_for_depth(depths, fit=AUTHORS_FIT) * np.exp(rng.normal(0, 0.1, depths.size))
    tf = fit_from_transitions(depths, noisy)
    assert abs(tf.fit.depth_slope - 0.0555) < 4 * tf.depth_slope_se
    assert abs(tf.fit.log_width_intercept - 5.039) < 4 * tf.log_width_intercept_se
    assert 0 < tf.depth_slope_se < 0.01


def test_two_points_have_no_standard_error():
    tf = fit_from_transitions([12, 24], [1e8, 1e9])
    assert math.isnan(tf.beta_se) and tf.n == 2


@pytest.mark.parametrize("depths, budgets, message", [
    ([12], [1e8], "at least 2 transitions"),
    ([12, 24], [1e8], "same length"),
    ([12, 12], [1e8, 2e8], "2 distinct depths"),
    ([12, -24], [1e8, 1e9], "depths must be > 0"),
    ([12, 24], [1e8, 0], "transition_budgets must be > 0"),
    ([12, 24], [1e8, float("nan")], "transition_budgets must be finite"),
    ([12, 24], [1e10, 1e8], "depth slope must be > 0"),
])
def test_bad_input(depths, budgets, message):
    with pytest.raises(InputError, match=re.escape(message)):
        fit_from_transitions(depths, budgets)
