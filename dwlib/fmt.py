"""Numbers as text: the one place where dwlib decides how a count or a value is written.

Used by error messages, the command line, the book's sentences and the charts' labels, so
that a budget reads "1.5M" everywhere and a width 1024 never becomes "1.02e+03". The few
sentences that both the command line and the widgets print live here too.
"""

from __future__ import annotations

import re

import math
import numbers

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


def value(v, digits: int = 4) -> str:
    """Any value for a reader: integers with separators (numpy's too), reals to ``digits``
    significant digits with separators (1024.0 -> '1,024', 70800.47 -> '70,800', 134.78 ->
    '134.8'; no exponent below 1e15, where Python's 'g' would write 7.08e+04), anything else
    as ``str``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    x = float(v)
    if math.isfinite(x) and 10**digits <= abs(x) < 1e15:
        return f"{round(x, digits - 1 - math.floor(math.log10(abs(x)))):,.0f}"
    return f"{x:,.{digits}g}"


#: significant digits a saved output keeps (:func:`stable`)
STABLE_DIGITS = 10


def stable(v, digits: int = STABLE_DIGITS):
    """``v`` with every real number that is not an integer rounded to ``digits`` significant
    digits, inside lists, tuples and dicts too (numpy's scalars become Python's floats).

    For what a notebook saves (glued numbers, charts' data): the same computation on another
    CPU can differ in the last bit (a sum reduced in another order by wider vector
    instructions: 5058.386514860644 on one machine, ...643 on another), and the saved outputs,
    which nbval compares, must not depend on the machine. Ten digits are far more than any
    sentence or chart shows."""
    if isinstance(v, dict):
        return {k: stable(x, digits) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(stable(x, digits) for x in v)
    if isinstance(v, bool) or isinstance(v, numbers.Integral) or not isinstance(v, numbers.Real):
        return v
    x = float(v)
    return float(f"{x:.{digits}g}") if math.isfinite(x) else x


def power_of_ten(log10_x: float, digits: int = 2, superscript: bool = False) -> str:
    """A positive number given by its log10 (so that 10^200 fits, beyond a float): written as
    'm × 10^e' (``digits`` significant digits) from a million up and below 0.001, else in full
    (729, 531,441; below 1 to ``digits`` significant digits: 0.22). ``superscript``: the
    exponent as a reader writes it, 'm × 10ᵉ' (see :func:`sci`)."""
    if -3 <= log10_x < 6:
        x = 10 ** log10_x
        return f"{x:,.0f}" if x >= 1 else f"{x:.{digits}g}"
    return sci(log10_x, digits, superscript)


#: digits and the minus sign as Unicode superscripts, for exponents in text that is not TeX
_SUPERSCRIPTS = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def sci(log10_x: float, digits: int = 2, superscript: bool = False) -> str:
    """A positive number given by its log10, always as 'm × 10^e' (``digits`` significant
    digits): 7.3 × 10^15, 2 × 10^5. ``superscript``: the exponent in Unicode superscripts, as
    a reader writes it, for sentences and charts (7.3 × 10¹⁵, 2.2 × 10⁻⁴); the caret form is
    for the command line and the tables that turn it into TeX."""
    exponent = math.floor(log10_x)
    mantissa = f"{10 ** (log10_x - exponent):.{digits - 1}f}"
    if float(mantissa) >= 10:  # 9.96 to two digits is 10.0: carry into the exponent
        exponent, mantissa = exponent + 1, f"{1:.{digits - 1}f}"
    if superscript:
        return f"{mantissa} × 10{str(exponent).translate(_SUPERSCRIPTS)}"
    return f"{mantissa} × 10^{exponent}"


def ten_to(exponent: int) -> str:
    """A whole power of ten as a reader writes it: 12 -> '10¹²', -4 -> '10⁻⁴'."""
    return f"10{str(int(exponent)).translate(_SUPERSCRIPTS)}"


def span(values) -> str:
    """'a' when all values are equal, else 'a to b' (smallest to largest)."""
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo} to {hi}"


def heads(n: int, head_size: int) -> str:
    """'105 heads of 128' (and '1 head of 128')."""
    return f"{n} head{'s' if n != 1 else ''} of {head_size}"


def any_width_sentence(shallow_depth: int) -> str:
    """What :func:`~dwlib.core.bounds.corollary1_width` means when it returns ``any_width``."""
    return (f"a depth-{shallow_depth} network of any width reaches it: its eq. (7) upper bound "
            f"already does at width 1, so the bounds do not separate the two networks")


def heads_note(width, heads) -> str | None:
    """A note when H does not divide d_x (None otherwise).

    The bounds of eqs. (7)-(8) are formulas in (L, d_x, H) and need only 1 <= H < d_x; a network
    of eq. (3) also needs d_a = d_x / H to be an integer. The paper itself evaluates the bounds
    at d_x = 1000, H = 16 (its BERT-large example), which no such network has, so the bounds
    accept it and the command line says so.
    """
    if int(width) % int(heads) == 0:
        return None
    return (f"heads {heads} do not divide width {width}: no network of eq. (3) has this shape "
            f"(d_a = d_x / H); the bounds are evaluated as formulas, as the paper does for d_x = 1000, H = 16")


def capitalised(text: str) -> str:
    """The text with its first letter upper-case (the rest untouched), to open a sentence."""
    return text[:1].upper() + text[1:]


def listed(items) -> str:
    """Items as English lists them: 'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def plural(n: int, noun: str) -> str:
    """'1 head', '4 heads'."""
    return f"{n} {noun}{'s' * (n != 1)}"


def html_small(x: float) -> str:
    """A value between 0 and a few, in HTML: two decimals from 0.01 up ('0.99'), else
    'm.m × 10<sup>e</sup>' ('5.1 × 10<sup>−7</sup>'), and '0' for zero."""
    if x == 0:
        return "0"
    if abs(x) >= 0.01:
        return f"{x:.2f}"
    m, e = f"{x:.1e}".split("e")
    return f"{m} \N{MULTIPLICATION SIGN} 10<sup>{int(e):d}</sup>".replace("-", "\N{MINUS SIGN}")


#: the ASCII forms of the book's symbols in table and chart labels, and what a reader sees instead
_SYMBOLS = [(re.compile(r"\blog3\b"), "log\N{SUBSCRIPT THREE}"), (re.compile(r"\blog10\b"), "log\u2081\u2080"),
            (re.compile(r"\bd_x\b"), "d\u2093"), (re.compile(r"\bd_s\b"), "d\u209b"),
            (re.compile(r"\bL_s\b"), "L\u209b"), (re.compile(r"\bbeta([12])\b"), None),
            (re.compile(r"\b3\^L\b"), "3\u1d38"), (re.compile(r"\^2\b"), "\N{SUPERSCRIPT TWO}"),
            (re.compile(r"!="), "\N{NOT EQUAL TO}"), (re.compile(r"<="), "\N{LESS-THAN OR EQUAL TO}"),
            (re.compile(r">="), "\N{GREATER-THAN OR EQUAL TO}")]


def math_label(text):
    """A table label with its ASCII symbols as a reader writes them: 'log3 sep' -> 'log₃ sep',
    'd_x' -> 'dₓ', 'beta1' -> 'β₁', '3^L' -> '3ᴸ', '<=' -> '≤'. Anything but a string is returned
    as it is."""
    if not isinstance(text, str):
        return text
    for pattern, to in _SYMBOLS:
        text = pattern.sub(to if to is not None else (lambda m: "\N{GREEK SMALL LETTER BETA}"
                                                      + chr(0x2080 + int(m.group(1)))), text)
    return text
