"""What a sweep costs before it runs: FLOPs per budget, passes over the data, and wall time.

FLOPs are counted as :meth:`dwlib.train.config.TrainConfig.cost` counts them
(:func:`dwlib.core.sizes.training_flops_per_token`: 6 per weight and token, forward and
backward, over the block matrices 12 L d_x^2 and the V d_x output projection, the embedding
lookups, biases and norms left out; plus attention's 12 L T d_x per token; evaluations are left
out). The wall time is an estimate at an assumed sweep-average rate,
given as a share of a reference rate: the benchmark shape's measured rate (README, "On a GPU":
about 400 TFLOP/s for (12, 768, 12) at batch 96-128 on one H200). Small models reach far less
of a chip than that shape does; the share is an assumption until the sweep is measured, so it
is a parameter, printed with the estimate.
"""

from __future__ import annotations

from collections import defaultdict

from dwlib.errors import require
from dwlib.experiments.presets import Sweep

REFERENCE_TFLOPS = 400.0  # the benchmark shape on one H200 (README, "On a GPU")
TARGET_MINUTES = 25.0  # issue 17: the whole GPU preset on one H100
ASSUMED_SHARE = 0.40  # of the reference rate, averaged over the sweep (issue 17's requirement)


def plan_cost(sweep: Sweep, train_tokens: int | None = None) -> dict:
    """Per target budget: points, runs, tokens a run, FLOPs (all runs), widths, narrow points
    and (given the training split's size ``train_tokens``) passes over it a run; and totals."""
    require(train_tokens is None or (isinstance(train_tokens, int) and train_tokens > 0),
            f"train_tokens must be a positive integer, got {train_tokens!r}")
    per_point = sweep.runs_per_point()
    rows = defaultdict(lambda: {"points": 0, "runs": 0, "flops": 0.0, "widths": [], "narrow": 0})
    for p in sweep.points():
        cfg = sweep.config(p, sweep.seeds[0])
        row = rows[p.target_budget]
        row["points"] += 1
        row["runs"] += per_point
        row["flops"] += per_point * cfg.cost()["flops"]
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


def estimate(sweep: Sweep, share: float = ASSUMED_SHARE, reference_tflops: float = REFERENCE_TFLOPS,
             target_minutes: float = TARGET_MINUTES, train_tokens: int | None = None) -> dict:
    """:func:`plan_cost` plus the wall time at ``share`` x ``reference_tflops`` averaged over the
    sweep, the share the sweep would need to finish in ``target_minutes``, and whether the
    estimate meets that target."""
    require(0 < share <= 1, f"share must be in (0, 1], got {share!r}")
    require(reference_tflops > 0 and target_minutes > 0, "reference_tflops and target_minutes must be positive")
    cost = plan_cost(sweep, train_tokens)
    rate = share * reference_tflops * 1e12
    minutes = cost["flops"] / rate / 60
    needed = cost["flops"] / (target_minutes * 60) / (reference_tflops * 1e12)
    return {**cost, "assumed_share": share, "reference_tflops": reference_tflops, "minutes": minutes,
            "target_minutes": target_minutes, "share_needed": needed, "meets_target": minutes <= target_minutes}
