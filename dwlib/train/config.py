"""What a training run depends on: the model, the optimiser and the run's own settings.

A :class:`TrainConfig` holds a :class:`ModelConfig` (the network, :mod:`dwlib.train.model`), an
:class:`OptimConfig` (AdamW and its schedule, :mod:`dwlib.train.optim`) and the fields of the run
itself (batch, length, evaluation, seed, corpus, where it is written). On disk and on the
command line a config is one flat mapping (``config.json``): :meth:`TrainConfig.to_dict` and
:meth:`TrainConfig.from_dict` convert, and no field name repeats across the three parts.

:func:`run_key` names a run by what it computes: 12 hex digits of the SHA-256 of the flat
config without the fields that change only where or how fast it runs (``NOT_KEYED``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

from dwlib.core import sizes
from dwlib.errors import InputError, require, shown
from dwlib.train import batches
from dwlib.train import corpora

DTYPES = ("float32", "bfloat16")
OPS = ("plain", "fast")

# Upper limits: far past anything this project trains (its sweeps reach depth 12, width 512), and
# below the sizes that hang (a Python loop over 10^6 blocks, default_heads over a width of 10^9)
# or cannot fit one accelerator. A config past one is refused with the limit in the message.
LIMITS = {"depth": 256, "width": 1 << 16, "heads": 1 << 16, "vocab_size": 1 << 20, "seq_len": 1 << 17,
          "batch_size": 1 << 16, "steps": 10 ** 9, "eval_batches": 10 ** 5, "eval_interval": 10 ** 9,
          "checkpoint_interval": 10 ** 9, "seed": 2 ** 32 - 1, "embedding_rank": 1 << 16}
MAX_PARAMS = 4 * 10 ** 9  # weights, gradients and AdamW's two moments in float32: 64 GB
FLOAT32_MAX = 3.4028234663852886e38
MAX_FLOPS = 10 ** 21  # a training run's total: about a month of one H100 at 400 TFLOP/s


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Shape of the decoder: ``depth`` L blocks of ``width`` d_x with ``heads`` H heads."""

    vocab_size: int = 1000
    seq_len: int = 128
    depth: int = 2
    width: int = 128
    heads: int | None = None  # None: sizes.default_heads(width)
    tied: bool = True
    dtype: str = "float32"
    ops: str = "plain"  # "fast": the same model with hand-written gradients (dwlib.train.fast)
    # None: the plain embedding. An integer r: the input (token plus position) embedding factored
    # through r coordinates, so that its rank is at most r, and the output untied and full rank
    # (dwlib.train.model). Keyed only when set (runs stored before it keep their keys).
    embedding_rank: int | None = None

    def __post_init__(self):
        for name, minimum in (("depth", 1), ("width", 1), ("vocab_size", 2), ("seq_len", 1)):
            _count(name, getattr(self, name), minimum)
        if self.heads is not None:
            _count("heads", self.heads, 1)
        require(self.dtype in DTYPES, f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        require(self.ops in OPS, f"ops must be one of {', '.join(OPS)}, got {self.ops!r}")
        if self.heads is None:
            object.__setattr__(self, "heads", sizes.default_heads(self.width))
        require(self.width % self.heads == 0, f"width {self.width} is not divisible by heads {self.heads}")
        if self.embedding_rank is not None:
            _count("embedding_rank", self.embedding_rank, 1)
            require(self.embedding_rank <= self.width,
                    f"embedding_rank must be at most the width {self.width} (a larger one limits nothing), "
                    f"got {self.embedding_rank}")
            require(self.tied is False, "embedding_rank needs an untied output (tied false): the output layer "
                                        "stays full rank while the input embedding is factored")


@dataclasses.dataclass(frozen=True)
class OptimConfig:
    """The optimiser's settings (plain data; hashable, so that compiled steps can be cached)."""

    lr: float = 2e-3  # peak learning rate
    warmup: float = 0.05  # fraction of the steps spent warming up linearly
    final_lr_ratio: float = 0.1  # cosine decay ends at lr * final_lr_ratio
    weight_decay: float = 0.1
    clip_norm: float = 1.0

    def __post_init__(self):
        for name in ("lr", "warmup", "final_lr_ratio", "weight_decay", "clip_norm"):
            v = getattr(self, name)
            require(isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v),
                    f"{name} must be a finite number, got {shown(v)}")
        require(self.lr > 0, f"lr must be positive, got {self.lr}")
        require(self.lr <= FLOAT32_MAX, f"lr must be at most {FLOAT32_MAX:.4g} (the largest float32, "
                                        f"the precision it is applied in), got {self.lr:g}")
        require(0 <= self.warmup < 1, f"warmup must be a fraction in [0, 1), got {self.warmup}")
        require(0 <= self.final_lr_ratio <= 1, f"final_lr_ratio must be in [0, 1], got {self.final_lr_ratio}")
        require(self.weight_decay >= 0, f"weight_decay must be non-negative, got {self.weight_decay}")
        require(self.clip_norm > 0, f"clip_norm must be positive, got {self.clip_norm}")


# Fields that do not change what a run computes: where it is written, how often it is saved,
# and which implementation of the same model runs it (``ops``: plain or fast).
NOT_KEYED = ("out_dir", "cache_dir", "checkpoint_interval", "ops")
# Fields added after runs were stored: keyed only when not at their default, so that the stored
# runs keep their keys.
KEYED_UNLESS_DEFAULT = {"validation_split": False, "sampling": "random", "final_eval": "sample",
                        "embedding_rank": None}
FINAL_EVALS = ("sample", "whole")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on."""

    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    optim: OptimConfig = dataclasses.field(default_factory=OptimConfig)
    batch_size: int = 16
    steps: int = 1000
    eval_interval: int = 200  # 0: evaluate at the end only
    eval_batches: int = 8
    seed: int = 0
    corpus: str = "sotu"
    # True: a third split, by document, for choices such as the learning rate (every 20th
    # document + 1, :mod:`dwlib.train.corpora`), left out of training; the reported held-out
    # split is the same either way. Keyed only when True (runs stored before it keep their keys).
    validation_split: bool = False
    # How training windows are drawn (:func:`dwlib.train.batches.train_batch`): "random" (anywhere,
    # afresh at every step) or "disjoint" (no token trained on twice within one pass).
    sampling: str = "random"
    # The last evaluation: "sample" reads the same ``eval_batches`` fixed windows as the others;
    # "whole" reads every token of the held-out split (and of the validation split) once.
    final_eval: str = "sample"
    out_dir: str | None = None  # None: keep nothing on disk
    checkpoint_interval: int = 500  # 0: at the end only
    cache_dir: str | None = None  # tokenizer cache; None: $DWLIB_CACHE or ~/.cache/dwlib

    @classmethod
    def from_dict(cls, fields: dict) -> "TrainConfig":
        """A config from flat fields (``config.json``, keyword arguments); InputError on an unknown one."""
        parts = {"model": {}, "optim": {}, "run": {}}
        for name, value in fields.items():
            require(name in _PART, f"unknown training setting {name!r}")
            parts[_PART[name]][name] = value
        return cls(model=ModelConfig(**parts["model"]), optim=OptimConfig(**parts["optim"]), **parts["run"])

    def to_dict(self) -> dict:
        """The flat fields (JSON): the model's, the optimiser's, then the run's."""
        run = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("model", "optim")}
        return {**dataclasses.asdict(self.model), **dataclasses.asdict(self.optim), **run}

    def replace(self, **fields) -> "TrainConfig":
        """A copy with some flat fields changed."""
        return TrainConfig.from_dict({**self.to_dict(), **fields})

    def validate(self) -> "TrainConfig":
        """Raise InputError (one line) on a bad run field or a run too large to train; touches no
        file. (The model's and the optimiser's fields are checked when they are built.)"""
        for name in ("batch_size", "steps", "eval_batches"):
            _count(name, getattr(self, name), 1)
        for name in ("eval_interval", "checkpoint_interval", "seed"):
            _count(name, getattr(self, name), 0)
        require(isinstance(self.validation_split, bool),
                f"validation_split must be true or false, got {shown(self.validation_split)}")
        require(self.sampling in batches.SAMPLINGS,
                f"sampling must be one of {', '.join(batches.SAMPLINGS)}, got {shown(self.sampling)}")
        require(self.final_eval in FINAL_EVALS,
                f"final_eval must be one of {', '.join(FINAL_EVALS)}, got {shown(self.final_eval)}")
        for name in ("corpus", "out_dir", "cache_dir"):
            v = getattr(self, name)
            require(v is None and name != "corpus" or isinstance(v, str) and v.strip() and "\0" not in v,
                    f"{name} must be a non-empty path or name, got {shown(v)}")
        cost = self.cost()
        require(cost["params"] <= MAX_PARAMS,
                f"the model has {cost['params']:.3g} parameters, more than this trainer's limit {MAX_PARAMS:.0e} "
                f"(weights, gradients and optimiser state would need {16 * cost['params'] / 1e9:,.0f} GB)")
        require(cost["flops"] <= MAX_FLOPS,
                f"the run needs about {cost['flops']:.2g} FLOPs ({cost['flops'] / 4e14 / 86400:,.0f} days on one "
                f"accelerator at 400 TFLOP/s), more than this trainer's limit {MAX_FLOPS:.0e}; "
                "fewer --steps or a smaller shape")
        corpora.check_corpus(self.corpus)
        return self

    def cost(self) -> dict:
        """``params`` (embeddings included, :func:`embedding_params`) and ``flops``, the run's total
        training FLOPs (:func:`dwlib.core.sizes.training_flops_per_token` per token, plus 6 r d_x
        for a factored embedding's lift)."""
        m = self.model
        params = sizes.budget(m.depth, m.width) + embedding_params(m)
        tokens = self.steps * self.batch_size * m.seq_len
        per_token = sizes.training_flops_per_token(m.depth, m.width, m.vocab_size, m.seq_len)
        if m.embedding_rank is not None:  # the factored input's r x d_x product, forward and backward
            per_token += 6 * m.embedding_rank * m.width
        return {"params": params, "flops": tokens * per_token}


def embedding_params(m: ModelConfig) -> int:
    """The embeddings' parameters: token (V d_x) and position (N d_x) tables and, untied, the output
    (V d_x); with an embedding rank r, the tables are V r and N r and the r x d_x matrix that lifts
    them to the width is counted with them."""
    V, N, d, r = m.vocab_size, m.seq_len, m.width, m.embedding_rank
    inputs = (V + N) * d if r is None else (V + N) * r + r * d
    return inputs + (0 if m.tied else V * d)


def _count(name: str, value, minimum: int) -> None:
    """InputError unless ``value`` is an integer from ``minimum`` to ``LIMITS[name]``."""
    top = LIMITS.get(name)
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    require(ok and (top is None or value <= top),
            f"{name} must be an integer from {minimum} to {top:,}, got {shown(value)}" if top is not None else
            f"{name} must be an integer of at least {minimum}, got {shown(value)}")


def _finite(v) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an int past float64
        return False


_PART = {**{f.name: "model" for f in dataclasses.fields(ModelConfig)},
         **{f.name: "optim" for f in dataclasses.fields(OptimConfig)},
         **{f.name: "run" for f in dataclasses.fields(TrainConfig) if f.name not in ("model", "optim")}}


def result_fields(fields: dict) -> dict:
    """The flat fields that decide what a run computes."""
    return {k: v for k, v in fields.items()
            if k not in NOT_KEYED and not (k in KEYED_UNLESS_DEFAULT and v == KEYED_UNLESS_DEFAULT[k])}


def run_key(cfg: TrainConfig | dict) -> str:
    """12 hex digits of the SHA-256 of the run's result-relevant config (sorted JSON)."""
    fields = cfg.to_dict() if isinstance(cfg, TrainConfig) else dict(cfg)
    return hashlib.sha256(json.dumps(result_fields(fields), sort_keys=True).encode()).hexdigest()[:12]


def check_same_run(stored: dict, cfg: TrainConfig, where: str) -> None:
    """InputError unless the config stored in a run directory computes the same run as ``cfg``."""
    new, old = result_fields(cfg.to_dict()), result_fields(stored)
    if old != new:
        diff = sorted(k for k in new.keys() | old.keys() if old.get(k) != new.get(k))
        raise InputError(f"output directory {where!r} holds a run with a different config ({', '.join(diff)}); "
                         "use another --out")
