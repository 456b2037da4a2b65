"""Numbers as text: the one place where dwlib decides how a count or a value is written.

Used by error messages, the command line, the book's sentences and the charts' labels, so
that a budget reads "1.5M" everywhere and a width 1024 never becomes "1.02e+03".
"""

from __future__ import annotations

import math

_UNITS = (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3))


def count(n: float, digits: int = 3) -> str:
    """A large count with a unit: 1.5e6 -> '1.5M', 175e9 -> '175B', 512 -> '512'."""
    n = float(n)
    if not math.isfinite(n):
        return str(n)
    for unit, scale in _UNITS:
        if abs(n) >= scale:
            return f"{n / scale:.{digits}g}{unit}"
    return f"{n:.{digits}g}"


def number(x) -> str:
    """A number for a message: 3 rather than 3.0, 1.5e+11 as Python writes it."""
    x = float(x)
    return repr(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def integer(n) -> str:
    """An integer with thousands separators: 1024 -> '1,024'."""
    return f"{int(round(float(n))):,}"


def span(values) -> str:
    """'a' when all values are equal, else 'a to b' (smallest to largest)."""
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo} to {hi}"
