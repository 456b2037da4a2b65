"""Training the decoders of the paper's section 5: the loop.

The loop, in full::

    for step in range(start, steps):
        batch = train_batch(corpus.train, step, ...)     # a pure function of (seed, step)
        params, opt_state, loss = train_step(params, opt_state, batch)   # one jitted, donated step
        every eval_interval steps: held-out loss;  every checkpoint_interval: a checkpoint
        (the metrics logged so far are made durable first)

Because each batch depends only on (seed, step) and the checkpoint holds the parameters, the
optimiser state and the step, a run killed and restarted with the same ``out_dir`` continues
exactly as if it had not stopped. The run directory is locked while a process trains it. A NaN
or infinite loss (training or held-out) ends the run with ``status: "diverged"`` at that step
instead of an exception, so that a sweep goes on. The pieces: the process set-up
(:mod:`~dwlib.train.process`), the optimiser (:mod:`~dwlib.train.optim`), the sharded step
(:mod:`~dwlib.train.step`), the checkpoints (:mod:`~dwlib.train.checkpoint`) and the run's files
(:mod:`~dwlib.train.rundir`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import shutil
import sys
import time
from pathlib import Path

import jax
import numpy as np
from tqdm.auto import tqdm

from dwlib.errors import StateError
from dwlib.store import check_kinds, exclusive
from dwlib.train import batches
from dwlib.train import data as data_lib
from dwlib.train import rundir
from dwlib.train.checkpoint import RunDir, check_out_dir, check_run_dir
from dwlib.train.config import TrainConfig, check_same_run
from dwlib.train.memory import check_fits
from dwlib.train.model import init_params, parameter_counts
from dwlib.train.process import data_devices, prepare_process
from dwlib.train.step import Steps, make_mesh, make_steps

CHUNK = 10  # steps whose losses are fetched from the device at once


@dataclasses.dataclass
class Progress:
    """What the loop has measured so far."""

    step: int
    losses: list
    evals: list
    status: str = "completed"
    diverged_step: int | None = None
    timed_steps: int = 0  # steps and seconds of training after the first (compiling) chunk
    timed_seconds: float = 0.0


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
    devices = data_devices(cfg.batch_size)
    check_fits(cfg, devices)  # a step past the device's memory: one line, before any file is written
    out = check_out_dir(cfg.out_dir) if cfg.out_dir is not None else None
    lead = jax.process_index() == 0
    with _claimed(out, lead):
        if out is not None and (done := _finished(out, cfg)) is not None:
            return done
        corpus = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, verbose=verbose and lead,
                                      seq_len=cfg.model.seq_len, validation_split=cfg.validation_split)
        data_lib.check_windows(corpus, cfg.model.seq_len)
        # Everything is validated: from here on the run's files may be written.
        steps = make_steps(cfg.model, cfg.optim, cfg.steps, make_mesh(devices))
        data = {"seed": cfg.seed, "corpus": corpus.meta["fingerprint"],
                "devices": f"{jax.default_backend()}:{len(devices)}"}
        run_dir = RunDir(out, cfg.to_dict(), lead, data) if out is not None else None
        state, prog = _start(cfg, steps, run_dir)
        t0 = time.perf_counter()
        state = _loop(cfg, steps, corpus, state, prog, run_dir, progress and lead, stop_after)
        if stop_after is not None and prog.step < cfg.steps and prog.status == "completed":
            if run_dir is not None:
                run_dir.close()
            return {"status": "stopped", "steps_done": prog.step}
        if prog.status == "completed" and not cfg.eval_interval:
            _evaluate_at(cfg, steps, corpus, state, prog, lambda rec: None)
        result = _summary(cfg, prog, corpus, len(devices), time.perf_counter() - t0)
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


def _start(cfg: TrainConfig, steps: Steps, run_dir: RunDir | None) -> tuple[dict, Progress]:
    """The initial (or restored) parameters and optimiser state, and the progress so far."""
    params = steps.replicate(init_params(cfg.model, cfg.seed)[1])
    state, start, losses, evals = {"params": params, "opt_state": steps.init_opt(params)}, 0, [], []
    if run_dir is not None:
        state, start, losses, evals = run_dir.restore(state)
    return state, Progress(step=start, losses=losses, evals=evals)


def _evaluate_at(cfg: TrainConfig, steps: Steps, corpus, state: dict, prog: Progress, log) -> None:
    """The mean held-out loss over the fixed evaluation windows (at the last step with
    ``final_eval="whole"``: over every token of the split), recorded and logged; a non-finite one
    ends the run as diverged."""
    if cfg.final_eval == "whole" and prog.step == cfg.steps:
        parts = batches.whole_split(corpus.valid, cfg.batch_size, cfg.model.seq_len)
    else:
        parts = [batches.eval_batches(corpus.valid, cfg.eval_batches, cfg.batch_size, cfg.model.seq_len)]
    def place(b):  # a batch that does not split evenly over the devices (the split's last windows) is copied to each
        return steps.to_device(b) if b.shape[0] % steps.mesh.devices.size == 0 else steps.replicate(b)
    means = [np.mean([float(steps.eval_step(state["params"], place(b))) for b in part]) for part in parts]
    value = batches.whole_split_mean(parts, means)
    prog.evals.append({"step": prog.step, "eval_loss": value})
    log(prog.evals[-1])
    if not math.isfinite(value):
        prog.status, prog.diverged_step = "diverged", prog.step


def _due(step: int, interval: int) -> bool:
    return bool(interval) and step % interval == 0


def _loop(cfg, steps: Steps, corpus, state: dict, prog: Progress, run_dir: RunDir | None, bar_on: bool,
          stop_after: int | None) -> dict:
    """Train from ``prog.step`` to the end (or ``stop_after`` steps on); evaluate, checkpoint and
    log on the way. Returns the final state; ``prog`` is updated in place."""
    log = run_dir.log if run_dir is not None else (lambda rec: None)
    if prog.step == 0 and cfg.eval_interval:
        _evaluate_at(cfg, steps, corpus, state, prog, log)
    start, end = prog.step, cfg.steps if stop_after is None else min(cfg.steps, prog.step + stop_after)
    bar = tqdm(total=cfg.steps, initial=start, disable=not bar_on, unit="step", dynamic_ncols=True,
               desc=f"L={cfg.model.depth} d={cfg.model.width}")
    t_chunk, pending = time.perf_counter(), []
    while prog.step < end and prog.status == "completed":
        batch = batches.train_batch(corpus.train, prog.step, cfg.batch_size, cfg.model.seq_len, cfg.seed,
                                     cfg.sampling)
        state["params"], state["opt_state"], loss = steps.train_step(state["params"], state["opt_state"],
                                                                     steps.to_device(batch))
        pending.append(loss)
        prog.step += 1
        if len(pending) < CHUNK and prog.step < end and not _due(prog.step, cfg.eval_interval) \
                and not _due(prog.step, cfg.checkpoint_interval):
            continue
        _record_chunk(steps, prog, [float(x) for x in pending], start, time.perf_counter() - t_chunk, log, bar, cfg)
        pending = []
        if prog.status == "diverged":
            break
        if _due(prog.step, cfg.eval_interval) or (prog.step == cfg.steps and cfg.eval_interval):
            _evaluate_at(cfg, steps, corpus, state, prog, log)
        if run_dir is not None and prog.status == "completed" and \
                (_due(prog.step, cfg.checkpoint_interval) or prog.step == cfg.steps):
            run_dir.save(prog.step, state)  # the metrics up to here are made durable first
        t_chunk = time.perf_counter()  # evaluation and checkpoints are not training time
    bar.close()
    return state


def _record_chunk(steps: Steps, prog: Progress, chunk: list, start: int, seconds: float, log, bar,
                  cfg: TrainConfig) -> None:
    """Log the losses of the steps just run (one device sync per chunk, not per step), stopping
    at the first non-finite one; time the chunk unless it holds the compilation."""
    first = prog.step - len(chunk)
    if first > start:
        prog.timed_steps, prog.timed_seconds = prog.timed_steps + len(chunk), prog.timed_seconds + seconds
    for i, value in enumerate(chunk):
        log({"step": first + i + 1, "loss": value})
        if not math.isfinite(value):  # the run ends here: it saw the tokens of this step, no more
            prog.status, prog.diverged_step, prog.step = "diverged", first + i + 1, first + i + 1
            break
        prog.losses.append(value)
    bar.update(len(chunk))
    rate = len(chunk) * cfg.batch_size * cfg.model.seq_len / max(seconds, 1e-9)
    bar.set_postfix(loss=f"{chunk[-1]:.3f}", tok_s=f"{rate:,.0f}")


def _summary(cfg: TrainConfig, prog: Progress, corpus, n_devices: int, seconds: float) -> dict:
    """The run's summary (``result.json``): outcome, final losses, size, throughput, hardware."""
    completed = prog.status == "completed"
    tokens_per_step = cfg.batch_size * cfg.model.seq_len
    return rundir.summary(
        status=prog.status, diverged_step=prog.diverged_step,
        steps_done=prog.step if completed else prog.diverged_step,
        eval_loss=prog.evals[-1]["eval_loss"] if completed else None, train_loss=rundir.train_loss(prog.losses),
        parameters=parameter_counts(cfg.model), tokens_seen=prog.step * tokens_per_step,
        tokens_per_s=round(prog.timed_steps * tokens_per_step / prog.timed_seconds, 1) if prog.timed_seconds else None,
        seconds=round(seconds, 2),
        devices={"backend": jax.default_backend(), "count": n_devices, "processes": jax.process_count()},
        corpus={"name": cfg.corpus, "tokens": corpus.meta["tokens"], "fingerprint": corpus.meta["fingerprint"]})
