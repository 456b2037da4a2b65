"""Fixtures shared by the test modules."""

import pytest

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A small text corpus file (40 documents) with its tokenizer cache in tmp_path."""
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    return str(path)
