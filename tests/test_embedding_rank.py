"""The decoder with its input embedding factored to rank r (``embedding_rank``, for the
vocabulary bottleneck): the stored runs keep their keys, the option computes the plain model's
function at r = d_x with the identity lift, its input has rank at most r, its parameters are
counted as embeddings, and it trains."""

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from dwlib.errors import InputError
from dwlib.experiments.presets import get_preset
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.memory import step_bytes
from dwlib.train.model import Decoder, ModelConfig, count_parameters, init_params, parameter_counts
from dwlib.train.step import loss_fn

ROOT = Path(__file__).resolve().parents[1]
# Sweeps committed whole before the option existed (cpu-pairs is left alone: it is written to as it runs)
STORED = ("mini", "mini-lr", "cpu-fig2", "gpu-slice", "cpu-pairs-pilot-1m", "cpu-pairs-pilot-2m")
KW = dict(vocab_size=50, seq_len=16, depth=2, width=32, heads=2)


def stored_configs():
    found = sorted(p for s in STORED for p in (ROOT / "results" / s / "runs").glob("*/config.json"))
    assert len(found) >= 100, "the committed sweeps' runs are expected in results/"
    return found


def test_every_stored_run_keeps_its_key():
    """A stored config read into today's TrainConfig (which adds embedding_rank = None) and written
    back is keyed by its run directory's name, as when it was trained."""
    for path in stored_configs():
        cfg = TrainConfig.from_dict(json.loads(path.read_text()))
        assert cfg.model.embedding_rank is None
        assert "embedding_rank" in cfg.to_dict()
        assert run_key(cfg) == run_key(json.loads(path.read_text())) == path.parent.name, path


def test_a_preset_that_was_run_plans_the_keys_it_stored():
    """The rate grid of cpu-fig2, planned today, names runs that exist on disk."""
    stored = {p.name for p in (ROOT / "results" / "cpu-fig2" / "runs").iterdir()}
    planned = {run_key(c) for c in get_preset("cpu-fig2").configs()}
    assert planned and planned <= stored


def test_a_rank_is_keyed_and_checked():
    base = TrainConfig.from_dict({**KW, "tied": False})
    keys = {run_key(base.replace(embedding_rank=r)) for r in (None, 4, 8, 32)}
    assert len(keys) == 4
    for fields, message in [(dict(embedding_rank=8), "needs an untied output"),
                            (dict(embedding_rank=33, tied=False), "at most the width 32"),
                            (dict(embedding_rank=0, tied=False), "embedding_rank must be an integer from 1"),
                            (dict(embedding_rank=2.0, tied=False), "embedding_rank must be an integer"),
                            (dict(embedding_rank=True, tied=False), "embedding_rank must be an integer")]:
        with pytest.raises(InputError, match=message):
            ModelConfig(**KW, **fields)


def _state(model):
    return nnx.to_pure_dict(nnx.state(model, nnx.Param))


@pytest.mark.parametrize("tied", [True, False])
def test_at_full_rank_with_the_identity_lift_it_is_the_plain_model(tied):
    """r = d_x, the lift the identity, the tables and blocks copied from a plain model and the
    untied output set to the plain model's output matrix (its token embedding when tied): the
    same logits and loss."""
    plain = Decoder(ModelConfig(**KW, tied=tied), rngs=nnx.Rngs(5))
    factored = Decoder(ModelConfig(**KW, tied=False, embedding_rank=KW["width"]), rngs=nnx.Rngs(7))
    ps, fs = _state(plain), _state(factored)
    assert not np.array_equal(ps["blocks"][0]["fc"]["kernel"], fs["blocks"][0]["fc"]["kernel"])  # seeds differ
    for name in ("blocks", "ln_f", "tok", "pos"):
        fs[name] = ps[name]
    fs["lift"] = jnp.eye(KW["width"])
    fs["head"] = {"kernel": plain.output_matrix().T}
    nnx.update(factored, fs)
    tokens = jax.random.randint(jax.random.key(0), (3, 17), 0, KW["vocab_size"])
    x, y = tokens[:, :-1], tokens[:, 1:]
    np.testing.assert_allclose(factored(x), plain(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(factored.loss(x, y), plain.loss(x, y), rtol=1e-6)
    lift = np.asarray(jax.random.normal(jax.random.key(1), (KW["width"], KW["width"])))
    nnx.update(factored, {"lift": jnp.asarray(lift)})  # another lift: another function
    assert np.abs(np.asarray(factored(x)) - np.asarray(plain(x))).max() > 1e-3


@pytest.mark.parametrize("r", [1, 4, 8])
def test_the_input_has_rank_at_most_r(r):
    """Every (token, position) input vector lies in r dimensions: the V N x d_x matrix of them has
    rank r (at most r by construction, r for a generic draw); the plain model's has rank d_x."""
    cfg = dict(KW, vocab_size=40, width=48, heads=3, tied=False)
    factored = Decoder(ModelConfig(**cfg, embedding_rank=r), rngs=nnx.Rngs(0))
    plain = Decoder(ModelConfig(**cfg), rngs=nnx.Rngs(0))
    m = np.asarray(factored.input_matrix(), np.float64)
    assert m.shape == (40 * 16, 48)
    s = np.linalg.svd(m, compute_uv=False)
    assert s[r - 1] > 1e-3 * s[0] and (r == 48 or s[r] < 1e-5 * s[0])
    assert np.linalg.matrix_rank(np.asarray(plain.input_matrix(), np.float64)) == 48
    tokens = jnp.arange(16)[None] % 40  # what the blocks read is that matrix's rows
    np.testing.assert_allclose(factored.embed(tokens)[0], m.reshape(16, 40, 48)[np.arange(16), np.arange(16) % 40],
                               rtol=1e-5, atol=1e-7)


def test_it_starts_as_the_plain_untied_model_apart_from_the_embedding():
    """Seed for seed, the blocks, the final norm and the output start as the plain untied model's;
    the lifted input has the plain embedding's scale."""
    plain = _state(Decoder(ModelConfig(**KW, tied=False), rngs=nnx.Rngs(3)))
    factored = _state(Decoder(ModelConfig(**KW, tied=False, embedding_rank=8), rngs=nnx.Rngs(3)))
    for name in ("blocks", "ln_f", "head"):
        assert jax.tree.all(jax.tree.map(lambda a, b: bool(np.array_equal(a, b)), plain[name], factored[name]))
    assert factored["tok"]["embedding"].shape == (50, 8) and factored["lift"].shape == (8, 32)
    x = factored["tok"]["embedding"] @ factored["lift"]
    assert 0.01 < float(np.std(x)) < 0.04  # the plain table's entries: N(0, 0.02^2)


@pytest.mark.parametrize("r", [4, 32])
def test_its_parameters_are_counted_as_embeddings(r):
    cfg = ModelConfig(vocab_size=300, seq_len=16, depth=2, width=32, heads=2, tied=False, embedding_rank=r)
    counts = parameter_counts(cfg)
    assert counts == count_parameters(nnx.eval_shape(lambda: Decoder(cfg, rngs=nnx.Rngs(0))))
    plain = parameter_counts(ModelConfig(vocab_size=300, seq_len=16, depth=2, width=32, heads=2, tied=False))
    assert counts["non_embedding"] == plain["non_embedding"] == 12 * 2 * 32 ** 2
    assert counts["embeddings"] == (300 + 16) * r + r * 32 + 300 * 32
    run = TrainConfig.from_dict({**cfg.__dict__, "steps": 10, "batch_size": 4})
    assert run.cost()["params"] == counts["non_embedding"] + counts["embeddings"]
    plain_run = run.replace(embedding_rank=None)
    tokens = 10 * 4 * 16
    assert run.cost()["flops"] - plain_run.cost()["flops"] == tokens * 6 * r * 32
    assert step_bytes(run)["state"] == 4 * 4 * counts["total"]


@pytest.mark.parametrize("ops", ["plain", "fast"])
def test_it_trains(ops):
    """The loss falls over a few AdamW steps on one batch, every parameter of the embedding gets a
    gradient, and the fast operations give the plain ones' loss."""
    cfg = ModelConfig(**KW, tied=False, embedding_rank=4, ops=ops)
    graphdef, params = init_params(cfg, seed=2)
    batch = jax.random.randint(jax.random.key(4), (4, 17), 0, KW["vocab_size"])
    grad = jax.jit(jax.value_and_grad(lambda p: loss_fn(graphdef, p, batch)))
    _, g = grad(params)
    for name in ("tok", "pos", "lift", "head"):
        assert all(float(jnp.abs(leaf).max()) > 0 for leaf in jax.tree.leaves(g[name])), name
    tx = optax.adam(1e-2)
    state = tx.init(params)
    first = None
    for _ in range(15):
        loss, g = grad(params)
        first = float(loss) if first is None else first
        updates, state = tx.update(g, state, params)
        params = optax.apply_updates(params, updates)
    assert float(grad(params)[0]) < first - 0.5
    plain_graphdef, _ = init_params(ModelConfig(**KW, tied=False, embedding_rank=4), seed=2)
    assert abs(float(loss_fn(graphdef, params, batch)) - float(loss_fn(plain_graphdef, params, batch))) < 1e-5
