"""Training a group of runs of one shape, chunk by chunk; and what a run's curve says.

A sweep's runs of one shape differ only in their seed and peak learning rate; a single run is
a group of one. The runs of a group are stacked along a leading axis and trained together by
the compiled steps of :mod:`dwlib.train.step`:

    for each chunk of steps:                                  # one dispatch
        batches = [train_batch(seed_r, step) for each run r, each step of the chunk]
        state = scan(vmap(train_step over runs), state, batches)   # (chunk, runs) losses
        at an evaluation step: each run's held-out (and validation) loss

A chunk never steps over an evaluation, a checkpoint, the stopping point or the end, so those
fall between dispatches. Each run computes what it would compute alone (its own batches, from
its own seed; its own learning rate), up to float rounding: the rate is a scale on a unit
schedule. What a group shares: the model's shape, the batch, the run length and the schedule's
form (:func:`group_key`).

The curve of a run, ``{"seed", "lr", "losses", "evals", "diverged_step"}``, is decided here and
only here: the losses of every step and the evaluations, up to and including the first
non-finite one (a training loss, a held-out or a validation loss), where the run is marked
diverged at that step and stops; :func:`metric_records` are the lines a run's
``metrics.jsonl`` holds and :func:`outcome` its status and final losses. The single-run trainer
(:mod:`dwlib.train.loop`) and the group sweep (:mod:`dwlib.experiments.group_sweep`) both use them.
"""

from __future__ import annotations

import functools
import math
import time

import jax
import numpy as np
from tqdm.auto import tqdm

from dwlib.errors import require
from dwlib.train import batches
from dwlib.train import data as data_lib
from dwlib.train import rundir
from dwlib.train.config import TrainConfig
from dwlib.train.model import init_params
from dwlib.train.step import GroupSteps, make_group_steps


def group_key(cfg: TrainConfig) -> tuple:
    """What the runs of one group must share: every field but the seed, the peak learning
    rate and where the run is written."""
    fields = cfg.to_dict()
    for name in ("seed", "lr", "out_dir", "cache_dir", "checkpoint_interval"):
        fields.pop(name)
    return tuple(sorted(fields.items()))


def group_steps(cfgs: list[TrainConfig]) -> GroupSteps:
    """The compiled steps of the group ``cfgs``."""
    return make_group_steps(group_key(cfgs[0]), len(cfgs))


def init_group(cfgs: list[TrainConfig]) -> dict:
    """The stacked initial state of a group: each run's parameters from its own seed, exactly
    as a run alone initialises them, and a fresh optimiser state."""
    steps = group_steps(cfgs)
    stacked = jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]),
                           *[init_params(c.model, c.seed)[1] for c in cfgs])
    params = steps.by_run(stacked)
    return {"params": params, "opt_state": steps.init_opt(params), "step": 0}


def new_curve(cfg: TrainConfig, losses: list | None = None, evals: list | None = None) -> dict:
    return {"seed": cfg.seed, "lr": cfg.optim.lr, "losses": list(losses or []), "evals": list(evals or []),
            "diverged_step": None}


def _check_group(cfgs: list[TrainConfig], chunk) -> None:
    require(len(cfgs) >= 1, "a group needs at least one run")
    key = group_key(cfgs[0])
    for c in cfgs[1:]:
        require(group_key(c) == key, "the runs of a group must share every setting but seed and lr "
                                     f"(run with seed {c.seed}, lr {c.optim.lr} differs)")
    require(isinstance(chunk, int) and not isinstance(chunk, bool) and chunk >= 1,
            f"chunk must be an integer >= 1, got {chunk!r}")


def chunk_length(step: int, end: int, chunk: int, *intervals: int) -> int:
    """The steps of the next dispatch from ``step``: at most ``chunk``, never past ``end`` nor
    past the next multiple of any (non-zero) interval (evaluations, checkpoints). A function of
    the step alone, so that a run resumed at a checkpoint is cut as an uninterrupted one."""
    nxt = min([end] + [(step // k + 1) * k for k in intervals if k])
    return min(chunk, nxt - step)


def train_group(cfgs: list[TrainConfig], *, chunk: int = 50, state: dict | None = None,
                stop_at: int | None = None, corpus=None, progress: bool = True, curves: list | None = None,
                checkpoint_interval: int = 0, after_chunk=None) -> tuple[dict, list[dict]]:
    """Train the runs ``cfgs`` (one shape; seeds and peak rates free) together, from ``state``
    (``None``: from initialisation; else ``{"params", "opt_state", "step"}``, stacked) up to
    ``stop_at`` steps (``None``: to the end), ``chunk`` steps per dispatch at most.

    Returns ``(state, curves)``: the stacked state to continue from, and each run's curve (see
    the module), extended from ``curves`` when given (``None``: the steps of this call only).
    A run that diverges stops there; the others go on; the call ends when every run has.
    ``after_chunk(step, n, seconds, state)`` is called after each chunk of ``n`` steps and its
    evaluation (``seconds``: the chunk's training, evaluation excluded); chunks also end at
    multiples of ``checkpoint_interval``.
    """
    cfgs = [c.validate() for c in cfgs]
    _check_group(cfgs, chunk)
    cfg = cfgs[0]
    end = cfg.steps if stop_at is None else min(stop_at, cfg.steps)
    corpus = _group_corpus(cfg, corpus)
    steps = group_steps(cfgs)
    state = init_group(cfgs) if state is None else state
    peaks = steps.by_run(np.asarray([c.optim.lr for c in cfgs], np.float32))
    params, opt_state = _placed(steps, state["params"]), _placed(steps, state["opt_state"])
    curves = [new_curve(c) for c in cfgs] if curves is None else curves
    evaluate = functools.partial(_evaluate, steps, _eval_sets(steps, corpus, cfg), curves)
    step = state["step"]
    # a full chunk is a scan of this length; a shorter one (before an evaluation, a checkpoint or
    # the end) is padded to it and trains its first n steps: two compilations for any run
    length = min(chunk, cfg.steps)
    if step == 0 and cfg.eval_interval:
        evaluate(params, 0)
    bar = tqdm(total=end, initial=step, disable=not progress, unit="step", dynamic_ncols=True,
               desc=f"{f'{len(cfgs)} runs ' if len(cfgs) > 1 else ''}L={cfg.model.depth} d={cfg.model.width}")
    while step < end and any(c["diverged_step"] is None for c in curves):
        n = chunk_length(step, end, chunk, cfg.eval_interval, checkpoint_interval)
        t0 = time.perf_counter()
        placed = steps.batches(_chunk_batches(corpus, cfgs, step, n, length))
        params, opt_state, losses = (steps.train_chunk(params, opt_state, placed, peaks) if n == length else
                                     steps.train_steps(params, opt_state, placed, peaks, np.int32(n)))
        losses = np.asarray(losses)[:n]
        seconds = time.perf_counter() - t0
        _record_losses(curves, losses, step)
        step += n
        if cfg.eval_interval and (step % cfg.eval_interval == 0 or step == cfg.steps):
            evaluate(params, step)
        bar.update(n)
        bar.set_postfix(loss=f"{float(losses[-1].min()):.3f}",
                        tok_s=f"{n * len(cfgs) * cfg.batch_size * cfg.model.seq_len / max(seconds, 1e-9):,.0f}")
        if after_chunk is not None:
            after_chunk(step, n, seconds, {"params": params, "opt_state": opt_state})
    bar.close()
    if step == cfg.steps and not cfg.eval_interval:
        evaluate(params, step)
    return {"params": params, "opt_state": opt_state, "step": step}, curves


def _placed(steps: GroupSteps, tree):
    """A stacked state on the group's mesh: device arrays resharded, numpy arrays placed."""
    if all(isinstance(x, jax.Array) for x in jax.tree.leaves(tree)):
        return jax.device_put(tree, jax.sharding.NamedSharding(steps.mesh, jax.sharding.PartitionSpec("runs")))
    return steps.by_run(tree)


def _group_corpus(cfg: TrainConfig, corpus):
    """The corpus the group trains on (loaded from its config when not given), checked against it."""
    if corpus is None:
        corpus = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, verbose=False,
                                      seq_len=cfg.model.seq_len, validation_split=cfg.validation_split)
    require(cfg.validation_split == (corpus.select is not None),
            "the corpus given must have a validation split exactly when the runs' config asks for one")
    data_lib.check_windows(corpus, cfg.model.seq_len)
    return corpus


def _eval_sets(steps: GroupSteps, corpus, cfg: TrainConfig):
    """What the evaluation at a step reads, as a function of the step: the held-out windows and
    the validation split's (``None`` without one), each a list of window arrays on the devices.
    Every evaluation reads the same fixed sample, except the last with ``final_eval="whole"``:
    every token of both splits (:func:`dwlib.train.batches.whole_split`)."""
    def sample(tokens):
        return [batches.eval_batches(tokens, cfg.eval_batches, cfg.batch_size, cfg.model.seq_len)]

    def whole(tokens):
        return batches.whole_split(tokens, cfg.batch_size, cfg.model.seq_len)

    def placed(make):
        return tuple(None if t is None else [steps.windows(p) for p in make(t)] for t in (corpus.valid, corpus.select))

    sets = {"sample": placed(sample)}
    if cfg.final_eval == "whole":
        sets["whole"] = functools.lru_cache(maxsize=1)(lambda: placed(whole))  # built when first needed
    return lambda at: sets["whole"]() if at == cfg.steps and "whole" in sets else sets["sample"]


def _split_losses(steps: GroupSteps, params, parts) -> np.ndarray:
    """(runs,) mean losses over the window arrays ``parts`` (weighted by their windows)."""
    means = [np.asarray(steps.eval_losses(params, p)) for p in parts]
    return np.asarray([batches.whole_split_mean(parts, [m[r] for m in means]) for r in range(len(means[0]))])


def _evaluate(steps: GroupSteps, sets, curves: list[dict], params, at: int) -> None:
    """Each run's held-out (and validation) loss at step ``at``, recorded in its curve."""
    windows, select = sets(at)
    held_out = _split_losses(steps, params, windows)
    chosen_on = _split_losses(steps, params, select) if select is not None else [None] * len(curves)
    for curve, value, on_select in zip(curves, held_out, chosen_on):
        if curve["diverged_step"] is None:
            rec = {"step": at, "eval_loss": float(value)} | ({} if on_select is None else
                                                               {"select_loss": float(on_select)})
            curve["evals"].append(rec)
            if not all(math.isfinite(v) for v in list(rec.values())[1:]):
                curve["diverged_step"] = at


def _chunk_batches(corpus, cfgs: list[TrainConfig], step: int, n: int, length: int) -> np.ndarray:
    """(length, runs, batch, seq + 1): each run's own batches (from its seed) for steps
    step .. step + n - 1, then zeros (never trained on)."""
    cfg = cfgs[0]
    out = np.zeros((length, len(cfgs), cfg.batch_size, cfg.model.seq_len + 1), np.int32)
    for i, s in enumerate(range(step, step + n)):
        out[i] = [batches.train_batch(corpus.train, s, cfg.batch_size, cfg.model.seq_len, c.seed, cfg.sampling)
                  for c in cfgs]
    return out


def _record_losses(curves: list[dict], losses: np.ndarray, step: int) -> None:
    """Append a chunk's (n, runs) losses, trained from ``step``, to the curves; a run's first
    non-finite loss is kept and marks it diverged at that step (it saw the tokens of this step,
    no more); nothing after it is."""
    for r, curve in enumerate(curves):
        for i, value in enumerate(losses[:, r].tolist()):
            if curve["diverged_step"] is not None:
                break
            curve["losses"].append(value)
            if not math.isfinite(value):
                curve["diverged_step"] = step + i + 1


def metric_records(curve: dict, eval_interval: int, after: int = -1) -> list[dict]:
    """The ``metrics.jsonl`` records of a curve after step ``after`` (-1: all), in the order a
    run writes them: the evaluation at step 0, then each step's loss followed by its evaluation.
    Without an evaluation interval, none (the final evaluation is the summary's alone)."""
    evals = {e["step"]: e for e in curve["evals"]} if eval_interval else {}
    out = [dict(evals[0])] if after < 0 and 0 in evals else []
    for k in range(max(after, 0) + 1, len(curve["losses"]) + 1):
        out.append({"step": k, "loss": curve["losses"][k - 1]})
        if k in evals:
            out.append(dict(evals[k]))
    return out


def outcome(curve: dict, steps: int) -> dict:
    """A finished run's status, diverged step, steps done and final losses (the held-out and
    validation losses of its last evaluation; none when it diverged)."""
    diverged = curve["diverged_step"]
    last = curve["evals"][-1] if diverged is None and curve["evals"] else {}
    return {"status": "completed" if diverged is None else "diverged", "diverged_step": diverged,
            "steps_done": steps if diverged is None else diverged, "eval_loss": last.get("eval_loss"),
            "select_loss": last.get("select_loss"), "train_loss": rundir.train_loss(curve["losses"])}
