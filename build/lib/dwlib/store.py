"""Reading dwlib's packaged data, and writing files whole or not at all.

The data the book reads ships inside the package (``dwlib/data``): :func:`packaged_text` and
:func:`packaged_json` read it, also from an installed wheel (Colab). The library never writes
there by itself: every writer below takes an explicit path, and the scripts in ``scripts/``
are what publish fresh copies into the package.

Sweeps share result directories between shards, runs resume from what they wrote, and the book
reads data files written by dwlib: a reader must never see half a file. Each writer here writes
a temporary file beside the target and renames it over the target (atomic on one file system).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

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
