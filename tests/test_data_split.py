"""The three-way split by document (train / validation / held-out): the validation split leaves
training, the reported held-out split stays the same documents, and old run keys stay the same."""

import numpy as np
import pytest

from dwlib.errors import InputError
from dwlib.train import data
from dwlib.train.config import TrainConfig, run_key


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """45 distinct documents, one .txt file each (sorted by name: doc00 ... doc44)."""
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(45):
        (root / f"doc{i:02d}.txt").write_text(f"Document number {i} says: " + f"word{i} " * 30)
    return str(root)


def _texts(corpus, tokens):
    """The documents of a token array (each closed by end-of-text, id 0)."""
    text = corpus.tokenizer().decode(np.asarray(tokens).tolist(), skip_special_tokens=False)
    return [t for t in text.split(data.EOT) if t]


def test_validation_split_leaves_training_and_keeps_the_held_out_documents(folder):
    two = data.load_corpus(folder, vocab_size=300)
    three = data.load_corpus(folder, vocab_size=300, validation_split=True)
    assert two.select is None and three.directory != two.directory
    docs = [f"Document number {i} says: " + f"word{i} " * 30 for i in range(45)]
    assert _texts(three, three.valid) == _texts(two, two.valid) == [docs[19], docs[39]]
    assert _texts(three, three.select) == [docs[0], docs[20], docs[40]]
    train = _texts(three, three.train)
    assert train == [d for i, d in enumerate(docs) if i % 20 not in (0, 19)]
    assert three.meta["documents"] == {"train": 40, "valid": 2, "select": 3}
    assert three.meta["tokens"]["select"] == len(three.select)
    again = data.load_corpus(folder, vocab_size=300, validation_split=True)  # from the cache
    assert again.meta["fingerprint"] == three.meta["fingerprint"] != two.meta["fingerprint"]
    np.testing.assert_array_equal(again.select, three.select)


def test_a_corpus_too_small_for_three_splits_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "small.txt"
    path.write_text("\n\n".join(f"doc {i} " * 20 for i in range(30)))
    with pytest.raises(InputError, match="at least 40"):
        data.load_corpus(str(path), vocab_size=300, validation_split=True)


def test_the_flag_is_keyed_only_when_set():
    base = TrainConfig.from_dict({"depth": 1, "width": 32})
    fields = base.to_dict()
    del fields["validation_split"]  # a config stored before the field existed
    assert run_key(base) == run_key(fields) == run_key(base.replace(validation_split=False))
    assert run_key(base.replace(validation_split=True)) != run_key(base)
    with pytest.raises(InputError, match="validation_split must be true or false"):
        base.replace(validation_split=1).validate()
