"""What the benchmark scripts share: their one-line refusal of bad input and their shape argument.

The benchmarks are scripts run from this folder (``python benchmarks/<name>.py``), which Python
puts first on the import path, so they import this module as ``common``.
"""

from __future__ import annotations

import sys
from pathlib import Path


def fail(message: str) -> None:
    """Bad input or a failed run: one line on stderr (named by the script run), exit status 2."""
    print(f"{Path(sys.argv[0]).name}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_shape(text: str, count: int, what: str) -> tuple[int, ...]:
    """``count`` positive integers separated by commas, or :func:`fail` saying ``what`` they are."""
    try:
        shape = tuple(int(v) for v in text.split(","))
    except ValueError:
        shape = ()
    if len(shape) != count or min(shape) < 1:
        fail(f"shape {text!r} is not {what}")
    return shape
