"""Files written whole or not at all.

Sweeps share result directories between shards, runs resume from what they wrote, and the book
reads data files written by dwlib: a reader must never see half a file. Each writer here writes
a temporary file beside the target and renames it over the target (atomic on one file system).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; the temporary file never outlives the call."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
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
