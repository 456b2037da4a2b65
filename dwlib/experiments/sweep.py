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
- :func:`replay` trains the first steps of a stored run again and compares them with the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import multiprocessing
import os
import queue
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tqdm.auto import tqdm

from dwlib.errors import InputError, StateError, require, require_int
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import record, thin, window
from dwlib.store import exclusive, packaged_path, write_json
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
    """The runs of this shard: key, config, point and state ('done', 'partial', 'todo', or
    'corrupt' with its ``reason``). StateError when ``out`` belongs to another sweep."""
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


def run_state(run_dir: Path) -> tuple[str, str | None]:
    """('done', None) for a finished run whose files are whole (its record reads), ('corrupt',
    reason) for a result or config that cannot be used (a config of another run included), else
    ('partial' | 'todo', None)."""
    if not (run_dir / "config.json").exists() and not (run_dir / "result.json").exists():
        return "todo", None
    try:
        stored = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        key = run_key(stored) if isinstance(stored, dict) else None
    except (OSError, ValueError):
        key = None
    if key is None:
        return "corrupt", f"run {run_dir.name}: config.json is missing or not a JSON object"
    if key != run_dir.name:
        return "corrupt", f"run {run_dir.name}: config.json holds the config of another run ({key})"
    if (run_dir / "result.json").exists():
        try:
            record(run_dir)
        except StateError as e:
            return "corrupt", str(e)
        return "done", None
    return "partial", None


def check_owner(sweep: Sweep, out: Path) -> bool:
    """True when ``out/sweep.json`` names this sweep, False when ``out`` holds no sweep yet (absent,
    or nothing in it but hidden files); StateError when it is another sweep's or not a sweep's."""
    path = out / "sweep.json"
    if path.exists():
        try:
            name = json.loads(path.read_text(encoding="utf-8"))["name"]
        except (OSError, ValueError, KeyError, TypeError):
            raise StateError(f"{path} is not a sweep's description: restore it or give another --out") from None
        if name != sweep.name:
            raise StateError(f"results directory {out} belongs to sweep {name!r} (its sweep.json), "
                             f"not {sweep.name!r}: give {sweep.name!r} a directory of its own (--out)")
        return True
    if out.is_dir() and any(not p.name.startswith(".") for p in out.iterdir()):
        raise StateError(f"results directory {out} is not empty and has no sweep.json, so it is no sweep's: "
                         "give a new or empty directory (--out)")
    return False


def claim(sweep: Sweep, out: Path) -> None:
    """Make ``out`` this sweep's results directory: write its ``sweep.json`` unless one is there
    (refused when it names another sweep). Two shards starting at once both succeed; two sweeps
    starting at once on one new directory: one gets it, the other is refused (``os.link`` never
    replaces a file)."""
    definition = json.loads(json.dumps(dataclasses.asdict(sweep)))
    if check_owner(sweep, out):
        if json.loads((out / "sweep.json").read_text(encoding="utf-8")) != definition:
            write_json(out / "sweep.json", definition)  # the same sweep, redefined (more seeds, say)
        return
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".sweep.json.{os.getpid()}.claim"
    try:
        tmp.write_text(json.dumps(definition, indent=2) + "\n", encoding="utf-8")
        os.link(tmp, out / "sweep.json")
    except FileExistsError:
        check_owner(sweep, out)  # claimed a moment ago: by another shard of this sweep, or refused
    finally:
        tmp.unlink(missing_ok=True)


class Outcome(list):
    """What :func:`run` returns: the records of the shard's finished runs (a list), and in
    ``counts`` what this call did: runs ``completed`` and ``diverged`` now, ``before`` (finished
    earlier or by another process meanwhile), ``set_aside``, ``failed`` (again after being set
    aside), ``busy`` (in use by another process, skipped), ``left`` (not started: ``limit``)."""

    def __init__(self, records: list[dict], counts: dict, runs: int, label: str):
        super().__init__(records)
        self.counts, self.runs, self.label = counts, runs, label

    def line(self) -> str:
        """The summary in one line."""
        c = self.counts
        parts = [f"{c[k]} {label}" for k, label in (("set_aside", "set aside"), ("failed", "failed"),
                                                     ("busy", "skipped (in use by another process)"),
                                                     ("left", "left (limit)")) if c[k]]
        return (f"{self.label}: {len(self)} of {self.runs} runs finished ({c['completed']} completed and "
                f"{c['diverged']} diverged now, {c['before']} before)" + ("; " + ", ".join(parts) if parts else ""))


OUTCOMES = ("completed", "diverged", "before", "set_aside", "failed", "busy", "left")
FATAL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}  # no other run could be written either


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
    log = log or ((lambda line: bar.write(line, file=sys.stderr)) if progress else _stderr)
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            _count(counts, *_attempt(task, log))
            bar.update(1)
    else:
        _run_side_by_side(tasks, jobs, bar, counts)
    bar.close()
    records = [record(r["dir"]) for r in rows if run_state(r["dir"])[0] == "done"]
    return Outcome(records, counts, len(rows), label)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
                if (refused := _set_aside(run_dir, reason, log)) is not None:
                    return refused, set_aside
                set_aside += 1
            try:
                return _train_one(task)["status"], set_aside
            except (StateError, OSError) as e:
                if isinstance(e, OSError) and e.errno in FATAL_ERRNOS:
                    raise
                reason = _one_line(e) if key in str(e) else f"run {key}: {_one_line(e)}"
        log(f"{reason}; skipped (it failed again after being set aside)")
        return "failed", set_aside


def _one_line(e: Exception) -> str:
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text if len(text) <= 300 else text[:297] + "..."


def _set_aside(run_dir: Path, reason: str, log) -> str | None:
    """Move a run's directory whole to ``<out>/set-aside/<key>-<n>/`` (with ``set_aside.json``
    saying why) and say so; or say why not and return the outcome: 'busy' when a process outside
    the sweep holds the run, 'failed' when it cannot be moved."""
    if (run_dir / ".lock").exists():  # the lock train() holds on a run directory
        try:
            with exclusive(run_dir / ".lock", f"run directory {run_dir}"):
                pass
        except StateError as e:
            log(f"{reason}; not set aside: {e}")
            return "busy"
    if not run_dir.exists():
        return None
    base = run_dir.parent.parent / "set-aside"
    n = 1
    while (base / f"{run_dir.name}-{n}").exists():
        n += 1
    dest = base / f"{run_dir.name}-{n}"
    try:
        base.mkdir(exist_ok=True)
        os.rename(run_dir, dest)
        write_json(dest / "set_aside.json", {"reason": reason, "time": time.strftime("%Y-%m-%d %H:%M:%S")})
    except OSError as e:
        if e.errno in FATAL_ERRNOS:
            raise
        log(f"{reason}; could not be set aside ({_one_line(e)}); skipped")
        return "failed"
    log(f"{reason}; set aside in {dest}, training it anew")
    return None


def _train_one(task) -> dict:
    """Train one run of a sweep (``task`` = (flat config, sweep metadata)); return its record."""
    fields, meta = task
    t0 = time.perf_counter()
    train(fields, progress=False, verbose=False)
    run_dir = Path(fields["out_dir"])
    write_json(run_dir / "sweep_meta.json", {**meta, "wall_seconds": round(time.perf_counter() - t0, 2)})
    return record(run_dir)


def _worker(core: int | None, tasks: list, done) -> None:
    """A side-by-side worker: pin to one core, one XLA CPU device, then train its tasks in turn,
    putting (key, outcome, times set aside) on the queue ``done``."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    os.environ["DWLIB_CPU_DEVICES"] = "1"
    for task in tasks:
        done.put((task[1]["key"], *_attempt(task, _stderr)))


def _run_side_by_side(tasks: list, jobs: int, bar, counts: dict) -> None:
    """Run ``tasks`` in ``jobs`` spawned processes (round robin), counting outcomes as runs end."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    ctx = multiprocessing.get_context("spawn")
    done = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(cores[i % len(cores)] if cores else None, tasks[i::jobs], done))
             for i in range(min(jobs, len(tasks)))]
    for p in procs:
        p.start()
    seen = 0
    while seen < len(tasks):
        alive = any(p.is_alive() for p in procs)
        try:
            _key, outcome, set_aside = done.get(timeout=1.0 if alive else 0.1)
        except queue.Empty:
            if alive:
                continue
            break
        _count(counts, outcome, set_aside)
        bar.update(1)
        seen += 1
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
    diffs = [abs(a - b) if a is not None and b is not None else 0.0 if a is b else float("inf")
             for _, a, b in evals + trains]  # None: a window holding a diverged step, in both or in one
    return {"steps": steps, "seconds": seconds, "eval": evals, "train": trains,
            "max_abs_diff": max(diffs) if diffs else float("nan")}

