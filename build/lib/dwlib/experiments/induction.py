"""Induction heads: a small attention-only decoder learns to continue a repeated sequence.

A decoder of attention-only layers [elhage2021mathematical; olsson2022context] trained on
sequences [T random tokens, the same T tokens again, ...] can predict the repeated part only by
composing two heads (one that looks at the previous token, one that looks for the position after
the previous occurrence of the current token), so two layers learn it and one layer does not.
:func:`train_induction` trains both; the result ships as ``dwlib/data/context_induction.json``
(:func:`load_induction`; ``scripts/publish_context.py`` publishes a fresh one).

The model is eq. (1)'s attention stacked with residual connections
(:func:`dwlib.core.analysed.attention_forward`, causal), between token and position embeddings
and an unembedding. Its training loop is a few lines of optax rather than
:func:`dwlib.train.loop.train`: that trainer trains :mod:`dwlib.train.model`'s decoder (with
feed-forward blocks and LayerNorm) on a token corpus with the next-token loss at every
position, checkpoints and shards it; this experiment needs another model, fresh synthetic
batches every step, a loss masked to the repeated part, and the attention patterns at the end.
"""

from __future__ import annotations

import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dwlib.core.analysed import attention_forward, check_shape
from dwlib.errors import require, require_int
from dwlib.store import packaged_json, write_json

INDUCTION_FILE = "context_induction.json"
INDUCTION_DEFAULTS = {"vocab": 64, "n_positions": 40, "min_period": 8, "max_period": 20, "width": 64,
                      "heads": 2, "batch": 32, "steps": 1500, "learning_rate": 3e-3, "eval_batch": 256,
                      "log_every": 50, "seed": 0}


def repeated_batch(key, batch: int, n_positions: int, vocab: int, min_period: int, max_period: int):
    """Sequences [s, s, s...] cut to ``n_positions`` tokens: s is T tokens drawn uniformly from
    ``vocab``, with the period T drawn per sequence from [min_period, max_period]. Returns
    (tokens (batch, N) int32, periods (batch,) int32).

    The period varies so that the repeat cannot be found from positions alone (with a fixed T,
    one layer attending T - 1 positions back would copy the answer); the only way to predict
    the repeated part is to find the earlier occurrence of the current token by its content.
    """
    k_tok, k_per = jax.random.split(key)
    periods = jax.random.randint(k_per, (batch,), min_period, max_period + 1)
    s = jax.random.randint(k_tok, (batch, n_positions), 0, vocab)
    t = jnp.arange(n_positions)
    return jnp.take_along_axis(s, t[None, :] % periods[:, None], axis=1), periods


def repeat_example(key, n_positions: int, vocab: int):
    """One sequence [s, s] with T = N / 2: T random tokens, then the same T tokens."""
    require(n_positions % 2 == 0, f"n_positions must be even for an exact repeat, got {n_positions}")
    s = jax.random.randint(key, (1, n_positions // 2), 0, vocab)
    return jnp.concatenate([s, s], axis=1), jnp.array([n_positions // 2])


def init_attention_only(key, depth: int, width: int, heads: int, vocab: int, n_positions: int) -> dict:
    """Weights of a decoder with ``depth`` attention-only layers (no MLP, no LayerNorm), as in
    the small models of Elhage et al.: token and learned position embeddings, per layer the
    W^Q, W^K, W^V, W^O of eq. (1) (laid out as :mod:`dwlib.core.analysed` lays them out), and an
    unembedding."""
    d_a = check_shape(depth, width, heads)
    keys = jax.random.split(key, 3 + 4 * depth)
    std = 1.0 / math.sqrt(width)
    layers = []
    for l in range(depth):
        kq, kk, kv, ko = keys[3 + 4 * l: 7 + 4 * l]
        layers.append({"q": std * jax.random.normal(kq, (heads, d_a, width)),
                       "k": std * jax.random.normal(kk, (heads, d_a, width)),
                       "v": std * jax.random.normal(kv, (heads, d_a, width)),
                       "o": std * jax.random.normal(ko, (heads, width, d_a))})
    return {"embed": jax.random.normal(keys[0], (vocab, width)) * 0.5,
            "pos": jax.random.normal(keys[1], (n_positions, width)) * 0.5,
            "unembed": std * jax.random.normal(keys[2], (width, vocab)),
            "layers": layers}


def attention_only_forward(params: dict, tokens, return_patterns: bool = False):
    """Logits (..., N, vocab) of the attention-only decoder; with ``return_patterns`` also the
    causal softmax attention weights of every layer, each (..., H, N, N)."""
    x = params["embed"][tokens] + params["pos"][:tokens.shape[-1]]
    out = attention_forward(params["layers"], x, residual=True, causal=True, return_patterns=return_patterns)
    if return_patterns:
        x, patterns = out
        return x @ params["unembed"], patterns
    return out @ params["unembed"]


def repeated_half_loss(params: dict, tokens, periods):
    """Mean next-token cross-entropy (nats) over the predictions inside the repeated part:
    positions t >= T predicting token t + 1, which the first period has already shown."""
    logits = attention_only_forward(params, tokens)[..., :-1, :]
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, tokens[..., 1:, None], axis=-1)[..., 0]
    mask = jnp.arange(tokens.shape[-1] - 1)[None, :] >= periods[:, None]  # t >= T: seen one period back
    return jnp.sum(nll * mask) / jnp.sum(mask)


def induction_scores(patterns, periods) -> dict:
    """Per layer and head, the mean attention weight from each position t >= T of the repeat
    to t - T + 1 (the token after the previous occurrence of the current token: where an
    induction head looks), and to t - 1 (the previous token)."""
    periods = np.asarray(periods)
    n = np.asarray(patterns[0]).shape[-1]
    b, t = np.nonzero(np.arange(n)[None, :] >= periods[:, None])
    out = {"induction": [], "previous_token": []}
    for p in patterns:
        p = np.asarray(p)  # (batch, H, N, N)
        out["induction"].append([float(p[b, h, t, t - periods[b] + 1].mean()) for h in range(p.shape[1])])
        out["previous_token"].append([float(p[b, h, t, t - 1].mean()) for h in range(p.shape[1])])
    return out


def _train_one(depth: int, cfg: dict) -> dict:
    n = cfg["n_positions"]
    batch_of = functools.partial(repeated_batch, n_positions=n, vocab=cfg["vocab"],
                                 min_period=cfg["min_period"], max_period=cfg["max_period"])
    k_init, k_eval, k_data, k_example = jax.random.split(jax.random.PRNGKey(cfg["seed"]), 4)
    params = init_attention_only(k_init, depth, cfg["width"], cfg["heads"], cfg["vocab"], n)
    opt = optax.adam(cfg["learning_rate"])
    state = opt.init(params)
    eval_tokens, eval_periods = batch_of(k_eval, cfg["eval_batch"])

    @jax.jit
    def step(params, state, key):
        tokens, periods = batch_of(key, cfg["batch"])
        loss, grads = jax.value_and_grad(repeated_half_loss)(params, tokens, periods)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    evaluate = jax.jit(lambda p: repeated_half_loss(p, eval_tokens, eval_periods))
    curve = [{"step": 0, "loss": float(evaluate(params))}]
    start = time.perf_counter()
    for i, k in enumerate(jax.random.split(k_data, cfg["steps"]), start=1):
        params, state, _ = step(params, state, k)
        if i % cfg["log_every"] == 0 or i == cfg["steps"]:
            curve.append({"step": i, "loss": float(evaluate(params))})
    seconds = time.perf_counter() - start
    _, patterns = attention_only_forward(params, eval_tokens, return_patterns=True)
    scores = induction_scores(patterns, eval_periods)
    head = int(np.argmax(scores["induction"][-1]))
    tokens, periods = repeat_example(k_example, n, cfg["vocab"])
    _, example = attention_only_forward(params, tokens, return_patterns=True)
    return {"depth": depth, "loss": curve[-1]["loss"], "curve": curve, "scores": scores,
            "induction_head": {"layer": depth, "head": head + 1},
            "example": {"tokens": np.asarray(tokens[0]).tolist(), "period": int(periods[0]),
                        "pattern": np.round(np.asarray(example[-1][0, head]), 4).tolist()},
            "train_seconds": round(seconds, 1)}


def train_induction(depths=(1, 2), **overrides) -> dict:
    """Train one attention-only decoder per depth on [random tokens, same tokens] and report,
    for each, the loss on the repeated half (eval batch), its curve, the per-head induction and
    previous-token scores, and the averaged attention pattern of the last layer's head with the
    highest induction score. Keyword arguments override :data:`INDUCTION_DEFAULTS`.

    A network that has learned nothing is at log(vocab) nats; one that only knows which tokens
    occurred earlier, at about log(T); an induction circuit brings it near 0.
    """
    unknown = set(overrides) - set(INDUCTION_DEFAULTS)
    require(not unknown, f"unknown settings {sorted(unknown)}; known: {sorted(INDUCTION_DEFAULTS)}")
    cfg = {**INDUCTION_DEFAULTS, **overrides}
    for name in ("vocab", "n_positions", "min_period", "max_period", "width", "heads", "batch", "steps",
                 "eval_batch", "log_every"):
        require_int(name, cfg[name], 2 if name in ("vocab", "n_positions", "min_period", "max_period") else 1)
    require(cfg["min_period"] <= cfg["max_period"] < cfg["n_positions"] - 1,
            f"need min_period <= max_period < n_positions - 1, got {cfg['min_period']}, {cfg['max_period']}, "
            f"{cfg['n_positions']}")
    require(cfg["learning_rate"] > 0, f"learning_rate must be positive, got {cfg['learning_rate']!r}")
    runs = [_train_one(int(d), cfg) for d in depths]
    return {"config": cfg, "chance_loss": math.log(cfg["vocab"]), "runs": runs}


def save_induction(result: dict, path):
    """Write a :func:`train_induction` result to ``path``."""
    return write_json(path, result, indent=1)


def load_induction() -> dict:
    """The stored :func:`train_induction` result (``dwlib/data/context_induction.json``)."""
    return packaged_json(INDUCTION_FILE)
