"""The decoder of dwlib.train.model (plain Flax, JAX's derivative) and its fast path
(dwlib.train.fast, hand-written gradients): every fast operation against the plain one it
replaces, and the whole decoder's loss and gradients, in float32 and bfloat16; parameter counts,
and configuration checks."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from dwlib.errors import InputError
from dwlib.train import fast
from dwlib.train.model import (PLAIN, Block, Decoder, LayerNorm, ModelConfig, count_parameters, init_params, operands,
                               parameter_counts)
from dwlib.train.step import loss_fn

# Errors are measured relative to the largest entry of the reference (the plain side).
# float32: the two sides compute the same function with sums in other orders and other but
# equivalent formulas (GELU's erf written two ways, a LayerNorm gradient by hand): measured at
# most 1.2e-7 for a single op, 8e-7 for the decoder's gradients, its loss bit-equal.
# bfloat16 (8 significant bits, 2^-8 = 0.4% per rounding): both sides take the same bfloat16
# inputs but round intermediate results at different places (nnx.Linear's and dense's kernel
# gradients contract in other orders; the fast tied output product rounds the float32 embedding
# to bfloat16, the plain one does not): single ops measured at most 1.6%, the two-block decoder's
# gradients at most 2.1% of each leaf's largest entry and its loss within 4e-5 (3 seeds).
# The tolerances leave a factor of two or more; a wrong formula, mask or scale errs by O(1).
OP_TOLERANCE = {"float32": 1e-6, "bfloat16": 3e-2}
DECODER_TOLERANCE = {"float32": 1e-5, "bfloat16": 5e-2}  # loss: 1e-6, 1e-3


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def compare(fast_fn, plain_fn, args, dtype, argnums):
    """Value and gradient (w.r.t. ``argnums``, under a random cotangent) of two functions."""
    out = jax.jit(plain_fn)(*args)
    w = jax.random.normal(jax.random.key(99), jnp.shape(out))
    errors = [relative_error(jax.jit(fast_fn)(*args), out)]
    grads = [jax.jit(jax.grad(lambda *a: (f(*a).astype(jnp.float32) * w).sum(), argnums))(*args)
             for f in (fast_fn, plain_fn)]
    errors += [relative_error(g, h) for g, h in zip(jax.tree.leaves(grads[0]), jax.tree.leaves(grads[1]))]
    assert max(errors) <= OP_TOLERANCE[dtype], errors


def module_fn(module):
    """(graphdef, params) of a plain module, so that both sides take its parameters as arguments."""
    graphdef, state = nnx.split(module)
    params = jax.tree.map(lambda p: jax.random.normal(jax.random.key(p.size), p.shape, p.dtype),
                          nnx.to_pure_dict(state))
    return graphdef, params


DTYPES = ["float32", "bfloat16"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_matches_the_plain_layer_norm(dtype):
    graphdef, params = module_fn(LayerNorm(8))
    x = (3 * jax.random.normal(jax.random.key(0), (3, 5, 8)) + 1).astype(dtype)
    compare(lambda p, x: nnx.merge(graphdef, p)(x, fast.OPS), lambda p, x: nnx.merge(graphdef, p)(x),
            (params, x), dtype, (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 12), (12, 8)])
def test_dense_matches_nnx_linear(dtype, shape):
    graphdef, params = module_fn(nnx.Linear(*shape, dtype=jnp.dtype(dtype), rngs=nnx.Rngs(0)))
    x = jax.random.normal(jax.random.key(1), (3, 5, shape[0])).astype(dtype)
    compare(lambda p, x: PLAIN.dense(*operands(nnx.merge(graphdef, p), x)), lambda p, x: nnx.merge(graphdef, p)(x),
            (params, x), dtype, (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_qkv_heads_match_a_linear_layer_split_into_heads(dtype, layout):
    graphdef, params = module_fn(nnx.Linear(8, 24, dtype=jnp.dtype(dtype), rngs=nnx.Rngs(0)))
    x = jax.random.normal(jax.random.key(1), (2, 5, 8)).astype(dtype)

    def plain(p, x):  # as the plain Block does: split, then heads (B, N, H, d / H)
        heads = [t.reshape(2, 5, 4, 2) for t in jnp.split(nnx.merge(graphdef, p)(x), 3, axis=-1)]
        return jnp.stack([jnp.swapaxes(t, 1, 2) for t in heads] if layout == "HND" else heads)

    compare(lambda p, x: fast.qkv_heads(*operands(nnx.merge(graphdef, p), x), 4, layout), plain,
            (params, x), dtype, (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unembed_loss_matches_the_tied_output_and_optax(dtype):
    graphdef, params = module_fn(nnx.Embed(11, 8, rngs=nnx.Rngs(0)))
    h = jax.random.normal(jax.random.key(5), (3, 5, 8)).astype(dtype)
    targets = jax.random.randint(jax.random.key(6), (3, 5), 0, 11)
    compare(lambda p, h: fast.OPS.unembed_loss(h, p["embedding"], targets),
            lambda p, h: optax.softmax_cross_entropy_with_integer_labels(
                nnx.merge(graphdef, p).attend(h), targets).mean(),
            (params, h), dtype, (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_a_fast_block_matches_the_plain_block(dtype, layout, monkeypatch):
    """One block with the fast operations against the plain ones: value and the gradients of every
    parameter and of the input, causal attention over 128 positions, in the CPU's head-major
    layout and in the position-major one that GPU fused attention takes."""
    monkeypatch.setattr(fast, "preferred_layout", lambda *_: layout)
    cfg = ModelConfig(seq_len=128, depth=2, width=32, heads=2, dtype=dtype)
    graphdef, params = module_fn(Block(cfg, nnx.Rngs(0)))
    # every weight random (no zero bias, no unit gain) at std 0.3: at std 1 the scores reach ~30
    # and the softmax is nearly one-hot, where float32's summation order alone costs 2e-5 (measured);
    # at 0.3, 4.5e-7 in float32 and 1.1% in bfloat16
    params = jax.tree.map(lambda p: 0.3 * p, params)
    x = jax.random.normal(jax.random.key(4), (2, 128, 32)).astype(dtype)
    compare(lambda p, x: nnx.merge(graphdef, p)(x, fast.OPS),
            lambda p, x: nnx.merge(graphdef, p)(x), (params, x), dtype, (0, 1))


# float32 and bfloat16, tied and untied, in the CPU's layout; bfloat16 tied (the GPU presets'
# configuration) also in the layout of GPU fused attention.
DECODER_CASES = [(d, t, "HND") for d in DTYPES for t in (True, False)] + [("bfloat16", True, "NHD")]


@pytest.mark.parametrize("dtype,tied,layout", DECODER_CASES)
def test_the_fast_decoder_computes_the_plain_decoders_loss_and_gradients(dtype, tied, layout, monkeypatch):
    """ops="fast" and ops="plain" from one seed: the same parameters, and the same loss (near
    log V at initialisation) and gradient of every parameter within rounding; two blocks,
    causal attention over 128 positions (the fast path computes it in two query blocks)."""
    monkeypatch.setattr(fast, "preferred_layout", lambda *_: layout)
    kw = dict(vocab_size=50, seq_len=128, depth=2, width=32, heads=2, tied=tied, dtype=dtype)
    (gd_fast, p_fast), (gd_plain, p_plain) = (init_params(ModelConfig(**kw, ops=ops), seed=1) for ops in ("fast", "plain"))
    assert jax.tree.all(jax.tree.map(lambda a, b: bool((a == b).all()), p_fast, p_plain))
    tokens = jax.random.randint(jax.random.key(3), (2, 129), 0, 50)
    (l_fast, g_fast), (l_plain, g_plain) = (jax.jit(jax.value_and_grad(lambda p: loss_fn(gd, p, tokens)))(p)
                                            for gd, p in ((gd_fast, p_fast), (gd_plain, p_plain)))
    assert abs(float(l_plain) - math.log(50)) < 0.1
    assert abs(float(l_fast) - float(l_plain)) <= (1e-3 if dtype == "bfloat16" else 1e-6)
    errors = jax.tree.map(relative_error, g_fast, g_plain)
    assert max(jax.tree.leaves(errors)) <= DECODER_TOLERANCE[dtype], errors


@pytest.mark.parametrize("depth,width,heads,tied", [(1, 32, None, True), (2, 48, 3, False), (3, 64, None, True)])
def test_parameter_counts_match_the_parameter_tree(depth, width, heads, tied):
    cfg = ModelConfig(vocab_size=300, seq_len=16, depth=depth, width=width, heads=heads, tied=tied)
    model = nnx.eval_shape(lambda: Decoder(cfg, rngs=nnx.Rngs(0)))  # shapes only, no compute
    counts = parameter_counts(cfg)
    assert counts == count_parameters(model)
    assert counts["total"] == sum(x.size for x in jax.tree.leaves(nnx.state(model, nnx.Param)))


def test_config_defaults_and_checks():
    assert ModelConfig(width=128).heads == 2 and ModelConfig(width=48).heads == 3  # dwlib.core.sizes.default_heads
    assert ModelConfig().ops == "plain"
    for kw, message in [(dict(width=30, heads=4), "not divisible by heads"), (dict(depth=0), "depth must be an integer from 1 to 256"),
                        (dict(dtype="float16"), "dtype"), (dict(ops="cuda"), "ops must be one of plain, fast")]:
        with pytest.raises(InputError, match=message):
            ModelConfig(**kw)
