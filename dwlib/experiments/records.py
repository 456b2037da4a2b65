"""The records of a sweep: one line per finished run, read from the run directories.

A sweep's results directory holds ``sweep.json`` and ``runs/<key>/`` for every run (its
``config.json``, ``metrics.jsonl``, ``result.json`` and ``sweep_meta.json``, read by
:func:`dwlib.train.rundir.read_run`). :func:`collect` turns the finished runs into records: config,
budget on both axes (``budget``: non-embedding parameters, the paper's; ``total_params``: with
embeddings), ``narrow`` (width below 200), peak rate, final losses (held-out; training;
``select_loss`` on the validation split where the run has one), the evaluation curve, the
training curve thinned to about 100 window means, wall time, hardware, git commit. A run whose
files are torn, garbage or do not agree (a result without its evaluations, fewer losses than
steps, losses other than its summary's, a ``metrics.jsonl`` or ``result.json`` edited after the
run ended: :func:`dwlib.train.rundir.digest_problem`) has no record: :func:`record`
raises StateError naming the run and the file, and a sweep sets that run aside
(``<out>/set-aside/``) and trains it anew. Nothing here duplicates a run's data on disk;
``scripts/publish_sweep.py`` writes the records into the package (``dwlib/data/sweeps``) so
that the book, also on Colab, reads them with :func:`stored_results`.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

from dwlib import fmt
from dwlib.errors import InputError, require
from dwlib.experiments import selection
from dwlib.experiments.presets import WIDE, Sweep
from dwlib.store import packaged_text
from dwlib.train import rundir

#: a group run's achieved TFLOP/s and passes over the training split (sweep_meta.json): only in
#: the records of runs that wrote them, so that the records of earlier runs stay as published
MEASURED = ("tflops", "passes")
UNRECORDED = rundir.WHERE  # config fields that say where a run was, not what it was (absent from new runs)


def record(run_dir: Path) -> dict:
    """The record of one finished run directory.

    Raises :class:`~dwlib.errors.StateError` (one line naming the run and the file) when the
    run's files are absent, torn or garbage, or do not agree: a result without its evaluations,
    a curve with more or fewer losses than the steps the result reports, a summary that is not
    what the curve holds, a ``metrics.jsonl`` whose SHA-256 is not the one ``result.json`` stored
    when the run ended (any line edited), a ``result.json`` whose fields do not give its own
    stored SHA-256 (any value edited). A result written before results stored these digests (the
    runs behind the published sweeps) is read without them. A sweep sets such a run aside; nothing
    here trusts a file it has not checked.
    """
    run_dir = Path(run_dir)
    result, cfg, meta, losses, evals = rundir.read_run(run_dir)
    params = result["parameters"]
    return {
        "key": run_dir.name, "sweep": meta.get("sweep"), "status": result["status"],
        "depth": cfg["depth"], "width": cfg["width"], "heads": cfg["heads"], "seed": cfg["seed"],
        "target_budget": meta.get("target_budget"), "budget": params["non_embedding"],
        "total_params": params.get("total"), "narrow": cfg["width"] < WIDE, "lr": cfg.get("lr"),
        "parameters": params, "tokens": result["tokens_seen"],
        "eval_loss": result["eval_loss"], "train_loss": result["train_loss"],
        "select_loss": result.get("select_loss"),
        "eval_curve": [[e["step"], e["eval_loss"]] for e in evals],
        **({"select_curve": [[e["step"], e["select_loss"]] for e in evals if "select_loss" in e]}
           if any("select_loss" in e for e in evals) else {}),
        "train_curve": thin(losses), "diverged_step": result["diverged_step"],
        "wall_seconds": meta.get("wall_seconds"), "tokens_per_s": result["tokens_per_s"],
        **{k: meta[k] for k in MEASURED if k in meta},  # recorded by group runs since gpu-pairs
        "hardware": meta.get("hardware"), "git_commit": meta.get("git_commit"),
        **({"group": meta["group"]} if "group" in meta else {}),
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
    return [[min(i + w, len(losses)), _mean(losses[i:i + w])] for i in range(0, len(losses), w)]


def _mean(values: list) -> float | None:
    """The mean, or None (strict JSON) when a value is missing or not finite (a diverged step)."""
    if any(v is None or not math.isfinite(v) for v in values):
        return None
    return sum(values) / len(values)


def collect(out: str | os.PathLike) -> list[dict]:
    """The records of every finished run under ``<out>/runs``, sorted by depth, width, seed.
    A run whose files are corrupt stops it with :class:`~dwlib.errors.StateError` naming the run
    (running the sweep again sets such runs aside and trains them anew). Where the sweep
    (``sweep.json``) chooses a rate per shape on a validation split, every record carries its
    shape's choice (:func:`dwlib.experiments.selection.mark`)."""
    runs = sorted(Path(out).glob("runs/*/result.json"))
    records = sorted((record(p.parent) for p in runs), key=lambda r: (r["depth"], r["width"], r["seed"]))
    definition = rundir.json_object(Path(out), "sweep.json", optional=True) or {}
    if len(definition.get("lrs") or ()) > 1 and any(r["select_loss"] is not None for r in records):
        seeds = definition["seeds"][:definition.get("select_seeds") or len(definition["seeds"])]
        records = selection.mark(records, selection.choose(records, seeds, definition.get("exclude") or ()))
    return records


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


def _rates(sweep: Sweep, records: list[dict]) -> str:
    """The peak rate of every run, or the grid tried and the rates the shapes chose."""
    if not sweep.lrs:
        return fmt.span(sorted({r["lr"] for r in records}))
    chosen = sorted({r["chosen_lr"] for r in records if r.get("chosen_lr") is not None})
    picked = f"; chosen per shape on the validation split: {', '.join(fmt.value(x) for x in chosen)}" if chosen else ""
    return f"grid {', '.join(fmt.value(x) for x in sweep.lrs)}{picked}"


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
        "peak learning rate": _rates(sweep, records),
        "compute dtype": cfg.get("dtype", "float32"),
        "corpus, vocabulary": f"{cfg['corpus']}, {cfg['vocab_size']}",
        "runs stored / planned": f"{len(records)} / {len(sweep.configs())}",
        "runs that diverged": sum(r["status"] != "completed" for r in records),
        "hardware": f"{hw['backend']} ({hw['device_kind']}), jax {hw['jax']}",
        "wall time of the runs, summed": f"{sum(r['wall_seconds'] or 0 for r in records) / 60:.0f} min",
    }
