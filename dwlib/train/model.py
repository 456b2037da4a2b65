"""The decoder-only self-attention language model of the paper's experiments (section 5).

A GPT-style decoder, written to be read in one sitting:

    x = E[tokens] + P[positions]                      token and learned position embeddings
    repeat L (= depth) times:                         pre-LayerNorm blocks, eqs. (1)-(2) of the paper
        x = x + W^O attend(LN(x) W^Q, LN(x) W^K, LN(x) W^V, causal)    H heads of size d_x / H
        x = x + W_2 GELU(W_1 LN(x))                   MLP of width 4 d_x (exact GELU, erf)
    logits = LN(x) E^T                                output tied to the token embedding (optionally untied)

Each block holds 12 d_x^2 weights in matrices (3 d_x^2 for Q, K, V, d_x^2 for the output
projection, 8 d_x^2 for the MLP), so the network has ``12 L d_x^2`` non-embedding parameters,
the size measure of the paper (section 5, following Kaplan et al. 2020); biases and
LayerNorm gains are counted separately by :func:`parameter_counts`.

Head count: ``heads=None`` picks :func:`default_heads` (head size 64 where the width allows).
Compute dtype: ``dtype="bfloat16"`` runs matrix products and activations in bfloat16 while
parameters, LayerNorm statistics, softmax and the loss stay in float32.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import jax
import jax.numpy as jnp
from flax import nnx

from dwlib.core.attention import attend, einsum_f32, preferred_layout
from dwlib.errors import require

DTYPES = ("float32", "bfloat16")


def default_heads(width: int) -> int:
    """The head count used when none is given.

    Head size 64 (``width // 64`` heads) when the width is a positive multiple of 64, as in
    GPT-2 and in the paper's experiments; otherwise the largest head count ``h <= width / 16``
    that divides the width (head size at least 16), and at least 1.
    """
    require(width >= 1, f"width must be at least 1, got {width}")
    if width >= 64 and width % 64 == 0:
        return width // 64
    for h in range(max(1, width // 16), 0, -1):
        if width % h == 0:
            return h
    return 1


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Shape of the decoder: ``depth`` L blocks of ``width`` d_x with ``heads`` H heads."""

    vocab_size: int = 1000
    seq_len: int = 128
    depth: int = 2
    width: int = 128
    heads: int | None = None  # None: default_heads(width)
    tied: bool = True
    dtype: str = "float32"

    def __post_init__(self):
        require(isinstance(self.depth, int) and self.depth >= 1, f"depth must be at least 1, got {self.depth}")
        require(isinstance(self.width, int) and self.width >= 1, f"width must be at least 1, got {self.width}")
        require(self.vocab_size >= 2, f"vocab_size must be at least 2, got {self.vocab_size}")
        require(self.seq_len >= 1, f"seq_len must be at least 1, got {self.seq_len}")
        require(self.dtype in DTYPES, f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.heads is None:
            object.__setattr__(self, "heads", default_heads(self.width))
        require(self.heads >= 1, f"heads must be at least 1, got {self.heads}")
        require(self.width % self.heads == 0,
                f"width {self.width} is not divisible by heads {self.heads}")


def parameter_counts(cfg: ModelConfig) -> dict:
    """Parameter counts by kind, from the formula (tested against the real parameter tree).

    ``non_embedding`` is the paper's size measure, the block matrices only: 12 L d_x^2.
    ``biases``: 9 d_x per block (QKV 3 d_x, output d_x, MLP 4 d_x + d_x).
    ``norms``: LayerNorm gains and offsets, 2 per block and a final one: (4 L + 2) d_x.
    ``embeddings``: token (V d_x) and position (N d_x) tables, plus V d_x for an untied output.
    """
    L, d, V, N = cfg.depth, cfg.width, cfg.vocab_size, cfg.seq_len
    counts = {
        "non_embedding": 12 * L * d * d,
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
        size = int(value.get_value().size) if hasattr(value, "get_value") else int(value.value.size)
        if names[0] in ("tok", "pos", "head"):
            kind = "embeddings"
        elif any(n.startswith("ln") for n in names):
            kind = "norms"
        elif names[-1] == "kernel":
            kind = "non_embedding"
        else:
            kind = "biases"
        counts[kind] += size
    counts["total"] = sum(counts.values())
    return counts


@partial(jax.custom_vjp, nondiff_argnums=(3,))
def layer_norm(x, scale, bias, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * scale + bias over the last axis, statistics in float32.

    The gradient is written by hand (one pass over x: dx = r (g - mean(g) - x^ mean(g x^)) with
    g = dy * scale): on CPU it measured faster than JAX's derivative of the forward pass.
    """
    return _layer_norm_fwd(x, scale, bias, eps)[0]


def _layer_norm_fwd(x, scale, bias, eps=1e-5):
    x32 = x.astype(jnp.float32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    xc = x32 - mean
    rstd = jax.lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + eps)
    xhat = xc * rstd
    return (xhat * scale + bias).astype(x.dtype), (xhat, rstd, scale)


def _layer_norm_bwd(eps, res, dy):
    xhat, rstd, scale = res
    dtype, dy = dy.dtype, dy.astype(jnp.float32)
    g = dy * scale
    dx = rstd * (g - jnp.mean(g, axis=-1, keepdims=True) - xhat * jnp.mean(g * xhat, axis=-1, keepdims=True))
    axes = tuple(range(dy.ndim - 1))
    return dx.astype(dtype), jnp.sum(dy * xhat, axis=axes), jnp.sum(dy, axis=axes)


layer_norm.defvjp(_layer_norm_fwd, _layer_norm_bwd)


class LayerNorm(nnx.Module):
    """LayerNorm over the last axis with gain and offset (eps 1e-5, as in PyTorch)."""

    def __init__(self, width: int, eps: float = 1e-5):
        self.scale = nnx.Param(jnp.ones((width,), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((width,), jnp.float32))
        self.eps = eps

    def __call__(self, x):
        return layer_norm(x, self.scale[...], self.bias[...], self.eps)


def _loss_and_probs(logits, targets):
    """Mean over positions of logsumexp(logits) - logits[target] (the target logit gathered,
    not selected with a one-hot mask over the vocabulary), and softmax(logits)."""
    m = jnp.max(logits, axis=-1, keepdims=True)
    e = jnp.exp(logits - m)
    z = jnp.sum(e, axis=-1, keepdims=True)
    target_logit = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jnp.log(z[..., 0]) + m[..., 0] - target_logit), e / z


def _dlogits(p, targets, g):
    """Gradient of the mean loss with respect to the logits: (softmax - onehot(target)) g / n."""
    n = p.size // p.shape[-1]
    onehot = targets[..., None] == jnp.arange(p.shape[-1], dtype=targets.dtype)
    return jnp.where(onehot, p - 1.0, p) * (g / n)


@jax.custom_vjp
def cross_entropy(logits, targets):
    """Mean over positions of logsumexp(logits) - logits[target], in float32.

    Hand-written gradient, (softmax(logits) - onehot(target)) / n: no scatter, one pass.
    """
    return _cross_entropy_fwd(logits, targets)[0]


def _cross_entropy_fwd(logits, targets):
    loss, p = _loss_and_probs(logits.astype(jnp.float32), targets)
    return loss, (p, targets)


cross_entropy.defvjp(_cross_entropy_fwd, lambda res, g: (_dlogits(*res, g), None))


@jax.custom_vjp
def unembed_cross_entropy(h, w, targets):
    """``cross_entropy(h w^T, targets)`` for hidden states h (..., d) and output matrix w (V, d),
    the logits in float32, as one function with a hand-written gradient.

    Same value and gradient as the two steps apart, cheaper on CPU (measured: about 4% of a
    (2, 128, 2) training step, against a cross-entropy that then selected the target logit with a
    one-hot mask): dw = (h^T dlogits)^T transposes the (..., d) states rather than the (..., V)
    logits.
    """
    return _unembed_ce_fwd(h, w, targets)[0]


def _logits(h, w):
    """h w^T for hidden states h (..., d) and output matrix w (V, d), accumulated in float32."""
    return einsum_f32("...d,vd->...v", h, w.astype(h.dtype))


def _unembed_ce_fwd(h, w, targets):
    loss, p = _loss_and_probs(_logits(h, w), targets)
    return loss, (h, w, targets, p)


def _unembed_ce_bwd(res, g):
    h, w, targets, p = res
    dlogits = _dlogits(p, targets, g).astype(h.dtype)
    dh = jnp.einsum("...v,vd->...d", dlogits, w.astype(h.dtype))
    dw = einsum_f32("...d,...v->dv", h, dlogits).T
    return dh, dw.astype(w.dtype), None


unembed_cross_entropy.defvjp(_unembed_ce_fwd, _unembed_ce_bwd)


@jax.custom_vjp
def dense(x, kernel, bias):
    """x @ kernel + bias over the last axis (``nnx.Linear``'s computation), with a hand-written
    gradient that forms the kernel's gradient by transposing the smaller operand: the XLA CPU
    matrix product transposes its left operand, so dW = x^T dy when x is the narrower one
    and (dy^T x)^T otherwise (the MLP's output projection, 4 d_x -> d_x). Measured: a (6, 512, 8)
    training step 3.2% faster than with ``nnx.Linear`` and autodiff ((6, 256, 4): 0.4%)."""
    return _dense(x, kernel, bias)


def _dense(x, kernel, bias):
    return jnp.einsum("...i,io->...o", x, kernel) + bias


def _dense_bwd(res, dy):
    x, kernel = res
    dx = jnp.einsum("...o,io->...i", dy, kernel)
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    if x.shape[-1] <= dy.shape[-1]:
        dk = jnp.einsum("ti,to->io", x2, dy2)
    else:
        dk = jnp.einsum("to,ti->oi", dy2, x2).T
    return dx, dk, jnp.sum(dy2, axis=0)


dense.defvjp(lambda x, kernel, bias: (_dense(x, kernel, bias), (x, kernel)), _dense_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def qkv_heads(x, kernel, bias, heads: int, layout: str = "HND"):
    """Queries, keys and values split into heads: ``dense(x, kernel, bias)`` for x (B, N, d) and
    kernel (d, 3d) = [W^Q W^K W^V], returned as one (3, B, H, N, d / H) array (``layout="HND"``,
    head-major) or (3, B, N, H, d / H) ("NHD", the layout of GPU fused attention).

    One transposed copy of the (B, N, 3d) product, instead of a split and a copy of each of q,
    k, v; the gradient stacks dq, dk, dv back into (B, N, 3d) in one pass (no separate
    concatenation) and reuses :func:`dense`'s gradient. Measured on 2 CPU cores, with attention
    in the same layout: a (6, 256, 4) training step about 2.5% faster than splitting q, k, v
    (interleaved runs, 1072 against 1100 ms).
    """
    return _qkv_heads(x, kernel, bias, heads, layout)


_QKV_AXES = {"HND": (2, 0, 3, 1, 4), "NHD": (2, 0, 1, 3, 4)}  # (B, N, 3, H, d_a) -> (3, B, ...)
_QKV_BACK = {k: tuple(sorted(range(5), key=axes.__getitem__)) for k, axes in _QKV_AXES.items()}  # the inverses


def _qkv_heads(x, kernel, bias, heads, layout):
    B, N, d = x.shape
    y = _dense(x, kernel, bias).reshape(B, N, 3, heads, d // heads)
    return jnp.transpose(y, _QKV_AXES[layout])


def _qkv_heads_bwd(heads, layout, res, dqkv):
    x = res[0]
    B, N, d = x.shape
    return _dense_bwd(res, jnp.transpose(dqkv, _QKV_BACK[layout]).reshape(B, N, 3 * d))


qkv_heads.defvjp(lambda x, kernel, bias, heads, layout: (_qkv_heads(x, kernel, bias, heads, layout), (x, kernel)),
                 _qkv_heads_bwd)


def _operands(layer: nnx.Linear, x):
    """(x, kernel, bias) of ``layer`` applied to x, all in the layer's compute dtype (nnx.Linear's rule)."""
    dtype = layer.dtype or x.dtype
    return x.astype(dtype), layer.kernel[...].astype(dtype), layer.bias[...].astype(dtype)


def _linear(layer: nnx.Linear, x):
    """``layer(x)`` through :func:`dense`."""
    return dense(*_operands(layer, x))


@jax.custom_vjp
def gelu(x):
    """The exact GELU, x Phi(x) with Phi the standard normal CDF (PyTorch's default ``F.gelu``;
    ``jax.nn.gelu`` defaults to the tanh approximation).

    Hand-written gradient, Phi(x) + x phi(x), recomputed from x alone: on CPU a training step
    with it measured as fast as with ``jax.nn.gelu``'s tanh approximation and autodiff, and
    faster than autodiff of ``jax.nn.gelu(x, approximate=False)``.
    """
    return x * _normal_cdf(x)


def _normal_cdf(x):
    return 0.5 + 0.5 * jax.lax.erf(x * (1 / math.sqrt(2)))


def _gelu_bwd(x, dy):
    pdf = jnp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
    return (dy * (_normal_cdf(x) + x * pdf),)


gelu.defvjp(lambda x: (gelu(x), x), _gelu_bwd)


class Block(nnx.Module):
    """One pre-LayerNorm Transformer block: causal multi-head self-attention, then the MLP."""

    def __init__(self, cfg: ModelConfig, rngs: nnx.Rngs):
        d, dtype = cfg.width, jnp.dtype(cfg.dtype)
        init = nnx.initializers.normal(0.02)
        # GPT-2: residual projections scaled down by sqrt(2 L) so the residual stream stays O(1).
        out_init = nnx.initializers.normal(0.02 / math.sqrt(2 * cfg.depth))
        linear = lambda i, o, k: nnx.Linear(i, o, kernel_init=k, dtype=dtype, rngs=rngs)  # noqa: E731
        self.heads = cfg.heads
        self.ln1 = LayerNorm(d)
        self.qkv = linear(d, 3 * d, init)  # W^Q, W^K, W^V side by side
        self.proj = linear(d, d, out_init)  # W^O
        self.ln2 = LayerNorm(d)
        self.fc = linear(d, 4 * d, init)
        self.out = linear(4 * d, d, out_init)

    def __call__(self, x):
        B, N, d = x.shape
        x_, kernel, bias = _operands(self.qkv, self.ln1(x))
        layout = preferred_layout(x_.dtype, d // self.heads)  # head-major, or GPU fused attention's
        q, k, v = qkv_heads(x_, kernel, bias, self.heads, layout)
        a = attend(q, k, v, causal=True, layout=layout)
        if layout == "HND":
            a = jnp.transpose(a, (0, 2, 1, 3))
        x = x + _linear(self.proj, a.reshape(B, N, d))
        return x + _linear(self.out, gelu(_linear(self.fc, self.ln2(x))))


class Decoder(nnx.Module):
    """Decoder-only language model: ``Decoder(cfg, rngs=nnx.Rngs(seed))(tokens) -> logits``."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        init = nnx.initializers.normal(0.02)
        self.tok = nnx.Embed(cfg.vocab_size, cfg.width, embedding_init=init, rngs=rngs)
        self.pos = nnx.Embed(cfg.seq_len, cfg.width, embedding_init=init, rngs=rngs)
        self.blocks = nnx.List([Block(cfg, rngs) for _ in range(cfg.depth)])
        self.ln_f = LayerNorm(cfg.width)
        if not cfg.tied:
            self.head = nnx.Linear(cfg.width, cfg.vocab_size, use_bias=False, kernel_init=init, rngs=rngs)

    def features(self, tokens):
        """Final hidden states (B, N, d_x) after the last LayerNorm."""
        N = tokens.shape[-1]
        x = self.tok.embedding[...][tokens] + self.pos.embedding[...][:N]
        x = x.astype(self.cfg.dtype)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x)

    def output_matrix(self):
        """The (V, d_x) matrix the logits are read out with: the token embedding when tied."""
        return self.tok.embedding[...] if self.cfg.tied else self.head.kernel[...].T

    def unembed(self, h):
        return _logits(h, self.output_matrix())

    def __call__(self, tokens):
        """Logits (B, N, V) in float32."""
        return self.unembed(self.features(tokens))

    def loss(self, tokens, targets):
        """Mean next-token cross-entropy in nats: logsumexp over the vocabulary minus the target logit."""
        return unembed_cross_entropy(self.features(tokens), self.output_matrix(), targets.astype(jnp.int32))


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


def loss_fn(graphdef, params, batch):
    """Mean next-token loss of ``batch`` (B, N + 1) token ids under ``params``."""
    return nnx.merge(graphdef, params).loss(batch[:, :-1], batch[:, 1:])
