"""Packs (dwlib.train.pack): a round trip, the prefix rule, and every way a pack can be refused."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from dwlib.errors import InputError
from dwlib.train import pack as P
from dwlib.train.data import load_corpus

META = {"corpus": "synthetic", "corpus_key": "synthetic-1", "vocab_size": 1000, "tokenizer_sha256": "ab" * 32}


def _docs(n_tokens: int, seed: int = 0) -> np.ndarray:
    """Token ids in 1..999 with an end-of-text (0) closing a document every 20-80 tokens."""
    rng = np.random.default_rng(seed)
    out = rng.integers(1, 1000, size=n_tokens).astype(np.uint16)
    ends = np.cumsum(rng.integers(20, 80, size=n_tokens // 20))
    out[ends[ends < n_tokens]] = 0
    out[-1] = 0
    return out


@pytest.fixture
def arrays():
    return {"train": _docs(6000), "valid": _docs(700, seed=1)}


@pytest.fixture
def packed(tmp_path, arrays):
    path = tmp_path / "c.dwpack"
    P.pack(arrays, path, META)
    return path


def _one_line_error(call, *args, **kwargs) -> str:
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    msg = str(err.value)
    assert msg and "\n" not in msg
    return msg


def test_round_trip_in_memory(packed, arrays):
    out, header = P.load_pack(packed, expect={"vocab_size": 1000, "corpus_key": "synthetic-1"})
    assert list(out) == ["train", "valid"]
    for k, v in arrays.items():
        assert out[k].dtype == np.uint16 and np.array_equal(out[k], v)
        assert not out[k].flags.writeable
    assert header["tokenizer_sha256"] == META["tokenizer_sha256"] and header["prefix"] is False
    assert [a["tokens"] for a in header["arrays"]] == [6000, 700]
    assert P.read_header(packed) == header
    assert packed.stat().st_size < 2 * (6000 + 700)  # compressed: fewer bytes than the raw uint16
    assert not list(packed.parent.glob(".*.tmp"))


def test_round_trip_through_cache(tmp_path, packed, arrays):
    cache = tmp_path / "cache"
    first, _ = P.load_pack(packed, cache=cache)
    files = sorted(p.name for p in cache.iterdir())
    assert len(files) == 2 and all(f.endswith(".npy") for f in files)
    again, _ = P.load_pack(packed, cache=cache)
    for k, v in arrays.items():
        assert isinstance(again[k], np.memmap) and np.array_equal(first[k], v) and np.array_equal(again[k], v)
    assert sorted(p.name for p in cache.iterdir()) == files  # nothing left half-written


def test_prefix_of_whole_documents_when_too_big(tmp_path, arrays):
    full = P.pack(arrays, tmp_path / "full.dwpack", META)["bytes"]
    header = P.pack(arrays, tmp_path / "small.dwpack", META, max_bytes=full // 2)
    assert header["bytes"] <= full // 2
    assert (tmp_path / "small.dwpack").stat().st_size == header["bytes"]
    assert header["prefix"] and header["prefix_of"] == {"train": {"tokens_in_split": 6000}}
    out, _ = P.load_pack(tmp_path / "small.dwpack")
    n = header["arrays"][0]["tokens"]
    assert 0 < n < 6000 and out["train"][-1] == 0 and np.array_equal(out["train"], arrays["train"][:n])
    assert np.array_equal(out["valid"], arrays["valid"])  # only the first array is cut
    assert "fits" in _one_line_error(P.pack, arrays, tmp_path / "tiny.dwpack", META, max_bytes=300)
    assert not (tmp_path / "tiny.dwpack").exists()


@pytest.mark.parametrize("keep", [0, 5, 11, 40, -200, -1])
def test_truncated_pack_is_refused(tmp_path, packed, keep):
    data = packed.read_bytes()
    cut = tmp_path / "cut.dwpack"
    cut.write_bytes(data[:keep] if keep >= 0 else data[:len(data) + keep])
    _one_line_error(P.load_pack, cut)


def test_corrupt_payload_is_refused(tmp_path, packed):
    data = bytearray(packed.read_bytes())
    data[len(data) // 2 + 100] ^= 0xFF
    bad = tmp_path / "bad.dwpack"
    bad.write_bytes(bytes(data))
    assert "corrupt" in _one_line_error(P.load_pack, bad)
    bad.write_bytes(packed.read_bytes() + b"extra")
    assert "corrupt" in _one_line_error(P.load_pack, bad)


def _rewrite_header(src, dst, change):
    data = src.read_bytes()
    (n,) = struct.unpack("<I", data[8:12])
    header = json.loads(data[12:12 + n])
    change(header)
    raw = json.dumps(header).encode()
    dst.write_bytes(data[:8] + struct.pack("<I", len(raw)) + raw + data[12 + n:])


def test_checksum_and_size_mismatches_are_refused(tmp_path, packed):
    other = tmp_path / "other.dwpack"
    _rewrite_header(packed, other, lambda h: h["arrays"][1].update(sha256="0" * 64))
    assert "checksum" in _one_line_error(P.load_pack, other)
    _rewrite_header(packed, other, lambda h: h["arrays"][1].update(tokens=699))
    _one_line_error(P.load_pack, other)
    _rewrite_header(packed, other, lambda h: h["arrays"][1].update(tokens=701))
    _one_line_error(P.load_pack, other)
    _rewrite_header(packed, other, lambda h: h.update(format=2))
    assert "format" in _one_line_error(P.load_pack, other)


def test_header_mismatch_is_refused(tmp_path, packed):
    msg = _one_line_error(P.load_pack, packed, expect={"vocab_size": 2000})
    assert "vocab_size=1000" in msg and "2000" in msg
    _one_line_error(P.load_pack, packed, expect={"tokenizer_sha256": "cd" * 32})
    assert not (tmp_path / "cache").exists()
    _one_line_error(P.load_pack, packed, expect={"corpus_key": "synthetic-2"}, cache=tmp_path / "cache")


def test_other_files_are_refused(tmp_path):
    _one_line_error(P.load_pack, tmp_path / "missing.dwpack")
    junk = tmp_path / "junk.dwpack"
    junk.write_bytes(b"not a pack at all, just some bytes")
    assert "not a dwlib pack" in _one_line_error(P.load_pack, junk)
    _one_line_error(P.read_header, junk)


def test_bad_input_to_pack(tmp_path, arrays):
    out = tmp_path / "x.dwpack"
    _one_line_error(P.pack, {"train": np.array([1, 2, 1000])}, out, META)  # id outside the vocabulary
    _one_line_error(P.pack, {"train": np.array([-1, 2])}, out, META)
    _one_line_error(P.pack, {"train": np.zeros((2, 2), int)}, out, META)
    _one_line_error(P.pack, {}, out, META)
    _one_line_error(P.pack, arrays, out, {k: v for k, v in META.items() if k != "tokenizer_sha256"})
    _one_line_error(P.pack, arrays, tmp_path / "no" / "such" / "dir.dwpack", META)
    _one_line_error(P.pack, arrays, out, {**META, "when": object()})
    assert not out.exists()


def test_pack_corpus_from_a_tokenised_folder(tmp_path):
    """pack_corpus on a real (small) tokenised corpus: the header names its tokenizer and key."""
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(25):
        (folder / f"d{i:02d}.txt").write_text(f"Document {i} says the same few words again and again. " * 20)
    corpus = load_corpus(str(folder), vocab_size=300, cache=tmp_path / "cache")
    header = P.pack_corpus(corpus, tmp_path / "c.dwpack", splits=("train", "valid"))
    want = {"corpus_key": corpus.meta["key"], "vocab_size": 300,
            "tokenizer_sha256": P.tokenizer_sha256(corpus.directory / "tokenizer.json")}
    out, got = P.load_pack(tmp_path / "c.dwpack", expect=want)
    assert np.array_equal(out["train"], corpus.train) and np.array_equal(out["valid"], corpus.valid)
    assert got["held_out"] == corpus.meta["held_out"] and header["bytes"] == (tmp_path / "c.dwpack").stat().st_size
    assert got["tokenizer_json"] == (corpus.directory / "tokenizer.json").read_text(encoding="utf-8")
    _one_line_error(P.pack_corpus, corpus, tmp_path / "d.dwpack", splits=("nope",))
    whole = P.pack_corpus(corpus, tmp_path / "w.dwpack")["bytes"]  # the training split alone
    small = P.pack_corpus(corpus, tmp_path / "s.dwpack", max_bytes=whole - 1)  # max_bytes reaches pack
    assert small["prefix"] and small["bytes"] < whole


def test_the_pack_command_packs_the_three_way_split(tmp_path, monkeypatch, capsys):
    """`dwlib pack` packs the splits named, of the three-way split with --validation-split; the
    pack holds exactly the cached token arrays."""
    from dwlib import cli

    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(45):
        (folder / f"d{i:02d}.txt").write_text(f"Document {i} says a few words. " * 10)
    out = tmp_path / "c.dwpack"
    argv = ["pack", "--corpus", str(folder), "--vocab-size", "300", "--out", str(out), "--validation-split",
            "--splits", "train,valid,select"]
    assert cli.main(argv + ["--json"]) == 0
    header = json.loads(capsys.readouterr().out)
    corpus = load_corpus(str(folder), vocab_size=300, validation_split=True)
    arrays, _ = P.load_pack(out, expect={"corpus_key": corpus.meta["key"], "vocab_size": 300})
    assert [a["name"] for a in header["arrays"]] == ["train", "valid", "select"] and "tokenizer_json" not in header
    for name in ("train", "valid", "select"):
        assert np.array_equal(arrays[name], getattr(corpus, name))
    assert cli.main(["pack", "--corpus", str(folder), "--vocab-size", "300", "--out", str(tmp_path / "t.dwpack")]) == 0
    assert capsys.readouterr().out.startswith(f"packed {corpus.meta['key']} (train ")


def test_an_installed_pack_is_the_corpus_cache_on_a_machine_without_the_package(tmp_path, monkeypatch):
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(45):
        (folder / f"d{i:02d}.txt").write_text(f"Document {i} says a few words. " * 10)
    corpus = load_corpus(str(folder), vocab_size=300, cache=tmp_path / "here", validation_split=True)
    splits = ("train", "valid", "select")
    P.pack_corpus(corpus, tmp_path / "whole.dwpack", splits=splits)
    installed = P.install_pack(tmp_path / "whole.dwpack", cache=tmp_path / "there")
    again = load_corpus(str(folder), vocab_size=300, cache=tmp_path / "there", validation_split=True)
    assert again.directory == installed and again.meta["fingerprint"] == corpus.meta["fingerprint"]
    for name in splits:
        assert np.array_equal(getattr(again, name), getattr(corpus, name))
    # linux-doc on a machine without its Debian package: the one version installed from a pack.
    monkeypatch.setenv("DWLIB_LINUX_DOC", str(tmp_path / "no-package"))
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "gpu"))
    tok = (corpus.directory / "tokenizer.json").read_text(encoding="utf-8")
    meta = {"corpus": "linux-doc", "corpus_key": "linux-doc-6.1.999-1", "vocab_size": 300, "tokenizer_json": tok,
            "tokenizer_sha256": P.tokenizer_sha256(corpus.directory / "tokenizer.json"), "validation_split": True}
    P.pack({s: getattr(corpus, s) for s in splits}, tmp_path / "ld.dwpack", meta)
    P.install_pack(tmp_path / "ld.dwpack")
    ld = load_corpus("linux-doc", vocab_size=300, validation_split=True)
    assert ld.meta["key"] == "linux-doc-6.1.999-1" and np.array_equal(ld.select, corpus.select)
    # What a run could not use is refused: the training split alone, or a prefix of it.
    P.pack_corpus(corpus, tmp_path / "train.dwpack")
    _one_line_error(P.install_pack, tmp_path / "train.dwpack")
