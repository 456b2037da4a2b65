"""The optimiser of every run: AdamW with warm-up, cosine decay and gradient clipping.

AdamW (b1 = 0.9, b2 = 0.95; weight decay on matrices only), a linear warm-up over the first
``warmup`` fraction of the steps, then cosine decay to ``final_lr_ratio`` of the peak, and
global-norm clipping of the gradient at ``clip_norm``.
"""

from __future__ import annotations


import jax
import optax

from dwlib.train.config import OptimConfig


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
