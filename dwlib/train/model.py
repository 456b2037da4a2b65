"""The decoder-only self-attention language model of the paper's experiments (section 5).

A GPT-style decoder in plain Flax NNX, written to be read in one sitting:

    x = E[tokens] + P[positions]                      token and learned position embeddings
    repeat L (= depth) times:                         pre-LayerNorm blocks, eqs. (1)-(2) of the paper
        x = x + W^O attend(LN(x) W^Q, LN(x) W^K, LN(x) W^V, causal)    H heads of size d_x / H
        x = x + W_2 GELU(W_1 LN(x))                   MLP of width 4 d_x (exact GELU, erf)
    logits = LN(x) E^T                                output tied to the token embedding (optionally untied)

With an embedding rank r (``embedding_rank``, for the vocabulary bottleneck of Wies et al. 2021),
the input is factored through r coordinates and the output is untied (a full-rank V x d_x matrix):

    x = (E_r[tokens] + P_r[positions]) A              E_r: V x r, P_r: N x r, A: r x d_x

The positions are added before the lift A, in the same r coordinates, so that every input vector
(any token at any position) lies in the r-dimensional row space of A: the input's rank is at most
r. Learned positions added after the lift, in d_x coordinates, would raise it towards r + N, and
dropping positions would change the network beside the rank; this keeps the plain model's form.
At r = d_x with A the identity it is the plain untied model, which is the full-rank member of
the comparison (``embedding_rank=None, tied=False``). A starts as N(0, 1/r) entries, so that the
lifted input has the plain embedding's scale (entries of standard deviation 0.02). E_r, P_r and
A are created after every other parameter, so that, seed for seed, the blocks and the output start
exactly as in the plain untied model.

Each block holds 12 d_x^2 weights in matrices (3 d_x^2 for Q, K, V, d_x^2 for the output
projection, 8 d_x^2 for the MLP), so the network has ``12 L d_x^2`` non-embedding parameters,
the size measure of the paper (:func:`dwlib.core.sizes.budget`); biases and LayerNorm gains are
counted separately by :func:`parameter_counts`.

Head count: ``heads=None`` picks :func:`dwlib.core.sizes.default_heads` (head size 64 where the
width allows). Compute dtype: ``dtype="bfloat16"`` runs matrix products and activations in
bfloat16 while parameters, LayerNorm statistics, softmax and the loss stay in float32.
The operations the blocks are computed with (LayerNorm, the dense layers, self-attention,
GELU and the output's cross-entropy) are an injected choice, :class:`Ops`: :data:`PLAIN`, below,
is what JAX differentiates; :data:`dwlib.train.fast.OPS` computes the same functions with
hand-written gradients and, on GPUs, fused attention, over the same parameters. This file never
imports the fast operations; the training step passes them in (``ops="fast"`` in the config,
:func:`dwlib.train.step.loss_fn`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from dwlib.core import sizes
from dwlib.core.analysed import layer_norm
from dwlib.core.attention import attend
from dwlib.train.config import ModelConfig, embedding_params  # plain data, beside the run's other settings


@dataclasses.dataclass(frozen=True)
class Ops:
    """The operations a block and the output are computed with; each takes and returns arrays."""

    layer_norm: Callable  # (x, scale, bias, eps) -> LayerNorm over the last axis, statistics in float32
    dense: Callable  # (x, kernel, bias) -> x @ kernel + bias over the last axis
    self_attention: Callable  # (x, kernel, bias, heads) -> causal attention of Q, K, V = dense(x, ...), (B, N, d)
    gelu: Callable  # x -> x Phi(x), the exact GELU
    unembed_loss: Callable  # (h, w, targets) -> mean cross-entropy of the float32 logits h w^T


def _layer_norm(x, scale, bias, eps):
    return (layer_norm(x.astype(jnp.float32), eps) * scale + bias).astype(x.dtype)


def _dense(x, kernel, bias):
    return jnp.einsum("...i,io->...o", x, kernel) + bias


def _self_attention(x, kernel, bias, heads):
    B, N, d = x.shape
    q, k, v = jnp.split(_dense(x, kernel, bias), 3, axis=-1)

    def split_heads(t):  # (B, N, d) -> (B, N, H, d / H)
        return t.reshape(B, N, heads, d // heads)

    return attend(split_heads(q), split_heads(k), split_heads(v), causal=True).reshape(B, N, d)


def _unembed_loss(h, w, targets):
    logits = jnp.einsum("...d,vd->...v", h.astype(jnp.float32), w.astype(jnp.float32))
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


PLAIN = Ops(layer_norm=_layer_norm, dense=_dense, self_attention=_self_attention,
            gelu=partial(jax.nn.gelu, approximate=False), unembed_loss=_unembed_loss)


class LayerNorm(nnx.Module):
    """LayerNorm's gain and offset over the last axis (eps 1e-5, as in PyTorch)."""

    def __init__(self, width: int, eps: float = 1e-5):
        self.scale = nnx.Param(jnp.ones((width,), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((width,), jnp.float32))
        self.eps = eps

    def __call__(self, x, ops: Ops = PLAIN):
        return ops.layer_norm(x, self.scale[...], self.bias[...], self.eps)


def operands(layer: nnx.Linear, x) -> tuple:
    """(x, kernel, bias) of an ``nnx.Linear`` applied to x, in the layer's compute dtype."""
    dtype = layer.dtype or x.dtype
    return x.astype(dtype), layer.kernel[...].astype(dtype), layer.bias[...].astype(dtype)


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

    def __call__(self, x, ops: Ops = PLAIN):
        a = ops.self_attention(*operands(self.qkv, self.ln1(x, ops)), self.heads)
        x = x + ops.dense(*operands(self.proj, a))
        h = ops.gelu(ops.dense(*operands(self.fc, self.ln2(x, ops))))
        return x + ops.dense(*operands(self.out, h))


class Decoder(nnx.Module):
    """Decoder-only language model:
    ``Decoder(cfg, rngs=nnx.Rngs(seed))(tokens) -> logits``."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        init = nnx.initializers.normal(0.02)
        r = cfg.embedding_rank
        if r is None:
            self.tok = nnx.Embed(cfg.vocab_size, cfg.width, embedding_init=init,
                                 rngs=rngs)
            self.pos = nnx.Embed(cfg.seq_len, cfg.width, embedding_init=init,
                                 rngs=rngs)
        else:  # the blocks and the output draw the keys the plain model's draw (see the module's docstring)
            tok_key, pos_key = rngs.params(), rngs.params()
        self.blocks = nnx.List([Block(cfg, rngs) for _ in range(cfg.depth)])
        self.ln_f = LayerNorm(cfg.width)
        if not cfg.tied:
            self.head = nnx.Linear(cfg.width, cfg.vocab_size,
                                   use_bias=False, kernel_init=init,
                                   rngs=rngs)
        if r is not None:
            self.tok = nnx.Embed(cfg.vocab_size, r, embedding_init=init, rngs=nnx.Rngs(params=tok_key))
            self.pos = nnx.Embed(cfg.seq_len, r, embedding_init=init, rngs=nnx.Rngs(params=pos_key))
            self.lift = nnx.Param(nnx.initializers.normal(1 / math.sqrt(r))(rngs.params(), (r, cfg.width)))

    def embed(self, tokens):
        """The input (B, N, d_x) of the first block, in float32, for token ids (B, N): token plus
        position embedding, lifted from r coordinates to the width when the rank is limited."""
        x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[-1]))
        return x if self.cfg.embedding_rank is None else x @ self.lift[...]

    def input_matrix(self):
        """The (V N, d_x) matrix of every input vector (token v at position i in row i V + v): its
        rank is at most r with an embedding rank r."""
        t, p = self.tok.embedding[...], self.pos.embedding[...]
        x = (p[:, None, :] + t[None, :, :]).reshape(-1, t.shape[-1])
        return x if self.cfg.embedding_rank is None else x @ self.lift[...]

    def features(self, tokens, ops: Ops = PLAIN):
        """Final hidden states (B, N, d_x) after the last LayerNorm, for token ids (B, N)."""
        x = self.embed(tokens).astype(self.cfg.dtype)
        for block in self.blocks:
            x = block(x, ops)
        return self.ln_f(x, ops)

    def output_matrix(self):
        """The (V, d_x) matrix the logits are read out with: the token embedding when tied."""
        return self.tok.embedding[...] if self.cfg.tied else self.head.kernel[...].T

    def __call__(self, tokens, ops: Ops = PLAIN):
        """Logits (B, N, V) in float32 for token ids (B, N)."""
        h = self.features(tokens, ops)
        return jnp.einsum("...d,vd->...v", h.astype(jnp.float32), self.output_matrix().astype(jnp.float32))

    def loss(self, tokens, targets, ops: Ops = PLAIN):
        """Mean next-token cross-entropy in nats."""
        return ops.unembed_loss(self.features(tokens, ops), self.output_matrix(), targets.astype(jnp.int32))


def parameter_counts(cfg: ModelConfig) -> dict:
    """Parameter counts by kind, from the formula (tested against the real parameter tree).

    ``non_embedding`` is the paper's size measure, the block matrices only: 12 L d_x^2.
    ``biases``: 9 d_x per block (QKV 3 d_x, output d_x, MLP 4 d_x + d_x).
    ``norms``: LayerNorm gains and offsets, 2 per block and a final one: (4 L + 2) d_x.
    ``embeddings``: token (V d_x) and position (N d_x) tables, plus V d_x for an untied output;
    with an embedding rank r, the tables are V r and N r, and the r x d_x lift and the untied
    output (V d_x) are embeddings too, never part of the non-embedding size
    (:func:`dwlib.train.config.embedding_params`).
    """
    L, d = cfg.depth, cfg.width
    counts = {
        "non_embedding": sizes.budget(L, d),
        "biases": 9 * L * d,
        "norms": (4 * L + 2) * d,
        "embeddings": embedding_params(cfg),
    }
    counts["total"] = sum(counts.values())
    return counts


def count_parameters(model: nnx.Module) -> dict:
    """The same counts as :func:`parameter_counts`, read off the model's parameter tree."""
    counts = {"non_embedding": 0, "biases": 0, "norms": 0, "embeddings": 0}
    for path, value in nnx.to_flat_state(nnx.state(model, nnx.Param)):
        names = [str(p) for p in path]
        if names[0] in ("tok", "pos", "head", "lift"):
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
