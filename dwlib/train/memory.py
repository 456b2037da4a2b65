"""How much memory a training step needs, checked against the device's before any work.

A step holds, on each device of its mesh (:mod:`dwlib.train.step`: parameters replicated, the
batch split over the devices), the parameters, their gradients and AdamW's two moments (4
float32 copies of the P parameters) and what the backward pass keeps of the forward, for the
device's ``b = batch / devices`` sequences of ``T`` tokens. Per block: the activations of width
d_x (LayerNorm outputs, Q K V, attention output, residuals) and of width 4 d_x (the MLP before
and after GELU), about 16 b T d_x numbers, and the attention probabilities and their gradient,
2 b H T^2; after the blocks the logits, their softmax and its gradient, 3 b T V. In bytes, 4 per
number (bfloat16 activations save next to nothing in XLA's plan, below).

Checked against XLA's own plan of the compiled step (``memory_analysis()``: its temporary
buffers plus its arguments, per device, two CPU devices), measured 2026-11-26 on the 2-core
machine (``tests/test_memory.py`` repeats three of them); L, d_x, H, T, batch, V: estimate /
XLA in MB:

    1, 32, 2, 64, 16, 1000: 8.6 / 7.6           2, 64, 4, 256, 32, 1000: 155 / 166
    1, 32, 2, 1024, 32, 1000: 504 / 469         4, 128, 4, 128, 32, 1000: 142 / 184
    2, 256, 8, 128, 16, 1000: 95 / 113          1, 64, 4, 256, 64, 4000: 503 / 403
    3, 96, 3, 512, 8, 1000: 147 / 168           2, 128, 2, 128, 128, 500: 233 / 325
    6, 192, 3, 64, 16, 1000: 95 / 113           (ops fast: 155 / 157 and 504 / 497; bfloat16: 155 / 154)

a ratio of 0.72 to 1.25. What :func:`check_fits` asks of the host (both devices' estimate plus
:data:`RUNTIME`, JAX's and the compiler's own) against the growth of a 3-step run's peak
resident memory is printed by ``benchmarks/memory.py``: 0.9-1.6x of it at five shapes on the
2-core machine; the resident memory depends on the machine (allocator, XLA's threads), so no
test asserts it.

:func:`check_fits` refuses a run whose step needs more than the device has: on a CPU the host's
memory (all devices share it; the smaller of the physical memory and a cgroup's limit), on a GPU
or TPU the device's ``memory_stats()["bytes_limit"]``; where neither is known it checks nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from dwlib.errors import require
from dwlib.train.config import TrainConfig
from dwlib.train.model import parameter_counts

BYTES = 4  # float32 parameters, optimiser state and (as XLA plans them) activations
RUNTIME = 600 * 2**20  # JAX, XLA and the compiler in a CPU process, past the steps' own buffers


def step_bytes(cfg: TrainConfig, devices: int = 1, runs: int = 1, chunk: int = 1) -> dict:
    """Estimated bytes of one training step on each of ``devices`` (the batch split over them),
    ``runs`` runs of this shape trained together (a group, :mod:`dwlib.train.multi`), with the
    token ids of a ``chunk`` of steps on the device: ``state`` (parameters, gradients, AdamW
    moments), ``activations``, ``batches``, ``per_device``."""
    m = cfg.model
    b = -(-cfg.batch_size // devices)  # sequences per device
    T, d, H, V, L = m.seq_len, m.width, m.heads, m.vocab_size, m.depth
    state = 4 * parameter_counts(m)["total"] * BYTES
    activations = (L * (16 * b * T * d + 2 * b * H * T * T) + 3 * b * T * V + 2 * b * T * d) * BYTES
    tokens = chunk * b * (T + 1) * 4  # int32 token ids
    return {"state": runs * state, "activations": runs * activations, "batches": runs * tokens,
            "per_device": runs * (state + activations + tokens)}


def host_memory() -> int | None:
    """Bytes of memory this process may use on the host: the physical memory, or a cgroup's
    limit where one is lower; None where neither can be read."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = None
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        cgroup = int(limit) if limit.isdigit() else None
    except OSError:
        cgroup = None
    known = [v for v in (physical, cgroup) if v]
    return min(known) if known else None


def device_memory(devices: list) -> tuple[int | None, str]:
    """(bytes, what) of the memory a step may use on one of ``devices``: the host's for CPU
    devices (``what`` says so), a GPU's or TPU's own otherwise; (None, ...) when unknown."""
    d = devices[0]
    if d.platform == "cpu":
        return host_memory(), "this machine's host memory"
    try:
        limit = (d.memory_stats() or {}).get("bytes_limit")
    except Exception:  # a backend without memory statistics
        limit = None
    return limit, f"the {d.device_kind}'s memory"


def check_fits(cfg: TrainConfig, devices: list, runs: int = 1, memory: tuple | None = None, chunk: int = 1) -> dict:
    """:func:`step_bytes` for ``cfg`` on ``devices``, ``chunk`` steps a dispatch; InputError (one
    line) when it exceeds the memory of :func:`device_memory` (``memory`` overrides it, for
    tests). CPU devices share the host's memory, so there the devices' sum, plus :data:`RUNTIME`,
    is what must fit. ``runs`` > 1: a group (:mod:`dwlib.train.multi`), whose runs, not batches,
    are split over the devices."""
    chunk = min(chunk, cfg.steps)  # the trainer's batches: a chunk's, never more steps than the run has
    est = (step_bytes(cfg, len(devices), chunk=chunk) if runs == 1
           else step_bytes(cfg, 1, -(-runs // len(devices)), chunk=chunk))
    available, what = memory if memory is not None else device_memory(devices)
    cpu = devices[0].platform == "cpu"
    need = est["per_device"] * (len(devices) if cpu else 1) + (RUNTIME if cpu else 0)
    est["needed"] = need
    if available:
        each = f" on each of {len(devices)} devices" if len(devices) > 1 else ""
        require(need <= available,
                f"a training step needs about {_gb(need)} of memory ({_gb(est['activations'])} of activations and "
                f"{_gb(est['state'])} of parameters and optimiser state{each}, for {cfg.batch_size} sequences of "
                f"{cfg.model.seq_len} tokens{f' in each of {runs} runs' if runs > 1 else ''}), more than {what} "
                f"({_gb(available)}): a smaller --batch-size, --seq-len or model")
    return est


def _gb(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e8 else f"{n / 1e6:,.0f} MB"
