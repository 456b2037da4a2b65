"""The registry corpus reader (dwlib.train.corpora) on a small stand-in for the Debian package."""

from __future__ import annotations

import gzip

import pytest

from dwlib.errors import InputError
from dwlib.train import corpora
from dwlib.train.data import load_corpus, split_documents


def _gz(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)


@pytest.fixture
def root(tmp_path):
    """A folder shaped like /usr/share/doc/linux-doc-6.1, with 45 documents and some to leave out."""
    docs = tmp_path / "Documentation"
    for i in range(45):
        _gz(docs / f"area{i % 3}" / f"doc{i:02d}.rst.gz", f"\n\nDocument {i}\n=====\n\nSome prose.\n\n")
    _gz(docs / "top.txt.gz", "A top-level text file.\n")
    _gz(docs / "empty.rst.gz", "\n\n")
    _gz(docs / "translations" / "it_IT" / "index.rst.gz", "Documentazione.\n")
    _gz(docs / "devicetree" / "bindings" / "a.txt.gz", "compatible: x\n")
    _gz(docs / "ABI" / "testing" / "sysfs.txt.gz", "What: /sys/x\n")
    _gz(docs / "conf.py.gz", "project = 'x'\n")
    _gz(tmp_path / "changelog.Debian.gz", "linux (6.1.192-2) bookworm-security; urgency=high\n\n  * ...\n")
    return tmp_path


def test_documents_files_and_version(root, monkeypatch):
    files = corpora.linux_doc_files(root)
    rel = [p.relative_to(root / "Documentation").as_posix() for p in files]
    assert len(rel) == 47 and rel == sorted(rel) and rel[0] == "area0/doc00.rst.gz" and "top.txt.gz" in rel
    assert not any(r.startswith(("translations/", "devicetree/", "ABI/")) or r.endswith(".py.gz") for r in rel)
    docs = corpora.linux_doc_documents(root)
    assert len(docs) == 46 and docs[0].startswith("Document 0\n") and docs[0].endswith("Some prose.")
    assert corpora.linux_doc_version(root) == "6.1.192-2"
    assert corpora.linux_doc_key(root) == "linux-doc-6.1.192-2"
    monkeypatch.setenv(corpora.LINUX_DOC_ENV, str(root))
    assert corpora.linux_doc_documents() == docs


def test_three_way_split_keeps_data_py_held_out_split(root):
    docs = corpora.linux_doc_documents(root)
    split = corpora.split_three(docs + ["", "  \n"])  # empty documents are dropped before counting
    train, held_out = split_documents(docs)
    assert split["test"] == held_out and [docs[19], docs[39]] == held_out
    assert split["valid"] == [docs[0], docs[20], docs[40]]
    assert sorted(split["train"] + split["valid"]) == sorted(train)
    assert [corpora.split_of(i) for i in (0, 1, 18, 19, 20, 39)] == ["valid", "train", "train", "test", "valid", "test"]
    with pytest.raises(InputError):
        corpora.split_three(docs[:39])


def test_missing_package_is_one_line(tmp_path):
    with pytest.raises(InputError, match="apt-get install linux-doc-6.1"):
        corpora.linux_doc_documents(tmp_path / "nowhere")
    (tmp_path / "Documentation").mkdir()
    with pytest.raises(InputError, match="holds no"):
        corpora.linux_doc_files(tmp_path)
    with pytest.raises(InputError, match="version"):
        corpora.linux_doc_version(tmp_path)


def test_the_recorded_split_sizes_are_the_installed_corpus():
    """corpora.LINUX_DOC_SPLIT_TOKENS, which the book quotes, against the corpus itself where its
    Debian package (of the recorded version) is installed; skipped elsewhere (CI has no package)."""
    rec = corpora.LINUX_DOC_SPLIT_TOKENS
    try:
        version = corpora.linux_doc_version()
    except InputError:
        pytest.skip("linux-doc-6.1 is not installed")
    if version != rec["version"]:
        pytest.skip(f"linux-doc {version} is installed, the record is of {rec['version']}")
    corpus = load_corpus(corpora.LINUX_DOC, vocab_size=rec["vocab_size"], validation_split=True, verbose=False)
    assert {name: int(getattr(corpus, name).size) for name in ("train", "valid", "select")} == \
        {name: rec[name] for name in ("train", "valid", "select")}
