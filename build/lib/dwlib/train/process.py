"""Setting up the process before JAX starts: host memory, several hosts, CPU devices.

:func:`prepare_process` does, in order, what must precede JAX's first computation:

1. :func:`configure_host_memory`: the C library keeps freed host memory for reuse;
2. :func:`init_distributed`: join a multi-host run when the environment asks for it;
3. :func:`configure_cpu_devices`: on a CPU, one XLA device per core.

``dwlib train``, ``dwlib sweep`` and the throughput benchmark call it first. Importing JAX
before it is harmless (measured: a (2, 128, 2) step made 0-6,000 page faults with JAX imported
before or after the setting, against 20,600 with glibc's default); running a computation is not.
"""

from __future__ import annotations

import ctypes
import os

import jax

from dwlib.errors import require

try:
    from jax._src import xla_bridge
except ImportError:  # a JAX without this module: assume its backends may have started
    xla_bridge = None

_M_TRIM_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -4, -8  # glibc's mallopt parameters (malloc.h)
_host_memory_kept = None  # the outcome of the first configure_host_memory() call in this process


def prepare_process() -> None:
    """Host memory, distributed initialisation, CPU devices: in this order, before JAX runs."""
    configure_host_memory()
    init_distributed()
    configure_cpu_devices()


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
    session). Returns whether the settings are in force; the first call decides.
    """
    global _host_memory_kept
    if _host_memory_kept is None:
        _host_memory_kept = _keep_host_memory()
    return _host_memory_kept


def _keep_host_memory() -> bool:
    """The mallopt calls of :func:`configure_host_memory`; whether all of them took."""
    glibc = hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    if os.environ.get("DWLIB_HOST_MEMORY", "keep") == "system" or not glibc or jax_started():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # M_TRIM_THRESHOLD -1 is SIZE_MAX once glibc converts it: never trim.
    return all([mallopt(param, value) == 1 for param, value in (
        (_M_ARENA_MAX, 1), (_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, -1))])


def jax_started() -> bool:
    """Whether JAX has created its backends (and with them its threads) in this process."""
    try:
        return bool(xla_bridge.backends_are_initialized())
    except AttributeError:  # no such check in this JAX: assume it has started
        return True


def init_distributed() -> None:
    """Join a multi-host run when the environment says so (``JAX_COORDINATOR_ADDRESS`` or
    ``DWLIB_DISTRIBUTED=1``); a no-op on one machine."""
    if os.environ.get("JAX_COORDINATOR_ADDRESS") or os.environ.get("DWLIB_DISTRIBUTED") == "1":
        try:
            jax.distributed.initialize()
        except RuntimeError as err:  # already initialised
            if "already" not in str(err):
                raise


def configure_cpu_devices() -> None:
    """On a CPU, run several XLA devices, one per core (at most 8, a power of two).

    XLA runs a matrix product on all cores but most other operations (LayerNorm, softmax, GELU,
    AdamW) on one; splitting the batch over one device per core runs those in parallel too
    (measured on 2 cores: a (6, 256, 4) step 18% faster). Only the CPU backend is affected (its
    device count does not matter where a GPU or TPU is the default backend), only before JAX
    has run anything, and never over an explicit setting: XLA_FLAGS'
    --xla_force_host_platform_device_count, JAX_NUM_CPU_DEVICES or DWLIB_CPU_DEVICES (1: off).
    """
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
    devices = jax.devices()
    if jax.default_backend() == "cpu" and jax.process_count() == 1:
        return devices[:max(k for k in range(1, len(devices) + 1) if batch_size % k == 0)]
    require(batch_size % len(devices) == 0,
            f"batch_size {batch_size} is not divisible by the {len(devices)} devices ({jax.default_backend()})")
    return devices


def hardware() -> dict:
    """Backend, device kind and count, and the jax version (recorded with sweep runs)."""
    devices = jax.devices()
    return {"backend": jax.default_backend(), "device_kind": devices[0].device_kind, "devices": len(devices),
            "processes": jax.process_count(), "jax": jax.__version__, "cpu_count": os.cpu_count()}
