"""Counts in the chapters' generated sentences read as English: 'none of these six models has',
'all 15 models have', never '0 of the 6' or '15 of the 15'."""

from __future__ import annotations

import re

import pytest

from dwlib.book import corollaries, intro, two_regimes
from dwlib.book.intro import how_many, number_words


@pytest.mark.parametrize("k, n, expected", [
    (0, 6, "none of these six models has"),
    (1, 6, "one of these six models has"),
    (2, 6, "two of these six models have"),
    (6, 6, "all six models have"),
    (15, 15, "all 15 models have"),
    (2, 2, "both models have"),
    (3, 15, "three of these 15 models have"),
])
def test_how_many_reads_as_english(k, n, expected):
    assert how_many(k, n, "models", "has", "have") == expected


def test_how_many_refuses_impossible_counts():
    for k, n in ((3, 2), (-1, 4), (0, 0)):
        with pytest.raises(ValueError, match="how_many"):
            how_many(k, n, "models")


def test_number_words():
    assert [number_words(n) for n in (0, 1, 10, 11, 1234)] == ["no", "one", "ten", "11", "1,234"]


def test_chapter_counts_are_words_not_fractions():
    phrases = [intro.numbers()["depth_efficient_models"], two_regimes.numbers()["tr_above_models"],
               corollaries.numbers()["c1_inside_phrase"], corollaries.numbers()["c1_void_rows"]]
    for phrase in phrases:
        assert not re.search(r"\b(\d+) of the(se)? \1\b", phrase) and not re.search(r"\b0 of\b", phrase), phrase


def test_readings_table_names_every_reading_in_words():
    names = list(corollaries.readings_table().index)
    assert len(names) == len(set(names)) == len(corollaries.READING_NAMES)
    for name in names:
        assert "_" not in name, name
