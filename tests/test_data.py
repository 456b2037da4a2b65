"""Corpora, tokenizer cache, split and windows of dwlib.train.data (no network, tiny corpora)."""

import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np
import pytest

from dwlib.train import batches, data
from dwlib.errors import InputError

WORDS = "the of and to a in that is was he for it with as his on be at by had Congress nation".split()


def write_corpus(path, documents=40, words=150, seed=0):
    rng = random.Random(seed)
    text = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(documents))
    path.write_text(text)
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_tokenizer_round_trips_text(tmp_path, cache):
    corpus = data.load_corpus(str(write_corpus(tmp_path / "c.txt")), vocab_size=300)
    tok = corpus.tokenizer()
    assert tok.get_vocab_size() <= 300 and tok.token_to_id(data.EOT) == 0
    for text in ["the nation and Congress", "  Ünïcode — 😀 tabs\tand\nnew lines  ", "unseen wordz 1790"]:
        assert tok.decode(tok.encode(text).ids) == text


def test_cache_files_split_and_reuse(tmp_path, cache):
    path = str(write_corpus(tmp_path / "c.txt"))
    corpus = data.load_corpus(path, vocab_size=300)
    assert corpus.directory.parent.parent == cache and corpus.directory.name == "split20-v300"
    assert corpus.train.dtype == np.uint16 and corpus.valid.dtype == np.uint16
    assert isinstance(corpus.train, np.memmap)
    assert corpus.meta["documents"] == {"train": 38, "valid": 2}  # documents 19 and 39 held out
    assert corpus.train.max() < 300 and (corpus.train == 0).sum() == 38  # one end-of-text per document
    assert not [p for p in corpus.directory.iterdir() if p.name.endswith(".tmp")]
    stamp = (corpus.directory / "train.npy").stat().st_mtime_ns
    again = data.load_corpus(path, vocab_size=300)  # from the cache, not re-tokenised
    assert (again.directory / "train.npy").stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(again.train, corpus.train)
    assert json.loads((corpus.directory / "meta.json").read_text())["tokens"]["train"] == len(corpus.train)


def test_split_rule():
    docs = [f"document {i}" for i in range(45)]
    train, held = data.split_documents(docs)
    assert held == ["document 19", "document 39"] and len(train) == 43
    train, held = data.split_documents(["one two three " * 100])  # fewer than 20 documents
    assert len(held) == 1 and 0 < len(held[0]) < len(train[0]) / 10


def test_windows_are_reproducible_contiguous_and_fixed_for_eval():
    tokens = np.arange(1000, dtype=np.uint16)
    a = batches.train_batch(tokens, step=7, batch_size=4, seq_len=16, seed=3)
    assert a.shape == (4, 17)
    np.testing.assert_array_equal(a, batches.train_batch(tokens, step=7, batch_size=4, seq_len=16, seed=3))
    assert not np.array_equal(a, batches.train_batch(tokens, step=8, batch_size=4, seq_len=16, seed=3))
    assert (np.diff(a, axis=1) == 1).all()  # contiguous windows
    e = batches.eval_batches(tokens, n_batches=3, batch_size=4, seq_len=16)
    assert e.shape == (3, 4, 17) and e[0, 0, 0] == 0 and e[-1, -1, -1] == 999


def test_bad_corpora_are_one_line_input_errors(tmp_path, cache, monkeypatch):
    with pytest.raises(InputError, match="unknown corpus 'wikitext'"):
        data.load_corpus("wikitext")
    with pytest.raises(InputError, match="does not exist"):
        data.load_corpus(str(tmp_path / "missing.txt"))
    (tmp_path / "empty.txt").write_text("  \n\n ")
    with pytest.raises(InputError, match="empty"):
        data.load_corpus(str(tmp_path / "empty.txt"))
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="no .txt files"):
        data.load_corpus(str(tmp_path / "folder"))
    small = data.load_corpus(str(write_corpus(tmp_path / "small.txt", documents=2, words=30)), vocab_size=300)
    with pytest.raises(InputError, match="too small"):
        data.check_windows(small, seq_len=64)
    monkeypatch.setattr(data, "_hub_reachable", lambda timeout=5.0: False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    for name in ("wikitext-103", "wikipedia"):
        with pytest.raises(InputError, match="needs network access") as err:
            data.load_corpus(name)
        assert "\n" not in str(err.value)
    assert not list(cache.glob("wiki*"))  # nothing half-written


def test_folder_of_text_files(tmp_path, cache):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        write_corpus(folder / f"{i}.txt", documents=1, words=200, seed=i)
    corpus = data.load_corpus(str(folder), vocab_size=280)
    assert corpus.meta["documents"] == {"train": 1, "valid": 1}  # under 20 documents: the last 20th held out
    assert len(corpus.valid) > 0


# --- the cache under failures --------------------------------------------------------------------


def test_a_full_disk_while_caching_is_an_oserror_and_leaves_nothing(tmp_path, cache, monkeypatch):
    """Fault injection: the second token array's write fails with ENOSPC half-way. One OSError line
    naming the cache (no SIGBUS: the arrays are written with ordinary writes), no file left behind,
    and the next call builds the cache whole."""
    path = str(write_corpus(tmp_path / "c.txt"))
    real, calls = data._write_npy, []

    def full_disk(f, arr):
        calls.append(len(arr))
        if len(calls) == 2:
            f.write(b"\x93NUMPY partial")
            raise OSError(28, "No space left on device")
        return real(f, arr)

    monkeypatch.setattr(data, "_write_npy", full_disk)
    with pytest.raises(OSError) as err:
        data.load_corpus(path, vocab_size=300)
    assert err.value.errno == 28 and "tokenizer cache" in str(err.value) and "\n" not in str(err.value)
    assert [p.name for p in cache.rglob("*") if p.is_file()] == []  # no array, tokenizer or temporary file
    monkeypatch.setattr(data, "_write_npy", real)
    assert data.load_corpus(path, vocab_size=300).meta["tokens"]["train"] > 0


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="Linux")
def test_a_really_full_disk_while_caching_is_an_oserror_not_sigbus(tmp_path):
    """The cache on a 64 KB tmpfs (in a user namespace, where one can be mounted)."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user namespaces here to mount a small tmpfs")
    corpus, mount = write_corpus(tmp_path / "c.txt", documents=40, words=2000), tmp_path / "small"
    mount.mkdir()
    script = ("import os, sys; from dwlib.train import data\n"
              "try: data.load_corpus(sys.argv[1], vocab_size=300, cache=sys.argv[2])\n"
              "except OSError as err: print(err.errno, err)\n"
              "print(sorted(str(p) for p in __import__('pathlib').Path(sys.argv[2]).rglob('*') if p.is_file()))")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {mount} && "
                           f"{sys.executable} -c \"$0\" {corpus} {mount}", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    first, files = proc.stdout.strip().splitlines()
    assert first.startswith("28 ") and "tokenizer cache" in first, first
    assert files == "[]"


@pytest.mark.parametrize("damage", ["train.npy", "valid.npy", "meta.json", "tokenizer.json"])
def test_a_corrupt_cache_is_rebuilt_with_one_line(tmp_path, cache, capsys, damage):
    path = str(write_corpus(tmp_path / "c.txt"))
    corpus = data.load_corpus(path, vocab_size=300)
    train, fingerprint = np.array(corpus.train), corpus.meta["fingerprint"]
    target = corpus.directory / damage
    target.write_bytes(target.read_bytes()[:len(target.read_bytes()) // 2])  # torn
    del corpus
    capsys.readouterr()
    again = data.load_corpus(path, vocab_size=300)
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and "is corrupt" in printed[0] and "rebuilding" in printed[0], printed
    np.testing.assert_array_equal(again.train, train)
    assert again.meta["fingerprint"] == fingerprint  # the same tokenizer and tokens, rebuilt


@pytest.mark.parametrize("rewrite", ["shuffled", "past the vocabulary"])
def test_tokens_rewritten_in_place_are_found_and_rebuilt(tmp_path, cache, capsys, rewrite):
    """The cache's sizes and headers intact, its tokens changed: the fingerprint (or the
    vocabulary) finds it before a run trains on other data."""
    path = str(write_corpus(tmp_path / "c.txt"))
    corpus = data.load_corpus(path, vocab_size=300)
    train, fingerprint = np.array(corpus.train), corpus.meta["fingerprint"]
    arr = np.load(corpus.directory / "train.npy", mmap_mode="r+")
    arr[:50] = arr[50:100][::-1] if rewrite == "shuffled" else 299 + 1
    arr.flush()
    del arr, corpus
    capsys.readouterr()
    again = data.load_corpus(path, vocab_size=300)
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and "is corrupt" in printed[0], printed
    assert ("fingerprint" if rewrite == "shuffled" else "past the vocabulary") in printed[0]
    np.testing.assert_array_equal(again.train, train)
    assert again.meta["fingerprint"] == fingerprint


def test_fifos_and_binary_files_are_refused_and_stray_bytes_warned(tmp_path, cache, capsys):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):  # refused at once, not read forever
        data.load_corpus(str(fifo))
    binary = tmp_path / "blob.txt"
    binary.write_bytes(bytes(random.Random(0).randrange(256) for _ in range(20000)))
    with pytest.raises(InputError, match="is not UTF-8 text"):
        data.load_corpus(str(binary), vocab_size=300)
    mostly = write_corpus(tmp_path / "mostly.txt")
    mostly.write_bytes(mostly.read_bytes() + b"\n\nLatin-1 caf\xe9\n")
    capsys.readouterr()
    corpus = data.load_corpus(str(mostly), vocab_size=300)
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and "1 of its" in printed[0] and "not UTF-8" in printed[0], printed
    assert corpus.meta["documents"]["train"] == 39
