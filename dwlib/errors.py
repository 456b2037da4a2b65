"""The one exception type for bad input.

Every public function of dwlib that rejects its arguments raises :class:`InputError`
with a one-line message naming the condition that failed; the command line prints that
line and exits with status 2.
"""

import numbers


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
