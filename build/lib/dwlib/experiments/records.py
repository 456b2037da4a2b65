"""The records of a sweep: one line per finished run, read from the run directories.

A sweep's results directory holds ``sweep.json`` and ``runs/<key>/`` for every run (its
``config.json``, ``metrics.jsonl``, ``result.json`` and ``sweep_meta.json``; see
:mod:`dwlib.train.checkpoint`). :func:`collect` turns the finished runs into records: config,
budget, tokens, final losses, the evaluation curve, the training curve thinned to about 100
window means, wall time, hardware, git commit. Nothing here duplicates a run's data on disk;
``scripts/publish_sweep.py`` writes the records into the package (``dwlib/data/sweeps``) so
that the book, also on Colab, reads them with :func:`stored_results`.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from dwlib import fmt
from dwlib.errors import InputError, require
from dwlib.experiments.presets import Sweep
from dwlib.store import packaged_text
from dwlib.train.checkpoint import read_json, read_metrics

UNRECORDED = ("out_dir", "cache_dir")  # config fields that say where a run was, not what it was


def record(run_dir: Path) -> dict:
    """The record of one finished run directory."""
    run_dir = Path(run_dir)
    result, cfg = read_json(run_dir / "result.json"), read_json(run_dir / "config.json")
    meta = read_json(run_dir / "sweep_meta.json") or {}
    losses, evals = read_metrics(run_dir)
    return {
        "key": run_dir.name, "sweep": meta.get("sweep"), "status": result["status"],
        "depth": cfg["depth"], "width": cfg["width"], "heads": cfg["heads"], "seed": cfg["seed"],
        "target_budget": meta.get("target_budget"), "budget": result["parameters"]["non_embedding"],
        "parameters": result["parameters"], "tokens": result["tokens_seen"],
        "eval_loss": result["eval_loss"], "train_loss": result["train_loss"],
        "eval_curve": [[e["step"], e["eval_loss"]] for e in evals],
        "train_curve": thin(losses), "diverged_step": result["diverged_step"],
        "wall_seconds": meta.get("wall_seconds"), "tokens_per_s": result["tokens_per_s"],
        "hardware": meta.get("hardware"), "git_commit": meta.get("git_commit"),
        "config": {k: v for k, v in cfg.items() if k not in UNRECORDED},
    }


def window(steps: int, points: int = 100) -> int:
    """Steps per window when ``steps`` per-step losses are thinned to about ``points``."""
    return max(1, steps // points)


def thin(losses: list, width: int | None = None) -> list:
    """[step, mean loss] over equal windows of the per-step training losses (default: about 100)."""
    if not losses:
        return []
    w = width or window(len(losses))
    return [[min(i + w, len(losses)), sum(losses[i:i + w]) / len(losses[i:i + w])] for i in range(0, len(losses), w)]


def collect(out: str | os.PathLike) -> list[dict]:
    """The records of every finished run under ``<out>/runs``, sorted by depth, width, seed."""
    runs = sorted(Path(out).glob("runs/*/result.json"))
    return sorted((record(p.parent) for p in runs), key=lambda r: (r["depth"], r["width"], r["seed"]))


def to_lines(records: list[dict]) -> list[str]:
    """The records as JSON lines (the published form)."""
    return [json.dumps(r) for r in records]


def stored_results(name: str) -> list[dict]:
    """The records of a sweep published with the package, e.g. ``stored_results("mini")``."""
    require(name.replace("-", "").replace("_", "").isalnum(), f"a stored sweep needs a plain name, got {name!r}")
    try:
        text = packaged_text("sweeps", f"{name}.jsonl")
    except FileNotFoundError:
        raise InputError(f"no stored sweep named {name!r}") from None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def summary(sweep: Sweep, records: list[dict]) -> dict:
    """The set-up of a sweep and of its stored runs, as rows of a table (label: text)."""
    cfg, hw = records[0]["config"], records[0]["hardware"]
    return {
        "depths L": ", ".join(map(str, sweep.depths)),
        "target budgets N": ", ".join(fmt.count(b) for b in sweep.budgets),
        "widths d_x": f"{fmt.span([r['width'] for r in records])} (head size {sweep.head_size})",
        "seeds per point": fmt.span(Counter((r["depth"], r["width"]) for r in records).values()),
        "tokens per run": f"{records[0]['tokens']:,}",
        "batch x sequence": f"{cfg['batch_size']} x {cfg['seq_len']}",
        "peak learning rate": cfg["lr"],
        "compute dtype": cfg.get("dtype", "float32"),
        "corpus, vocabulary": f"{cfg['corpus']}, {cfg['vocab_size']}",
        "runs stored / planned": f"{len(records)} / {len(sweep.configs())}",
        "runs that diverged": sum(r["status"] != "completed" for r in records),
        "hardware": f"{hw['backend']} ({hw['device_kind']}), jax {hw['jax']}",
        "wall time of the runs, summed": f"{sum(r['wall_seconds'] or 0 for r in records) / 60:.0f} min",
    }
