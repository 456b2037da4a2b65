"""Packs: a tokenised corpus as one compressed file, for a machine without network.

A GPU machine cannot install the corpus package nor fetch anything, so the token ids travel with
the working tree in one file (git-ignored, at most 60 MiB). Layout:

    b"DWPACK1\\n"                 8 bytes, the format
    header length                 4 bytes, little-endian
    header                        JSON (UTF-8): corpus, corpus_key, vocab_size, tokenizer_sha256,
                                  the arrays (name, tokens, sha256 of their bytes), the compressor;
                                  from :func:`pack_corpus` also the tokenizer itself, the split
                                  rule and the token cache's fingerprint
    payload                       one xz stream (lzma preset 6) of the arrays' uint16
                                  little-endian token ids, one after the other, in header order

Compressors measured on linux-doc's 8.6M training tokens (17.2 MB as uint16, ids below 1000),
one core: zlib-9 6.27 MB (2.75x; 3.0 s to pack, 0.24 s to unpack), bz2-9 5.18 MB (3.32x; 5.4 s,
3.7 s), lzma-6 4.43 MB (3.89x; 24 s, 0.62 s), lzma-9e 4.40 MB (3.91x; 51 s, 0.62 s). lzma-6 packs
smallest for its time and unpacks fast; all are in the standard library (zstd is not a declared
dependency). The linux-doc training split as :mod:`dwlib.train.data` splits it today (every 20th
document held out: 9,105,912 tokens) packs into 4,698,010 bytes (4.48 MiB) in 57 s and loads in
0.9 s (0.98 s the first time through a cache folder, 0.005 s after), measured on this 2-core
machine while other jobs ran on it (load average 8.5): expect these times halved on a quiet one.

The three-way split (``dwlib pack --validation-split --splits train,valid,select``: 8,599,469 +
421,520 + 507,662 tokens) packs into 4.70 MiB; installed as a cache (:func:`install_pack`) in
5.9 s and then loaded in 0.07 s, on this machine under a load average of about 10 (2 cores).

:func:`pack` writes the file atomically. When the arrays do not fit in ``max_bytes``, it packs
the longest prefix of whole documents (cut after an end-of-text token) of the first array that
fits, and says so in the header (``"prefix": true``, with the full count). :func:`load_pack`
decompresses the payload once, streaming, straight into its arrays (in memory, or as ``.npy``
memory maps in a cache folder, named by checksum, so a second load only maps them), checks every
array's SHA-256, and compares the header with what the caller expects. A truncated, corrupt or
mismatched pack is one line of :class:`~dwlib.errors.InputError`. :func:`install_pack` turns a
pack of whole splits into the corpus's tokenizer cache on a machine without the corpus package.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import stat
import struct
from pathlib import Path

import numpy as np

from dwlib.errors import InputError, require
from dwlib.store import check_kinds, write_text
from dwlib.train import data as data_lib

MAGIC = b"DWPACK1\n"
FORMAT = 1
MAX_PACK_BYTES = 60 * 2**20  # 60 MiB: what the repository may carry to a GPU machine
PRESET = 6
CHUNK = 4 * 2**20  # bytes per read or compression call
REQUIRED = ("corpus", "corpus_key", "vocab_size", "tokenizer_sha256")
_HEADER_LEN = struct.Struct("<I")


def _raw(tokens: np.ndarray) -> bytes:
    return np.ascontiguousarray(tokens, dtype="<u2").tobytes()


def _check_arrays(arrays: dict, vocab_size: int) -> dict[str, np.ndarray]:
    require(isinstance(arrays, dict) and arrays, "pack needs at least one named token array")
    out = {}
    for name, arr in arrays.items():
        require(isinstance(name, str) and name.isidentifier(), f"array name must be an identifier, got {name!r}")
        arr = np.asarray(arr)
        require(arr.ndim == 1 and arr.size > 0 and np.issubdtype(arr.dtype, np.integer),
                f"array {name!r} must be a non-empty 1-D integer array, got shape {arr.shape} {arr.dtype}")
        low, high = int(arr.min()), int(arr.max())
        require(0 <= low and high < vocab_size, f"array {name!r} holds ids {low}..{high}, outside vocab_size {vocab_size}")
        out[name] = arr
    return out


def _compress(parts: list[bytes], preset: int) -> bytes:
    comp = lzma.LZMACompressor(format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=preset)
    out = []
    for raw in parts:
        view = memoryview(raw)
        for i in range(0, len(view), CHUNK):
            out.append(comp.compress(view[i:i + CHUNK]))
    out.append(comp.flush())
    return b"".join(out)


def _document_prefix(tokens: np.ndarray, eot_id: int, at_most: int) -> int:
    """The length of the longest prefix of whole documents (ending on ``eot_id``) of at most ``at_most`` tokens."""
    ends = np.flatnonzero(tokens[:at_most] == eot_id)
    return int(ends[-1]) + 1 if ends.size else 0


def _header_bytes(meta: dict, arrays: dict[str, np.ndarray], full: dict[str, int], preset: int) -> bytes:
    entries = [{"name": k, "tokens": int(v.size), "sha256": hashlib.sha256(_raw(v)).hexdigest()}
               for k, v in arrays.items()]
    prefix = {k: {"tokens_in_split": full[k]} for k, v in arrays.items() if v.size < full[k]}
    header = {**meta, "format": FORMAT, "dtype": "uint16", "byteorder": "little",
              "compression": {"name": "xz", "preset": preset}, "arrays": entries,
              "prefix": bool(prefix), "prefix_of": prefix}
    try:
        return json.dumps(header, sort_keys=True).encode("utf-8")
    except (TypeError, ValueError) as err:
        raise InputError(f"pack meta must be JSON data: {err}") from None


def pack(arrays: dict, path: str | os.PathLike, meta: dict, eot_id: int = 0,
         max_bytes: int = MAX_PACK_BYTES, preset: int = PRESET) -> dict:
    """Write ``arrays`` (name -> token ids, e.g. ``{"train": ..., "valid": ...}``) to ``path``.

    ``meta`` must name ``corpus``, ``corpus_key``, ``vocab_size`` and ``tokenizer_sha256`` (more
    keys are kept). Returns the header plus ``bytes`` (the file's size).
    """
    require(isinstance(meta, dict) and all(k in meta for k in REQUIRED),
            f"pack meta must name {', '.join(REQUIRED)}")
    vocab = meta["vocab_size"]
    require(isinstance(vocab, int) and 2 <= vocab <= 65536, f"vocab_size must be an int in 2..65536, got {vocab!r}")
    require(isinstance(max_bytes, int) and max_bytes > 0, f"max_bytes must be a positive int, got {max_bytes!r}")
    arrays = _check_arrays(arrays, vocab)
    full = {k: int(v.size) for k, v in arrays.items()}
    first = next(iter(arrays))
    while True:
        header = _header_bytes(meta, arrays, full, preset)
        payload = _compress([_raw(v) for v in arrays.values()], preset)
        size = len(MAGIC) + _HEADER_LEN.size + len(header) + len(payload)
        if size <= max_bytes:
            break
        # Too big: keep fewer whole documents of the first array, aiming 3% under the limit.
        room = max_bytes - (size - len(payload))
        aim = int(arrays[first].size * max(room, 0) / len(payload) * 0.97)
        keep = _document_prefix(arrays[first], eot_id, min(aim, arrays[first].size - 1))
        require(keep > 0, f"no whole document of {first!r} fits in {max_bytes} bytes with the other arrays")
        arrays = {**arrays, first: arrays[first][:keep]}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + _HEADER_LEN.pack(len(header)) + header + payload)
        os.replace(tmp, path)
    except OSError as err:
        raise InputError(f"cannot write pack {str(path)!r}: {err.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return {**json.loads(header), "bytes": size}


def _read_header(f, path: Path) -> tuple[dict, int]:
    bad = f"{str(path)!r} is not a dwlib pack or is truncated"
    start = f.read(len(MAGIC) + _HEADER_LEN.size)
    require(len(start) == len(MAGIC) + _HEADER_LEN.size and start[:len(MAGIC)] == MAGIC, bad)
    (n,) = _HEADER_LEN.unpack(start[len(MAGIC):])
    raw = f.read(n)
    require(len(raw) == n, bad)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(f"{str(path)!r} has a corrupt header") from None
    ok = (isinstance(header, dict) and header.get("format") == FORMAT and all(k in header for k in REQUIRED)
          and isinstance(header.get("arrays"), list) and header["arrays"]
          and all(isinstance(a, dict) and isinstance(a.get("name"), str) and isinstance(a.get("tokens"), int)
                  and a["tokens"] > 0 and isinstance(a.get("sha256"), str) for a in header["arrays"]))
    require(ok, f"{str(path)!r} has a header of another format (dwlib pack format {FORMAT} expected)")
    return header, len(start) + n


def _open(path: Path):
    """``path`` opened for reading, or InputError unless it is a regular file (a FIFO would block)."""
    require(not path.exists() or stat.S_ISREG(path.stat().st_mode),
            f"pack {str(path)!r} is not a regular file (a FIFO, device or folder)")
    return open(path, "rb")


def read_header(path: str | os.PathLike) -> dict:
    """A pack's header, without reading its payload."""
    path = Path(path)
    try:
        with _open(path) as f:
            return _read_header(f, path)[0]
    except OSError as err:
        raise InputError(f"cannot read pack {str(path)!r}: {err.strerror}") from None


def _check_expected(header: dict, expect: dict | None, path: Path) -> None:
    for key, want in (expect or {}).items():
        got = header.get(key)
        require(got == want, f"pack {str(path)!r} was made with {key}={got!r}, not the expected {want!r}: "
                             f"pack the corpus again")


def _targets(header: dict, cache: Path | None) -> tuple[dict, dict]:
    """(arrays to fill, temporary .npy files to rename when filled); cached arrays come back mapped."""
    out, pending = {}, {}
    for a in header["arrays"]:
        if cache is None:
            out[a["name"]] = np.empty(a["tokens"], dtype="<u2")
            continue
        final = cache / f"{a['sha256'][:32]}-{a['tokens']}.npy"
        if final.exists():
            out[a["name"]] = np.load(final, mmap_mode="r")
            require(out[a["name"]].shape == (a["tokens"],) and out[a["name"]].dtype == np.dtype("<u2"),
                    f"cached array {str(final)!r} does not match its pack: delete it and load again")
            continue
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        out[a["name"]] = np.lib.format.open_memmap(tmp, mode="w+", dtype="<u2", shape=(a["tokens"],))
        pending[a["name"]] = (tmp, final)
    return out, pending


def _fill(f, header: dict, out: dict, skip: set, path: Path) -> None:
    """Stream the payload once into the arrays of ``out`` not in ``skip``, checking every checksum."""
    bad = f"pack {str(path)!r} is corrupt or truncated"
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    entries = header["arrays"]
    idx, pos = 0, 0  # the array being filled and bytes written into it
    digest = hashlib.sha256()
    views = {a["name"]: memoryview(np.asarray(out[a["name"]])).cast("B") for a in entries
             if a["name"] not in skip}
    while idx < len(entries) or not dec.eof:
        chunk = f.read(CHUNK) if dec.needs_input else b""
        require(chunk or not dec.needs_input, bad)  # the file ends before the stream does
        try:
            data = dec.decompress(chunk, max_length=CHUNK)
        except (lzma.LZMAError, EOFError):
            raise InputError(bad) from None
        view = memoryview(data)
        while len(view) and idx < len(entries):
            a = entries[idx]
            take = min(len(view), 2 * a["tokens"] - pos)
            if a["name"] in views:
                views[a["name"]][pos:pos + take] = view[:take]
            digest.update(view[:take])
            pos += take
            view = view[take:]
            if pos == 2 * a["tokens"]:
                require(digest.hexdigest() == a["sha256"], f"pack {str(path)!r} fails its checksum for {a['name']!r}")
                idx, pos, digest = idx + 1, 0, hashlib.sha256()
        require(not len(view), bad)  # more data than the header announces
    require(not dec.unused_data and not f.read(1), bad)  # bytes after the stream


def load_pack(path: str | os.PathLike, expect: dict | None = None,
              cache: str | os.PathLike | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """``({name: uint16 token ids}, header)`` from the pack at ``path``.

    ``expect`` (e.g. ``{"corpus_key": ..., "vocab_size": 1000, "tokenizer_sha256": ...}``) must
    match the header. With ``cache``, the arrays are written there once as ``.npy`` files and
    returned as read-only memory maps; later loads map them without decompressing.
    """
    path = Path(path)
    cache = Path(cache) if cache is not None else None
    try:
        with _open(path) as f:
            header, _ = _read_header(f, path)
            _check_expected(header, expect, path)
            if cache is not None:
                cache.mkdir(parents=True, exist_ok=True)
            out, pending = _targets(header, cache)
            skip = set(out) - set(pending) if cache is not None else set()
            try:
                if len(skip) < len(out):
                    _fill(f, header, out, skip, path)
                for name, (tmp, final) in pending.items():
                    out[name].flush()
                    os.replace(tmp, final)
                    out[name] = np.load(final, mmap_mode="r")
            finally:
                for tmp, _ in pending.values():
                    tmp.unlink(missing_ok=True)
    except OSError as err:
        raise InputError(f"cannot read pack {str(path)!r}: {err.strerror or err}") from None
    for name, arr in out.items():
        if isinstance(arr, np.ndarray) and not isinstance(arr, np.memmap):
            arr.flags.writeable = False
    return out, header


def tokenizer_sha256(tokenizer_json: str | os.PathLike) -> str:
    """The SHA-256 of a saved tokenizer (``tokenizer.json``): what a pack's ids mean."""
    try:
        return hashlib.sha256(Path(tokenizer_json).read_bytes()).hexdigest()
    except OSError as err:
        raise InputError(f"cannot read tokenizer {str(tokenizer_json)!r}: {err.strerror}") from None


def pack_corpus(corpus, path: str | os.PathLike, splits: tuple[str, ...] = ("train",),
                max_bytes: int = MAX_PACK_BYTES) -> dict:
    """Pack the named splits of a :class:`dwlib.train.data.Corpus` (its first split may be cut to a
    prefix of whole documents to fit ``max_bytes``). The header also carries the tokenizer itself
    (``tokenizer_json``, about 60 kB at vocabulary 1000) and the cache's ``fingerprint`` where the
    corpus has one, so that a machine without the corpus package has all it needs."""
    require(splits and all(isinstance(getattr(corpus, s, None), np.ndarray) for s in splits),
            f"splits must name token arrays of the corpus, got {splits!r}")
    tok = Path(corpus.directory) / "tokenizer.json"
    try:
        tokenizer_json = tok.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot read tokenizer {str(tok)!r}: {err.strerror}") from None
    meta = {"corpus": corpus.name, "corpus_key": corpus.meta.get("key", corpus.name),
            "vocab_size": corpus.vocab_size,
            "tokenizer_sha256": hashlib.sha256(tokenizer_json.encode("utf-8")).hexdigest(),
            "tokenizer_json": tokenizer_json, "held_out": corpus.meta.get("held_out"),
            "fingerprint": corpus.meta.get("fingerprint"), "splits": list(splits),
            "validation_split": corpus.select is not None}
    return pack({s: getattr(corpus, s) for s in splits}, path, meta, max_bytes=max_bytes)


def install_pack(path: str | os.PathLike, cache: str | os.PathLike | None = None) -> Path:
    """Make a pack the tokenizer cache of its corpus on this machine (one without the corpus
    package or network), so that :func:`dwlib.train.data.load_corpus` reads it as if it had
    tokenised the corpus here; return the cache folder.

    The pack must hold the splits a run reads (train and valid, and select for a three-way
    split) whole, not a prefix, and the tokenizer; the folder's fingerprint, computed from what
    was written, must equal the one the pack records. Every file is written first into a
    temporary folder beside the cache (``.install-<pid>``, removed whatever happens), so a full
    disk or a wrong fingerprint leaves an existing cache as it was, and one line says why; only
    then are they renamed into place, ``meta.json`` last, as :mod:`dwlib.train.data` writes it,
    so an install killed among the renames leaves no cache (it is installed again, or rebuilt).
    """
    header = read_header(path)
    three = bool(header.get("validation_split"))
    need = ("train", "valid") + (("select",) if three else ())
    names = [a["name"] for a in header["arrays"]]
    require(all(n in names for n in need), f"pack {str(path)!r} holds {', '.join(names)}; a cache needs "
                                           f"{', '.join(need)} (pack them with --splits {','.join(need)})")
    require(not header.get("prefix"), f"pack {str(path)!r} holds a prefix of its training split, not a whole cache")
    require(isinstance(header.get("tokenizer_json"), str), f"pack {str(path)!r} carries no tokenizer")
    arrays, header = load_pack(path)
    split_key = data_lib.SPLIT_KEY + (data_lib.SELECT_KEY if three else "")
    folder = data_lib.cache_dir(cache) / header["corpus_key"] / f"{split_key}-v{header['vocab_size']}"
    stage = folder.parent / f".install-{os.getpid()}" / folder.name  # named as the folder: its split rule
    check_kinds(folder, files=data_lib.CACHE_FILES)
    try:
        stage.mkdir(parents=True, exist_ok=True)
        _stage(path, header, arrays, need, stage, three)
        folder.mkdir(exist_ok=True)
        (folder / "meta.json").unlink(missing_ok=True)
        for name in ["tokenizer.json"] + [f"{n}.npy" for n in need] + ["meta.json"]:
            os.replace(stage / name, folder / name)
    except OSError as err:
        raise InputError(f"cannot install pack {str(path)!r} into {str(folder)!r}: {err.strerror or err}; "
                         "nothing was changed there") from None
    finally:
        shutil.rmtree(stage.parent, ignore_errors=True)
    return folder


def _stage(path, header: dict, arrays: dict, need: tuple, stage: Path, three: bool) -> None:
    """The cache's files, ``meta.json`` last, written into ``stage``; InputError when the arrays
    do not give the fingerprint the pack records."""
    write_text(stage / "tokenizer.json", header["tokenizer_json"])
    for name in need:
        with open(stage / f"{name}.npy", "wb") as f:  # Python's writes: a full disk is OSError(ENOSPC)
            arr = np.ascontiguousarray(arrays[name], dtype=np.uint16)
            np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(arr))
            f.write(memoryview(arr).cast("B"))
    fingerprint = data_lib.fingerprint(stage)
    require(header.get("fingerprint") in (None, fingerprint),
            f"pack {str(path)!r} does not rebuild the cache it was made from (fingerprint {fingerprint}, "
            f"not {header.get('fingerprint')})")
    meta = {"corpus": header["corpus"], "key": header["corpus_key"], "vocab_size": header["vocab_size"],
            "held_out": header.get("held_out"), "tokens": {n: int(arrays[n].size) for n in need},
            "fingerprint": fingerprint, "installed_from": {"pack": Path(path).name,
                                                          "tokenizer_sha256": header["tokenizer_sha256"]}}
    if three:
        meta["validation"] = f"every {data_lib.HELD_OUT_EVERY}th document + 1"
    write_text(stage / "meta.json", json.dumps(meta, indent=2))
