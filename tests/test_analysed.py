"""dwlib.core.analysed: eq. (3) against a loop over its sums, eqs. (1)-(2), homogeneity of degree
3^L, the count C = (3^L - 1)/2 of eq. (4), dtypes, and input validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dwlib.core import analysed as A
from dwlib.errors import InputError

KEY = jax.random.PRNGKey(0)


def _x(n=5, d=8, key=1, dtype=jnp.float32):
    return jax.random.normal(jax.random.PRNGKey(key), (n, d), dtype) / math.sqrt(n)


def test_layer_is_eq3_written_as_loops():
    params = A.init_params(KEY, 1, 6, 3)
    w = {k: np.asarray(v, np.float64) for k, v in params[0].items()}
    x = np.asarray(_x(4, 6), np.float64)
    want = np.zeros_like(x)
    for i in range(4):
        for j in range(4):
            for h in range(3):
                score = (w["q"][h] @ x[i]) @ (w["k"][h] @ x[j])
                want[i] += score * (w["o"][h] @ (w["v"][h] @ x[j]))
    got = np.asarray(A.forward(params, jnp.asarray(x, jnp.float32)))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_forward_stacks_layers_and_residual_adds_input():
    params = A.init_params(KEY, 3, 8, 2)
    x = _x()
    y = x
    for p in params:
        y = A.layer(p, y)
    np.testing.assert_allclose(A.forward(params, x), y, rtol=1e-6)
    y = x
    for p in params:
        y = A.layer(p, y) + y
    np.testing.assert_allclose(A.forward(params, x, residual=True), y, rtol=1e-6)


def test_batched_inputs_and_jit():
    params = A.init_params(KEY, 2, 8, 4)
    xb = jax.random.normal(KEY, (3, 5, 8)) / 3
    out = jax.jit(A.forward)(params, xb)
    assert out.shape == (3, 5, 8)
    np.testing.assert_allclose(out[1], A.forward(params, xb[1]), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_homogeneous_of_degree_3_to_the_L(depth):
    params = A.init_params(KEY, depth, 8, 2)
    x = _x()
    assert A.degree(depth) == 3**depth
    assert A.homogeneity_residual(params, x, t=2.0) < 1e-5
    assert A.homogeneity_residual(params, x, t=0.5) < 1e-5
    # the residual network mixes degrees 1..3^L: not homogeneous, and the check sees it
    assert A.homogeneity_residual(params, x, t=2.0, residual=True) > 1e-2


def test_homogeneity_is_exact_in_integers():
    with jax.enable_x64(True):
        rng = np.random.default_rng(0)
        params = [{k: jnp.asarray(rng.integers(-2, 3, size=v.shape), jnp.int64) for k, v in p.items()}
                  for p in A.constant_params(2, 4, 2)]
        x = jnp.asarray(rng.integers(-2, 3, size=(3, 4)), jnp.int64)
        y = A.forward(params, x)
        assert y.dtype == jnp.int64 and bool(jnp.any(y != 0))
        assert bool(jnp.all(A.forward(params, 3 * x) == 3**9 * y))
        xf = jnp.asarray(x, jnp.float64)
        pf = [{k: jnp.asarray(v, jnp.float64) for k, v in p.items()} for p in params]
        assert A.forward(pf, xf).dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(A.forward(pf, xf)), np.asarray(y, np.float64))


def test_summed_indices_follow_the_recursion():
    for L in range(1, 12):
        assert A.summed_indices(L) == (3**L - 1) // 2


@pytest.mark.parametrize("L,N", [(1, 2), (1, 5), (2, 2), (2, 3), (3, 2), (4, 2), (3, 4)])
def test_network_counts_n_to_the_c_terms(L, N):
    assert A.count_terms(L, N) == N ** ((3**L - 1) // 2)


@pytest.mark.parametrize("L,N", [(1, 3), (2, 2), (2, 3), (3, 2)])
def test_symbolic_expansion(L, N):
    terms = A.expansion_terms(L, N, position=N - 1)
    C = (3**L - 1) // 2
    assert len(terms) == N**C
    assert all(len(t) == 3**L for t in terms)  # each term multiplies 3^L = 2C + 1 input factors
    assert all(t[0] == N - 1 for t in terms)   # the output position's own input always enters
    # the expansion is the scalar network: sum over terms of prod x[positions] = y^{L,i}
    with jax.enable_x64(True):
        x = np.random.default_rng(L * 10 + N).normal(size=N)
        by_terms = sum(math.prod(x[p] for p in t) for t in terms)
        params = A.constant_params(L, 1, 1, 1.0, dtype=jnp.float64)
        y = float(A.forward(params, jnp.asarray(x[:, None]))[N - 1, 0])
        assert by_terms == pytest.approx(y, rel=1e-9)


def test_transformer_layer_is_eqs_1_and_2():
    params = A.init_transformer_params(KEY, 1, 6, 2)
    w = {k: np.asarray(v, np.float64) for k, v in params[0].items()}
    x = np.asarray(_x(4, 6), np.float64)
    d_a = 3
    sa = np.zeros_like(x)
    for i in range(4):
        for h in range(2):
            s = np.array([(w["q"][h] @ x[i]) @ (w["k"][h] @ x[j]) / math.sqrt(d_a) for j in range(4)])
            p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
            for j in range(4):
                sa[i] += p[j] * (w["o"][h] @ (w["v"][h] @ x[j]))
    z = sa + x
    ln = (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-6)
    want = np.maximum(ln @ w["ff1"].T, 0) @ w["ff2"].T
    got = np.asarray(A.transformer_forward(params, jnp.asarray(x, jnp.float32)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # softmax and LayerNorm break the homogeneity of the analysed network
    deep = A.init_transformer_params(KEY, 2, 6, 2)
    xs = jnp.asarray(x, jnp.float32)
    assert not np.allclose(A.transformer_forward(deep, 2 * xs), 2**9 * A.transformer_forward(deep, xs))


@pytest.mark.parametrize("call,needle", [
    (lambda: A.init_params(KEY, 2, 10, 3), "heads must divide width"),
    (lambda: A.init_params(KEY, 0, 8, 2), "depth must be an integer >= 1"),
    (lambda: A.init_params(KEY, 2.0, 8, 2), "depth must be an integer"),
    (lambda: A.init_params(KEY, True, 8, 2), "depth must be an integer"),
    (lambda: A.init_params(KEY, 2, 8, 0), "heads must be an integer >= 1"),
    (lambda: A.init_params(KEY, 2, 8, 2, scale=-1.0), "scale"),
    (lambda: A.forward(A.init_params(KEY, 1, 8, 2), jnp.ones((3, 6))), "input width 6 does not match"),
    (lambda: A.forward(A.init_params(KEY, 1, 8, 2), jnp.ones((8,))), "shape (..., N, d_x)"),
    (lambda: A.forward([], jnp.ones((3, 8))), "non-empty list"),
    (lambda: A.forward(A.init_params(KEY, 1, 8, 2) + A.init_params(KEY, 1, 4, 2), jnp.ones((3, 8))), "layer 2"),
    (lambda: A.transformer_forward(A.init_params(KEY, 1, 8, 2), jnp.ones((3, 8))), "Transformer layers"),
    (lambda: A.count_terms(5, 2), "does not fit in int64"),
    (lambda: A.expansion_terms(4, 2), "too many"),
    (lambda: A.homogeneity_residual(A.init_params(KEY, 1, 8, 2), jnp.ones((3, 8)), t=0.0), "non-zero"),
])
def test_input_validation(call, needle):
    with pytest.raises(InputError) as err:
        call()
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_attention_forward_stacks_eq1_and_returns_its_patterns():
    params = A.init_params(KEY, 2, 8, 2)
    x = _x(6, 8)
    for residual, causal in [(False, False), (True, True)]:
        y = x
        for p in params:
            f = A.self_attention(p, y, causal=causal)
            y = y + f if residual else f
        out, patterns = A.attention_forward(params, x, residual=residual, causal=causal, return_patterns=True)
        np.testing.assert_allclose(out, y, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(A.attention_forward(params, x, residual=residual, causal=causal), out)
        assert len(patterns) == 2 and patterns[0].shape == (2, 6, 6)
        np.testing.assert_allclose(np.sum(patterns[0], -1), 1.0, rtol=1e-5)
        # the first layer's pattern is eq. (1)'s softmax of <W^Q x^i, W^K x^j> / sqrt(d_a)
        w = {k: np.asarray(v, np.float64) for k, v in params[0].items()}
        xs = np.asarray(x, np.float64)
        s = np.einsum("had,id,hae,je->hij", w["q"], xs, w["k"], xs) / 2.0
        if causal:
            s = np.where(np.tril(np.ones((6, 6), bool)), s, -np.inf)
        want = np.exp(s - s.max(-1, keepdims=True))
        np.testing.assert_allclose(patterns[0], want / want.sum(-1, keepdims=True), rtol=1e-4, atol=1e-6)
