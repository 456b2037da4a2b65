"""The one compiled training code: a group of runs of one shape, ``vmap`` over the runs,
``lax.scan`` over a chunk of steps, on a 2-axis mesh ("runs", "data").

A single run is a group of one. The run axis gets the largest number of devices that divides
the number of runs; the data axis the rest of the devices, as many as divide the batch evenly
(on one process's CPU devices; elsewhere every device must be used). So a group of one trains
data-parallel (XLA inserts the all-reduce of the gradient), and a group of 8 on 2 devices
trains 4 runs per device with no communication. A run's peak learning rate enters as a scale
on the update of an optimiser whose schedule peaks at 1: AdamW with the run's own schedule, up
to float rounding.

Every array is placed from a global numpy array that each process can build whole (batches are
a pure function of (seed, step), parameters of the seed) with ``jax.make_array_from_callback``,
so that the same code is right with several processes.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from dwlib.errors import require
from dwlib.train import fast
from dwlib.train.config import TrainConfig
from dwlib.train.model import PLAIN, abstract_params
from dwlib.train.optim import make_optimizer


def loss_fn(graphdef, params, batch):
    """Mean next-token loss of ``batch`` (B, N + 1) token ids under ``params``: the model's
    :meth:`~dwlib.train.model.Decoder.loss` with the operations its config names, the plain ones
    (JAX's derivative) or, with ``ops="fast"``, :data:`dwlib.train.fast.OPS` (hand-written
    gradients). The choice is made here, above both, so that the model never imports the fast
    operations."""
    model = nnx.merge(graphdef, params)
    return model.loss(batch[:, :-1], batch[:, 1:], fast.OPS if model.cfg.ops == "fast" else PLAIN)


def update(loss_fn, tx, params, opt_state, batch, scale=None):
    """One optimiser step on ``batch``: ``(params, opt_state, loss)``. ``scale`` multiplies the
    update (a run's peak rate)."""
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = tx.update(grads, opt_state, params)
    if scale is not None:
        updates = jax.tree.map(lambda u: u * scale.astype(u.dtype), updates)
    return optax.apply_updates(params, updates), opt_state, loss


def make_mesh(runs: int, batch_size: int, devices=None) -> Mesh:
    """The ("runs", "data") mesh of a group of ``runs`` runs of ``batch_size`` sequences."""
    devices = list(jax.devices() if devices is None else devices)
    k = max(i for i in range(1, len(devices) + 1) if runs % i == 0)
    rest = len(devices) // k
    d = max(i for i in range(1, rest + 1) if batch_size % i == 0)
    if k * d < len(devices) and not (devices[0].platform == "cpu" and jax.process_count() == 1):
        require(False, f"batch_size {batch_size} is not divisible by the {rest} devices each run is split over "
                       f"({len(devices)} {devices[0].platform} devices, {runs} runs)")
    return Mesh(np.array(devices[:k * d]).reshape(k, d), ("runs", "data"))


def place(mesh: Mesh, tree, spec: P):
    """Global numpy arrays (each process holds them whole) as arrays sharded by ``spec`` on ``mesh``."""
    sharding = NamedSharding(mesh, spec)

    def one(x):
        x = np.asarray(x)
        return jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])
    return jax.tree.map(one, tree)


@dataclasses.dataclass(frozen=True)
class GroupSteps:
    """The compiled pieces of a group: ``train_chunk(params, opt_state, batches, peaks)``
    (``batches``: (chunk, runs, batch, seq + 1); returns the new state and (chunk, runs) losses:
    a ``scan``, compiled per chunk length), ``train_steps(params, opt_state, batches, peaks, n)``
    (the same over the first ``n`` batches only, a traced count, losses past ``n`` zeros: one
    compilation for every shorter chunk),
    ``eval_losses(params, windows)`` ((runs,) mean losses over (n, batch, seq + 1) windows),
    ``init_opt``, ``squeeze``/``unsqueeze`` (a group of one's state without / with its run axis,
    as a single run's checkpoints hold it) and the schedule with a peak of 1."""

    train_chunk: object
    train_steps: object
    eval_losses: object
    init_opt: object
    squeeze: object
    unsqueeze: object
    unit_schedule: object
    mesh: Mesh

    @property
    def data_devices(self) -> int:
        return self.mesh.shape["data"]

    def batches(self, array: np.ndarray):
        """(chunk, runs, batch, seq + 1) batches, split over runs and data."""
        return place(self.mesh, array, P(None, "runs", "data"))

    def windows(self, array: np.ndarray):
        """(n, batch, seq + 1) evaluation windows, the same for every run: split over the data
        devices when they divide the batch, else (a split's last windows) copied to each."""
        return place(self.mesh, array, P(None, "data") if array.shape[1] % self.data_devices == 0 else P())

    def by_run(self, tree):
        """Arrays with a leading run axis, split over the run devices."""
        return place(self.mesh, tree, P("runs"))


def over_runs(f, runs: int):
    """``f`` of one run mapped over the leading run axis of its arguments: ``vmap``, except for a
    group of one, which calls ``f`` on the run itself (``vmap`` over an axis of one would turn
    every matrix product into a batched one)."""
    if runs > 1:
        return jax.vmap(f)

    def one(*args):
        out = f(*jax.tree.map(lambda a: a[0], args))
        return jax.tree.map(lambda a: a[None], out)
    return one


@functools.lru_cache(maxsize=8)
def make_group_steps(cfg_key: tuple, runs: int, devices: tuple | None = None) -> GroupSteps:
    """The compiled steps of ``runs`` runs whose shared fields are ``cfg_key``
    (:func:`dwlib.train.multi.group_key`) on ``devices`` (default: all); cached, so that the
    groups of one shape compile once per process."""
    cfg = TrainConfig.from_dict({**dict(cfg_key), "lr": 1.0})
    mesh = make_mesh(runs, cfg.batch_size, devices)
    graphdef, abstract = abstract_params(cfg.model)
    tx, unit = make_optimizer(cfg.optim, cfg.steps, abstract)
    run_loss = functools.partial(loss_fn, graphdef)  # one run's loss, given its parameters and a batch
    every_run = over_runs(functools.partial(update, run_loss, tx), runs)  # (params, opt_state, batch, peak)
    by_run, everywhere = NamedSharding(mesh, P("runs")), NamedSharding(mesh, P())  # losses: read by every process

    @functools.partial(jax.jit, donate_argnums=(0, 1), out_shardings=(by_run, by_run, everywhere))
    def train_chunk(params, opt_state, batches, peaks):
        def body(state, batch):
            params, opt_state, loss = every_run(*state, batch, peaks)
            return (params, opt_state), loss
        (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), batches)
        return params, opt_state, losses

    @functools.partial(jax.jit, donate_argnums=(0, 1), out_shardings=(by_run, by_run, everywhere))
    def train_steps(params, opt_state, batches, peaks, n):
        # the first n of the batches (a traced count), so that the shorter chunks before an
        # evaluation, a checkpoint or the end share one compilation; the losses past n are zeros
        def body(i, state):
            params, opt_state, losses = state
            params, opt_state, loss = every_run(params, opt_state, batches[i], peaks)
            return params, opt_state, losses.at[i].set(loss)
        losses = jax.numpy.zeros(batches.shape[:2], jax.numpy.float32)
        return jax.lax.fori_loop(0, n, body, (params, opt_state, losses))

    @functools.partial(jax.jit, out_shardings=everywhere)
    def eval_losses(params, windows):
        per_batch = over_runs(lambda p: jax.lax.map(lambda b: run_loss(p, b), windows), runs)(params)
        return per_batch.mean(axis=1)

    squeeze = jax.jit(lambda tree: jax.tree.map(lambda a: a[0], tree), out_shardings=everywhere)
    unsqueeze = jax.jit(lambda tree: jax.tree.map(lambda a: a[None], tree), out_shardings=by_run)
    init_opt = jax.jit(jax.vmap(tx.init), out_shardings=by_run)
    return GroupSteps(train_chunk, train_steps, eval_losses, init_opt, squeeze, unsqueeze, unit, mesh)
