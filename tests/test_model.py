"""The decoder of dwlib.train.model: parameter counts, initial loss, head rule, attention."""

import math
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from dwlib.core.attention import attend
from dwlib.errors import InputError
from dwlib.train.model import (Decoder, ModelConfig, count_parameters, default_heads, init_params,
                         loss_fn, parameter_counts)


@pytest.mark.parametrize("depth,width,heads,tied", [(1, 32, None, True), (2, 48, 3, False), (3, 64, None, True)])
def test_parameter_counts_match_the_parameter_tree(depth, width, heads, tied):
    cfg = ModelConfig(vocab_size=300, seq_len=16, depth=depth, width=width, heads=heads, tied=tied)
    model = nnx.eval_shape(lambda: Decoder(cfg, rngs=nnx.Rngs(0)))  # shapes only, no compute
    counts = parameter_counts(cfg)
    assert counts == count_parameters(model)
    assert counts["non_embedding"] == 12 * depth * width**2
    leaves = jax.tree.leaves(nnx.state(model, nnx.Param))
    assert counts["total"] == sum(x.size for x in leaves)


def test_default_heads_rule():
    assert default_heads(64) == 1 and default_heads(256) == 4 and default_heads(512) == 8
    assert default_heads(32) == 2  # largest h <= 32/16 dividing 32
    assert default_heads(48) == 3 and default_heads(100) == 5 and default_heads(8) == 1
    assert ModelConfig(width=128).heads == 2


def test_bad_shapes_are_input_errors():
    with pytest.raises(InputError, match="not divisible by heads"):
        ModelConfig(width=30, heads=4)
    with pytest.raises(InputError, match="depth must be at least 1"):
        ModelConfig(depth=0)
    with pytest.raises(InputError, match="dtype"):
        ModelConfig(dtype="float16")


def test_initial_loss_is_close_to_log_vocabulary_in_float32_and_bfloat16():
    tokens = jax.random.randint(jax.random.key(1), (8, 33), 0, 1000)
    losses = []
    for dtype in ("float32", "bfloat16"):
        graphdef, params = init_params(ModelConfig(vocab_size=1000, seq_len=32, depth=2, width=32, dtype=dtype))
        losses.append(float(jax.jit(loss_fn, static_argnums=0)(graphdef, params, tokens)))
    assert abs(losses[0] - math.log(1000)) < 0.1, losses
    assert abs(losses[0] - losses[1]) < 0.02, losses  # bfloat16 compute, float32 parameters and loss


def test_hand_written_gradients_match_autodiff():
    """layer_norm, cross_entropy, unembed_cross_entropy, dense, gelu and softmax attention carry custom
    VJPs (for CPU speed)."""
    from dwlib.train.model import cross_entropy, dense, gelu, layer_norm, qkv_heads, unembed_cross_entropy

    keys = iter(jax.random.split(jax.random.key(0), 32))
    x = 3 * jax.random.normal(next(keys), (3, 5, 8)) + 1
    scale, bias, w = (jax.random.normal(next(keys), s) for s in ((8,), (8,), (3, 5, 8)))

    def ln_ref(x, scale, bias):
        m = x.mean(-1, keepdims=True)
        return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * scale + bias

    grads = [jax.jit(jax.grad(lambda *a: (f(*a) * w).sum(), argnums=(0, 1, 2)))(x, scale, bias)
             for f in (layer_norm, ln_ref)]
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    logits, targets = jax.random.normal(next(keys), (3, 5, 11)), jax.random.randint(next(keys), (3, 5), 0, 11)

    def ce_ref(logits, t):
        return jnp.mean(jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, t[..., None], -1)[..., 0])

    (l1, g1), (l2, g2) = (jax.jit(jax.value_and_grad(f))(logits, targets) for f in (cross_entropy, ce_ref))
    np.testing.assert_allclose(l1, l2, rtol=1e-6)
    np.testing.assert_allclose(g1, g2, rtol=1e-5, atol=1e-7)

    h, out_w = jax.random.normal(next(keys), (3, 5, 8)), jax.random.normal(next(keys), (11, 8))
    (l1, g1), (l2, g2) = (jax.jit(jax.value_and_grad(f, argnums=(0, 1)))(h, out_w, targets)
                          for f in (unembed_cross_entropy, lambda h, w, t: ce_ref(h @ w.T, t)))
    np.testing.assert_allclose(l1, l2, rtol=1e-6)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

    for i, o in ((8, 12), (12, 8)):  # dense's kernel gradient takes either orientation
        xs, kern, b, r = (jax.random.normal(next(keys), s) for s in ((3, 5, i), (i, o), (o,), (3, 5, o)))
        g1, g2 = (jax.jit(jax.grad(lambda *a: (f(*a) * r).sum(), argnums=(0, 1, 2)))(xs, kern, b)
                  for f in (dense, lambda x, k, b: x @ k + b))
        for a, c in zip(g1, g2):
            np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)

    xs, kern, b, r = (jax.random.normal(next(keys), s) for s in ((2, 5, 8), (8, 24), (24,), (3, 2, 4, 5, 2)))

    def qkv_ref(x, k, b, heads, layout):  # split, then heads: (3, B, H, N, d / H) or (3, B, N, H, d / H)
        q, kk, v = jnp.split(x @ k + b, 3, axis=-1)
        t = [t.reshape(2, 5, heads, -1) for t in (q, kk, v)]
        return jnp.stack([jnp.moveaxis(u, 2, 1) for u in t] if layout == "HND" else t)

    for layout in ("HND", "NHD"):
        np.testing.assert_allclose(qkv_heads(xs, kern, b, 4, layout), qkv_ref(xs, kern, b, 4, layout), rtol=1e-6)
        r_ = r if layout == "HND" else jnp.swapaxes(r, 2, 3)
        g1, g2 = (jax.jit(jax.grad(lambda *a: (f(*a, 4, layout) * r_).sum(), argnums=(0, 1, 2)))(xs, kern, b)
                  for f in (qkv_heads, qkv_ref))
        for a, c in zip(g1, g2):
            np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)

    z = 3 * jax.random.normal(next(keys), (4, 50))
    np.testing.assert_allclose(gelu(z), jax.nn.gelu(z, approximate=False), rtol=1e-5, atol=1e-6)
    g1, g2 = (jax.jit(jax.grad(lambda z: (f(z) * z[::-1]).sum()))(z)
              for f in (gelu, lambda z: jax.nn.gelu(z, approximate=False)))
    np.testing.assert_allclose(g1, g2, rtol=1e-5, atol=1e-6)

    for n in (9, 256):  # 256: causal attention computed in query blocks
        q, k, v, w = (jax.random.normal(next(keys), (2, n, 3, 4)) for _ in range(4))
        grads = [jax.jit(jax.grad(lambda q, k, v: (f(q, k, v) * w).sum(), argnums=(0, 1, 2)))(q, k, v)
                 for f in (lambda q, k, v: attend(q, k, v, causal=True),
                           lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True))]
        for a, b in zip(*grads):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _naive_attention(q, k, v, normalize, causal):
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
    return np.einsum("...hij,...jhd->...ihd", s, v)


@pytest.mark.parametrize("normalize", ["softmax", None])
@pytest.mark.parametrize("causal", [True, False])
def test_attention_matches_the_definition(normalize, causal):
    q, k, v = (np.asarray(jax.random.normal(jax.random.key(i), (2, 7, 3, 4))) for i in range(3))
    fn = jax.jit(lambda q, k, v: attend(q, k, v, normalize=normalize, causal=causal))
    got = np.asarray(fn(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)))
    np.testing.assert_allclose(got, _naive_attention(q, k, v, normalize, causal), rtol=1e-4, atol=1e-5)
    # the head-major layout gives the same result, head-major
    swap = lambda t: jnp.swapaxes(jnp.asarray(t), -3, -2)  # noqa: E731
    hnd = jax.jit(lambda q, k, v: attend(q, k, v, normalize=normalize, causal=causal, layout="HND"))
    np.testing.assert_allclose(np.asarray(swap(hnd(swap(q), swap(k), swap(v)))), got, rtol=1e-6, atol=1e-6)
    # and its gradient exists and is finite
    g = jax.jit(jax.grad(lambda q, k, v: fn(q, k, v).sum()))(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v))
    assert np.isfinite(np.asarray(g)).all()


def test_fused_attention_path(monkeypatch):
    """On a GPU in bfloat16 softmax attention goes to cuDNN through jax.nn.dot_product_attention.
    Here (CPU) the rule is checked with the backend faked, and the layout handling around the
    call with XLA's implementation standing in for cuDNN's; the device run compares cuDNN itself."""
    from dwlib.core import attention

    bf16 = jnp.bfloat16
    assert not attention.fused_available(bf16, 64) and attention.preferred_layout(bf16, 64) == "HND"  # CPU
    monkeypatch.setattr(attention.jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(attention.jax, "devices", lambda: [SimpleNamespace(compute_capability="7.5")])
    assert not attention.fused_available(bf16, 64)  # a T4 or older: no fused kernel
    monkeypatch.setattr(attention.jax, "devices", lambda: [SimpleNamespace()])  # not CUDA
    assert not attention.fused_available(bf16, 64)
    monkeypatch.setattr(attention.jax, "devices", lambda: [SimpleNamespace(compute_capability="9.0")])
    assert attention.fused_available(bf16, 64) and attention.preferred_layout(bf16, 64) == "NHD"
    assert not attention.fused_available(jnp.float32, 64)  # cuDNN's kernel: 16-bit operands only
    assert not attention.fused_available(bf16, 12) and not attention.fused_available(bf16, 256)
    monkeypatch.setenv("DWLIB_ATTENTION", "dwlib")
    assert not attention.fused_available(bf16, 64)
    monkeypatch.delenv("DWLIB_ATTENTION")

    calls = []
    xla = jax.nn.dot_product_attention

    def stand_in(q, k, v, *, is_causal, implementation):
        calls.append((q.shape, implementation))
        return xla(q, k, v, is_causal=is_causal)

    monkeypatch.setattr(attention.jax.nn, "dot_product_attention", stand_in)
    q, k, v = (jax.random.normal(jax.random.key(i), (2, 3, 16, 4, 8)).astype(bf16) for i in range(3))  # (.., N, H, d)
    for layout in ("NHD", "HND"):
        t = (lambda x: x) if layout == "NHD" else (lambda x: jnp.swapaxes(x, -3, -2))
        got = attention.attend(t(q), t(k), t(v), causal=True, layout=layout)
        want = _naive_attention(*(np.asarray(x, np.float32) for x in (q, k, v)), "softmax", True)
        np.testing.assert_allclose(np.asarray(t(got), np.float32), want, atol=3e-2)
    assert calls == [((6, 16, 4, 8), "cudnn")] * 2


def test_the_decoder_gives_the_same_loss_and_gradients_in_both_attention_layouts(monkeypatch):
    """The position-major (GPU fused attention's) and head-major layouts of the decoder's q, k, v
    compute the same function; the position-major one is forced here with dwlib's attention."""
    import dwlib.train.model as model_lib

    cfg = ModelConfig(vocab_size=50, seq_len=16, depth=2, width=32, heads=4)
    graphdef, params = init_params(cfg)
    tokens = jax.random.randint(jax.random.key(3), (2, 17), 0, 50)
    grad = lambda: jax.jit(jax.value_and_grad(lambda p: loss_fn(graphdef, p, tokens)))(params)  # noqa: E731
    (l_hnd, g_hnd) = grad()
    monkeypatch.setattr(model_lib, "preferred_layout", lambda dtype, head_size: "NHD")
    (l_nhd, g_nhd) = grad()
    assert float(l_nhd) == pytest.approx(float(l_hnd), rel=1e-6)
    for a, b in zip(jax.tree.leaves(g_nhd), jax.tree.leaves(g_hnd)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
