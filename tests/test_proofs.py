"""The counting steps of the proof sketches (dwlib.core.proofs), each against an independent
computation: listed monomials, the analysed layer itself, binomials in exact integers, and
Corollary 2's constant found through dwlib.core.bounds."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from dwlib.core import analysed, bounds, proofs
from dwlib.errors import InputError


@pytest.mark.parametrize("n,k", [(1, 0), (1, 5), (2, 3), (3, 4), (4, 5), (5, 2), (6, 3)])
def test_multiset_counts_the_listed_monomials(n, k):
    assert proofs.multiset(n, k) == proofs.monomials_by_enumeration(n, k)


def test_enumeration_refuses_huge_lists():
    with pytest.raises(InputError):
        proofs.monomials_by_enumeration(20, 20)


@pytest.mark.parametrize("n,k", [(1, 7), (2, 9), (7, 3), (40, 40), (504, 81), (3, 1000)])
def test_log3_multiset_matches_exact_integers(n, k):
    exact = math.comb(n + k - 1, k)
    assert proofs.log3_multiset(n, k) == pytest.approx(math.log(exact) / math.log(3), rel=1e-12, abs=1e-12)


def test_eq7_lower_bound_is_log3_of_n_over_k_to_the_k_and_below_the_count():
    """(P3) and (P4): eq. (7)'s lower bound equals k log3(n/k) and lies below log3 C(n+k-1, k)."""
    for width, heads in ((64, 4), (256, 8), (1024, 16), (4096, 2)):
        for depth in range(2, 12):
            if depth >= math.log(width, 3):
                break
            r = proofs.lower_bound_count(width, heads, depth)
            assert r["theorem"] == 1
            assert r["k_log3_n_over_k"] == pytest.approx(r["lower"], rel=1e-12)
            assert r["lower"] <= r["log3_count"] + 1e-9


def test_eq8_lower_bound_lies_below_the_count_with_the_same_slope():
    width, heads = 256, 8
    gaps = []
    for depth in range(6, 30):
        r = proofs.lower_bound_count(width, heads, depth)
        assert r["theorem"] == 2 and r["lower"] <= r["log3_count"]
        gaps.append(r["log3_count"] - r["lower"])
    # far above the threshold the count grows by n - 1 per layer, as eq. (8)'s lower bound does
    assert gaps[-1] - gaps[-2] == pytest.approx(0.0, abs=1e-6)


def test_lower_bound_count_needs_an_integer_n():
    with pytest.raises(InputError):
        proofs.lower_bound_count(65, 2, 3)


@pytest.mark.parametrize("width,heads,part_a,position", [(6, 2, [0, 2], 0), (4, 4, [1], 1), (8, 1, [0, 1, 3], 3)])
def test_one_layer_terms_sum_to_the_layer(width, heads, part_a, position):
    """(P2): d_x + H products of an A-function and a B-function reproduce eq. (3)."""
    with jax.enable_x64(True):
        params = analysed.init_params(jax.random.PRNGKey(3), 1, width, heads, dtype=np.float64)
        x = np.random.default_rng(1).normal(size=(5, 4, width))
        y = np.asarray(analysed.forward(params, x))
    for entry in range(width):
        t = proofs.one_layer_terms(params[0], x, part_a, position, entry)
        assert t["terms"] == width + heads
        np.testing.assert_allclose((t["g"] * t["g_prime"]).sum(0), y[:, position, entry], rtol=1e-10, atol=1e-12)


def test_one_layer_terms_are_separable():
    """Changing the inputs at B leaves every A-side factor unchanged, and vice versa."""
    with jax.enable_x64(True):
        params = analysed.init_params(jax.random.PRNGKey(0), 1, 6, 3, dtype=np.float64)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 6))
    a, b = [0, 3], [1, 2]
    moved_b, moved_a = x.copy(), x.copy()
    moved_b[:, b] = rng.normal(size=(3, 2, 6))
    moved_a[:, a] = rng.normal(size=(3, 2, 6))
    t, tb, ta = (proofs.one_layer_terms(params[0], v, a, 0, 2) for v in (x, moved_b, moved_a))
    np.testing.assert_array_equal(t["g"], tb["g"])
    np.testing.assert_array_equal(t["g_prime"], ta["g_prime"])
    assert not np.allclose(t["g_prime"], tb["g_prime"]) and not np.allclose(t["g"], ta["g"])


def test_one_layer_terms_needs_the_output_in_a():
    params = analysed.init_params(jax.random.PRNGKey(0), 1, 4, 2)
    with pytest.raises(InputError):
        proofs.one_layer_terms(params[0], np.zeros((1, 4, 4)), [1, 2], position=0)


@pytest.mark.parametrize("width,heads,depth", [(1024, 16, 24), (1600, 25, 48), (64, 4, 10), (100, 4, 9)])
def test_corollary2_beta2_matches_the_constant_found_by_bounds(width, heads, depth):
    """Two searches for the same threshold: on beta_2 here, on the O() constant in bounds."""
    r = proofs.corollary2_beta2(width, heads, depth)
    c = bounds.corollary2_smallest_constant(width, heads, depth)
    assert r["beta2"] == pytest.approx(c * math.log(heads) * math.log(width) * math.log(depth), rel=1e-5)
    # just above beta_2 the bounds confirm eq. (9); just below they do not
    check = lambda beta2: bounds.corollary2(width, heads, depth, beta2 / (math.log(heads) * math.log(width) * math.log(depth)))
    assert check(r["beta2"] * (1 + 1e-6))["holds"] and not check(r["beta2"] * (1 - 1e-4))["holds"]


def test_corollary2_estimate_is_close_when_heads_are_few():
    r = proofs.corollary2_beta2(12288, 96, 96)
    assert abs(r["beta2"] - r["estimate"]) < 1e-4 and r["shallower"]


def test_corollary2_needs_theorem2_regime():
    with pytest.raises(InputError):
        proofs.corollary2_beta2(1024, 16, 6)
