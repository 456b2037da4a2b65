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
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from tqdm.auto import tqdm

from dwlib.errors import InputError, StateError, Unfinished, require, require_int
from dwlib.experiments import group_sweep
from dwlib.experiments.sweep_state import (FATAL_ERRNOS, OUTCOMES, Outcome, check_owner, move_aside, one_line,  # noqa: F401
                                           claim, git_commit, parse_shard, run_state, shard_of,
                                           stderr_line)
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import record, thin, window
from dwlib.store import exclusive, write_json
from dwlib.train.checkpoint import check_out_dir, read_metrics
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
        jobs: int = 1, log=None) -> Outcome:
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
    if sweep.trainer == "group":
        require(jobs == 1, f"sweep {sweep.name} trains the runs of a shape together: jobs must be 1, got {jobs}")
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
    env = {"sweep": sweep.name, "hardware": hardware(), "git_commit": git_commit(), "jobs": jobs}
    meta = {r["key"]: {**env, "key": r["key"], "target_budget": r["point"].target_budget} for r in rows}
    for r in rows:  # finished, but killed before its sweep_meta.json: no wall time to tell
        if r["state"] == "done" and not (r["dir"] / "sweep_meta.json").exists():
            write_json(r["dir"] / "sweep_meta.json", {**meta[r["key"]], "wall_seconds": None})
    tasks = [(r["config"].replace(out_dir=str(r["dir"]), cache_dir=cache_dir).to_dict(), meta[r["key"]])
             for r in todo]
    label = f"sweep {sweep.name} shard {shard[0]}/{shard[1]}"
    counts = dict.fromkeys(OUTCOMES, 0)
    counts["before"], counts["left"] = len(rows) - len(todo) - len(left), len(left)
    bar = tqdm(total=len(rows), initial=counts["before"], unit="run", disable=not progress, desc=label)
    log = log or ((lambda line: bar.write(line, file=sys.stderr)) if progress else stderr_line)
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            _count(counts, *_attempt(task, log))
            bar.update(1)
    else:
        _run_side_by_side(tasks, jobs, bar, counts)
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
            if not (run_dir / "sweep_meta.json").exists():
                write_json(run_dir / "sweep_meta.json", {**task[1], "wall_seconds": None})
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
    write_json(run_dir / "sweep_meta.json", {**meta, "wall_seconds": round(time.perf_counter() - t0, 2)})
    return record(run_dir)


def _worker(core: int | None, tasks: list, conn) -> None:
    """A side-by-side worker: pin to one core, one XLA CPU device, then train its tasks in turn,
    sending (key, outcome, times set aside) through ``conn`` as each ends; an error that ends a
    sweep (a full disk, bad input) is sent for the parent to raise. Ctrl-C is the parent's to handle:
    SIGINT is ignored here (the parent stops its workers), and a worker whose parent is gone ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_parent, name="dwlib-parent", daemon=True).start()
    tqdm.set_lock(threading.RLock())  # not tqdm's multiprocessing lock, which a killed worker would leak
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    os.environ["DWLIB_CPU_DEVICES"] = "1"
    try:
        for task in tasks:
            conn.send((task[1]["key"], *_attempt(task, stderr_line)))
    except (InputError, OSError) as err:  # as in one process: the sweep ends with it
        conn.send(err)
    finally:
        conn.close()


def _end_with_parent() -> None:
    """End this worker as soon as its parent process has ended (killed without stopping it)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()
        os._exit(1)


@contextlib.contextmanager
def _sigint_blocked():
    """SIGINT blocked in this thread for the block. A worker started in it inherits the mask, so the
    Ctrl-C a terminal sends to the whole process group never reaches it, not even during its imports
    (its parent stops it); here the signal is handled all the same, by another thread's C handler."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    was = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, was)


def _run_side_by_side(tasks: list, jobs: int, bar, counts: dict) -> None:
    """Run ``tasks`` in ``jobs`` spawned processes (round robin), counting outcomes as runs end.
    :class:`~dwlib.errors.Unfinished` (one line) when a worker ended before its runs did (killed;
    or a bug, whose traceback it printed); a worker's error that ends a sweep is raised here. The
    workers talk through pipes (no semaphores to leak), and however this ends (Ctrl-C included)
    none is left running."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    ctx = multiprocessing.get_context("spawn")
    workers = {}  # receiving end of a worker's pipe -> the worker
    try:
        for i in range(min(jobs, len(tasks))):
            receive, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_worker, args=(cores[i % len(cores)] if cores else None, tasks[i::jobs], send),
                               daemon=True, name=f"dwlib-sweep-worker-{i}")
            with _sigint_blocked():
                proc.start()
            send.close()
            workers[receive] = proc
        talking = list(workers)
        while talking:
            for conn in multiprocessing.connection.wait(talking):
                try:
                    message = conn.recv()
                except EOFError:  # the worker has ended
                    talking.remove(conn)
                    continue
                if isinstance(message, BaseException):
                    raise message
                _count(counts, *message[1:])
                bar.update(1)
        for proc in workers.values():
            proc.join()
    finally:
        for proc in workers.values():
            if proc.is_alive():  # stopped early (Ctrl-C, another worker's error): killed, as it may be at any time
                proc.kill()
        for conn, proc in workers.items():
            proc.join()
            conn.close()
    failed = [(i, p.exitcode) for i, p in enumerate(workers.values()) if p.exitcode != 0]
    if failed:
        how = ", ".join(f"worker {i} {_ended(code)}" for i, code in failed)
        raise Unfinished(f"sweep {how} before {'its' if len(failed) == 1 else 'their'} runs finished; finished "
                         "runs are kept: run the sweep again to train the others")


def _ended(code: int) -> str:
    """How a worker process ended, from its exit code: 'was killed by SIGKILL', 'was stopped by
    SIGTERM' (128 + the signal: its handler's status), 'exited with status 1'."""
    for number, verb in ((-code, "was killed by"), (code - 128, "was stopped by")):
        if number in set(signal.Signals):
            return f"{verb} {signal.Signals(number).name}"
    return f"exited with status {code}"


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
    diffs = [abs(a - b) if a is not None and b is not None else 0.0 if a is b else float("inf")
             for _, a, b in evals + trains]  # None: a window holding a diverged step, in both or in one
    return {"steps": steps, "seconds": seconds, "eval": evals, "train": trains,
            "max_abs_diff": max(diffs) if diffs else float("nan")}

