"""The decoder-only self-attention language model of the paper's experiments (section 5).

A GPT-style decoder in plain Flax NNX, written to be read in one sitting:

    x = E[tokens] + P[positions]                      token and learned position embeddings
    repeat L (= depth) times:                         pre-LayerNorm blocks, eqs. (1)-(2) of the paper
        x = x + W^O attend(LN(x) W^Q, LN(x) W^K, LN(x) W^V, causal)    H heads of size d_x / H
        x = x + W_2 GELU(W_1 LN(x))                   MLP of width 4 d_x (exact GELU, erf)
    logits = LN(x) E^T                                output tied to the token embedding (optionally untied)

Each block holds 12 d_x^2 weights in matrices (3 d_x^2 for Q, K, V, d_x^2 for the output
projection, 8 d_x^2 for the MLP), so the network has ``12 L d_x^2`` non-embedding parameters,
the size measure of the paper (:func:`dwlib.core.sizes.budget`); biases and LayerNorm gains are
counted separately by :func:`parameter_counts`.

Head count: ``heads=None`` picks :func:`dwlib.core.sizes.default_heads` (head size 64 where the
width allows). Compute dtype: ``dtype="bfloat16"`` runs matrix products and activations in
bfloat16 while parameters, LayerNorm statistics, softmax and the loss stay in float32.
``ops="fast"`` computes the same loss over the same parameters with hand-written gradients and,
on GPUs, fused attention (:mod:`dwlib.train.fast`, which reads this file's modules; this file
never imports it); ``ops="plain"`` lets JAX differentiate this file. The training step picks one
(:func:`dwlib.train.step.loss_fn`).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from dwlib.core import sizes
from dwlib.core.analysed import layer_norm
from dwlib.core.attention import attend
from dwlib.train.config import ModelConfig  # plain data, beside the run's other settings



class LayerNorm(nnx.Module):
    """LayerNorm over the last axis with gain and offset (eps 1e-5, as in PyTorch), statistics in float32."""

    def __init__(self, width: int, eps: float = 1e-5):
        self.scale = nnx.Param(jnp.ones((width,), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((width,), jnp.float32))
        self.eps = eps

    def __call__(self, x):
        y = layer_norm(x.astype(jnp.float32), self.eps) * self.scale[...] + self.bias[...]
        return y.astype(x.dtype)


class Block(nnx.Module):
    """One pre-LayerNorm Transformer block: causal multi-head
    self-attention, then the MLP."""

    def __init__(self, cfg: ModelConfig, rngs: nnx.Rngs):
        d, dtype = cfg.width, jnp.dtype(cfg.dtype)
        init = nnx.initializers.normal(0.02)
        # GPT-2: residual projections scaled down by sqrt(2 L) so the
        # residual stream stays O(1).
        out_init = nnx.initializers.normal(0.02 / math.sqrt(2 * cfg.depth))

        def linear(i, o, k):
            return nnx.Linear(i, o, kernel_init=k, dtype=dtype, rngs=rngs)

        self.heads = cfg.heads
        self.ln1 = LayerNorm(d)
        self.qkv = linear(d, 3 * d, init)  # W^Q, W^K, W^V side by side
        self.proj = linear(d, d, out_init)  # W^O
        self.ln2 = LayerNorm(d)
        self.fc = linear(d, 4 * d, init)
        self.out = linear(4 * d, d, out_init)

    def __call__(self, x):
        B, N, d = x.shape
        q, k, v = jnp.split(self.qkv(self.ln1(x)), 3, axis=-1)

        def split_heads(t):  # (B, N, d) -> (B, N, H, d / H)
            return t.reshape(B, N, self.heads, d // self.heads)

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        a = attend(q, k, v, causal=True)
        x = x + self.proj(a.reshape(B, N, d))
        h = jax.nn.gelu(self.fc(self.ln2(x)), approximate=False)
        return x + self.out(h)


class Decoder(nnx.Module):
    """Decoder-only language model:
    ``Decoder(cfg, rngs=nnx.Rngs(seed))(tokens) -> logits``."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        init = nnx.initializers.normal(0.02)
        self.tok = nnx.Embed(cfg.vocab_size, cfg.width, embedding_init=init,
                             rngs=rngs)
        self.pos = nnx.Embed(cfg.seq_len, cfg.width, embedding_init=init,
                             rngs=rngs)
        self.blocks = nnx.List([Block(cfg, rngs) for _ in range(cfg.depth)])
        self.ln_f = LayerNorm(cfg.width)
        if not cfg.tied:
            self.head = nnx.Linear(cfg.width, cfg.vocab_size,
                                   use_bias=False, kernel_init=init,
                                   rngs=rngs)

    def __call__(self, tokens):
        """Logits (B, N, V) in float32 for token ids (B, N)."""
        x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[-1]))
        x = x.astype(self.cfg.dtype)
        for block in self.blocks:
            x = block(x)
        h = self.ln_f(x)
        # float32 weights: float32 logits
        return self.tok.attend(h) if self.cfg.tied else self.head(h)

    def loss(self, tokens, targets):
        """Mean next-token cross-entropy in nats."""
        logits = self(tokens)
        return optax.softmax_cross_entropy_with_integer_labels(
            logits, targets).mean()


def parameter_counts(cfg: ModelConfig) -> dict:
    """Parameter counts by kind, from the formula (tested against the real parameter tree).

    ``non_embedding`` is the paper's size measure, the block matrices only: 12 L d_x^2.
    ``biases``: 9 d_x per block (QKV 3 d_x, output d_x, MLP 4 d_x + d_x).
    ``norms``: LayerNorm gains and offsets, 2 per block and a final one: (4 L + 2) d_x.
    ``embeddings``: token (V d_x) and position (N d_x) tables, plus V d_x for an untied output.
    """
    L, d, V, N = cfg.depth, cfg.width, cfg.vocab_size, cfg.seq_len
    counts = {
        "non_embedding": sizes.budget(L, d),
        "biases": 9 * L * d,
        "norms": (4 * L + 2) * d,
        "embeddings": V * d + N * d + (0 if cfg.tied else V * d),
    }
    counts["total"] = sum(counts.values())
    return counts


def count_parameters(model: nnx.Module) -> dict:
    """The same counts as :func:`parameter_counts`, read off the model's parameter tree."""
    counts = {"non_embedding": 0, "biases": 0, "norms": 0, "embeddings": 0}
    for path, value in nnx.to_flat_state(nnx.state(model, nnx.Param)):
        names = [str(p) for p in path]
        if names[0] in ("tok", "pos", "head"):
            kind = "embeddings"
        elif any(n.startswith("ln") for n in names):
            kind = "norms"
        elif names[-1] == "kernel":
            kind = "non_embedding"
        else:
            kind = "biases"
        counts[kind] += int(value.get_value().size)
    counts["total"] = sum(counts.values())
    return counts


def abstract_params(cfg: ModelConfig):
    """``(graphdef, shapes)``: the model's structure and its parameters' shapes, computing nothing."""
    graphdef, state = nnx.split(nnx.eval_shape(lambda: Decoder(cfg, rngs=nnx.Rngs(0))))
    return graphdef, nnx.to_pure_dict(state)


def init_params(cfg: ModelConfig, seed: int = 0):
    """``(graphdef, params)``: the model's structure and its initial parameters as a plain dict,
    created in one compiled computation (much faster than op by op)."""
    return abstract_params(cfg)[0], _init(cfg, jnp.asarray(seed, jnp.uint32))


@partial(jax.jit, static_argnums=0)
def _init(cfg: ModelConfig, seed):
    return nnx.to_pure_dict(nnx.state(Decoder(cfg, rngs=nnx.Rngs(jax.random.key(seed)))))
