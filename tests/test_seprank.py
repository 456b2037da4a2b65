"""dwlib.core.seprank and the chapter's sweep: exact grid-matrix ranks against closed forms, GF(p)
arithmetic, floating point against exact, Proposition 1, the polynomial-space bound, the one
grid-matrix builder, bad inputs, and the stored sweep against a recomputation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dwlib import cli
from dwlib.core import analysed as A
from dwlib.core import seprank as S
from dwlib.errors import InputError
from dwlib.experiments import seprank_sweep

ROOT = Path(__file__).resolve().parents[1]

P = S.PRIMES[0]


# ---------------------------------------------------------------------------------------------
# Arithmetic over GF(p)

def test_primes_are_prime_and_below_2_31():
    d = np.arange(2, 46341)  # sqrt(2^31) < 46341
    for p in S.PRIMES:
        assert p < 2 ** 31 and not np.any(p % d[d < p] == 0)


def test_mod_einsum_matches_python_integers():
    rng = np.random.default_rng(0)
    a = rng.integers(0, P, size=(3, 7), dtype=np.int64)
    b = rng.integers(0, P, size=(7, 5), dtype=np.int64)
    with jax.enable_x64(True):
        got = np.asarray(A.mod_einsum("ik,kj->ij", jnp.asarray(a), jnp.asarray(b), P))
    want = [[sum(int(a[i, k]) * int(b[k, j]) for k in range(7)) % P for j in range(5)] for i in range(3)]
    assert got.tolist() == want
    # the plain int64 product would have overflowed: the test exercises the split
    assert int(a.max()) * int(b.max()) * 7 > 2 ** 63


@pytest.mark.parametrize("residual", [False, True])
def test_forward_over_gf_p_is_the_integer_network_mod_p(residual):
    rng = np.random.default_rng(1)
    with jax.enable_x64(True):
        params = [{k: jnp.asarray(rng.integers(-2, 3, size=v.shape), jnp.int64) for k, v in layer.items()}
                  for layer in A.constant_params(2, 4, 2)]
        x = jnp.asarray(rng.integers(-3, 4, size=(6, 3, 4)), jnp.int64)
        exact = A.forward(params, x, residual=residual)  # |y| < 2^63 at these sizes
        mod = A.forward([{k: v % P for k, v in p.items()} for p in params], x % P, residual=residual, modulus=P)
        assert bool(jnp.all(mod == exact % P))


def test_rank_mod_p_basic_cases():
    assert S.rank_mod_p(np.eye(5, dtype=np.int64), P) == 5
    assert S.rank_mod_p(np.zeros((3, 4), np.int64), P) == 0
    rng = np.random.default_rng(2)
    low = rng.integers(-5, 6, size=(30, 4)) @ rng.integers(-5, 6, size=(4, 25))  # rank <= 4, = 4 w.h.p.
    assert S.rank_mod_p(low, P) == 4 == np.linalg.matrix_rank(low.astype(float))
    # rank over GF(p) can fall below the rational rank when p divides every maximal minor:
    m = np.array([[1, 1], [1, 4]])  # det 3
    assert S.rank_mod_p(m, 3) == 1 and S.rank_mod_p(m, 7) == 2 and S.rank_mod_p(m, P) == 2


# ---------------------------------------------------------------------------------------------
# Closed forms at L = 1, and for d_x = 1

@pytest.mark.parametrize("width,heads,positions,residual",
                         [(1, 1, 2, False), (2, 1, 4, False), (2, 2, 4, False), (3, 1, 4, False),
                          (4, 2, 4, False), (4, 1, 2, True), (4, 4, 4, True)])
def test_one_layer_rank_is_width_plus_one(width, heads, positions, residual):
    # L = 1, i in A. Split eq. (3)'s sum over j into j in A and j in B:
    #   y_p^i = [sum_{j in A} ...]                                   (a function of A only)
    #         + sum_h sum_a (W^Q_h x^i)_a * [sum_{j in B} (W^K_h x^j)_a (W^O_h W^V_h x^j)_p].
    # The first bracket times the constant function of B is one separable term; the second is
    # H d_a = d_x terms. So sep <= d_x + 1. For generic weights the d_x linear functions
    # (W^Q x^i)_a of A (the stacked W^Q is invertible) and the cubic A-only term are independent,
    # and so are the constant and the d_x quadratic forms of B (x^T sym(k_{h,a} w_h^T) x is
    # injective in k), so the grid rank is exactly d_x + 1, whatever H and N. The residual adds
    # x^i_p, a function of A, to the first term: still d_x + 1.
    m = S.measure(1, width, heads, positions, 8, residual=residual)
    assert m["agree"] and m["rank"] == width + 1


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_scalar_network_rank_is_half_of_3_to_the_L_plus_one(depth):
    # d_x = H = 1: one layer maps x_i to w x_i S with S = sum_j x_j^2 and w the product of the
    # four scalar weights. By induction the depth-L output is c x_i S^k with k = (3^L - 1)/2
    # (sum_j y_j^2 = w^2 S^2 S = w^2 S^3, so k_l = 3 k_{l-1} + 1). With i in A and S = S_A + S_B,
    # x_i S^k = sum_t C(k, t) [x_i S_A^t] [S_B^(k-t)]: k + 1 terms, whose A-factors and B-factors
    # are independent functions, so the rank is k + 1 = (3^L + 1)/2: 2, 5, 14.
    m = S.measure(depth, 1, 1, 4, 10, draws=1)
    assert m["rank"] == (3 ** depth + 1) // 2


def test_local_contrast_closed_form():
    # (1 + <x1, x2>)^2 (1 + <x3, x4>)^2 with d_x = 2. A factor (1 + <u, v>)^2 = 1 + 2<u, v> + <u, v>^2
    # is a bilinear form in the features (1, u_a, u_a u_b for a <= b) of u and of v with an
    # invertible (diagonal) coefficient matrix: rank 1 + d + d(d + 1)/2 = 6 when u and v are split.
    # {1,2}|{3,4} splits no pair: rank 1; the two other balanced partitions split both: 6 x 6 = 36.
    f = A.neighbour_pairs_function
    assert S.function_rank(f, 4, 10, 2, (0, 1)) == 1
    assert S.function_rank(f, 4, 10, 2, (0, 2)) == 36
    assert S.function_rank(f, 4, 10, 2, (0, 3)) == 36


def test_partition_matrix_arranges_a_known_function():
    # f = x^1 * 10 + x^2 (scalar positions): rows by the value at position 1, columns by position 2
    table = np.array([[1], [2], [3]])
    m = S.partition_matrix(lambda x: 10 * x[..., 0, 0] + x[..., 1, 0], table, 2, (0,))
    assert m.tolist() == [[11, 12, 13], [21, 22, 23], [31, 32, 33]]
    # swapping the sides transposes it
    assert S.partition_matrix(lambda x: 10 * x[..., 0, 0] + x[..., 1, 0], table, 2, (1,)).tolist() == m.T.tolist()
    # the network's chunked evaluation lays the grid out the same way
    with jax.enable_x64(True):
        params = S.real_params(1, 2, 1)
        t = S.templates(4, 2)
        f = lambda x: np.asarray(A.forward([{k: jnp.asarray(v) for k, v in p.items()} for p in params],
                                           jnp.asarray(x, jnp.float64))[..., 0, 0])
        np.testing.assert_array_equal(S.partition_matrix(f, t, 4, (0, 1), dedupe=True),
                                      S.grid_matrix(1, 2, 1, 4, 4, modulus=None))


def test_partition_matrix_rank_and_proposition_1():
    with jax.enable_x64(True):
        pts = np.array([[-1.0, 2.0], [0.5, 1.0], [2.0, -1.0], [1.0, 1.0], [-2.0, 0.5]])
        # a product of per-position factors is separable: rank 1 for every partition
        prod = lambda x: jnp.prod(jnp.sum(x, axis=-1), axis=-1)
        assert S.balanced_partitions(4) == [(0, 1), (0, 2), (0, 3)]
        for A_ in S.balanced_partitions(4):
            assert np.linalg.matrix_rank(S.partition_matrix(prod, pts, 4, A_)) == 1
        # self-attention at output position 0: the same rank for all balanced partitions
        rng = np.random.default_rng(0)
        params = [{k: jnp.asarray(rng.integers(-2, 3, size=v.shape), jnp.float64) for k, v in p.items()}
                  for p in A.constant_params(1, 2, 1)]
        f = lambda x: A.forward(params, x)[..., 0, 0]
        ranks = [np.linalg.matrix_rank(S.partition_matrix(f, pts, 4, A_)) for A_ in S.balanced_partitions(4)]
        assert len(set(ranks)) == 1 and ranks[0] > 1


# ---------------------------------------------------------------------------------------------
# Floating point, Proposition 1, bounds, grid growth

@pytest.mark.parametrize("shape", [(1, 2, 1, 4, 8), (1, 4, 2, 4, 8), (1, 3, 1, 4, 8)])
def test_float_rank_equals_exact_rank_while_entries_are_exact(shape):
    r = S.float_vs_exact(*shape)
    assert r["exact_in_float64"]
    assert r["float"] == r["exact"] > 1


def test_proposition1_equal_ranks_for_balanced_partitions_local_contrast_unequal():
    rows = S.proposition1(2, 2, 1, 4, 8, draws=1)
    assert len(rows) == 3
    assert len({r["attention"] for r in rows}) == 1 and rows[0]["attention"] > 1
    assert [r["local"] for r in rows] == [1, 36, 36]


@pytest.mark.parametrize("shape,residual", [((1, 3, 1, 4), False), ((2, 2, 1, 4), False), ((2, 2, 2, 4), True)])
def test_ranks_never_exceed_the_polynomial_space_dimension(shape, residual):
    depth, width, heads, n = shape
    m = S.measure(depth, width, heads, n, 12, residual=residual, draws=1)
    assert m["poly_dim"] == S.polynomial_dimension(depth, width, n // 2, n // 2, residual)
    assert 1 < m["rank"] <= min(m["poly_dim"], m["grid_cap"])


def test_polynomial_dimension_small_case():
    # L = 1, d_x = 1, one variable on each side, degree 3: monomials u^a v^(3-a), a = 0..3: 4 terms.
    assert S.polynomial_dimension(1, 1, 1, 1) == 4
    # with the residual, degrees 1 and 3 (all degrees <= 3 counted): a = 0..3 -> min(1, 4) + ... = 4
    assert S.polynomial_dimension(1, 1, 1, 1, residual=True) == 4
    # two variables a side (d_x = 2), degree 3: sum_a min(a + 1, 4 - a) = 1 + 2 + 2 + 1
    assert S.polynomial_dimension(1, 2, 1, 1) == 6


def test_saturate_reports_growth_until_rank_stops():
    m = S.saturate(2, 2, 1, 4, start=6, step=4, max_templates=22, draws=1)
    assert m["saturated"] and m["rank"] == m["history"][-1][1] == m["history"][-2][1]
    assert [h[0] for h in m["history"]] == list(range(6, 6 + 4 * len(m["history"]), 4))


def test_softmax_grid_rank_fills_the_grid():
    r = S.softmax_rank(1, 2, 1, 4, 6)
    assert r["ranks"]["1e-06"] == r["grid_cap"]


# ---------------------------------------------------------------------------------------------
# Bad input, and the stored sweep

@pytest.mark.parametrize("call,match", [
    (lambda: S.measure(1, 2, 1, 5, 4), "even number of positions"),
    (lambda: S.measure(1, 6, 4, 4, 4), "heads must divide width"),
    (lambda: S.measure(1, 2, 1, 4, 4, part_a=[0, 0]), "twice"),
    (lambda: S.measure(1, 2, 1, 4, 4, part_a=[0, 4]), "positions in 0..3"),
    (lambda: S.measure(1, 2, 1, 4, 4, part_a=[0]), "N/2"),
    (lambda: S.check_partition(4, [0, 1, 2, 3], balanced=False), "non-empty"),
    (lambda: S.measure(1, 2, 1, 4, 4, position=4), "output position"),
    (lambda: S.measure(1, 2, 1, 4, 4, entry=2), "output entry"),
    (lambda: S.rank_mod_p(np.eye(2), 2 ** 31 + 11), "modulus"),
    (lambda: S.grid_matrix(1, 2, 1, 4, 100), "too many"),
    (lambda: S.balanced_partitions(3), "even number"),
])
def test_bad_inputs_raise_one_line_errors(call, match):
    with pytest.raises(InputError, match=match) as err:
        call()
    assert "\n" not in str(err.value)


def test_cli_prints_the_measurement_and_the_bounds_as_json(capsys):
    assert cli.main(["seprank", "--depth", "1", "--width", "2", "--heads", "1", "--templates", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rank"] == 3 and out["agree"] and out["theorem"] == 2 and out["seconds"] > 0


def test_quick_sweep_reproduces_the_stored_ranks():
    stored = seprank_sweep.load()
    quick = seprank_sweep.sweep(quick=True, log=lambda *_: None)
    by_shape = {(m["depth"], m["width"]): m for m in stored["ranks"]}
    for m in quick["ranks"]:
        old = by_shape[(m["depth"], m["width"])]
        assert (m["rank"], m["history"], m["poly_dim"]) == (old["rank"], old["history"], old["poly_dim"])
        assert (m["log3_lower"], m["log3_upper"], m["theorem"]) == (old["log3_lower"], old["log3_upper"], old["theorem"])
    assert quick["proposition1"]["N4"] == stored["proposition1"]["N4"]
    assert quick["float_vs_exact"][0] == stored["float_vs_exact"][0] | {"singular_values": quick["float_vs_exact"][0]["singular_values"]}
    fresh, old = quick["softmax"][0], stored["softmax"][0]
    assert (fresh["matrix_shape"], fresh["grid_cap"], fresh["ranks"]["1e-06"]) == (
        old["matrix_shape"], old["grid_cap"], old["ranks"]["1e-06"])


def test_stored_sweep_is_consistent():
    data = seprank_sweep.load()
    for m in data["ranks"]:
        assert m["agree"] and m["rank"] <= min(m["poly_dim"], m["grid_cap"])
        if m["depth"] == 1:
            assert m["rank"] == m["width"] + 1
        if m["width"] == 1:
            assert m["rank"] == (3 ** m["depth"] + 1) // 2
    assert all(len({r["attention"] for r in rows}) == 1 for rows in data["proposition1"].values() if rows)
    assert data["timing"]["sweep_seconds"] < 600


# ---------------------------------------------------------------------------------------------
# The time a measurement asked for by hand takes, and the grids it cannot reach


def test_saturate_ends_unsaturated_at_the_largest_grid_instead_of_failing():
    seen = []

    def growing(depth, width, heads, n_positions, M, **kw):
        seen.append(M)
        return {"rank": M, "grid_cap": 10 * M}  # never stops growing

    m = S.saturate(1, 2, 1, 10, measure_with=growing)  # 4^10 fits in 2^24 grid points, 6^10 does not
    assert seen == [4] and m["saturated"] is False and m["history"] == [[4, 4, 40]]
    with pytest.raises(InputError, match="too many"):
        S.saturate(1, 2, 1, 13, measure_with=growing)  # not even M = 4


def test_a_grid_that_cannot_grow_enough_is_refused_before_any_work(monkeypatch):
    """--depth 2 --width 4 --heads 2 --positions 10 computed 50 s before failing on 6^10 points."""
    monkeypatch.setattr(seprank_sweep, "speed", lambda: pytest.fail("estimated before the grid was checked"))
    with pytest.raises(InputError, match="1 of the grids M = 4, 6, ... fit within the 16,777,216 points"):
        seprank_sweep.measure_one(2, 4, 2, positions=10)


def test_a_measurement_estimated_past_two_minutes_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(seprank_sweep, "timed_saturate", lambda *a, **kw: pytest.fail("measured"))
    with pytest.raises(InputError, match=r"would take about .* past the limit of 120 s"):
        seprank_sweep.measure_one(1, 32, 2)  # about 15 min at the calibration's speed


@pytest.mark.parametrize("depth, width, positions", [(1, 8, 4), (2, 2, 4), (1, 4, 6), (2, 3, 4)])
def test_the_predicted_grids_are_the_ones_saturate_measures(depth, width, positions):
    """The estimate follows the grid schedule the measurement takes (measured on 2026-11-26:
    (1, 8, 4) to M = 14, (1, 4, 6) to M = 10, (1, 16, 4) to M = 22 and (1, 8, 6) to M = 14,
    exactly as predicted; (2, 2, 4) to M = 12, one grid further)."""
    predicted = [M for M, _ in seprank_sweep.predicted_ranks(depth, width, positions, list(range(positions // 2)), 0)]
    measured = {(1, 8, 4): 14, (2, 2, 4): 12, (1, 4, 6): 10, (2, 3, 4): 16}[(depth, width, positions)]
    assert abs(predicted[-1] - measured) <= 2 and predicted == list(range(4, predicted[-1] + 1, 2))


@pytest.mark.slow  # a probe and one small measurement in their own process (about 15 s)
def test_the_estimate_benchmark_prints_estimated_and_measured_seconds():
    """Timings depend on the machine and its load: benchmarks/seprank_estimate.py prints them
    (0.77-1.41x at ten shapes, see dwlib.experiments.seprank_sweep) and no test asserts a ratio."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seprank_estimate.py"), "--shapes", "1,2,1,4",
                           "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads(proc.stdout.splitlines()[-1])
    assert row["shape"] == [1, 2, 1, 4] and row["estimated_seconds"] > 0 and row["measured_seconds"] > 0, row


def test_the_estimate_benchmark_refuses_a_bad_shape():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seprank_estimate.py"), "--shapes", "1,2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "four positive integers" in proc.stderr and proc.stderr.count("\n") == 1, proc
