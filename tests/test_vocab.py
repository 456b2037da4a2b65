"""dwlib.core.vocab: exact grid ranks of the analysed network fed through an input embedding of
rank r, against the closed forms the chapter states (r + 1 at depth 1, (3^L + 1)/2 at r = 1), the
plain network at full rank, and the derived bounds (never exceeded)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dwlib.core import seprank as S
from dwlib.core import vocab as V
from dwlib.errors import InputError


def test_token_coordinates_are_distinct_and_never_opposite():
    for r in (1, 2, 3):
        u = V.token_coordinates(20, r, seed=3)
        rows = {tuple(v) for v in u}
        assert len(rows) == 20 and (0,) * r not in rows
        assert not any(tuple(-t for t in v) in rows for v in rows)


@pytest.mark.parametrize("rank,width", [(1, 4), (2, 4), (3, 6)])
def test_embedding_has_the_rank_asked_for(rank, width):
    table = V.embedded_templates(10, width, rank)
    assert table.shape == (10, width)
    assert np.linalg.matrix_rank(table.astype(float)) == rank
    assert S.rank_mod_p(table, S.PRIMES[0]) == rank


def test_network_is_even_in_each_input_but_the_outputs():
    """The reason opposite tokens are excluded: flipping x^j (j != i) leaves y^i unchanged."""
    params = S.field_params(2, 4, 2, S.PRIMES[0], seed=1)
    table = V.embedded_templates(6, 4, 2)
    a = S.grid_values(params, np.stack([table[0], table[1], table[2], table[3]]), 4, modulus=S.PRIMES[0])
    b = S.grid_values(params, np.stack([table[0], table[1], table[2], -table[3]]), 4, modulus=S.PRIMES[0])
    # grids of 4 templates at 4 positions: the point (0, 1, 2, 3) is index 0*64 + 1*16 + 2*4 + 3
    assert a[27] == b[27]
    c = S.grid_values(params, np.stack([-table[0], table[1], table[2], table[3]]), 4, modulus=S.PRIMES[0])
    assert a[27] != c[27]  # the output's own position is odd (degree 3^L)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_depth_one_gives_rank_plus_one(rank):
    m = V.measure(1, 6, 2, 4, 8, rank, draws=1)
    assert m["rank"] == rank + 1 and m["agree"] and not m["capped"]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_rank_one_gives_three_to_the_depth_plus_one_over_two(depth):
    m = V.measure(depth, 4, 2, 4, 12, 1, draws=1)
    assert m["rank"] == (3 ** depth + 1) // 2 and not m["capped"]


def test_width_adds_nothing_at_fixed_rank_once_heads_hold_it():
    """r = 2, L = 2: the same rank at d_x = 4 and 8 (two heads of dimension >= 2), which is the
    rank of the plain width-2 network (the lower bound of the derivation)."""
    ranks = {w: V.measure(2, w, 2, 4, 12, 2, draws=1)["rank"] for w in (4, 8)}
    plain = S.measure(2, 2, 1, 4, 12, draws=1)["rank"]
    assert ranks[4] == ranks[8] == plain
    assert V.width_r_lower(2, 2, 4, 12, draws=1) == plain


def test_full_rank_embedding_is_the_plain_network():
    for depth, width in ((1, 3), (2, 2)):
        assert V.measure(depth, width, 1, 4, 10, width, draws=1)["rank"] == S.measure(depth, width, 1, 4, 10,
                                                                                      draws=1)["rank"]


@pytest.mark.parametrize("depth,width,heads,rank,tokens", [(1, 4, 2, 2, 6), (2, 4, 2, 2, 6), (2, 6, 3, 1, 10),
                                                          (3, 4, 2, 1, 8), (2, 4, 2, 4, 5)])
def test_bounds_are_never_exceeded(depth, width, heads, rank, tokens):
    m = V.measure(depth, width, heads, 4, tokens, rank, draws=1)
    assert m["rank"] <= min(m["upper"], m["grid_cap"], *m["matrix_shape"])
    assert m["upper"] <= m["poly_dim"]
    t2 = V.theorem2_upper_at_rank(depth, rank)
    assert t2 is None or math.log(m["rank"], 3) <= t2
    if m["capped"]:  # at small V the grid, not the network, sets the number
        assert m["rank"] == min(m["grid_cap"], *m["matrix_shape"])


def test_theorem2_expression_at_rank():
    assert V.theorem2_upper_at_rank(1, 3) is None  # L = log3 3: not above the threshold
    # eq. (8)'s upper expression at d_x = r equals the package's own at that width
    from dwlib.core.bounds import theorem2_upper
    assert V.theorem2_upper_at_rank(3, 4) == pytest.approx(theorem2_upper(3, 4, 1))


def test_saturate_grows_the_vocabulary_until_the_rank_stops():
    m = V.saturate(2, 4, 2, 4, 2, start=6, step=2, patience=1)
    assert m["saturated"] and m["rank"] == 18
    assert [h[0] for h in m["history"]] == list(range(6, 6 + 2 * len(m["history"]), 2))


@pytest.mark.parametrize("kw,message", [
    (dict(depth=1, width=2, heads=1, n_positions=4, n_tokens=8, rank=3), "at most the width"),
    (dict(depth=1, width=4, heads=1, n_positions=4, n_tokens=2, rank=3), "at least 3 tokens"),
    (dict(depth=1, width=4, heads=3, n_positions=4, n_tokens=8, rank=2), "heads must divide"),
    (dict(depth=1, width=4, heads=1, n_positions=4, n_tokens=8, rank=0), "embedding rank"),
])
def test_bad_input_is_one_error(kw, message):
    with pytest.raises(InputError, match=message):
        V.measure(**kw)
