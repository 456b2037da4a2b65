"""Reading dwlib's packaged data, and writing files whole or not at all.

The data the book reads ships inside the package (``dwlib/data``): :func:`packaged_text` and
:func:`packaged_json` read it, also from an installed wheel (Colab). The library never writes
there by itself: every writer below takes an explicit path, and the scripts in ``scripts/``
are what publish fresh copies into the package.

Sweeps share result directories between shards, runs resume from what they wrote, and the book
reads data files written by dwlib: a reader must never see half a file. Each writer here writes
a temporary file beside the target and renames it over the target (atomic on one file system).

Two processes must not write one run or one results file at once: :func:`exclusive` holds an
advisory lock (``flock``) on a lock file for the length of a ``with`` block, and refuses with one
line when another process holds it. The kernel releases the lock when its holder exits, killed or
not, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import stat
from importlib import resources
from pathlib import Path

from dwlib.errors import StateError

PACKAGE_DATA = "data"  # dwlib/data: files shipped with the package


def packaged_text(*parts: str) -> str:
    """The text of a file under ``dwlib/data`` (``packaged_text("sweeps", "mini.jsonl")``)."""
    return resources.files("dwlib").joinpath(PACKAGE_DATA, *parts).read_text(encoding="utf-8")


def packaged_json(*parts: str):
    """A JSON file under ``dwlib/data``, parsed."""
    return json.loads(packaged_text(*parts))


def packaged_path(*parts: str) -> Path:
    """Where a file under ``dwlib/data`` lies in this checkout (for the publishing scripts)."""
    return Path(__file__).resolve().parent.joinpath(PACKAGE_DATA, *parts)


def temporary_name(name: str) -> str:
    """The name of the temporary file :func:`write_text` writes ``name`` through."""
    return f".{name}.{os.getpid()}.tmp"


def is_temporary(name: str, of: str) -> bool:
    """Whether a file name is :func:`write_text`'s temporary for the file ``of`` (of any process)."""
    return bool(re.fullmatch(re.escape(f".{of}.") + r"\d+\.tmp", name))


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; the temporary file never outlives the call
    (unless the process is killed in it)."""
    path = Path(path)
    tmp = path.with_name(temporary_name(path.name))
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_json(path: str | os.PathLike, obj, indent: int | None = 2) -> Path:
    """``obj`` as JSON (with a final newline), atomically."""
    return write_text(path, json.dumps(obj, indent=indent) + "\n")


def write_lines(path: str | os.PathLike, lines) -> Path:
    """One string per line (JSON lines, for example), atomically."""
    return write_text(path, "".join(line + "\n" for line in lines))


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a file" if stat.S_ISREG(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device")


def check_kinds(folder: str | os.PathLike, files=(), dirs=()) -> Path:
    """``folder`` as a Path; :class:`~dwlib.errors.StateError` (one line) when one of its entries
    named in ``files`` exists and is not a regular file (a directory, a FIFO), one named in
    ``dirs`` is not a directory, or either is a symbolic link to nothing. Absent entries pass."""
    folder = Path(folder)
    for names, want, right in ((files, "a file", stat.S_ISREG), (dirs, "a directory", stat.S_ISDIR)):
        for name in names:
            path = folder / name
            try:
                mode = os.stat(path).st_mode
            except (FileNotFoundError, NotADirectoryError):
                if os.path.lexists(path):
                    raise StateError(f"{path} is a symbolic link to nothing, where dwlib keeps {want}: "
                                     "remove it") from None
                continue
            if not right(mode):
                raise StateError(f"{path} is {_kind(mode)}, where dwlib keeps {want}: move it away or remove it")
    return folder


@contextlib.contextmanager
def exclusive(lock_path: str | os.PathLike, what: str):
    """Hold an exclusive lock on ``lock_path`` (created when missing) for the ``with`` block.

    Raises :class:`~dwlib.errors.StateError` ("<what> is in use by another process (pid N)")
    at once when another process holds it; never waits. The file keeps the holder's pid for
    that message; the lock itself lives in the kernel and ends with the process.
    """
    path = check_kinds(Path(lock_path).parent, files=[Path(lock_path).name]) / Path(lock_path).name
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            pid = f" (pid {holder})" if holder.isdigit() else ""
            raise StateError(f"{what} is in use by another process{pid}: wait for it to end or stop it") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        os.close(fd)
