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


def _label(body: str) -> tuple[str, str]:
    """The author-year label a citation shows: the first author's last name (with 'et al.' or the
    second name) or the title, and the year as given."""
    author = re.search(r"^\s*author\s*=\s*\{(.*?)\},?\s*$", body, re.MULTILINE)
    year = re.search(r"^\s*year\s*=\s*\{(.*?)\}", body, re.MULTILINE)
    if author:
        names = [n.split(",")[0].strip() for n in author.group(1).split(" and ")]
        who = names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2 else names[0] + " et al."
    else:
        who = re.search(r"^\s*title\s*=\s*\{(.*?)\},?\s*$", body, re.MULTILINE).group(1)
    return who, year.group(1) if year else "n.d."


def duplicate_labels(text: str) -> list[str]:
    seen: dict[tuple[str, str], str] = {}
    out = []
    for key, body in _entries(text).items():
        label = _label(body)
        if label in seen:
            out.append(f"{seen[label]} and {key} both cite as {label}")
        seen[label] = key
    return out


def test_every_work_has_its_own_label():
    assert duplicate_labels(BIB.read_text(encoding="utf-8")) == []


def test_the_label_check_fails_on_two_works_with_one_label():
    two = ("@misc{a2023,\n  author = {Touvron, Hugo and Lavril, T. and Izacard, G.},\n  title = {A},\n  year = {2023}\n}\n"
           "@misc{b2023,\n  author = {Touvron, Hugo and Martin, L. and Stone, K.},\n  title = {B},\n  year = {2023}\n}\n")
    assert duplicate_labels(two)
    assert duplicate_labels(two.replace("{2023}\n}\n@", "{2023a}\n}\n@")) == []


#: entries for which no public address or identifier is known to the book: each says so in its note
#: or is a classic cited by its journal; any other entry must carry a link
NO_KNOWN_LINK = {"beylkin2002numerical", "lieber2021jurassic", "levine2020summary",
                 "survey2024deep", "etessami2000until"}


def unlinked(text: str) -> list[str]:
    """Entries with none of url, doi, eprint or a howpublished \\url (the fields the bibliography
    style turns into a link)."""
    return [key for key, body in _entries(text).items()
            if not re.search(r"^\s*(url|doi|eprint)\s*=", body, re.MULTILINE)
            and not re.search(r"^\s*howpublished\s*=\s*\{\\url", body, re.MULTILINE)]


def test_every_entry_links_to_its_work_unless_none_is_known():
    text = BIB.read_text(encoding="utf-8")
    assert sorted(unlinked(text)) == sorted(NO_KNOWN_LINK)
    # the authors' summary is labelled for what it is
    assert _entries(text)["levine2020summary"].count("Unpublished note") == 1
    assert unlinked("@misc{z2020,\n  author = {A, B},\n  title = {T},\n  year = {2020}\n}\n") == ["z2020"]
