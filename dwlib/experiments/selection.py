"""The learning rate of each shape, chosen on the validation split.

Every point (depth, width) of a sweep with a grid of peak rates trains its grid seeds at every
rate. For each shape, :func:`choose` averages the final validation-split loss (``select_loss``:
the split of :func:`dwlib.train.corpora.split_three` kept out of training and out of the
reported held-out loss) over the grid seeds at each rate and takes the lowest; rates barred by
the sweep's declared exclusion rules cannot be chosen. :func:`mark` writes the choice into every
record of the shape (``chosen_lr``, ``chosen``, ``chosen_at_edge``); the comparisons read the
held-out loss (``eval_loss``) of the chosen rate's runs only (:func:`chosen_records`).
"""

from __future__ import annotations

import math
from collections import defaultdict

from dwlib.errors import require
from dwlib.experiments.presets import EXCLUSION_RULES


def shape(r: dict) -> tuple[int, int]:
    return r["depth"], r["width"]


def lr_of(r: dict) -> float:
    return r["config"]["lr"]


def _usable(r: dict) -> bool:
    v = r.get("select_loss")
    return r["status"] == "completed" and v is not None and math.isfinite(v)


def choose(records: list[dict], grid_seeds, exclude=()) -> dict:
    """{(depth, width): {"lr", "losses" {lr: mean validation loss}, "barred" [lr], "at_edge",
    "lrs" (the grid tried)}} for every shape whose grid seeds all finished at every rate; ``lr``
    is None when every rate is barred. Only the runs of ``grid_seeds`` count."""
    unknown = [e for e in exclude if e not in EXCLUSION_RULES]
    require(not unknown, f"unknown exclusion rule(s) {unknown}")
    grid_seeds = set(grid_seeds)
    runs = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["seed"] in grid_seeds:
            runs[shape(r)][lr_of(r)].append(r)
    out = {}
    for key, by_lr in runs.items():
        if any({r["seed"] for r in rs} != grid_seeds for rs in by_lr.values()):
            continue  # not all grid runs of this shape have finished
        barred = sorted(lr for lr, rs in by_lr.items()
                        if "diverged-rate" in exclude and any(r["status"] == "diverged" for r in rs))
        losses = {lr: sum(r["select_loss"] for r in rs) / len(rs) for lr, rs in sorted(by_lr.items())
                  if all(_usable(r) for r in rs)}
        eligible = {lr: v for lr, v in losses.items() if lr not in barred}
        lr = min(eligible, key=eligible.get) if eligible else None
        lrs = sorted(by_lr)
        out[key] = {"lr": lr, "losses": losses, "barred": barred, "lrs": lrs,
                    "at_edge": lr is not None and len(lrs) > 1 and lr in (lrs[0], lrs[-1])}
    return out


def mark(records: list[dict], choice: dict) -> list[dict]:
    """The records with the choice of their shape: ``chosen_lr`` (None: not chosen yet, or no
    eligible rate), ``chosen`` (this run trained at it) and ``chosen_at_edge`` (the chosen rate
    is the smallest or largest tried: the best may lie outside the grid)."""
    out = []
    for r in records:
        c = choice.get(shape(r))
        lr = c["lr"] if c else None
        out.append({**r, "chosen_lr": lr, "chosen": lr is not None and lr_of(r) == lr,
                    "chosen_at_edge": bool(c and c["at_edge"])})
    return out


def chosen_records(records: list[dict]) -> list[dict]:
    """The runs at their shape's chosen rate (every seed): what the comparisons report."""
    return [r for r in records if r.get("chosen")]
