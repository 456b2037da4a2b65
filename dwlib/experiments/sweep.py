"""Running a sweep: every run of a preset that has not finished, resumable and shardable.

- every run is keyed by :func:`~dwlib.train.config.run_key` (a hash of its result-relevant
  config) and trains in ``<out>/runs/<key>/``; a run that finished is never redone, a killed
  one resumes from its checkpoint (:func:`dwlib.train.loop.train` does both);
- ``shard=(i, n)`` takes every n-th run, so that n machines sharing the output directory split
  one sweep without coordination; each run trains under a lock, so that two processes on one
  shard never train one run at once;
- a results directory belongs to one sweep (its ``sweep.json``); another sweep there is refused;
- one run's corrupt files never stop a sweep: the run is reported, set aside whole under
  ``<out>/set-aside/`` and trained anew (or skipped when that fails too), and the others go on;
- :func:`replay` trains the first steps of a stored run again and compares them with the record;
- a preset with ``trainer="group"`` trains shape by shape (:mod:`dwlib.experiments.group_sweep`):
  :func:`plan` and :func:`run` hand it over.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

from tqdm.auto import tqdm

from dwlib.errors import StateError, require, require_int
from dwlib.experiments import group_sweep
from dwlib.experiments.sweep_state import (FATAL_ERRNOS, OUTCOMES, Outcome, check_owner, move_aside, one_line,  # noqa: F401
                                           claim, git_commit, parse_shard, run_state, shard_of,
                                           stderr_line)
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import record, thin, window
from dwlib.store import exclusive
from dwlib.train import rundir
from dwlib.train.checkpoint import check_out_dir
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.loop import train
from dwlib.train.process import hardware, prepare_process


def plan(sweep: Sweep, out: str | os.PathLike, shard: tuple[int, int] = (0, 1)) -> list[dict]:
    """The runs of this shard: key, config, point and state ('done', 'partial', 'todo', or
    'corrupt' with its ``reason``). StateError when ``out`` belongs to another sweep."""
    if sweep.trainer == "group":
        return group_sweep.plan(sweep, out, shard)
    out = Path(out)
    check_owner(sweep, out)
    points = {(p.depth, p.width): p for p in sweep.points()}
    rows = []
    for cfg in shard_of(sweep.configs(), shard):
        key = run_key(cfg)
        state, reason = run_state(out / "runs" / key)
        rows.append({"key": key, "config": cfg, "point": points[(cfg.model.depth, cfg.model.width)],
                     "dir": out / "runs" / key, "state": state, "reason": reason})
    return rows


def run(sweep: Sweep | str, out: str | os.PathLike, shard: tuple[int, int] = (0, 1), *,
        cache_dir: str | None = None, progress: bool = True, limit: int | None = None,
        log=None) -> Outcome:
    """Train every run of this shard that has not finished; return the records of its finished
    runs (an :class:`Outcome`: a list, with the counts of what this call did).

    Finished runs are skipped; interrupted ones resume from their checkpoint. A diverged run is
    recorded as such and the sweep goes on. ``limit`` trains at most that many runs now (0:
    none; the directory is checked and claimed all the same).

    The results directory belongs to one sweep (``sweep.json`` names it); another sweep's is
    refused. Each run trains under a lock (``runs/.<key>.lock``): a second process on the same
    shard skips the runs the first holds, and finished runs are never trained again. A run whose
    files are corrupt (:class:`~dwlib.errors.StateError`, or an OSError reading them) is reported
    in one line through ``log`` (default: stderr), moved whole to ``set-aside/<key>-<n>/`` and
    trained anew; if that fails too it is reported and skipped. The sweep goes on either way; a
    full or read-only disk (ENOSPC, EDQUOT, EROFS) ends it.

    Runs train one after another in this process, which uses every device it has. A sweep that
    outgrows one machine is sharded (``shard=(i, n)``) over n processes or machines sharing
    ``out``, started by whatever schedules jobs there (a cluster's job array, say).
    """
    sweep = get_preset(sweep) if isinstance(sweep, str) else sweep
    if sweep.trainer == "group":
        return group_sweep.run(sweep, out, shard, cache_dir=cache_dir, progress=progress, limit=limit, log=log)
    if limit is not None:
        require_int("limit", limit, minimum=0)
    prepare_process()  # as train() does, before hardware() below starts JAX
    out = check_out_dir(out)
    rows = plan(sweep, out, shard)
    todo = [r for r in rows if r["state"] != "done"]
    todo, left = todo[:limit], todo[limit:] if limit is not None else []
    claim(sweep, out)
    (out / "runs").mkdir(exist_ok=True)
    env = {"sweep": sweep.name, "hardware": hardware(), "git_commit": git_commit()}
    meta = {r["key"]: {**env, "key": r["key"], "target_budget": r["point"].target_budget} for r in rows}
    for r in rows:  # finished, but killed before its sweep_meta.json: no wall time to tell
        if r["state"] == "done" and not (r["dir"] / rundir.SWEEP_META).exists():
            rundir.write_sweep_meta(r["dir"], {**meta[r["key"]], "wall_seconds": None})
    tasks = [(r["config"].replace(out_dir=str(r["dir"]), cache_dir=cache_dir).to_dict(), meta[r["key"]])
             for r in todo]
    label = f"sweep {sweep.name} shard {shard[0]}/{shard[1]}"
    counts = dict.fromkeys(OUTCOMES, 0)
    counts["before"], counts["left"] = len(rows) - len(todo) - len(left), len(left)
    bar = tqdm(total=len(rows), initial=counts["before"], unit="run", disable=not progress, desc=label)
    log = log or ((lambda line: bar.write(line, file=sys.stderr)) if progress else stderr_line)
    for task in tasks:
        _count(counts, *_attempt(task, log))
        bar.update(1)
    bar.close()
    records = [record(r["dir"]) for r in rows if run_state(r["dir"])[0] == "done"]
    return Outcome(records, counts, len(rows), label)


def _count(counts: dict, outcome: str, set_aside: int) -> None:
    counts[outcome] += 1
    counts["set_aside"] += set_aside


def _attempt(task, log) -> tuple[str, int]:
    """Train one run of a sweep under its lock, isolating its failures; return its outcome (one
    of OUTCOMES) and how many times it was set aside."""
    key, run_dir = task[1]["key"], Path(task[0]["out_dir"])
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive(run_dir.parent / f".{key}.lock", f"run {key}"))
        except StateError as e:
            log(f"{e}; skipped here")
            return "busy", 0
        state, reason = run_state(run_dir)
        if state == "done":  # finished by another process since this one planned
            if not (run_dir / rundir.SWEEP_META).exists():
                rundir.write_sweep_meta(run_dir, {**task[1], "wall_seconds": None})
            return "before", 0
        set_aside = 0
        for _ in range(2):  # train; when its files turn out corrupt, set them aside and train once more
            if reason is not None:
                if (refused := move_aside(run_dir, reason, log)) is not None:
                    return refused, set_aside
                set_aside += 1
            try:
                return _train_one(task)["status"], set_aside
            except (StateError, OSError) as e:
                if isinstance(e, OSError) and e.errno in FATAL_ERRNOS:
                    raise
                reason = one_line(e) if key in str(e) else f"run {key}: {one_line(e)}"
        log(f"{reason}; skipped (it failed again after being set aside)")
        return "failed", set_aside


def _train_one(task) -> dict:
    """Train one run of a sweep (``task`` = (flat config, sweep metadata)); return its record."""
    fields, meta = task
    t0 = time.perf_counter()
    train(fields, progress=False, verbose=False)
    run_dir = Path(fields["out_dir"])
    rundir.write_sweep_meta(run_dir, {**meta, "wall_seconds": round(time.perf_counter() - t0, 2)})
    return record(run_dir)


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

