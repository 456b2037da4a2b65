"""The sweep runner: every preset trained group by group.

A preset with ``trainer="single"`` is a sweep whose groups hold one run each, shard by run:
each is trained by :func:`dwlib.train.loop.train` in its run directory (checkpointed, so a
killed run resumes), under the run's lock, its corrupt files set aside (:func:`_attempt`).

For a preset with ``trainer="group"``, the runs of one (depth, width) that differ only in seed
and peak learning rate form a group, trained at once by :func:`dwlib.train.multi.train_group`
(``vmap`` over the runs, ``lax.scan`` over ``chunk`` steps). With ``select_seeds``, a shape has
two groups: first its grid seeds at every rate of the grid; then, once the rate is chosen on the
validation split (:mod:`dwlib.experiments.selection`), its other seeds at that rate.

When a group has trained, each run's directory (``config.json``, ``metrics.jsonl``,
``result.json``, ``sweep_meta.json``: what :func:`dwlib.experiments.records.record` reads, the
same files a single run writes) is written whole under a temporary name and renamed into
``runs/<key>``, one rename per run: a run is either absent or whole. While it trains, a group
saves its state every :data:`CHECKPOINT_SECONDS` or so at a chunk boundary
(:class:`~dwlib.train.checkpoint.GroupCheckpoint`, in ``runs/.group-<digest>``, deleted once its
runs are committed): a group killed while it trains resumes from there, its runs bit for bit
those of an uninterrupted group; every group committed before it stays, and a run never trains
twice once committed. The runs of a group are locked
(the per-run locks of :mod:`dwlib.experiments.sweep`), so two processes never train one run.
Shards split a sweep by shape. The rate chosen for each shape is not stored: it is computed
again from the runs' records whenever it is needed (:func:`dwlib.experiments.selection.choose`).
A group run's ``tokens_per_s`` is its tokens over the group's wall
time, compilation included (the group's rate, in ``sweep_meta.json``, is that times its runs).
A group met with some of its runs committed and others not (a sweep killed between two of its
renames) is trained again whole, as it was composed, and only its missing runs are committed:
every run is what its whole group gives, bit for bit (a smaller group gives it only up to float
rounding).
Each ``result.json`` stores the SHA-256 of its ``metrics.jsonl`` and of its own fields, as a
single run's does (:func:`dwlib.train.rundir.write_run`), so an edit is found when it is read.
A run's temporary ``.<key>.<pid>.group`` left by a process killed in its commit is removed when
a sweep starts, once that process is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import jax
from tqdm.auto import tqdm

from dwlib.errors import InputError, StateError, require_int
from dwlib.experiments import selection
# Sideways, within experiments: the results directory's state (run states, claim, set-aside),
# apart from the runner so that the records and the command line read it without training code.
from dwlib.experiments import sweep_state as base
from dwlib.experiments.presets import Sweep, get_preset
from dwlib.experiments.records import record, stored_results
from dwlib.store import exclusive
from dwlib.train import data as data_lib
from dwlib.train import rundir
from dwlib.train.checkpoint import GroupCheckpoint, check_out_dir
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.loop import train
from dwlib.train.memory import check_fits
from dwlib.train.model import parameter_counts
from dwlib.train.multi import group_steps, init_group, metric_records, new_curve, outcome as run_outcome, train_group
from dwlib.train.process import hardware, prepare_process

#: seconds of training between two checkpoints of a group (saved at the next chunk boundary)
CHECKPOINT_SECONDS = 300


def _row(cfg: TrainConfig, point, out: Path) -> dict:
    key = run_key(cfg)
    state, reason = base.run_state(out / "runs" / key)
    return {"key": key, "config": cfg, "point": point, "dir": out / "runs" / key, "state": state, "reason": reason}


def _finished_records(rows: list[dict]) -> list[dict]:
    return [record(r["dir"]) for r in rows if r["state"] == "done"]


def groups(sweep: Sweep, out: Path, shard: tuple[int, int] = (0, 1)) -> list[dict]:
    """The groups of this shard (shapes i, i + n, ...) known so far: ``{"point", "stage", "rows"}``.
    Stage 1 is the grid (grid seeds x rates), and with ``extend_edges`` one more stage-1 group for
    each rate beyond an edge (``"extension": True``), present once the rates before it have
    finished; stage 2 the other seeds at the chosen rate (present once the rate is chosen; ``rows``
    empty while it waits, ``"waiting": True``, or when no rate could be chosen)."""
    if sweep.trainer == "single":  # a group of one per run, the shards taken run by run
        points = {(p.depth, p.width): p for p in sweep.points()}
        return [{"point": (p := points[(c.model.depth, c.model.width)]), "stage": 1, "rows": [_row(c, p, out)]}
                for c in base.shard_of(sweep.configs(), shard)]
    out_groups = []
    for p in base.shard_of(sweep.points(), shard):
        out_groups += _point_groups(sweep, p, out)
    return out_groups


def stored_rate(sweep: Sweep, p) -> float:
    """The rate shape ``p`` chose in the published sweep ``sweep.rates_from``, chosen again from its
    stored runs by that sweep's own grid seeds and exclusions; an error naming the shape if it has
    none there (a shape that sweep lacks, or one whose every rate was barred)."""
    parent = get_preset(sweep.rates_from)
    c = selection.choose(stored_results(parent.name), parent.grid_seeds(), parent.exclude).get((p.depth, p.width))
    if c is None or c["lr"] is None:
        raise InputError(f"{sweep.name}: the shape of {p.depth} layers and width {p.width} has no chosen rate "
                         f"in the stored sweep {parent.name}")
    return c["lr"]


def _point_groups(sweep: Sweep, p, out: Path) -> list[dict]:
    if sweep.rates_from:  # one group: every seed at the rate this shape chose in the other sweep
        lr = stored_rate(sweep, p)
        return [{"point": p, "stage": 2, "rows": [_row(sweep.config(p, s, lr), p, out) for s in sweep.seeds]}]
    lrs = list(sweep.lrs) or [None]
    grid = [_row(sweep.config(p, s, lr), p, out) for s in sweep.grid_seeds() for lr in lrs]
    found = [{"point": p, "stage": 1, "rows": grid}]
    if sweep.select_seeds is None:
        return found
    tried = list(grid)
    while True:
        choice = selection.choose(_finished_records(tried), sweep.grid_seeds(), sweep.exclude)
        c = choice.get((p.depth, p.width))
        nxt = sweep.next_rate(c["lrs"], c["lr"]) if c and c["lr"] is not None else None
        if nxt is None:
            break
        more = [_row(sweep.config(p, s, nxt), p, out) for s in sweep.grid_seeds()]
        found.append({"point": p, "stage": 1, "rows": more, "extension": True})
        tried += more
        if any(r["state"] != "done" for r in more):
            c = None  # the rate is chosen once this extension has trained
            break
    lr = c["lr"] if c else None
    rest = [_row(sweep.config(p, s, lr), p, out) for s in sweep.seeds[sweep.select_seeds:]] if lr else []
    return found + [{"point": p, "stage": 2, "rows": rest, "waiting": c is None}]


def plan(sweep: Sweep, out, shard: tuple[int, int] = (0, 1)) -> list[dict]:
    """The runs of this shard known so far (rows as :func:`dwlib.experiments.sweep.plan`)."""
    out = Path(out)
    base.check_owner(sweep, out)
    return [r for g in groups(sweep, out, shard) for r in g["rows"]]


def _commit(row: dict, curve: dict, meta: dict, run_info: dict, log) -> tuple[str, int]:
    """Write one run's directory under a temporary name and rename it into place; its outcome and
    whether an unfinished directory of the run was set aside for it (0 or 1)."""
    cfg, dest = row["config"], row["dir"]
    lines, outcome = [rundir.metric_line(r) for r in metric_records(curve, cfg.eval_interval)], run_outcome(curve, cfg.steps)
    tokens = outcome["steps_done"] * cfg.batch_size * cfg.model.seq_len
    result = rundir.summary(**outcome, parameters=parameter_counts(cfg.model), tokens_seen=tokens,
                            tokens_per_s=run_info["tokens_per_s"], seconds=run_info["seconds"],
                            devices=run_info["devices"], corpus=run_info["corpus"], trainer="group")
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.group")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        rundir.write_run(tmp, cfg.to_dict(), lines, result, meta)  # the result sealed with its metrics' digest
        set_aside = int(dest.exists())
        if set_aside and (refused := base.move_aside(dest, f"run {dest.name}: an unfinished or corrupt run "
                                                           "directory, replaced by its group's run", log)):
            return refused, 0
        os.rename(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return outcome["status"], set_aside


def _train(group: dict, todo: list[dict], sweep: Sweep, env: dict, cache_dir, progress: bool, log) -> list:
    """Train one group together, every run of it as it was composed (those already committed
    too, so that each run is what the whole group computes, bit for bit), and commit the runs
    ``todo``; their (outcome, set aside)."""
    rows = group["rows"]
    cfgs = [r["config"].replace(cache_dir=cache_dir) for r in rows]
    cfg = cfgs[0]
    steps = group_steps(cfgs)
    check_fits(cfg, list(steps.mesh.devices.flat), runs=len(cfgs), chunk=sweep.chunk)
    corpus = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, seq_len=cfg.model.seq_len,
                                  validation_split=cfg.validation_split)
    p = group["point"]
    devices = {"backend": jax.default_backend(), "count": int(steps.mesh.devices.size), "processes": jax.process_count()}
    ckpt = GroupCheckpoint(group_folder(rows), {"runs": [r["key"] for r in rows], "corpus": corpus.meta["fingerprint"],
                                                "devices": devices}, lead=jax.process_index() == 0)
    state, curves, before = ckpt.restore(init_group(cfgs))
    if curves is None:
        curves = [new_curve(c) for c in cfgs]
    else:
        log(f"group L={p.depth}, d={p.width} ({len(rows)} runs): resumed at step {state['step']} of {cfg.steps} "
            "from its checkpoint")
    t0 = saved = time.perf_counter()

    def after_chunk(step: int, n: int, seconds: float, now: dict) -> None:
        nonlocal saved
        if step < cfg.steps and time.perf_counter() - saved >= CHECKPOINT_SECONDS:
            ckpt.save(step, now, curves, before + time.perf_counter() - t0)
            saved = time.perf_counter()

    _, curves = train_group(cfgs, chunk=sweep.chunk, corpus=corpus, progress=progress, state=state, curves=curves,
                            after_chunk=after_chunk)
    seconds = before + time.perf_counter() - t0
    run_tokens = cfg.steps * cfg.batch_size * cfg.model.seq_len
    corpus_meta = corpus.meta
    info = {"seconds": round(seconds, 2), "tokens_per_s": round(run_tokens / seconds, 1), "devices": devices,
            "corpus": {"name": cfg.corpus, "tokens": corpus_meta["tokens"], "fingerprint": corpus_meta["fingerprint"]}}
    measured = run_measures(cfg, seconds, len(rows), corpus_meta)
    outcomes, wanted = [], {r["key"] for r in todo}
    for row, curve in zip(rows, curves):
        if row["key"] not in wanted:  # committed before: trained again only to keep the group whole
            continue
        meta = {**env, "key": row["key"], "target_budget": p.target_budget, "wall_seconds": round(seconds / len(rows), 2),
                **measured,
                "group": {"stage": group["stage"], "runs": len(rows), "wall_seconds": round(seconds, 2),
                          "tokens_per_s": round(len(rows) * run_tokens / seconds, 1), "chunk": sweep.chunk}}
        outcomes.append(_commit(row, curve, meta, info, log))
    ckpt.remove()
    return outcomes


def group_folder(rows: list[dict]) -> Path:
    """Where a group's checkpoint is kept while it trains: ``runs/.group-<digest of its runs' keys>``."""
    digest = hashlib.sha256(" ".join(r["key"] for r in rows).encode()).hexdigest()[:16]
    return rows[0]["dir"].parent / f".group-{digest}"


def run_measures(cfg: TrainConfig, seconds: float, runs: int, corpus_meta: dict) -> dict:
    """What a group run records beside its wall time: ``tflops``, the training FLOPs of the group's
    ``runs`` (each :meth:`~dwlib.train.config.TrainConfig.cost`'s; one shape and length) over the
    group's wall ``seconds`` (compilation and evaluations included: what the sweep achieved), and
    ``passes``, the run's training tokens over the corpus's training split (when its size is known)."""
    out = {"tflops": float(f"{runs * cfg.cost()['flops'] / seconds / 1e12:.4g}")}
    tokens = corpus_meta.get("tokens")
    train_tokens = tokens.get("train") if isinstance(tokens, dict) else None
    if train_tokens:
        out["passes"] = float(f"{cfg.steps * cfg.batch_size * cfg.model.seq_len / train_tokens:.4g}")
    return out


def _remove_stale_temporaries(runs: Path, log) -> None:
    """Remove the ``.<key>.<pid>.group`` folders (:func:`_commit`'s) of processes that have ended."""
    for tmp in runs.glob(".*.group"):
        match = re.fullmatch(r"\.([0-9a-f]+)\.(\d+)\.group", tmp.name)
        if match is None or int(match[2]) == os.getpid() or _alive(int(match[2])):
            continue
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"run {match[1]}: removed {tmp.name}, left by a sweep killed while it committed the run")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def run(sweep: Sweep | str, out, shard: tuple[int, int] = (0, 1), *, cache_dir: str | None = None,
        progress: bool = True, limit: int | None = None, log=None) -> base.Outcome:
    """Train every group of this shard that has runs left; return the records of the shard's
    finished runs (with each shape's chosen rate, :func:`selection.mark`, for a group preset), as
    an :class:`~dwlib.experiments.sweep_state.Outcome`. ``limit``: train at most that many groups
    now (with ``trainer="single"``, runs). The groups of a ``trainer="single"`` preset hold one run
    each, trained (checkpointed, resumable) by :func:`dwlib.train.loop.train` under the run's lock,
    with its failures isolated (:func:`_attempt`); the other groups are trained together and
    committed (:func:`_train`)."""
    sweep = get_preset(sweep) if isinstance(sweep, str) else sweep
    if limit is not None:
        require_int("limit", limit, minimum=0)
    prepare_process()  # before hardware() below starts JAX
    out = check_out_dir(out)
    base.check_owner(sweep, out)
    base.claim(sweep, out)
    (out / "runs").mkdir(exist_ok=True)
    single = sweep.trainer == "single"
    label = f"sweep {sweep.name} shard {shard[0]}/{shard[1]}"
    queue = groups(sweep, out, shard)
    planned = len(queue) if single else len(base.shard_of(sweep.points(), shard)) * sweep.runs_per_point()
    bar = tqdm(total=planned, unit="run", disable=not progress, desc=label)
    log = log or ((lambda line: bar.write(line, file=sys.stderr)) if progress else base.stderr_line)
    _remove_stale_temporaries(out / "runs", log)
    for g in [] if single else queue:  # a group's checkpoint left by a sweep killed after its last commit
        if g["rows"] and all(r["state"] == "done" for r in g["rows"]) and group_folder(g["rows"]).exists():
            shutil.rmtree(group_folder(g["rows"]), ignore_errors=True)
    if any(r["state"] != "done" for g in queue for r in g["rows"]):
        check_one_corpus(sweep, out, cache_dir)
    env = {"sweep": sweep.name, "hardware": hardware(), "git_commit": base.git_commit()}
    env |= {} if single else {"trainer": "group"}
    counts = dict.fromkeys(base.OUTCOMES, 0)
    trained = 0
    passed = set()  # groups met in this call (trained, busy elsewhere, or past the limit): never taken twice
    while (group := _next_group(sweep, out, shard, passed, queue if single else None)) is not None:
        todo = [r for r in group["rows"] if r["state"] != "done"]
        passed.add(_group_id(group))
        if limit is not None and trained >= limit:
            counts["left"] += len(todo)
            continue
        if single:
            outcomes = [_attempt(_task(r, env, cache_dir), log) for r in todo]
        else:
            outcomes = _locked_train(group, todo, sweep, env, cache_dir, progress, log, counts)
        for outcome, set_aside in outcomes:
            counts[outcome] += 1
            counts["set_aside"] += set_aside
        bar.update(len(todo))
        trained += 1
    bar.close()
    rows = [r for g in groups(sweep, out, shard) for r in g["rows"]]
    if single:  # finished, but killed before its sweep_meta.json: no wall time to tell
        for r in rows:
            if r["state"] == "done" and not (r["dir"] / rundir.SWEEP_META).exists():
                rundir.write_sweep_meta(r["dir"], {**_task(r, env, cache_dir)[1], "wall_seconds": None})
    counts["before"] = sum(r["state"] == "done" for r in rows) - counts["completed"] - counts["diverged"]
    records = _finished_records(rows)
    planned = max(planned, len(rows))  # rates beyond a grid's edge add runs to the plan as they become known
    return base.Outcome(records if single else _marked(sweep, records), counts, planned, label)


def corpus_identity(cfg: TrainConfig) -> dict:
    """The corpus a run of ``cfg`` reads, as its record names it: name, tokens per split,
    fingerprint, and the cache key (which names a system package's version)."""
    meta = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, seq_len=cfg.model.seq_len,
                                validation_split=cfg.validation_split).meta
    return {"name": cfg.corpus, "tokens": meta["tokens"], "fingerprint": meta["fingerprint"], "key": meta.get("key")}


def check_one_corpus(sweep: Sweep, out: Path, cache_dir: str | None = None) -> None:
    """Refuse to add runs to ``out`` on a corpus other than the one its finished runs read.

    A sweep's runs are compared with one another (paired by seed, on one held-out text), so all
    must read one text. A corpus read from a system package (linux-doc) changes with the installed
    version; its cache key names the version and its fingerprint the tokens, so a machine with
    another version would silently train the rest of a sweep on another text."""
    seen: dict[str, dict] = {}
    for result in sorted((out / "runs").glob("*/result.json")):
        try:
            corpus = json.loads(result.read_text()).get("corpus") or {}
        except (OSError, ValueError):  # a corrupt record: set aside where the runs are read
            continue
        if corpus.get("fingerprint"):
            seen.setdefault(corpus["fingerprint"], corpus)
    if not seen:
        return
    cfg = sweep.configs()[0].replace(cache_dir=cache_dir)
    meta = corpus_identity(cfg)
    other = next((c for fp, c in seen.items() if fp != meta["fingerprint"]), None)
    if other is not None:
        tokens = other.get("tokens")
        tokens = tokens.get("train", "?") if isinstance(tokens, dict) else tokens
        raise InputError(
            f"the finished runs in {out} read {other.get('name', 'their corpus')} with fingerprint "
            f"{other['fingerprint']} ({tokens} training tokens); this machine's "
            f"{meta.get('key') or cfg.corpus} has fingerprint {meta['fingerprint']} ({meta['tokens']['train']} training "
            "tokens): install the version they were trained on, or write this sweep to another folder")


def _locked_train(group: dict, todo: list[dict], sweep: Sweep, env: dict, cache_dir, progress: bool, log,
                  counts: dict) -> list:
    """:func:`_train` under the locks of the group's runs ``todo``; none trained (counted busy)
    when another process holds one of them."""
    out = group["rows"][0]["dir"].parent
    with contextlib.ExitStack() as stack:
        try:
            for r in todo:
                stack.enter_context(exclusive(out / f".{r['key']}.lock", f"run {r['key']}"))
        except StateError as e:
            log(f"{e}; its group (L={group['point'].depth}, d={group['point'].width}) skipped here")
            counts["busy"] += len(todo)
            return []
        todo = [r for r in todo if base.run_state(r["dir"])[0] != "done"]  # finished meanwhile
        return _train(group, todo, sweep, env, cache_dir, progress, log) if todo else []


def _task(row: dict, env: dict, cache_dir) -> tuple[dict, dict]:
    """A single run's (flat config with its directory, sweep metadata)."""
    return (row["config"].replace(out_dir=str(row["dir"]), cache_dir=cache_dir).to_dict(),
            {**env, "key": row["key"], "target_budget": row["point"].target_budget})


def _attempt(task, log) -> tuple[str, int]:
    """Train one run of a sweep under its lock, isolating its failures; return its outcome (one
    of OUTCOMES) and how many times it was set aside. A run whose files are corrupt
    (:class:`~dwlib.errors.StateError`, or an OSError reading them) is reported in one line,
    moved whole to ``set-aside/<key>-<n>/`` and trained anew; if that fails too it is reported
    and skipped. A full or read-only disk (ENOSPC, EDQUOT, EROFS) ends the sweep."""
    key, run_dir = task[1]["key"], Path(task[0]["out_dir"])
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive(run_dir.parent / f".{key}.lock", f"run {key}"))
        except StateError as e:
            log(f"{e}; skipped here")
            return "busy", 0
        state, reason = base.run_state(run_dir)
        if state == "done":  # finished by another process since this one planned
            if not (run_dir / rundir.SWEEP_META).exists():
                rundir.write_sweep_meta(run_dir, {**task[1], "wall_seconds": None})
            return "before", 0
        set_aside = 0
        for _ in range(2):  # train; when its files turn out corrupt, set them aside and train once more
            if reason is not None:
                if (refused := base.move_aside(run_dir, reason, log)) is not None:
                    return refused, set_aside
                set_aside += 1
            try:
                return _train_one(task)["status"], set_aside
            except (StateError, OSError) as e:
                if isinstance(e, OSError) and e.errno in base.FATAL_ERRNOS:
                    raise
                reason = base.one_line(e) if key in str(e) else f"run {key}: {base.one_line(e)}"
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


def _group_id(group: dict) -> tuple:
    return group["stage"], tuple(r["key"] for r in group["rows"])


def _next_group(sweep: Sweep, out: Path, shard, passed: set, queue: list | None = None) -> dict | None:
    """The next group with runs to train, read afresh from the results directory (a group that
    has just trained may make the next one known: an extension, or the seeds at the chosen rate).
    Without ``extend_edges``: the grids of every shape first, then the seeds at the chosen rates.
    With it (or ``rates_from``): one budget at a time, from the smallest, each shape of it to the end (grid, rates
    beyond its edges, seeds), so that a sweep cut short holds whole pairs at its smaller budgets.
    ``queue``: the groups as planned (one run each, known from the start), taken in order."""
    found = [g for g in (groups(sweep, out, shard) if queue is None else queue)
             if any(r["state"] != "done" for r in g["rows"]) and _group_id(g) not in passed]
    if sweep.extend_edges or sweep.rates_from:
        order = lambda g: (g["point"].target_budget, g["point"].depth, g["stage"])  # noqa: E731
    else:
        order = lambda g: g["stage"]  # noqa: E731 (a stable sort keeps the shapes' order)
    return min(found, key=order, default=None)


def _marked(sweep: Sweep, records: list[dict]) -> list[dict]:
    if len(sweep.lrs) < 2:
        return records
    return selection.mark(records, selection.choose(records, sweep.grid_seeds(), sweep.exclude))
