"""The one exception type for bad input.

Every public function of dwlib that rejects its arguments raises :class:`InputError`
with a one-line message naming the condition that failed; the command line prints that
line and exits with status 2.
"""


class InputError(ValueError):
    """Bad input: the message says which condition failed, in one line."""


def require(condition: bool, message: str) -> None:
    """Raise :class:`InputError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise InputError(message)
