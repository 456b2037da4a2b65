"""Running a sweep: every run of a preset that has not finished, resumable and shardable.

- every run is keyed by :func:`~dwlib.train.config.run_key` (a hash of its result-relevant
  config) and trains in ``<out>/runs/<key>/``; a run that finished is never redone;
- ``shard=(i, n)`` takes every n-th run (``trainer="single"``) or shape (``trainer="group"``),
  so that n machines sharing the output directory split one sweep without coordination; each
  run trains under a lock, so that two processes on one shard never train one run at once;
- a results directory belongs to one sweep (its ``sweep.json``); another sweep there is refused;
- one run's corrupt files never stop a sweep: the run is reported, set aside whole under
  ``<out>/set-aside/`` and trained anew (or skipped when that fails too), and the others go on;
- :func:`replay` trains the first steps of a stored run again and compares them with the record.

One runner trains every preset, group by group (:mod:`dwlib.experiments.group_sweep`): a preset
with ``trainer="single"`` is a sweep whose groups hold one run each, trained by
:func:`dwlib.train.loop.train` (checkpointed: a killed run resumes from its checkpoint); with
``trainer="group"`` the runs of a shape train together and are committed whole. A sweep that
outgrows one machine is sharded over n processes or machines sharing ``out``, started by
whatever schedules jobs there (a cluster's job array, say).
"""

from __future__ import annotations

import tempfile
import time

from dwlib.errors import require
# The runner and the results directory's state, re-exported: this module is the sweep's entry point.
from dwlib.experiments.group_sweep import plan, run  # noqa: F401
from dwlib.experiments.records import thin, window
from dwlib.experiments.sweep_state import OUTCOMES, Outcome, claim, parse_shard, shard_of  # noqa: F401
from dwlib.train import rundir
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train


def replay(rec: dict, steps: int = 100, cache_dir: str | None = None) -> dict:
    """Train the first ``steps`` steps of a stored run again, from its recorded config, and
    compare with what was stored: a check that the stored numbers come from this code.

    Returns ``steps``, ``seconds`` (wall time, tokenizer included), ``eval`` and ``train``:
    lists of [step, stored, live] (evaluations, and training-loss windows as thinned in the
    record, up to ``steps``), and ``max_abs_diff`` over both. Nothing is left on disk.
    """
    require(isinstance(steps, int) and steps >= 1, f"steps must be a positive integer, got {steps!r}")
    cfg = TrainConfig.from_dict({**rec["config"], "cache_dir": cache_dir})
    require(steps <= cfg.steps, f"the stored run has {cfg.steps} steps, fewer than {steps}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dwlib-replay-") as tmp:
        train(cfg.replace(out_dir=tmp), progress=False, verbose=False, stop_after=steps)
        live_train, live_evals = rundir.read_metrics(tmp)
    seconds = time.perf_counter() - t0
    live_eval = {e["step"]: e["eval_loss"] for e in live_evals}
    thinned = dict(thin(live_train, width=window(cfg.steps)))  # the stored run's windows
    evals = [[s, v, live_eval[s]] for s, v in rec["eval_curve"] if s in live_eval]
    trains = [[s, v, thinned[s]] for s, v in rec["train_curve"] if s in thinned]
    diffs = [abs(a - b) if a is not None and b is not None else 0.0 if a is b else float("inf")
             for _, a, b in evals + trains]  # None: a window holding a diverged step, in both or in one
    return {"steps": steps, "seconds": seconds, "eval": evals, "train": trains,
            "max_abs_diff": max(diffs) if diffs else float("nan")}

