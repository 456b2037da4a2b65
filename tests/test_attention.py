"""Attention: the core definition against a direct NumPy transcription of eqs. (1) and (3), and
the trainer's fast attention (hand-written gradient, causal query blocks, cuDNN on GPUs) against
the core definition with JAX's derivative."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dwlib.core.attention import attend, weights
from dwlib.train import fast_attention
from dwlib.train.fast_attention import attention

# Comparisons are relative to the largest entry of the reference. float32: the two sides sum the
# same products in other orders, a few float32 ulps (measured at most 7e-7). bfloat16: both take
# the same bfloat16 inputs and keep scores and softmax in float32, but round their bfloat16
# outputs and gradients at different points, which costs one or two bfloat16 ulps (2^-8 = 0.4%;
# measured at most 0.8%); 2% leaves room without hiding a wrong mask or scale (those err by O(1)).
TOLERANCE = {"float32": 1e-5, "bfloat16": 2e-2}


def assert_close(got, want, dtype):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert np.abs(got - want).max() <= TOLERANCE[jnp.dtype(dtype).name] * np.abs(want).max()


def _naive(q, k, v, normalize, causal):
    """Eq. (1) (softmax of scaled scores) or eq. (3) (raw scores) over (..., N, H, d_a) arrays."""
    n, d = q.shape[-3], q.shape[-1]
    s = np.einsum("...ihd,...jhd->...hij", q, k)
    if normalize == "softmax":
        s = s / np.sqrt(d)
        if causal:
            s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
    elif causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, 0)
    return s, np.einsum("...hij,...jhd->...ihd", s, v)


@pytest.mark.parametrize("normalize", ["softmax", None])
@pytest.mark.parametrize("causal", [True, False])
def test_attend_and_weights_match_the_definition(normalize, causal):
    q, k, v = (np.asarray(jax.random.normal(jax.random.key(i), (2, 7, 3, 4))) for i in range(3))
    want_p, want = _naive(q, k, v, normalize, causal)
    np.testing.assert_allclose(attend(q, k, v, normalize=normalize, causal=causal), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(weights(q, k, normalize=normalize, causal=causal), want_p, rtol=1e-4, atol=1e-6)


def test_unnormalised_attention_is_exact_on_integers():
    """Eq. (3) with integer inputs stays integer and exact (the analysed network's exact ranks rely on it)."""
    with jax.enable_x64(True):
        q, k, v = (np.asarray(jax.random.randint(jax.random.key(i), (2, 6, 2, 3), -9, 10), np.int64) for i in range(3))
        got = attend(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v), normalize=None, causal=True)
        assert got.dtype == jnp.int64
        np.testing.assert_array_equal(np.asarray(got), _naive(q, k, v, None, True)[1])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n,layout", [(9, "NHD"), (128, "HND")])  # causal over 128: two query blocks
def test_fast_attention_matches_attend_in_value_and_gradient(dtype, causal, n, layout):
    q, k, v, w = (jax.random.normal(key, (2, n, 3, 16)).astype(dtype) for key in jax.random.split(jax.random.key(n), 4))
    t = (lambda x: x) if layout == "NHD" else (lambda x: jnp.swapaxes(x, -3, -2))  # from and back to NHD
    fast = lambda q, k, v: t(attention(t(q), t(k), t(v), causal=causal, layout=layout))  # noqa: E731
    plain = lambda q, k, v: attend(q, k, v, causal=causal)  # noqa: E731
    assert_close(jax.jit(fast)(q, k, v), jax.jit(plain)(q, k, v), dtype)
    grads = [jax.jit(jax.grad(lambda q, k, v: (f(q, k, v).astype(jnp.float32) * w.astype(jnp.float32)).sum(),
                              argnums=(0, 1, 2)))(q, k, v) for f in (fast, plain)]
    for got, want in zip(*grads):
        assert got.dtype == jnp.dtype(dtype)
        assert_close(got, want, dtype)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_transposed_product_is_a_transpose_times_b(monkeypatch, backend):
    """The backward's a^T b: on the CPU through a written-out transpose (an optimization barrier in
    the lowered program), elsewhere one product; the same value on both branches."""
    a, b = (jax.random.normal(key, (2, 3, 5, n)) for key, n in zip(jax.random.split(jax.random.key(0)), (4, 6)))
    monkeypatch.setattr(jax, "default_backend", lambda: backend)  # read when the function is traced
    f = jax.jit(lambda a, b: fast_attention._transposed_product(a, b))  # a new function: traced afresh
    np.testing.assert_allclose(f(a, b), np.einsum("...ij,...id->...jd", a, b), rtol=1e-5, atol=1e-5)
    assert ("optimization_barrier" in f.lower(a, b).as_text()) == (backend == "cpu")


def test_fused_attention_rule_and_call(monkeypatch):
    """On a GPU in bfloat16 softmax attention goes to cuDNN through jax.nn.dot_product_attention.
    Here (CPU) the rule is checked with the backend faked, and the layout handling around the
    call with XLA's implementation standing in for cuDNN's; the device run compares cuDNN itself
    (benchmarks/train_throughput.py's fused_attention_error)."""
    fa, bf16 = fast_attention, jnp.bfloat16
    assert not fa.fused_available(bf16, 64) and fa.preferred_layout(bf16, 64) == "HND"  # CPU
    monkeypatch.setattr(fa.jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(fa.jax, "devices", lambda: [SimpleNamespace(compute_capability="7.5")])
    assert not fa.fused_available(bf16, 64)  # a T4 or older: no fused kernel
    monkeypatch.setattr(fa.jax, "devices", lambda: [SimpleNamespace()])  # not CUDA
    assert not fa.fused_available(bf16, 64)
    monkeypatch.setattr(fa.jax, "devices", lambda: [SimpleNamespace(compute_capability="9.0")])
    assert fa.fused_available(bf16, 64) and fa.preferred_layout(bf16, 64) == "NHD"
    assert not fa.fused_available(jnp.float32, 64)  # cuDNN's kernel: 16-bit operands only
    assert not fa.fused_available(bf16, 12) and not fa.fused_available(bf16, 256)
    monkeypatch.setenv("DWLIB_ATTENTION", "dwlib")
    assert not fa.fused_available(bf16, 64)
    monkeypatch.delenv("DWLIB_ATTENTION")

    calls = []
    xla = jax.nn.dot_product_attention

    def stand_in(q, k, v, *, is_causal, implementation):
        calls.append((q.shape, implementation))
        return xla(q, k, v, is_causal=is_causal)

    monkeypatch.setattr(fa.jax.nn, "dot_product_attention", stand_in)
    q, k, v, w = (jax.random.normal(jax.random.key(i), (2, 3, 16, 4, 8)).astype(bf16) for i in range(4))  # (.., N, H, d)
    for causal in (True, False):
        plain = lambda q, k, v: attend(q, k, v, causal=causal)  # noqa: E731
        for layout in ("NHD", "HND"):
            t = (lambda x: x) if layout == "NHD" else (lambda x: jnp.swapaxes(x, -3, -2))
            fused = lambda q, k, v: t(attention(t(q), t(k), t(v), causal=causal, layout=layout))  # noqa: E731
            assert_close(fused(q, k, v), attend(*(x.astype(jnp.float32) for x in (q, k, v)), causal=causal), bf16)
            grads = [jax.grad(lambda q, k, v: (f(q, k, v).astype(jnp.float32) * w).sum(), argnums=(0, 1, 2))(q, k, v)
                     for f in (fused, plain)]
            for got, want in zip(*grads):
                assert_close(got, want, bf16)
    # every call went to cuDNN, the leading axes folded into one batch axis (how often JAX traces
    # the function is its own business: at least once for each of the 4 cases)
    assert len(calls) >= 4 and set(calls) == {((6, 16, 4, 8), "cudnn")}


@pytest.mark.skipif(jax.default_backend() != "gpu", reason="cuDNN's fused kernel: an NVIDIA GPU only")
@pytest.mark.parametrize("causal", [True, False])
def test_cudnn_attention_matches_attend_in_value_and_gradient(causal):
    """On a GPU that has the fused kernel, the real thing (not a stand-in), in bfloat16."""
    if not fast_attention.fused_available(jnp.bfloat16, 64):
        pytest.skip("no fused kernel on this GPU")
    q, k, v, w = (jax.random.normal(key, (2, 256, 4, 64)).astype(jnp.bfloat16) for key in jax.random.split(jax.random.key(7), 4))
    fused = lambda q, k, v: attention(q, k, v, causal=causal, layout="NHD")  # noqa: E731
    plain = lambda q, k, v: attend(q, k, v, causal=causal)  # noqa: E731
    assert_close(jax.jit(fused)(q, k, v), jax.jit(plain)(q, k, v), jnp.bfloat16)
    grads = [jax.jit(jax.grad(lambda q, k, v: (f(q, k, v).astype(jnp.float32) * w.astype(jnp.float32)).sum(),
                              argnums=(0, 1, 2)))(q, k, v) for f in (fused, plain)]
    for got, want in zip(*grads):
        assert_close(got, want, jnp.bfloat16)
