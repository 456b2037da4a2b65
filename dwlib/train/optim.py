"""The optimiser of every run: AdamW with warm-up, cosine decay and gradient clipping.

AdamW (b1 = 0.9, b2 = 0.95; weight decay on matrices only), a linear warm-up over the first
``warmup`` fraction of the steps, then cosine decay to ``final_lr_ratio`` of the peak, and
global-norm clipping of the gradient at ``clip_norm``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import optax

from dwlib.errors import require


@dataclasses.dataclass(frozen=True)
class OptimConfig:
    """The optimiser's settings (plain data; hashable, so that compiled steps can be cached)."""

    lr: float = 2e-3  # peak learning rate
    warmup: float = 0.05  # fraction of the steps spent warming up linearly
    final_lr_ratio: float = 0.1  # cosine decay ends at lr * final_lr_ratio
    weight_decay: float = 0.1
    clip_norm: float = 1.0

    def __post_init__(self):
        require(isinstance(self.lr, (int, float)) and self.lr > 0 and math.isfinite(self.lr),
                f"lr must be positive, got {self.lr}")
        require(0 <= self.warmup < 1, f"warmup must be a fraction in [0, 1), got {self.warmup}")
        require(0 <= self.final_lr_ratio <= 1, f"final_lr_ratio must be in [0, 1], got {self.final_lr_ratio}")
        require(self.weight_decay >= 0, f"weight_decay must be non-negative, got {self.weight_decay}")
        require(self.clip_norm > 0, f"clip_norm must be positive, got {self.clip_norm}")


def schedule(opt: OptimConfig, steps: int):
    """The learning rate at each step: linear warm-up, then cosine decay to a fraction of the peak."""
    warmup = int(opt.warmup * steps)
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=opt.lr, warmup_steps=warmup, decay_steps=max(steps, warmup + 1),
        end_value=opt.lr * opt.final_lr_ratio)


def make_optimizer(opt: OptimConfig, steps: int, params):
    """``(tx, schedule)`` for a run of ``steps`` steps; ``params`` (arrays or shapes) gives the
    tree on which weight decay is masked to the matrices."""
    lr = schedule(opt, steps)
    mask = jax.tree.map(lambda p: p.ndim >= 2, params)
    tx = optax.chain(optax.clip_by_global_norm(opt.clip_norm),
                     optax.adamw(lr, b1=0.9, b2=0.95, weight_decay=opt.weight_decay, mask=mask))
    return tx, lr
