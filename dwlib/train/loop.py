"""Training one model of the paper's section 5: a run directory around a group of one.

The loop, in full (:func:`dwlib.train.multi.train_group` with one run)::

    for each chunk of steps from start to steps:     # one dispatch; a chunk ends at every
        batches = train_batch(corpus.train, step, ...)  # evaluation, checkpoint and the end
        params, opt_state, losses = scan(train_step, ...)
        at an evaluation step: the held-out loss;  at a checkpoint step: a checkpoint
        (the metrics logged so far are made durable first)

Because each batch depends only on (seed, step) and the checkpoint holds the parameters, the
optimiser state and the step, a run killed and restarted with the same ``out_dir`` continues
exactly as if it had not stopped (checkpoints fall on chunk boundaries, and a chunk's length is
a function of its first step). The run directory is locked while a process trains it. A NaN or
infinite loss (training or held-out) ends the run with ``status: "diverged"`` at that step
instead of an exception, so that a sweep goes on. The pieces: the process set-up
(:mod:`~dwlib.train.process`), the compiled steps (:mod:`~dwlib.train.step`), the curve and its
outcome (:mod:`~dwlib.train.multi`), the checkpoints (:mod:`~dwlib.train.checkpoint`) and the
run's files (:mod:`~dwlib.train.rundir`). A checkpoint holds the state of a single run (the
group's run axis taken off), as it always has.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from pathlib import Path

import jax

from dwlib.errors import StateError
from dwlib.store import check_kinds, exclusive
from dwlib.train import data as data_lib
from dwlib.train import rundir
from dwlib.train.checkpoint import RunDir, check_out_dir, check_run_dir
from dwlib.train.config import TrainConfig, check_same_run
from dwlib.train.memory import check_fits
from dwlib.train.model import parameter_counts
from dwlib.train.multi import group_steps, init_group, metric_records, new_curve, outcome, train_group
from dwlib.train.process import prepare_process

CHUNK = 50  # steps per dispatch at most (their losses are fetched from the device at once)


def train(config: TrainConfig | dict, *, progress: bool = True, verbose: bool = True,
          stop_after: int | None = None) -> dict:
    """Train one model; return its summary (also written to ``out_dir/result.json``).

    Resumes from the last checkpoint in ``out_dir`` when one exists (with the same config, corpus
    and devices; :mod:`~dwlib.train.checkpoint` says how); returns the stored summary when that run
    already finished. The run directory is locked for the whole call: a second process on it gets
    a one-line :class:`~dwlib.errors.StateError`. ``stop_after`` ends this call after that many
    steps without a summary, as a kill would (for tests). The curve is in ``out_dir/metrics.jsonl``
    (:func:`dwlib.train.rundir.read_metrics`).
    """
    cfg = (TrainConfig.from_dict(config) if isinstance(config, dict) else config).validate()
    prepare_process()
    steps = group_steps([cfg])
    devices = list(steps.mesh.devices.flat)
    check_fits(cfg, devices, chunk=CHUNK)  # a step past the device's memory: one line, before any file is written
    out = check_out_dir(cfg.out_dir) if cfg.out_dir is not None else None
    lead = jax.process_index() == 0
    with _claimed(out, lead):
        if out is not None and (done := _finished(out, cfg)) is not None:
            return done
        corpus = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, verbose=verbose and lead,
                                      seq_len=cfg.model.seq_len, validation_split=cfg.validation_split)
        data_lib.check_windows(corpus, cfg.model.seq_len)
        # Everything is validated: from here on the run's files may be written.
        data = {"seed": cfg.seed, "corpus": corpus.meta["fingerprint"],
                "devices": f"{jax.default_backend()}:{len(devices)}"}
        run_dir = RunDir(out, cfg.to_dict(), lead, data) if out is not None else None
        state, curve = _start(cfg, run_dir)
        timed = {"steps": 0, "seconds": 0.0, "lengths": set()}
        logged = [state["step"] if state["step"] else -1]  # the last step whose records are in metrics.jsonl

        def after_chunk(step: int, n: int, seconds: float, now: dict) -> None:
            if n in timed["lengths"]:  # a chunk of a length met before: compiled, so timed
                timed["steps"], timed["seconds"] = timed["steps"] + n, timed["seconds"] + seconds
            timed["lengths"].add(n)
            if run_dir is None:
                return
            for rec in metric_records(curve, cfg.eval_interval, logged[0]):
                run_dir.log(rec)
            logged[0] = len(curve["losses"])
            if curve["diverged_step"] is None and (step == cfg.steps or
                                                   (cfg.checkpoint_interval and step % cfg.checkpoint_interval == 0)):
                run_dir.save(step, steps.squeeze(now))  # the metrics up to here are made durable first

        t0 = time.perf_counter()
        end = cfg.steps if stop_after is None else min(cfg.steps, state["step"] + stop_after)
        state, _ = train_group([cfg], chunk=CHUNK, state=state, stop_at=end, corpus=corpus,
                               progress=progress and lead, curves=[curve],
                               checkpoint_interval=cfg.checkpoint_interval, after_chunk=after_chunk)
        if stop_after is not None and state["step"] < cfg.steps and curve["diverged_step"] is None:
            if run_dir is not None:
                run_dir.close()
            return {"status": "stopped", "steps_done": state["step"]}
        result = _summary(cfg, curve, corpus, len(devices), time.perf_counter() - t0, timed)
        if run_dir is not None:
            run_dir.close(result)
    if verbose and lead and not progress:
        print(f"{result['status']}: step {result['steps_done']}, eval loss {result['eval_loss']}", file=sys.stderr)
    return result


@contextlib.contextmanager
def _claimed(out: Path | None, lead: bool):
    """Hold the run directory's lock (creating the directory) for the ``with`` block; remove the
    directory again when this call created it and failed before writing its config."""
    if out is None or not lead:
        yield
        return
    check_kinds(out, files=rundir.RUN_FILES, dirs=(rundir.CHECKPOINTS,))  # a directory where a file belongs, or the reverse
    check_run_dir(out)  # a foreign directory is refused before the lock file is created in it
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    with exclusive(out / ".lock", f"run directory {out}"):
        try:
            check_run_dir(out)
            yield
        except BaseException:
            if created and not (out / "config.json").exists():
                shutil.rmtree(out, ignore_errors=True)
            raise


def _finished(out: Path, cfg: TrainConfig) -> dict | None:
    """The stored summary of a finished run in ``out``, or None. StateError or InputError (one
    line) when ``out`` holds an unreadable config or another run's; a summary that does not agree
    with the run's metrics is removed (the run is completed again from its checkpoints)."""
    if (stored := rundir.read_json(out / rundir.CONFIG)) is None:
        return None
    check_same_run(stored, cfg, str(out))
    try:
        done = rundir.read_json(out / rundir.RESULT)
        why = None if done is None else rundir.result_problem(out, done, cfg.steps, cfg.eval_interval)
    except StateError as err:
        done, why = None, str(err).split(": restore it")[0]
    if why is None and done is not None:
        return done
    _check_same_ops(stored, cfg, out)
    if why is None:
        return None
    print(f"dwlib: run {out}: {why}; completing the run again from its checkpoints", file=sys.stderr, flush=True)
    (out / "result.json").unlink()
    return None


def _check_same_ops(stored: dict, cfg: TrainConfig, out: Path) -> None:
    """StateError when an unfinished run's checkpoints were computed with the other implementation
    (``ops``, not part of the run's key: plain and fast compute the same function, but not to the
    bit), so that resuming would mix the two in one curve under one ``config.json``."""
    old = stored.get("ops", "plain")
    steps = sorted(int(p.name) for p in (out / "checkpoints").glob("*") if p.name.isdigit()) \
        if (out / "checkpoints").is_dir() else []
    if old != cfg.model.ops and steps:
        raise StateError(f"run {str(out)!r} was trained with --ops {old} up to its checkpoint at step {steps[-1]}; "
                         f"resuming it with --ops {cfg.model.ops} would mix two implementations in one run: "
                         f"resume with --ops {old}, or use another --out")


def _start(cfg: TrainConfig, run_dir: RunDir | None) -> tuple[dict, dict]:
    """The initial (or restored) stacked state of the group of one, and its curve so far."""
    state = init_group([cfg])
    if run_dir is None:
        return state, new_curve(cfg)
    steps = group_steps([cfg])
    single, start, losses, evals = run_dir.restore(steps.squeeze({k: state[k] for k in ("params", "opt_state")}))
    if not start:
        return state, new_curve(cfg)
    if run_dir.lead:  # the records as stored (the validation loss too), cut back to the checkpoint
        evals = rundir.read_metrics(run_dir.path)[1]
    return {**steps.unsqueeze(single), "step": start}, new_curve(cfg, losses, evals)


def _summary(cfg: TrainConfig, curve: dict, corpus, n_devices: int, seconds: float, timed: dict) -> dict:
    """The run's summary (``result.json``): outcome, final losses, size, throughput, hardware."""
    tokens_per_step = cfg.batch_size * cfg.model.seq_len
    end = outcome(curve, cfg.steps)
    if not cfg.validation_split:
        end.pop("select_loss")
    return rundir.summary(
        **end, parameters=parameter_counts(cfg.model), tokens_seen=end["steps_done"] * tokens_per_step,
        tokens_per_s=round(timed["steps"] * tokens_per_step / timed["seconds"], 1) if timed["seconds"] else None,
        seconds=round(seconds, 2),
        devices={"backend": jax.default_backend(), "count": n_devices, "processes": jax.process_count()},
        corpus={"name": cfg.corpus, "tokens": corpus.meta["tokens"], "fingerprint": corpus.meta["fingerprint"]})
