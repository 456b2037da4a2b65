"""Running a sweep: every run of a preset that has not finished, resumable and shardable.

- every run is keyed by :func:`~dwlib.train.config.run_key` (a hash of its result-relevant
  config) and trains in ``<out>/runs/<key>/``; a run that finished is never redone, a killed
  one resumes from its checkpoint (:func:`dwlib.train.loop.train` does both);
- ``shard=(i, n)`` takes every n-th run, so that n machines sharing the output directory split
  one sweep without coordination;
- :func:`replay` trains the first steps of a stored run again and compares them with the record.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import subprocess
import tempfile
import time
from pathlib import Path

from tqdm.auto import tqdm

from dwlib.errors import InputError, require
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import record, thin, window
from dwlib.store import packaged_path, write_json
from dwlib.train.checkpoint import check_out_dir, read_metrics
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.loop import train
from dwlib.train.process import hardware, prepare_process


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' -> (i, n) with 0 <= i < n."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"shard must look like i/n (e.g. 0/4), got {text!r}") from None
    require(n >= 1 and 0 <= i < n, f"shard i/n needs 0 <= i < n, got {text!r}")
    return i, n


def shard_of(items: list, shard: tuple[int, int]) -> list:
    """Every n-th item, starting at i: shards are disjoint and together cover the list."""
    i, n = shard
    return items[i::n]


def git_commit() -> str | None:
    """The HEAD commit of the checkout dwlib runs from (with '+dirty' for uncommitted changes),
    or None outside a git checkout."""
    root = packaged_path().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def plan(sweep: Sweep, out: str | os.PathLike, shard: tuple[int, int] = (0, 1)) -> list[dict]:
    """The runs of this shard: key, config, point and state ('done', 'partial' or 'todo')."""
    out = Path(out)
    points = {(p.depth, p.width): p for p in sweep.points()}
    rows = []
    for cfg in shard_of(sweep.configs(), shard):
        key = run_key(cfg)
        run_dir = out / "runs" / key
        state = "done" if (run_dir / "result.json").exists() else (
            "partial" if (run_dir / "config.json").exists() else "todo")
        rows.append({"key": key, "config": cfg, "point": points[(cfg.model.depth, cfg.model.width)],
                     "dir": run_dir, "state": state})
    return rows


def run(sweep: Sweep | str, out: str | os.PathLike, shard: tuple[int, int] = (0, 1), *,
        cache_dir: str | None = None, progress: bool = True, limit: int | None = None,
        jobs: int = 1) -> list[dict]:
    """Train every run of this shard that has not finished; return the records of its finished runs.

    Finished runs are skipped; interrupted ones resume from their checkpoint. A diverged run is
    recorded as such and the sweep goes on. ``limit`` trains at most that many runs now.

    ``jobs > 1`` trains that many runs side by side, each in its own process pinned to one CPU
    core with one XLA CPU device. Measured on 2 cores (four 150-step runs of the mini grid at
    25K-100K): 19-32 s with ``jobs=1`` against 33-34 s with ``jobs=2``, whose runs each took
    about twice as long, since one process with a device per core already keeps both cores
    busy and reuses compiled steps across runs of one shape. So the default stays 1; the option
    is for machines with many more cores than one small model uses. Not for a single GPU.
    The workers are spawned, so a script that calls this with ``jobs > 1`` must do so under
    ``if __name__ == "__main__":`` (notebooks and the ``dwlib`` command need nothing).
    """
    sweep = get_preset(sweep) if isinstance(sweep, str) else sweep
    require(isinstance(jobs, int) and jobs >= 1, f"jobs must be an integer >= 1, got {jobs!r}")
    prepare_process()  # as train() does, before hardware() below starts JAX
    out = check_out_dir(out)
    rows = plan(sweep, out, shard)
    todo = [r for r in rows if r["state"] != "done"][:limit]
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "sweep.json", dataclasses.asdict(sweep))
    env = {"sweep": sweep.name, "hardware": hardware(), "git_commit": git_commit(), "jobs": jobs}
    tasks = [(r["config"].replace(out_dir=str(r["dir"]), cache_dir=cache_dir).to_dict(),
              {**env, "key": r["key"], "target_budget": r["point"].target_budget}) for r in todo]
    bar = tqdm(total=len(rows), initial=len(rows) - len(todo), unit="run", disable=not progress,
               desc=f"sweep {sweep.name} shard {shard[0]}/{shard[1]}")
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            rec = _train_one(task)
            bar.update(1)
            bar.set_postfix(L=rec["depth"], d=rec["width"], loss=f"{rec['eval_loss'] or float('nan'):.3f}")
    else:
        _run_side_by_side(tasks, jobs, bar)
    bar.close()
    return [record(r["dir"]) for r in rows if (r["dir"] / "result.json").exists()]


def _train_one(task) -> dict:
    """Train one run of a sweep (``task`` = (flat config, sweep metadata)); return its record."""
    fields, meta = task
    t0 = time.perf_counter()
    train(fields, progress=False, verbose=False)
    run_dir = Path(fields["out_dir"])
    write_json(run_dir / "sweep_meta.json", {**meta, "wall_seconds": round(time.perf_counter() - t0, 2)})
    return record(run_dir)


def _worker(core: int | None, tasks: list) -> None:
    """A side-by-side worker: pin to one core, one XLA CPU device, then train its tasks in turn."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    os.environ["DWLIB_CPU_DEVICES"] = "1"
    for task in tasks:
        _train_one(task)


def _run_side_by_side(tasks: list, jobs: int, bar) -> None:
    """Run ``tasks`` in ``jobs`` spawned processes (round robin), updating ``bar`` as runs finish."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(cores[i % len(cores)] if cores else None, tasks[i::jobs]))
             for i in range(min(jobs, len(tasks)))]
    for p in procs:
        p.start()
    pending = {Path(t[0]["out_dir"]) for t in tasks}
    while pending:
        finished = {d for d in pending if (d / "sweep_meta.json").exists()}
        bar.update(len(finished))
        pending -= finished
        if pending and not any(p.is_alive() for p in procs):
            break
        time.sleep(1.0)
    for p in procs:
        p.join()
    failed = [i for i, p in enumerate(procs) if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"sweep workers {failed} failed (exit codes {[procs[i].exitcode for i in failed]}); "
                           "finished runs are kept, run the sweep again to retry the others")


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
        live_train, live_evals = read_metrics(tmp)
    seconds = time.perf_counter() - t0
    live_eval = {e["step"]: e["eval_loss"] for e in live_evals}
    thinned = dict(thin(live_train, width=window(cfg.steps)))  # the stored run's windows
    evals = [[s, v, live_eval[s]] for s, v in rec["eval_curve"] if s in live_eval]
    trains = [[s, v, thinned[s]] for s, v in rec["train_curve"] if s in thinned]
    diffs = [abs(a - b) for _, a, b in evals + trains]
    return {"steps": steps, "seconds": seconds, "eval": evals, "train": trains,
            "max_abs_diff": max(diffs) if diffs else float("nan")}

