"""Corpora, tokenizer cache, split and windows of dwlib.train.data (no network, tiny corpora)."""

import json
import random

import numpy as np
import pytest

from dwlib.train import data
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
    a = data.train_batch(tokens, step=7, batch_size=4, seq_len=16, seed=3)
    assert a.shape == (4, 17)
    np.testing.assert_array_equal(a, data.train_batch(tokens, step=7, batch_size=4, seq_len=16, seed=3))
    assert not np.array_equal(a, data.train_batch(tokens, step=8, batch_size=4, seq_len=16, seed=3))
    assert (np.diff(a, axis=1) == 1).all()  # contiguous windows
    e = data.eval_batches(tokens, n_batches=3, batch_size=4, seq_len=16)
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
