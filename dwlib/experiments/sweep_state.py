"""What a sweep's results directory holds and who owns it: shards, run states, the claim on a
directory, setting corrupt runs aside, and the outcome of a sweep call. Shared by the run-by-run
sweep (:mod:`dwlib.experiments.sweep`) and the shape-by-shape one (:mod:`dwlib.experiments.group_sweep`).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from dwlib.errors import InputError, StateError, require
from dwlib.experiments.presets import Sweep
from dwlib.experiments.records import record
from dwlib.store import check_kinds, exclusive, packaged_path, write_json
from dwlib.train.config import run_key


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
    path = check_kinds(out, files=("sweep.json",), dirs=("runs", "set-aside")) / "sweep.json"
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


def one_line(e: Exception) -> str:
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text if len(text) <= 300 else text[:297] + "..."


def move_aside(run_dir: Path, reason: str, log) -> str | None:
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
        log(f"{reason}; could not be set aside ({one_line(e)}); skipped")
        return "failed"
    log(f"{reason}; set aside in {dest}, training it anew")
    return None


def stderr_line(line: str) -> None:
    """The default log of a sweep: one line to standard error, at once."""
    print(line, file=sys.stderr, flush=True)
