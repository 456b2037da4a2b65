"""Sizes of the decoders the paper compares: budgets, widths and heads.

The paper measures a network by its non-embedding parameters, the block matrices only:
N = 12 L d_x^2 (Kaplan et al. 2020), 4 d_x^2 for the attention projections and 8 d_x^2 for
the feed-forward layer of each of the L blocks. Every other module asks this one for a budget
or a width, so the formula is written once.
"""

from __future__ import annotations

import math

import numpy as np

from dwlib.errors import require

PARAMS_PER_LAYER = 12  # N = 12 L d_x^2


def budget(depth, width):
    """The non-embedding parameter count N = 12 L d_x^2 (works on arrays too)."""
    if np.ndim(depth) == 0 and np.ndim(width) == 0 and isinstance(depth, int) and isinstance(width, int):
        return PARAMS_PER_LAYER * depth * width * width  # exact integer for integer shapes
    return PARAMS_PER_LAYER * np.asarray(depth, dtype=float) * np.asarray(width, dtype=float) ** 2


def training_flops_per_token(depth: int, width: int, vocab: int, seq_len: int) -> int:
    """FLOPs of a training step per token: 6 per weight of a matrix product (forward, and the
    two products of the backward pass) over the blocks' 12 L d_x^2 and the V d_x output
    projection, plus attention's score and value products, 2 x 2 N d_x per layer forward and
    twice that backward (12 L N d_x; the causal half not discounted). Embedding lookups are not
    products and count nothing."""
    return 6 * (budget(depth, width) + vocab * width) + 12 * depth * seq_len * width


def exact_width(budget_: float, depth: float) -> float:
    """The (real) width that spends ``budget_`` at ``depth``: sqrt(N / (12 L))."""
    return math.sqrt(budget_ / (PARAMS_PER_LAYER * depth))


def round_width(width: float, multiple: int) -> int:
    """The multiple of ``multiple`` nearest to ``width``, at least ``multiple`` (one head)."""
    return multiple * max(1, round(width / multiple))


def width_for_budget(budget_: float, depth: int, multiple: int) -> int:
    """The multiple of ``multiple`` nearest to sqrt(budget / (12 depth)), at least ``multiple``."""
    require(budget_ > 0 and math.isfinite(budget_), f"budget must be a positive number, got {budget_!r}")
    require(isinstance(depth, int) and depth >= 1, f"depth must be an integer >= 1, got {depth!r}")
    require(isinstance(multiple, int) and multiple >= 1, f"width multiple must be an integer >= 1, got {multiple!r}")
    return round_width(exact_width(budget_, depth), multiple)


def heads_for_width(width: int, head_size: int) -> int:
    """Heads of size ``head_size`` in ``width`` (the width must be a multiple of it)."""
    require(width % head_size == 0, f"width {width} is not divisible by head size {head_size}")
    return width // head_size


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
