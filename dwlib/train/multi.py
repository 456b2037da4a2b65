"""Many runs of one shape at once: ``vmap`` over the runs, ``lax.scan`` over steps.

A sweep's runs of one shape differ only in their seed and peak learning rate. Trained one by
one, a small model leaves a GPU idle between tiny kernels and pays one dispatch per step. Here
the runs of a group are stacked along a leading axis and trained together:

    for each chunk of ``chunk`` steps:                      # one dispatch
        batches = [train_batch(seed_r, step) for each run r, each step of the chunk]
        state = scan(vmap(train_step over runs), state, batches)   # (chunk, runs) losses

Each run computes what :func:`dwlib.train.loop.train` computes for it alone (its own batches,
from its own seed; its own learning rate). The learning rate enters as a number per run: the
optimiser runs the schedule with a peak of 1 and each run's update is scaled by its peak, which
equals AdamW with the run's own schedule up to rounding (tests/test_multi.py checks the losses
against single runs, and a resumed group bit for bit against an uninterrupted one).

What a group shares: the model's shape, the batch, the run length and the schedule's form
(:func:`group_key`). The run axis is split over the devices (as many as divide the number of
runs): on a CPU with one XLA device per core, each core trains its own runs with no
communication at all; on one GPU, all runs share it. One process only (no multi-host groups).
:func:`train_group` returns the curves; :mod:`dwlib.experiments.group_sweep` writes them into
the sweep's run directories.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from tqdm.auto import tqdm

from dwlib.errors import require
from dwlib.train import batches
from dwlib.train import data as data_lib
from dwlib.train.config import TrainConfig
from dwlib.train.model import abstract_params, init_params
from dwlib.train.optim import make_optimizer
from dwlib.train.step import loss_fn, update


def group_key(cfg: TrainConfig) -> tuple:
    """What the runs of one group must share: every field but the seed, the peak learning
    rate and where the run is written."""
    fields = cfg.to_dict()
    for name in ("seed", "lr", "out_dir", "cache_dir", "checkpoint_interval"):
        fields.pop(name)
    return tuple(sorted(fields.items()))


@dataclasses.dataclass(frozen=True)
class GroupSteps:
    """The compiled pieces of a group: ``train_chunk(params, opt_state, batches, peaks, step)``
    (``batches``: (chunk, runs, batch, seq + 1); returns the new state and (chunk, runs) losses),
    ``eval_losses(params, windows)`` ((runs,) mean held-out losses) and ``init_opt``."""

    train_chunk: object
    eval_losses: object
    init_opt: object
    unit_schedule: object  # the schedule with a peak of 1: a run's rate is peak * unit_schedule(step)
    mesh: Mesh  # axis "runs": the devices the runs are split over

    def place(self, tree, axis: int = 0):
        """``tree``'s arrays split over the devices along ``axis`` (the run axis)."""
        spec = P(*([None] * axis + ["runs"]))
        return jax.device_put(tree, NamedSharding(self.mesh, spec))


@functools.lru_cache(maxsize=8)
def make_group_steps(cfg_key: tuple, runs: int) -> GroupSteps:
    """The compiled steps of a group of ``runs`` runs whose shared fields are ``cfg_key``."""
    devices = jax.local_devices()
    mesh = Mesh(np.array(devices[:max(k for k in range(1, len(devices) + 1) if runs % k == 0)]), ("runs",))
    cfg = TrainConfig.from_dict({**dict(cfg_key), "lr": 1.0})
    graphdef, abstract = abstract_params(cfg.model)
    tx, unit = make_optimizer(cfg.optim, cfg.steps, abstract)
    run_loss = functools.partial(loss_fn, graphdef)  # one run's loss, given its parameters and a batch

    every_run = jax.vmap(functools.partial(update, run_loss, tx))  # over (params, opt_state, batch, peak)

    by_run, by_step_and_run = NamedSharding(mesh, P("runs")), NamedSharding(mesh, P(None, "runs"))

    @functools.partial(jax.jit, donate_argnums=(0, 1), out_shardings=(by_run, by_run, by_step_and_run))
    def train_chunk(params, opt_state, batches, peaks):
        def body(state, batch):
            params, opt_state, loss = every_run(*state, batch, peaks)
            return (params, opt_state), loss
        (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), batches)
        return params, opt_state, losses

    @jax.jit
    def eval_losses(params, windows):  # windows: (n_batches, batch, seq + 1), the same for every run
        per_batch = jax.vmap(lambda p: jax.lax.map(lambda b: run_loss(p, b), windows))(params)
        return per_batch.mean(axis=1)

    return GroupSteps(train_chunk, eval_losses, jax.jit(jax.vmap(tx.init)), unit, mesh)


def init_group(cfgs: list[TrainConfig]) -> dict:
    """The stacked initial state of a group: each run's parameters from its own seed, exactly
    as a single run initialises them, and a fresh optimiser state."""
    params = [init_params(c.model, c.seed)[1] for c in cfgs]
    steps = make_group_steps(group_key(cfgs[0]), len(cfgs))
    stacked = steps.place(jax.tree.map(lambda *xs: jnp.stack(xs), *params))
    return {"params": stacked, "opt_state": steps.place(steps.init_opt(stacked)), "step": 0}


def _check_group(cfgs: list[TrainConfig]) -> None:
    require(len(cfgs) >= 1, "a group needs at least one run")
    key = group_key(cfgs[0])
    for c in cfgs[1:]:
        require(group_key(c) == key, "the runs of a group must share every setting but seed and lr "
                                     f"(run with seed {c.seed}, lr {c.optim.lr} differs)")


def chunk_for(cfg: TrainConfig, chunk: int) -> int:
    """The scan length used: at most ``chunk``, dividing the evaluation interval (so that
    evaluations fall between dispatches) and at least 1."""
    require(isinstance(chunk, int) and chunk >= 1, f"chunk must be an integer >= 1, got {chunk!r}")
    return math.gcd(chunk, cfg.eval_interval) if cfg.eval_interval else chunk


def train_group(cfgs: list[TrainConfig], *, chunk: int = 50, state: dict | None = None,
                stop_at: int | None = None, corpus=None, progress: bool = True) -> tuple[dict, list[dict]]:
    """Train the runs ``cfgs`` (one shape; seeds and peak rates free) together, from ``state``
    (``None``: from initialisation) up to ``stop_at`` steps (``None``: to the end).

    Returns ``(state, curves)``: the stacked state to continue from, and per run
    ``{"seed", "lr", "losses", "evals", "diverged_step"}`` for the steps trained in this call
    (losses of every step; evaluations ``{"step", "eval_loss"}`` on the runs' schedule, with
    ``select_loss``, the loss on the validation split, when the runs' config has one). A run
    whose loss stops being finite is marked diverged at that step and its later losses are
    dropped; the others go on.
    """
    cfgs = [c.validate() for c in cfgs]
    _check_group(cfgs)
    cfg = cfgs[0]
    k = chunk_for(cfg, chunk)
    end = cfg.steps if stop_at is None else min(stop_at, cfg.steps)
    corpus = _group_corpus(cfg, corpus)
    steps = make_group_steps(group_key(cfg), len(cfgs))
    state = init_group(cfgs) if state is None else state
    require(state["step"] % k == 0 or state["step"] == cfg.steps,
            f"a group resumes at a multiple of its chunk ({k} steps), got step {state['step']}")
    peaks = steps.place(np.asarray([c.optim.lr for c in cfgs], np.float32))
    params, opt_state = steps.place(state["params"]), steps.place(state["opt_state"])
    evaluate = functools.partial(_evaluate, steps, _eval_sets(corpus, cfg))
    curves = [{"seed": c.seed, "lr": c.optim.lr, "losses": [], "evals": [], "diverged_step": None} for c in cfgs]
    step = state["step"]
    if step == 0 and cfg.eval_interval:
        evaluate(params, curves, 0)
    bar = tqdm(total=end, initial=step, disable=not progress, unit="step",
               desc=f"{len(cfgs)} runs L={cfg.model.depth} d={cfg.model.width}")
    while step < end:
        n = min(k, end - step)
        batches = steps.place(_chunk_batches(corpus, cfgs, step, n), axis=1)
        params, opt_state, losses = steps.train_chunk(params, opt_state, batches, peaks)
        _record_losses(curves, np.asarray(losses), step)
        step += n
        if cfg.eval_interval and (step % cfg.eval_interval == 0 or step == cfg.steps):
            evaluate(params, curves, step)
        bar.update(n)
    bar.close()
    if step == cfg.steps and not cfg.eval_interval:
        evaluate(params, curves, step)
    return {"params": params, "opt_state": opt_state, "step": step}, curves


def _group_corpus(cfg: TrainConfig, corpus):
    """The corpus the group trains on (loaded from its config when not given), checked against it."""
    if corpus is None:
        corpus = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, cfg.cache_dir, verbose=False,
                                      seq_len=cfg.model.seq_len, validation_split=cfg.validation_split)
    require(cfg.validation_split == (corpus.select is not None),
            "the corpus given must have a validation split exactly when the runs' config asks for one")
    data_lib.check_windows(corpus, cfg.model.seq_len)
    return corpus


def _eval_sets(corpus, cfg: TrainConfig) -> tuple:
    """What the evaluation at a step reads, as a function of the step: the held-out windows and
    the validation split's (``None`` without one), each a list of window arrays. Every
    evaluation reads the same fixed sample, except the last with ``final_eval="whole"``: every
    token of both splits (:func:`dwlib.train.data.whole_split`)."""
    def sample(tokens):
        return [batches.eval_batches(tokens, cfg.eval_batches, cfg.batch_size, cfg.model.seq_len)]

    def whole(tokens):
        return batches.whole_split(tokens, cfg.batch_size, cfg.model.seq_len)

    sets = {"sample": (sample(corpus.valid), None if corpus.select is None else sample(corpus.select))}
    if cfg.final_eval == "whole":
        sets["whole"] = (whole(corpus.valid), None if corpus.select is None else whole(corpus.select))
    return lambda at: sets["whole" if at == cfg.steps and "whole" in sets else "sample"]


def _split_losses(steps: GroupSteps, params, parts) -> np.ndarray:
    """(runs,) mean losses over the window arrays ``parts`` (weighted by their windows)."""
    means = [np.asarray(steps.eval_losses(params, p)) for p in parts]
    return np.asarray([batches.whole_split_mean(parts, [m[r] for m in means]) for r in range(len(means[0]))])


def _evaluate(steps: GroupSteps, sets, params, curves: list[dict], at: int) -> None:
    """Append each run's held-out (and validation) loss at step ``at`` to its curve, unless it diverged."""
    windows, select = sets(at)
    held_out = _split_losses(steps, params, windows)
    chosen_on = _split_losses(steps, params, select) if select is not None else [None] * len(curves)
    for curve, value, on_select in zip(curves, held_out, chosen_on):
        if curve["diverged_step"] is None:
            curve["evals"].append({"step": at, "eval_loss": float(value)} |
                                  ({} if on_select is None else {"select_loss": float(on_select)}))


def _chunk_batches(corpus, cfgs: list[TrainConfig], step: int, n: int) -> np.ndarray:
    """(n, runs, batch, seq + 1): each run's own batches (from its seed) for steps step .. step + n - 1."""
    cfg = cfgs[0]
    return np.stack([np.stack([batches.train_batch(corpus.train, s, cfg.batch_size, cfg.model.seq_len, c.seed,
                                                    cfg.sampling)
                               for c in cfgs]) for s in range(step, step + n)])


def _record_losses(curves: list[dict], losses: np.ndarray, step: int) -> None:
    """Append a chunk's (n, runs) losses, trained from ``step``, to the curves; a run's first
    non-finite loss marks it diverged at that step, and nothing after it is kept."""
    for r, curve in enumerate(curves):
        for i, value in enumerate(losses[:, r].tolist()):
            if curve["diverged_step"] is None and not math.isfinite(value):
                curve["diverged_step"] = step + i + 1
            if curve["diverged_step"] is None:
                curve["losses"].append(value)
