"""Sources as a reader sees them: a BibTeX key of book/references.bib as "Devlin et al., 2019".

dwlib's data names its sources by key (``source`` in models.json, in the context chapter's
tables); the chapters' tables show the author-year text that the book's own citations use
(``bibtex_reference_style: author_year``). The text comes from dwlib/data/references.json,
which scripts/publish_references.py writes from the bibliography (so it is there on Colab too).
"""

from __future__ import annotations

import functools

from dwlib.errors import require
from dwlib.store import packaged_json

DATA_FILE = "references.json"


@functools.cache
def _entries() -> dict:
    return packaged_json(DATA_FILE)["entries"]


def author_year(key: str) -> str:
    """'Devlin et al., 2019' for ``devlin2019bert``; a key the bibliography lacks is an error."""
    entries = _entries()
    require(key in entries, f"no reference {key!r} in {DATA_FILE} (run scripts/publish_references.py)")
    return f"{entries[key]['authors']}, {entries[key]['year']}"


def sources(keys) -> list[str]:
    """:func:`author_year` of each key, in order (a table's source column)."""
    return [author_year(k) for k in keys]
