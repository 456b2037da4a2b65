"""Setting up the process before JAX starts: host memory, several hosts, CPU devices.

:func:`prepare_process` does, in order, what must precede JAX's first computation:

1. :func:`configure_host_memory`: the C library keeps freed host memory for reuse;
2. :func:`init_distributed`: join a multi-host run when the environment asks for it;
3. :func:`configure_cpu_devices`: on a CPU, one XLA device per core.

``dwlib train``, ``dwlib sweep`` and the throughput benchmark call it first; it ends by starting
JAX's backend (:func:`check_backend`), so that a ``JAX_PLATFORMS`` naming a backend this machine
lacks is one line, not a traceback. :func:`validate_environment` checks the ``DWLIB_*`` variables
(and ``JAX_PLATFORMS``' spelling, the CPU device counts JAX and XLA read, the form of ``XLA_FLAGS``,
on which XLA aborts with its whole flag list) without starting anything; the command line calls it before any
work, and every problem is an :class:`~dwlib.errors.InputError`. Importing JAX
before it is harmless (measured: a (2, 128, 2) step made 0-6,000 page faults with JAX imported
before or after the setting, against 20,600 with glibc's default); running a computation is not.
"""

from __future__ import annotations

import ctypes
import os
import re
import tempfile
from pathlib import Path

import jax

from dwlib.errors import InputError, require

try:
    from jax._src import xla_bridge
except ImportError:  # a JAX without this module: assume its backends may have started
    xla_bridge = None

_M_TRIM_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -4, -8  # glibc's mallopt parameters (malloc.h)
_host_memory_kept = None  # the outcome of the first configure_host_memory() call in this process

MAX_CPU_DEVICES = 64  # DWLIB_CPU_DEVICES (or JAX's, XLA's): one device per core; 100000 hangs XLA's start-up
CHOICES = {"DWLIB_HOST_MEMORY": ("keep", "system"), "DWLIB_ATTENTION": ("auto", "dwlib"),
           "DWLIB_DISTRIBUTED": ("0", "1")}
PLATFORMS = ("cpu", "cuda", "gpu", "rocm", "tpu", "metal")  # the names JAX_PLATFORMS may list


def validate_environment(environ=None) -> None:
    """InputError (one line naming the variable) unless every ``DWLIB_*`` variable that is set
    holds a value dwlib understands, ``JAX_PLATFORMS`` lists known backend names and
    ``DWLIB_CACHE`` can be written. Starts nothing and writes nothing (whether a named backend
    exists on this machine is :func:`check_backend`'s question)."""
    env = os.environ if environ is None else environ
    for name, allowed in CHOICES.items():
        value = env.get(name)
        require(value is None or value in allowed,
                f"{name} must be one of {', '.join(allowed)} (or unset), got {value!r}")
    counts = {name: env.get(name) for name in ("DWLIB_CPU_DEVICES", "JAX_NUM_CPU_DEVICES")}
    for flag in env.get("XLA_FLAGS", "").split():  # XLA aborts on a flag it cannot parse, printing them all
        require(re.fullmatch(r"--?\w+(=\S*)?", flag), f"XLA_FLAGS must hold flags --name=value, got {flag[:60]!r}")
        if flag.split("=")[0].lstrip("-") == "xla_force_host_platform_device_count":
            counts["XLA_FLAGS' --xla_force_host_platform_device_count"] = flag.partition("=")[2]
    for name, n in counts.items():
        if n is not None:
            require(n.strip().isdigit() and len(n.strip()) < 4 and 1 <= int(n) <= MAX_CPU_DEVICES,
                    f"{name} must be an integer from 1 to {MAX_CPU_DEVICES}, got {n[:40]!r}")
    platforms = env.get("JAX_PLATFORMS")
    if platforms:
        unknown = [p for p in platforms.split(",") if p.strip().lower() not in PLATFORMS]
        require(not unknown, f"JAX_PLATFORMS names unknown backends {unknown} (known: {', '.join(PLATFORMS)})")
    if env.get("DWLIB_CACHE"):
        check_writable(env["DWLIB_CACHE"], "DWLIB_CACHE", directory=True)


def check_environment(out=None, cache_dir=None, backend: bool = True) -> None:
    """What a command checks before any work: :func:`validate_environment`, that its output and
    cache directories (when given) can be written, and (``backend``) :func:`check_backend`.
    (``train`` and ``sweep`` leave the backend to :func:`prepare_process`, which must run first.)"""
    validate_environment()
    for path, what in ((out, "--out"), (cache_dir, "--cache-dir")):
        if path is not None:
            check_writable(path, what, directory=True)
    if backend:
        check_backend()


PROBE_PREFIX = ".dwlib-probe-"  # check_writable's passing file, which a run directory's check ignores


def check_writable(path, what: str, directory: bool = False) -> Path:
    """``path`` as a Path, or InputError unless a file (``directory``: a directory) can be created
    or written there: its nearest existing ancestor must be a directory that takes a file (tried
    with a temporary file, removed at once; permission bits alone say nothing to root)."""
    p = Path(path)
    require(str(path) != "", f"{what} must not be empty")
    check_path_name(p, what, directory)
    if p.is_symlink() and not p.exists():
        raise InputError(f"{what} {str(p)!r} is a symbolic link to nothing ({os.readlink(p)!r})")
    if p.exists():
        require(p.is_dir() if directory else not p.is_dir(),
                f"{what} {str(p)!r} is {'not a directory' if directory else 'a directory'}")
    parent = p if p.is_dir() else p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    require(parent.is_dir(), f"{what} {str(p)!r} cannot be created: {str(parent)!r} is not a directory")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=PROBE_PREFIX)
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        raise InputError(f"{what} {str(p)!r} cannot be written: no file can be created in {str(parent)!r} "
                         f"({err.strerror})") from None
    return p


ROOM = 256  # bytes of path a run directory needs inside it (orbax's temporary checkpoint folders)


def check_path_name(path: Path, what: str, directory: bool = False) -> None:
    """InputError unless ``path`` can name a file or directory here: UTF-8 text (an undecodable
    byte passes Python's own calls but not the checkpoint library's), every part within the file
    system's NAME_MAX bytes (a file's, with room for the temporary name it is written through),
    and the absolute path within PATH_MAX (a directory's, with :data:`ROOM` for what goes inside)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} {ascii(str(path))[:80]} holds bytes that are not UTF-8 text: give it a UTF-8 "
                         "name") from None
    try:
        name_max, path_max = os.pathconf("/", "PC_NAME_MAX"), os.pathconf("/", "PC_PATH_MAX")
        full = len(os.fsencode(os.path.abspath(path)))
    except (OSError, ValueError):  # no such limits here, or the working directory is gone
        return
    for i, part in enumerate(path.parts):
        room = 0 if directory or i < len(path.parts) - 1 else 32
        require(len(os.fsencode(part)) + room <= name_max,
                f"{what}: the name {part[:16]!r}... is {len(os.fsencode(part)):,} bytes, past the {name_max - room} "
                f"a {'file' if room else 'directory'} name may have here")
    require(full + (ROOM if directory else 0) <= path_max,
            f"{what} {str(path)[:40]!r}... is {full:,} bytes long as an absolute path; paths here end at "
            f"{path_max:,} bytes{f' and a run needs {ROOM} of them inside its directory' if directory else ''}")


def prepare_process() -> None:
    """Host memory, distributed initialisation, CPU devices: in this order, before JAX runs;
    then start the backend (:func:`check_backend`). InputError on a bad environment."""
    validate_environment()
    configure_host_memory()
    init_distributed()
    configure_cpu_devices()
    check_backend()


def check_backend() -> None:
    """Start JAX's backend; InputError (one line) when ``JAX_PLATFORMS`` names one this machine
    lacks or the backend cannot start."""
    try:
        jax.devices()
    except (RuntimeError, AssertionError) as err:  # AssertionError: jax's cuda plugin without a GPU
        detail = str(err).split(" (set JAX_PLATFORMS")[0].splitlines()[0] if str(err) else "no such device here"
        raise InputError(f"JAX cannot start the backend (JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}): "
                         f"{detail}") from None


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
        given = {}  # JAX reads the coordinator's address from the environment, not these two
        for name, arg in (("JAX_NUM_PROCESSES", "num_processes"), ("JAX_PROCESS_ID", "process_id")):
            if (value := os.environ.get(name)) is not None:
                require(value.strip().isdigit(), f"{name} must be a whole number, got {value!r}")
                given[arg] = int(value)
        try:
            jax.distributed.initialize(**given)
        except (RuntimeError, ValueError) as err:
            if "already" not in str(err):  # already initialised: fine
                raise InputError(f"cannot join a multi-host run ({str(err).splitlines()[0]}): without a cluster "
                                 "manager JAX can detect, set JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and "
                                 "JAX_PROCESS_ID, or unset DWLIB_DISTRIBUTED") from None


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
    require(n is None or (n.strip().isdigit() and len(n.strip()) < 4 and 1 <= int(n) <= MAX_CPU_DEVICES),
            f"DWLIB_CPU_DEVICES must be an integer from 1 to {MAX_CPU_DEVICES}, got {str(n)[:40]!r}")
    if n is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n = 1 << (min(cores, 8).bit_length() - 1)
    try:
        jax.config.update("jax_num_cpu_devices", int(n))
    except RuntimeError:  # JAX already ran something: its devices are fixed for this process
        pass


def hardware() -> dict:
    """Backend, device kind and count, the jax version and the precision of float32 products
    (``None``: the backend's default, TF32 on recent NVIDIA GPUs) (recorded with sweep runs)."""
    devices = jax.devices()
    return {"backend": jax.default_backend(), "device_kind": devices[0].device_kind, "devices": len(devices),
            "processes": jax.process_count(), "jax": jax.__version__, "cpu_count": os.cpu_count(),
            "matmul_precision": jax.config.jax_default_matmul_precision}
