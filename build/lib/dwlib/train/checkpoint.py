"""A run's directory: its config, its metrics, its checkpoints and its result.

Files in ``out_dir``:

- ``config.json``: the flat :class:`~dwlib.train.config.TrainConfig` (written first);
- ``metrics.jsonl``: the curve, one line per training step (``step``, ``loss``, ``lr``) and one
  per evaluation (``step``, ``eval_loss``); the only copy of it;
- ``checkpoints/``: orbax checkpoints of parameters, optimiser state and step;
- ``result.json``: the run's summary, written when it ends (no curve: that is in metrics.jsonl).

A run killed and started again with the same directory restores the last checkpoint and cuts
``metrics.jsonl`` back to it; the lines after it are computed again, identically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jax
import orbax.checkpoint as ocp

from dwlib.errors import require
from dwlib.store import write_json, write_lines


def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """The output directory as an absolute path; InputError unless it can be created and written.
    Nothing is created here."""
    path = Path(out_dir).expanduser().absolute()
    probe = path
    while not probe.exists():
        probe = probe.parent
    require(probe.is_dir(), f"output directory {str(path)!r} cannot be created: {str(probe)!r} is not a directory")
    require(os.access(probe, os.W_OK | os.X_OK), f"output directory {str(path)!r} is not writable")
    return path


def read_json(path: Path) -> dict | None:
    """A JSON file's content, or None when the file is absent."""
    return json.loads(path.read_text()) if path.exists() else None


def read_metrics(out_dir: str | os.PathLike) -> tuple[list[float], list[dict]]:
    """``(train_losses, evals)`` of a run directory: the loss of each step in order, and the
    evaluations as ``{"step", "eval_loss"}``."""
    losses, evals = [], []
    for line in (Path(out_dir) / "metrics.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "loss" in rec:
            losses.append(rec["loss"])
        elif "eval_loss" in rec:
            evals.append(rec)
    return losses, evals


class RunDir:
    """The files of one run as it trains (the lead process writes; on other hosts a no-op)."""

    def __init__(self, path: Path, config: dict, lead: bool):
        self.path, self.lead = path, lead
        path.mkdir(parents=True, exist_ok=True)
        if lead:
            write_json(path / "config.json", config)
        self.manager = ocp.CheckpointManager(path / "checkpoints", options=ocp.CheckpointManagerOptions(
            max_to_keep=2, enable_async_checkpointing=False))
        self.metrics = None

    def restore(self, state: dict, seed: int) -> tuple[dict, int]:
        """``(state, step)`` from the last checkpoint, or the given state and step 0."""
        last = self.manager.latest_step()
        if last is None:
            return state, 0
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)
        restored = self.manager.restore(last, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()))
        step = int(restored["meta"]["step"])
        if restored["meta"]["data"] != {"seed": seed, "next_step": step}:
            raise RuntimeError(f"checkpoint {last} in {str(self.path)!r} was written for other data "
                               f"({restored['meta']['data']}); delete the run directory to start again")
        return restored["state"], step

    def keep_metrics_until(self, step: int) -> tuple[list[float], list[dict]]:
        """Cut ``metrics.jsonl`` back to ``step`` (the checkpoint resumed from), open it for
        appending, and return the curve kept: ``(train_losses, evals)``."""
        lines, losses, evals = [], [], []
        if step > 0 and (self.path / "metrics.jsonl").exists():
            for line in (self.path / "metrics.jsonl").read_text().splitlines():
                rec = json.loads(line)
                if rec["step"] <= step:
                    lines.append(line)
                    (losses.append(rec["loss"]) if "loss" in rec else evals.append(rec))
        if self.lead:
            write_lines(self.path / "metrics.jsonl", lines)
            self.metrics = open(self.path / "metrics.jsonl", "a")
        return losses, evals

    def log(self, rec: dict) -> None:
        if self.metrics is not None:
            self.metrics.write(json.dumps(rec) + "\n")

    def save(self, step: int, state: dict, seed: int) -> None:
        """A checkpoint at ``step`` (once), with the metrics flushed up to it."""
        if step not in (self.manager.all_steps() or []):
            self.manager.save(step, args=ocp.args.Composite(
                state=ocp.args.StandardSave(state),
                meta=ocp.args.JsonSave({"step": step, "data": {"seed": seed, "next_step": step}})))
            if self.metrics is not None:
                self.metrics.flush()

    def close(self, result: dict | None = None) -> None:
        """Close the metrics and checkpoints; write ``result.json`` when the run ended."""
        if self.metrics is not None:
            self.metrics.close()
        if result is not None and self.lead:
            write_json(self.path / "result.json", result)
        self.manager.close()
