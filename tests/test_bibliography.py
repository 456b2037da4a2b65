"""The bibliography speaks of its works, not of how the book was made: no entry's note narrates
the book's own copy of a source, and an entry without an author is given by its title and year."""

from __future__ import annotations

import re
from pathlib import Path

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"
NARRATION = re.compile(r"this book|the copy used|copy of|we (used|read)", re.IGNORECASE)


def _entries(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"@\w+\{([^,]+),(.*?)\n\}", text, re.DOTALL)}


def problems(text: str) -> list[str]:
    out = []
    for key, body in _entries(text).items():
        note = re.search(r"note\s*=\s*\{(.*?)\}\s*,?\s*$", body, re.MULTILINE)
        if note and NARRATION.search(note.group(1)):
            out.append(f"{key}: its note narrates the book's copy: {note.group(1)!r}")
        if not re.search(r"^\s*author\s*=", body, re.MULTILINE) and not (
                re.search(r"^\s*title\s*=", body, re.MULTILINE) and re.search(r"^\s*year\s*=", body, re.MULTILINE)):
            out.append(f"{key}: neither an author nor a title and a year")
    return out


def test_no_entry_narrates_and_every_entry_is_named():
    text = BIB.read_text(encoding="utf-8")
    assert len(_entries(text)) > 40
    assert problems(text) == []


def test_the_check_fails_on_a_narrating_note():
    bad = ("@misc{x2024,\n  title = {A survey},\n  year = {2024},\n"
           "  note = {Survey; the copy used for this book names no author}\n}\n")
    assert problems(bad) and "narrates" in problems(bad)[0]
    assert problems("@misc{y2024,\n  note = {a note}\n}\n")
