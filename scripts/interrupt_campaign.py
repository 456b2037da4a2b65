"""Ctrl-C and SIGTERM at many moments of ``dwlib train``: every time one line, the
documented exit status, and a resume to the uninterrupted result.

A tiny run (depth 1, width 32, 48 steps on a 12K-token corpus; an evaluation every 2 steps, a
checkpoint every 4) is trained once uninterrupted as the reference. Then, for each signal, chains
of runs on one directory each: the program is started in a session of its own and the signal is
sent to its whole process group, as a terminal's Ctrl-C is, at a moment of one of three kinds:

- ``random``: uniform over the reference run's wall time from the start (imports, JAX start-up,
  the corpus, restoring, compiling, training, writing the result, exiting), after Python's own
  start-up (:data:`STARTUP`: the interpreter runs no code of the program before it);
- ``checkpoint``: 0-100 ms after a checkpoint's temporary directory appears (while orbax writes it);
- ``before-checkpoint``: 0-80 ms after a checkpoint is committed, in the steps, the evaluation and
  the metrics' fsync that lead to the next one.

Each moment must end with exit status 130 (SIGINT) or 143 (SIGTERM) and exactly the one line on
stderr (no traceback, no "Exception ignored", no warning, no note about an unusable checkpoint),
within :data:`PATIENCE` seconds. The run is started again after each moment (which resumes it),
and every chain ends with a run to completion whose ``metrics.jsonl`` and ``result.json`` (timing
aside) must equal the reference's byte for byte. A moment that finds the process already exited is
drawn again. Prints one line per moment and a summary; exit status 0 when every moment passed.

    .venv/bin/python scripts/interrupt_campaign.py --moments 30     # 30 per signal (a few minutes)

tests/test_interrupts.py runs a few of these moments in the unit suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TRAIN = ["--depth", "1", "--width", "32", "--heads", "2", "--vocab-size", "300", "--seq-len", "32", "--batch-size", "8",
         "--steps", "48", "--lr", "3e-3", "--eval-interval", "2", "--checkpoint-interval", "4"]
KINDS = ("random", "checkpoint", "before-checkpoint")
LINES = {signal.SIGINT: "dwlib train: interrupted (SIGINT); run the same command again to resume from the last "
                        "checkpoint",
         signal.SIGTERM: "dwlib train: interrupted (SIGTERM); run the same command again to resume from the last "
                         "checkpoint"}
PATIENCE = 60.0  # seconds from the signal to the end of the process before the moment fails
# Python's own start-up (the interpreter, site and its .pth files: 0.05-0.2 s on 2 busy cores) runs
# before any of the program's code, under Python's default handling (a signal then kills the process,
# or is a KeyboardInterrupt traceback from site); the random moments start after it.
STARTUP = 0.3
TIMING = ("tokens_per_s", "seconds_this_session")


def environment(root: Path, xla: str | None = None) -> dict:
    """The program's environment: CPU, one device, the corpus cache in ``root``, and a compilation
    cache (``xla``, default ``root/xla``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DWLIB_", "XLA_", "JAX_"))}
    return {**env, "JAX_PLATFORMS": "cpu", "DWLIB_CPU_DEVICES": "1", "DWLIB_CACHE": str(root / "cache"),
            "JAX_COMPILATION_CACHE_DIR": xla or str(root / "xla"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0", "PYTHONUNBUFFERED": "1"}


def command(root: Path, run: Path) -> list[str]:
    return [sys.executable, "-m", "dwlib", "train", "--no-progress", "--corpus", str(root / "corpus.txt"), *TRAIN,
            "--out", str(run)]


def prepare(root: Path, xla: str | None = None, measure: bool = True) -> dict:
    """The corpus, and the reference run trained uninterrupted (which fills both caches). The random
    moments are drawn within the wall time of a run with the caches warm (``measure``: a second run
    from scratch; otherwise half the first run's, which compiled)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    env = environment(root, xla)
    t0 = time.monotonic()
    proc = subprocess.run(command(root, root / "reference"), env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"the reference run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    seconds = (time.monotonic() - t0) / 2
    if measure:
        t0 = time.monotonic()
        subprocess.run(command(root, root / "again"), env=env, capture_output=True, timeout=900)
        seconds = time.monotonic() - t0
    return {"root": root, "env": env, "seconds": seconds,
            "metrics": (root / "reference" / "metrics.jsonl").read_text(),
            "result": untimed(json.loads((root / "reference" / "result.json").read_text()))}


def untimed(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in TIMING}


def _exited(pid: int) -> bool:
    """Whether the child has exited (without reaping it, so that its exit status stays ours to read)."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None and info.si_pid == pid


def _entries(path: Path) -> set[str]:
    try:
        return set(os.listdir(path))
    except FileNotFoundError:
        return set()


def _wait_for(proc, check, limit: float = 300.0):
    """Poll every 2 ms until ``check()`` gives something (returned) or the process exits (None)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if (found := check()) is not None:
            return found
        if proc.poll() is not None:
            return None
        time.sleep(0.002)
    return None


def interrupt(world: dict, run: Path, signum: int, kind: str, rng: random.Random) -> dict:
    """Start the run, send ``signum`` to its process group at a moment of ``kind``; what happened."""
    root, ckpts = world["root"], run / "checkpoints"
    before = _entries(ckpts)
    t0 = time.monotonic()
    proc = subprocess.Popen(command(root, run), env=world["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    if kind == "random":
        time.sleep(rng.uniform(STARTUP, world["seconds"]))
        found = True
    else:
        temporary = kind == "checkpoint"
        found = _wait_for(proc, lambda: next((n for n in _entries(ckpts) - before
                                              if ("tmp" in n) == temporary), None))
        if found is not None:
            time.sleep(rng.uniform(0.0, 0.1 if temporary else 0.08))
    at = time.monotonic() - t0
    if found is None or _exited(proc.pid):
        out, err = proc.communicate(timeout=PATIENCE)
        return {"late": True, "status": proc.returncode, "stderr": err}
    os.killpg(proc.pid, signum)
    t_signal = time.monotonic()
    try:
        out, err = proc.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return {"late": False, "at": at, "status": "still running", "stderr": err, "ok": False}
    seconds = time.monotonic() - t_signal
    if err.startswith("completed: step"):  # the run had finished its work before the signal: too late
        return {"late": True, "status": 0, "stderr": err.splitlines(keepends=True)[0]}
    ok = proc.returncode == 128 + signum and err == LINES[signum] + "\n"
    return {"late": False, "at": at, "status": proc.returncode, "stderr": err, "stdout": out, "ok": ok,
            "seconds": seconds}


def chain(world: dict, name: str, moments: list[tuple[int, str]], seed: int, log=print) -> list[dict]:
    """Interrupt one run at ``moments`` in turn (each start resumes it), then finish it and compare."""
    rng, run, outcomes, unverified = random.Random(seed), world["root"] / name, [], []
    for signum, kind in moments:
        for _ in range(20):  # a moment that finds the process exited already is drawn again
            got = interrupt(world, run, signum, kind, rng)
            if not got["late"]:
                break
            if got["status"] != 0:  # it ended by itself, and not well
                got.update(ok=False, at=None)
                break
            _verify(world, run, name, unverified, got["stderr"], log)  # it finished first: check, start again
            shutil.rmtree(run)
        got.update(signal=signal.Signals(signum).name, kind=kind, chain=name)
        outcomes.append(got)
        unverified.append(got)
        log(f"{name} {got['signal']:7} {kind:17} at {got.get('at') or 0:6.2f} s: status {got['status']}, "
            f"{'one line' if got.get('ok') else 'FAILED ' + repr(got['stderr'][-600:])}"
            + (f", ended {got['seconds']:.2f} s after the signal" if got.get("seconds") is not None else ""))
    proc = subprocess.run(command(world["root"], run), env=world["env"], capture_output=True, text=True, timeout=900)
    _verify(world, run, name, unverified, proc.stderr if proc.returncode == 0 else f"status {proc.returncode}: "
            + proc.stderr, log)
    return outcomes


def _verify(world: dict, run: Path, name: str, unverified: list[dict], stderr: str, log) -> None:
    """Whether the finished ``run`` equals the reference (metrics byte for byte, the summary but its
    timing) and said nothing but its last line: recorded in the moments since the last check."""
    result = run / "result.json"
    same = result.exists() and (run / "metrics.jsonl").read_text() == world["metrics"] and \
        untimed(json.loads(result.read_text())) == world["result"]
    quiet = all(line.startswith("completed: step 48") for line in stderr.splitlines())
    for got in unverified:
        got["resumed"] = same and quiet
    log(f"{name}: finished after {len(unverified)} moments: "
        f"{'the uninterrupted result' if same and quiet else 'DIFFERENT: ' + stderr[-800:]}")
    unverified.clear()


def plan(moments: int, signals=(signal.SIGINT, signal.SIGTERM)) -> list[tuple[int, str]]:
    """``moments`` per signal, the kinds in turn, the signals interleaved."""
    per = [[(s, KINDS[i % len(KINDS)]) for i in range(moments)] for s in signals]
    return [m for pair in zip(*per) for m in pair]


def campaign(world: dict, moments: int, chains: int, parallel: int, seed: int = 38, log=print) -> list[dict]:
    todo = plan(moments)
    random.Random(seed).shuffle(todo)  # each chain a mix of signals and kinds
    parts = [todo[i::chains] for i in range(chains)]
    with ThreadPoolExecutor(parallel) as pool:
        results = pool.map(lambda i: chain(world, f"chain-{i}", parts[i], seed + i, log), range(chains))
        return [o for part in results for o in part]


def summary(outcomes: list[dict]) -> list[str]:
    out = []
    for name in ("SIGINT", "SIGTERM"):
        mine = [o for o in outcomes if o["signal"] == name]
        if not mine:
            continue
        kinds = {k: sum(o["kind"] == k for o in mine) for k in KINDS}
        statuses = {}
        for o in mine:
            statuses[o["status"]] = statuses.get(o["status"], 0) + 1
        ended = [o["seconds"] for o in mine if o.get("seconds") is not None]
        out.append(f"{name}: {len(mine)} moments ({', '.join(f'{v} {k}' for k, v in kinds.items())}); "
                   f"exit statuses {statuses}; one line {sum(bool(o.get('ok')) for o in mine)}/{len(mine)}; "
                   f"resumed to the uninterrupted result {sum(o['resumed'] for o in mine)}/{len(mine)}; "
                   f"ended {statistics.median(ended):.2f} s (median), {max(ended):.2f} s (max) after the signal")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moments", type=int, default=30, help="moments per signal (default 30)")
    parser.add_argument("--chains", type=int, default=6, help="run directories the moments are spread over")
    parser.add_argument("--parallel", type=int, default=2, help="chains at once (default 2)")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--dir", default=None, help="working directory (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dwlib-interrupts-") as tmp:
        root = Path(args.dir or tmp)
        t0 = time.monotonic()
        world = prepare(root)
        print(f"reference run: {world['seconds']:.1f} s with a warm compilation cache", flush=True)
        outcomes = campaign(world, args.moments, args.chains, args.parallel, args.seed,
                            log=lambda line: print(line, flush=True))
        for line in summary(outcomes):
            print(line)
        print(f"campaign: {time.monotonic() - t0:.0f} s")
    return 0 if all(o.get("ok") and o["resumed"] for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
