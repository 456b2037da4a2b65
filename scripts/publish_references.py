"""Publish the author-year form of every entry of book/references.bib as dwlib/data/references.json.

    .venv/bin/python scripts/publish_references.py

dwlib's data names its sources by BibTeX key (``source`` in models.json and in the context
chapter's tables); the book's tables show them as "Devlin et al., 2019"
(:func:`dwlib.book.references.author_year`). The bibliography itself stays in book/references.bib,
which Sphinx reads; the package (also on Colab, where the book's files are absent) reads this
file. Run it after adding an entry that dwlib's data cites; tests/test_references.py fails while
a cited key is missing or an entry here disagrees with the bibliography. Needs pybtex, which the
book build installs (sphinxcontrib-bibtex).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import latexcodec  # noqa: F401 (registers the "ulatex" codec; installed with pybtex)
from pybtex.database import parse_file

from dwlib.store import packaged_path, write_json

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"
DATA_FILE = "references.json"


def _plain(latex: str) -> str:
    """LaTeX of a BibTeX field as plain text: accents resolved ({\\'c} -> ć), braces dropped."""
    return codecs.decode(latex, "ulatex").replace("{", "").replace("}", "")


def short_authors(entry) -> str:
    """The author part of an author-year citation: 'Cohen and Shashua' for two authors,
    'Devlin et al.' for three or more; the title when the entry names no author."""
    last = [_plain(" ".join(p.prelast_names + p.last_names)) for p in entry.persons.get("author", [])]
    if not last:
        return _plain(entry.fields["title"])
    return last[0] if len(last) == 1 else f"{last[0]} and {last[1]}" if len(last) == 2 else f"{last[0]} et al."


def entries(path: Path = BIB) -> dict:
    """{key: {"authors": ..., "year": ...}} for every entry of the bibliography at ``path``."""
    db = parse_file(str(path))
    return {key: {"authors": short_authors(e), "year": e.fields.get("year", "n.d.")}
            for key, e in sorted(db.entries.items())}


if __name__ == "__main__":
    table = entries()
    out = write_json(packaged_path(DATA_FILE), {
        "description": "Author-year form of each entry of book/references.bib, by BibTeX key; written by "
                       "scripts/publish_references.py, read by dwlib.book.references.",
        "entries": table})
    print(f"{len(table)} entries written to {out}")
