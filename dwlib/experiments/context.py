"""What depth buys beyond the paper: rank collapse and induction heads, computed small.

Two demonstrations for the book's "Context" chapter, both built on dwlib's attention
(:func:`dwlib.core.attention.attend`) and the Transformer pieces of :mod:`dwlib.core.analysed`:

- **Rank collapse** [dong2021attention]: stacking pure softmax self-attention layers drives the
  token representations X (N x d_x) towards a matrix 1 x^T whose rows are all equal.
  :func:`rank_residual` measures the distance to the nearest such matrix, relative to the size of
  X; :func:`collapse_curves` follows it through depth for pure attention, attention followed by
  an MLP, attention with a residual connection, and the full layer of eqs. (1)-(2).
- **Induction heads** [elhage2021mathematical; olsson2022context]: a small attention-only
  decoder trained on sequences [T random tokens, the same T tokens again] can predict the
  repeated half only by composing two heads (one that looks at the previous token, one that
  looks for the position after the previous occurrence of the current token), so two layers
  learn it and one layer does not. :func:`train_induction` trains both; the result ships as
  ``dwlib/data/context_induction.json`` (:func:`load_induction`).

Quoted tables from the survey the chapter follows [survey2024deep] live in
``dwlib/data/context_tables.json`` (:func:`quoted_table`), each with its source key.
"""

from __future__ import annotations

import functools
import json
import math
import time
from importlib import resources
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from dwlib.core.analysed import (check_shape, feed_forward, init_transformer_params, layer_norm, project,
                            self_attention, transformer_layer)
from dwlib.core.attention import weights as attention_weights
from dwlib.errors import require, require_int
from dwlib.store import write_json

# ---------------------------------------------------------------------------------------------
# Rank collapse

VARIANTS = ("pure attention", "attention + MLP", "attention + residual", "paper layer (eqs. 1-2)")


def rank_residual(x) -> np.ndarray:
    """||X - 1 x^T||_F / ||X||_F for the x that minimises it (the mean row): 0 when every
    token has the same representation (rank one of the form 1 x^T), 1 when the rows average
    to zero. ``x``: (..., N, d_x); returns an array of shape (...).

    Dong et al. measure res(X) = X - 1 x^T in a composite l1/l_inf norm; the Frobenius norm
    used here has the mean row as its minimiser, so the measure is exact and cheap.
    """
    x = jnp.asarray(x)
    require(x.ndim >= 2 and x.shape[-2] >= 2, f"x must be (..., N, d_x) with N >= 2, got shape {x.shape}")
    return np.asarray(_residual(x))


def _step(variant: str, weights: dict, x):
    if variant == "pure attention":
        return self_attention(weights, x)
    if variant == "attention + MLP":
        return feed_forward(weights, self_attention(weights, x))
    if variant == "attention + residual":
        return x + self_attention(weights, x)
    # f_Layer of eq. (2) followed by the LayerNorm between layers (section 2.1)
    return layer_norm(transformer_layer(weights, x))


def _residual(x):
    res = x - jnp.mean(x, axis=-2, keepdims=True)
    norm = jnp.sqrt(jnp.sum(x * x, axis=(-2, -1)))
    return jnp.sqrt(jnp.sum(res * res, axis=(-2, -1))) / jnp.where(norm > 0, norm, 1.0)


def collapse_curves(depth: int = 24, width: int = 64, heads: int = 4, n_positions: int = 32,
                    variants=VARIANTS, seed: int = 0) -> list[dict]:
    """Relative rank residual of the token representations after each of ``depth`` layers.

    Random Gaussian tokens (N x d_x, unit variance) pass through ``depth`` layers with random
    weights (:func:`dwlib.core.analysed.init_transformer_params`, the same weights for every
    variant). Returns one record per (variant, layer l = 0..depth) with the residual of
    :func:`rank_residual`; layer 0 is the input. Computed in float64.
    """
    check_shape(depth, width, heads)
    require_int("n_positions", n_positions, 2)
    for v in variants:
        require(v in VARIANTS, f"variant must be one of {VARIANTS}, got {v!r}")
    with jax.enable_x64(True):
        key_w, key_x = jax.random.split(jax.random.PRNGKey(seed))
        params = init_transformer_params(key_w, depth, width, heads, dtype=jnp.float64)
        x0 = jax.random.normal(key_x, (n_positions, width), jnp.float64)
        curves = []
        for variant in variants:
            x, res = x0, [_residual(x0)]
            for weights in params:
                x = _step(variant, weights, x)
                res.append(_residual(x))
            curves.append(np.asarray(jnp.stack(res)))
    rows = [{"variant": v, "layer": l, "residual": float(curves[i][l])}
            for i, v in enumerate(variants) for l in range(depth + 1)]
    for r in rows:
        r.update(width=width, heads=heads)
    return rows


def collapse_grid(depth: int = 16, widths=(16, 32, 64, 128), heads=(1, 2, 4, 8), n_positions: int = 32,
                  seed: int = 0) -> list[dict]:
    """:func:`collapse_curves` over every (width, heads) pair with heads dividing width."""
    rows = []
    for w in widths:
        for h in heads:
            if w % h == 0:
                rows.extend(collapse_curves(depth, w, h, n_positions, seed=seed))
    return rows


COLLAPSE_FILE = "context_collapse.json"
COLLAPSE_GRID = {"depth": 24, "widths": [16, 32, 64, 128], "heads": [1, 2, 4, 8], "n_positions": 32, "seed": 0}


def store_collapse_grid(path: str | Path | None = None) -> Path:
    """Compute :func:`collapse_grid` at :data:`COLLAPSE_GRID` and store it (default: the
    packaged data file the book's chart reads; a minute or so on two CPU cores)."""
    rows = collapse_grid(**{k: tuple(v) if isinstance(v, list) else v for k, v in COLLAPSE_GRID.items()})
    path = Path(path) if path else Path(__file__).resolve().parents[1] / "data" / COLLAPSE_FILE
    for r in rows:
        r["residual"] = float(f"{r['residual']:.4g}")  # four significant digits keep the file small
    return write_json(path, {"settings": COLLAPSE_GRID, "rows": rows}, indent=None)


def load_collapse_grid(path: str | Path | None = None) -> dict:
    """The stored rank-collapse grid: {"settings": ..., "rows": [...]} (see :func:`store_collapse_grid`)."""
    text = Path(path).read_text() if path else resources.files("dwlib").joinpath("data", COLLAPSE_FILE).read_text()
    return json.loads(text)


# ---------------------------------------------------------------------------------------------
# Induction heads: an attention-only decoder on [random tokens, the same tokens again]

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
    W^Q, W^K, W^V, W^O of eq. (1), and an unembedding."""
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
    n = tokens.shape[-1]
    x = params["embed"][tokens] + params["pos"][:n]
    patterns = []
    for weights in params["layers"]:
        if return_patterns:
            q, k, _ = project(weights, x)
            patterns.append(attention_weights(q, k, causal=True))
        x = x + self_attention(weights, x, causal=True)
    logits = x @ params["unembed"]
    return (logits, patterns) if return_patterns else logits


def _repeat_mask(periods, n_positions: int):
    """(batch, N - 1) mask of the predictions inside the repeat: position t (predicting token
    t + 1) with t >= T, where the current token has occurred before, T positions back."""
    t = jnp.arange(n_positions - 1)
    return t[None, :] >= periods[:, None]


def repeated_half_loss(params: dict, tokens, periods):
    """Mean next-token cross-entropy (nats) over the predictions inside the repeated part:
    positions t >= T predicting token t + 1, which the first period has already shown."""
    logits = attention_only_forward(params, tokens)[..., :-1, :]
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, tokens[..., 1:, None], axis=-1)[..., 0]
    mask = _repeat_mask(periods, tokens.shape[-1])
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
    import optax

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


INDUCTION_FILE = "context_induction.json"


def save_induction(result: dict, path: str | Path | None = None) -> Path:
    """Write a :func:`train_induction` result (default: the packaged data file)."""
    path = Path(path) if path else Path(__file__).resolve().parents[1] / "data" / INDUCTION_FILE
    return write_json(path, result, indent=1)


def load_induction(path: str | Path | None = None) -> dict:
    """The stored :func:`train_induction` result (the packaged one unless ``path`` is given)."""
    if path:
        return json.loads(Path(path).read_text())
    return json.loads(resources.files("dwlib").joinpath("data", INDUCTION_FILE).read_text())


# ---------------------------------------------------------------------------------------------
# Tables quoted from other papers (via the survey), as data with their sources

def quoted_table(name: str):
    """A table quoted in the survey [survey2024deep], as a DataFrame with ``.attrs["source"]``
    (the BibTeX key of the paper it comes from) and ``.attrs["caption"]``."""
    import pandas as pd

    tables = json.loads(resources.files("dwlib").joinpath("data", "context_tables.json").read_text())
    require(name in tables, f"no quoted table {name!r}; known: {sorted(tables)}")
    t = tables[name]
    df = pd.DataFrame(t["rows"], columns=t["columns"])
    df.attrs.update(source=t["source"], caption=t["caption"])
    return df


# ---------------------------------------------------------------------------------------------
# Charts (Altair; drawn offline by dwlib.viz.render' renderer)

def collapse_chart(rows, width: int = 64, heads: int = 4, floor: float = 1e-17):
    """The rank residual through depth for every variant, with two sliders bound to
    log2(width) and log2(heads) that pick one (d_x, H) of the stored grid: interactive in the
    static book. Residuals at or below ``floor`` (exact zeros) are not drawn."""
    import altair as alt
    import pandas as pd

    from dwlib.viz.render import slider

    df = pd.DataFrame(rows)
    df = df[df["residual"] > floor]
    widths, heads_ = sorted(df["width"].unique()), sorted(df["heads"].unique())
    require(width in widths and heads in heads_, f"(width, heads) = ({width}, {heads}) is not in the grid")
    lw = slider("log2_width", math.log2(widths[0]), math.log2(widths[-1]), 1, math.log2(width), label="log2 width d_x")
    lh = slider("log2_heads", math.log2(heads_[0]), math.log2(heads_[-1]), 1, math.log2(heads), label="log2 heads H")
    shown = alt.Chart(df).transform_filter(
        f"datum.width == pow(2, {lw.name}) && datum.heads == pow(2, {lh.name})")
    x = alt.X("layer:Q", title="layer l", scale=alt.Scale(domain=[0, int(df["layer"].max())]))
    y = alt.Y("residual:Q", title="||X - 1 x^T|| / ||X||", scale=alt.Scale(type="log", domain=[floor, 2]),
              axis=alt.Axis(format=".0e"))
    color = alt.Color("variant:N", sort=list(VARIANTS), title=None, legend=alt.Legend(orient="bottom", columns=2))
    lines = shown.mark_line(point=True).encode(
        x=x, y=y, color=color,
        tooltip=["variant:N", "layer:Q", alt.Tooltip("residual:Q", format=".2e"), "width:Q", "heads:Q"])
    label = (alt.Chart(pd.DataFrame({"i": [0]}))
             .transform_calculate(text=f"'d_x = ' + pow(2, {lw.name}) + ',  H = ' + pow(2, {lh.name})")
             .mark_text(align="right", x=540, y=10, fontSize=13, fontWeight="bold").encode(text="text:N"))
    return alt.layer(lines, label).add_params(lw, lh).properties(width=560, height=300)


def induction_loss_chart(result: dict):
    """Loss on the repeated part (held-out batch) against training step, one line per depth,
    with the chance level log(vocab) dashed."""
    import altair as alt
    import pandas as pd

    df = pd.DataFrame([{"layers": f"{r['depth']} layer" + ("s" if r["depth"] > 1 else ""), **p}
                       for r in result["runs"] for p in r["curve"]])
    lines = alt.Chart(df).mark_line().encode(
        x=alt.X("step:Q", title="training step"), y=alt.Y("loss:Q", title="loss on the repeat (nats)"),
        color=alt.Color("layers:N", title=None), tooltip=["layers:N", "step:Q", alt.Tooltip("loss:Q", format=".3f")])
    chance = alt.Chart(pd.DataFrame({"loss": [result["chance_loss"]], "text": ["chance: log(vocab)"]}))
    rule = chance.mark_rule(strokeDash=[4, 3], color="#777").encode(y="loss:Q")
    note = chance.mark_text(align="right", x=430, dy=-6, color="#555").encode(y="loss:Q", text="text:N")
    return alt.layer(lines, rule, note).properties(width=440, height=260)


def attention_heatmap(result: dict):
    """The attention weights of each run's best induction-scoring last-layer head on one
    sequence [s, s] (query position down, key position across), side by side."""
    import altair as alt
    import pandas as pd

    charts = []
    for r in result["runs"]:
        p = np.array(r["example"]["pattern"])
        n = p.shape[0]
        df = pd.DataFrame([{"query": i, "key": j, "weight": float(p[i, j])} for i in range(n) for j in range(i + 1)])
        h = r["induction_head"]
        title = f"{r['depth']} layer{'s' if r['depth'] > 1 else ''}: layer {h['layer']}, head {h['head']}"
        charts.append(alt.Chart(df, title=title).mark_rect().encode(
            x=alt.X("key:O", title="key position j", axis=alt.Axis(values=list(range(0, n, 5)))),
            y=alt.Y("query:O", title="query position t", axis=alt.Axis(values=list(range(0, n, 5)))),
            color=alt.Color("weight:Q", scale=alt.Scale(scheme="greys", domain=[0, 1]), title="weight"),
            tooltip=["query:O", "key:O", alt.Tooltip("weight:Q", format=".3f")]).properties(width=260, height=260))
    return alt.hconcat(*charts)


def wide_deep_chart(table):
    """Brown et al.'s accuracies (wide against deep) per attention type and task: points above
    the diagonal are tasks where the single wide layer did better."""
    import altair as alt
    import pandas as pd

    df = table[(table["attention"] != "Average") & (table["task"] != "Average")]
    lo, hi = float(min(df["deep"].min(), df["wide"].min())) - 2, float(max(df["deep"].max(), df["wide"].max())) + 2
    scale = alt.Scale(domain=[lo, hi], zero=False)
    pts = alt.Chart(df).mark_point(filled=True, size=60).encode(
        x=alt.X("deep:Q", scale=scale, title="deep (8 layers): accuracy %"),
        y=alt.Y("wide:Q", scale=scale, title="wide (1 layer): accuracy %"),
        color=alt.Color("task:N", title=None), shape="task:N",
        tooltip=["attention:N", "task:N", "deep:Q", "wide:Q"])
    diag = alt.Chart(pd.DataFrame({"deep": [lo, hi], "wide": [lo, hi]})).mark_line(
        color="#999", strokeDash=[4, 3]).encode(x=alt.X("deep:Q", scale=scale), y=alt.Y("wide:Q", scale=scale))
    return alt.layer(diag, pts).properties(width=340, height=340)


__all__ = ["VARIANTS", "INDUCTION_DEFAULTS", "attention_only_forward", "collapse_curves", "collapse_grid",
           "induction_scores", "init_attention_only", "load_induction", "quoted_table", "rank_residual",
           "repeated_batch", "repeated_half_loss", "save_induction", "train_induction", "store_collapse_grid",
           "load_collapse_grid", "repeat_example", "collapse_chart", "induction_loss_chart", "attention_heatmap",
           "wide_deep_chart"]
