"""The one exception type for bad input, and its kind for unusable state on disk.

Every public function of dwlib that rejects its arguments raises :class:`InputError`
with a one-line message naming the condition that failed; the command line prints that
line and exits with status 2.
"""

import errno
import numbers
import os


class InputError(ValueError):
    """Bad input: the message says which condition failed, in one line."""


def require(condition: bool, message: str) -> None:
    """Raise :class:`InputError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise InputError(message)


def require_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int, or InputError unless it is an integer (Python or NumPy, not a bool)
    of at least ``minimum``."""
    require(isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum,
            f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class StateError(InputError):
    """A run's or a sweep's files on disk cannot be used as they are (corrupt, torn, written by
    another corpus or configuration, or in use by another process): one line saying which file
    and what to do. A subclass of InputError, so the command line exits 2 with that line; a sweep
    catches it per run, sets the run aside and goes on."""


def shown(value, limit: int = 40) -> str:
    """``repr(value)`` for a one-line message, shortened past ``limit`` characters (an integer of
    400 digits is shown by its first digits and its length)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{text[:12]}... ({len(str(abs(int(value))))} digits)"
    return text[:limit] + "..."


# OSErrors about the machine rather than dwlib: a full disk or quota, no permission, a read-only
# file system (and ENOENT when the working directory itself was deleted).
ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


def environment_problem(err: OSError) -> str | None:
    """One line for an OSError caused by the machine (full disk or quota, permissions, read-only
    file system, a deleted working directory), naming the path and the system's words for the
    errno; None for any other OSError (a bug, to be shown in full)."""
    where = " -> ".join(str(f) for f in (err.filename, err.filename2) if f is not None)
    if err.errno == errno.ENOENT:
        try:
            os.getcwd()
        except OSError:
            return f"the working directory no longer exists ({where or 'cwd'}: {err.strerror})"
        return None
    if err.errno in ENVIRONMENT_ERRNOS:
        reason = err.strerror or os.strerror(err.errno)
        return f"{where}: {reason}" if where else reason
    return None
