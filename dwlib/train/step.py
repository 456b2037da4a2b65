"""The jitted, data-parallel training step.

The batch is split over a 1-D mesh of devices (axis ``"data"``); parameters and optimiser
state are replicated, and XLA inserts the all-reduce of the gradient. The same code runs on
one CPU core, on several virtual CPU devices, on a GPU or on a TPU slice.
"""

from __future__ import annotations

import dataclasses
import functools
from functools import partial

import jax
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from dwlib.train import fast
from dwlib.train.model import PLAIN, ModelConfig, abstract_params
from dwlib.train.optim import OptimConfig, make_optimizer


def make_mesh(devices) -> Mesh:
    """A 1-D mesh over ``devices`` whose axis ``"data"`` splits the batch."""
    return Mesh(np.array(devices), ("data",))


@dataclasses.dataclass(frozen=True)
class Steps:
    """What a run computes with: the model's structure, the optimiser, its schedule, the jitted
    training step (parameters and optimiser state donated), the evaluation loss and the
    optimiser's initialisation, all with replicated outputs on ``mesh``."""

    graphdef: object
    tx: object
    schedule: object
    train_step: object
    eval_step: object
    init_opt: object
    mesh: Mesh

    def to_device(self, batch: np.ndarray):
        """A global (batch, ...) array sharded over 'data' from this process's rows of it."""
        per = batch.shape[0] // jax.process_count()
        local = batch[jax.process_index() * per:(jax.process_index() + 1) * per]
        return jax.make_array_from_process_local_data(NamedSharding(self.mesh, P("data")), local, batch.shape)

    def replicate(self, tree):
        """``tree`` placed on every device of the mesh."""
        return jax.device_put(tree, NamedSharding(self.mesh, P()))


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
    update (a group run's peak rate: :mod:`dwlib.train.multi`)."""
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = tx.update(grads, opt_state, params)
    if scale is not None:
        updates = jax.tree.map(lambda u: u * scale.astype(u.dtype), updates)
    return optax.apply_updates(params, updates), opt_state, loss


@functools.lru_cache(maxsize=8)
def make_steps(mcfg: ModelConfig, opt: OptimConfig, steps: int, mesh: Mesh) -> Steps:
    """The :class:`Steps` of a model, optimiser and run length on ``mesh``; cached, so that the
    runs of one shape (a sweep's seeds) compile once per process."""
    graphdef, abstract = abstract_params(mcfg)
    tx, lr = make_optimizer(opt, steps, abstract)
    replicated = NamedSharding(mesh, P())
    loss = partial(loss_fn, graphdef)

    @partial(jax.jit, donate_argnums=(0, 1), out_shardings=(replicated, replicated, replicated))
    def train_step(params, opt_state, batch):
        return update(loss, tx, params, opt_state, batch)

    eval_step = jax.jit(loss, out_shardings=replicated)
    init_opt = jax.jit(tx.init, out_shardings=replicated)
    return Steps(graphdef, tx, lr, train_step, eval_step, init_opt, mesh)
