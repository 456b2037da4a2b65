"""What a sweep costs before it runs: FLOPs per budget, passes over the data, and wall time.

FLOPs are counted as :meth:`dwlib.train.config.TrainConfig.cost` counts them
(:func:`dwlib.core.sizes.training_flops_per_token`: 6 per weight and token, forward and
backward, over the block matrices 12 L d_x^2 and the V d_x output projection, the embedding
lookups, biases and norms left out; plus attention's 12 L T d_x per token; evaluations are left
out; evaluations are counted at a third of that, the forward pass, over the tokens they read:
the fixed sample at every evaluation and, with ``final_eval="whole"``, the held-out and
validation splits once, when their sizes are known). The wall time is an estimate at an assumed sweep-average rate,
given as a share of a reference rate: the benchmark shape's measured rate (README, "On a GPU":
about 400 TFLOP/s for (12, 768, 12) at batch 96-128 on one H200). Small models reach far less
of a chip than that shape does; the share is an assumption until the sweep is measured, so it
is a parameter, printed with the estimate.
"""

from __future__ import annotations

from collections import defaultdict

from dwlib.core import sizes
from dwlib.errors import require
from dwlib.experiments.presets import Sweep
from dwlib.experiments.records import stored_results
from dwlib.train.config import TrainConfig

REFERENCE_TFLOPS = 400.0  # the benchmark shape on one H200 (README, "On a GPU")
CPU_REFERENCE = "cpu-fig2"  # the stored CPU sweep whose measured average rate prices a sweep on 2 cores
TARGET_MINUTES = 25.0  # the whole GPU preset should fit a short lease of one H100
ASSUMED_SHARE = 0.40  # of the reference rate, averaged over the sweep (the throughput benchmark's target)


def eval_tokens(cfg, held_out_tokens: int = 0) -> int:
    """Tokens a run's evaluations read: the fixed sample at step 0, every ``eval_interval`` steps
    and at the end (twice with a validation split), plus ``held_out_tokens`` (the held-out and
    validation splits) for a final evaluation over the whole splits."""
    n = (cfg.steps // cfg.eval_interval + 1 + (cfg.steps % cfg.eval_interval != 0)) if cfg.eval_interval else 1
    sample = n * cfg.eval_batches * cfg.batch_size * cfg.model.seq_len * (2 if cfg.validation_split else 1)
    return sample + (held_out_tokens if cfg.final_eval == "whole" else 0)


def plan_cost(sweep: Sweep, train_tokens: int | None = None, held_out_tokens: int = 0) -> dict:
    """Per target budget: points, runs, tokens a run, FLOPs (all runs; training and evaluation),
    widths, narrow points and (given the training split's size ``train_tokens``) passes over it a
    run; and totals. ``held_out_tokens``: the held-out (and validation) splits' size, for a sweep
    whose last evaluation reads them whole (0: unknown, not counted)."""
    require(train_tokens is None or (isinstance(train_tokens, int) and train_tokens > 0),
            f"train_tokens must be a positive integer, got {train_tokens!r}")
    per_point = sweep.runs_per_point()
    rows = defaultdict(lambda: {"points": 0, "runs": 0, "flops": 0.0, "widths": [], "narrow": 0})
    for p in sweep.points():
        cfg = sweep.config(p, sweep.seeds[0])
        row = rows[p.target_budget]
        row["points"] += 1
        row["runs"] += per_point
        m = cfg.model
        forward = sizes.training_flops_per_token(m.depth, m.width, m.vocab_size, m.seq_len) / 3
        row["flops"] += per_point * (cfg.cost()["flops"] + forward * eval_tokens(cfg, held_out_tokens))
        row["widths"].append(p.width)
        row["narrow"] += p.narrow
        row["tokens"] = cfg.steps * cfg.batch_size * cfg.model.seq_len
        row["steps"] = cfg.steps
    budgets = []
    for target, row in sorted(rows.items()):
        if train_tokens is not None:
            row["passes"] = row["tokens"] / train_tokens
        budgets.append({"target_budget": target, **row})
    return {"sweep": sweep.name, "runs_per_point": per_point, "budgets": budgets,
            "runs": sum(b["runs"] for b in budgets), "flops": sum(b["flops"] for b in budgets),
            "train_tokens": train_tokens}


def cpu_rate() -> float:
    """The rate :data:`CPU_REFERENCE` averaged on its 2-core machine (:func:`measured_rate`)."""
    return measured_rate(stored_results(CPU_REFERENCE))


def measured_rate(records: list[dict]) -> float:
    """FLOP/s a stored sweep averaged: its runs' training FLOPs over their wall time (a group run's
    share of its group's; compilation and evaluation included)."""
    done = [r for r in records if r.get("wall_seconds") and r["status"] == "completed"]
    require(done, "no finished run with a wall time to measure a rate from")
    flops = sum(TrainConfig.from_dict(r["config"]).cost()["flops"] for r in done)
    return flops / sum(r["wall_seconds"] for r in done)


def estimate(sweep: Sweep, share: float = ASSUMED_SHARE, reference_tflops: float = REFERENCE_TFLOPS,
             target_minutes: float = TARGET_MINUTES, train_tokens: int | None = None,
             held_out_tokens: int = 0, cpu_rate: float | None = None) -> dict:
    """:func:`plan_cost` plus the wall time at ``share`` x ``reference_tflops`` averaged over the
    sweep, the share the sweep would need to finish in ``target_minutes``, and whether the
    estimate meets that target."""
    require(0 < share <= 1, f"share must be in (0, 1], got {share!r}")
    require(reference_tflops > 0 and target_minutes > 0, "reference_tflops and target_minutes must be positive")
    cost = plan_cost(sweep, train_tokens, held_out_tokens)
    rate = share * reference_tflops * 1e12
    minutes = cost["flops"] / rate / 60
    needed = cost["flops"] / (target_minutes * 60) / (reference_tflops * 1e12)
    return {**cost, "assumed_share": share, "reference_tflops": reference_tflops, "minutes": minutes,
            "target_minutes": target_minutes, "share_needed": needed, "meets_target": minutes <= target_minutes,
            **({} if cpu_rate is None else {"cpu_rate": cpu_rate, "cpu_hours": cost["flops"] / cpu_rate / 3600})}
