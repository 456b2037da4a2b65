"""The figure captions that state a result (they sit in the cells' metadata, where nothing can be
glued): every chapter holds the caption its stored results give, and executing a chapter
(scripts/execute_notebooks.py) writes it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dwlib.book import captions

ROOT = Path(__file__).resolve().parents[1]


def _chapter(name: str) -> dict:
    return json.loads((ROOT / "book" / f"{name}.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("chapter", sorted({c for c, _ in captions.COMPUTED.values()}))
def test_every_computed_caption_is_the_one_the_stored_results_give(chapter):
    nb = _chapter(chapter)
    shown = captions.figures(nb)
    for name, (where, _) in captions.COMPUTED.items():
        if where == chapter:
            assert name in shown, f"{chapter} does not show {name}"
    # nothing to write: each computed figure already holds its caption
    assert captions.set_computed(copy.deepcopy(nb), chapter) == []


def test_executing_a_chapter_writes_its_computed_captions_and_no_other():
    nb = _chapter("experiments")
    stale = captions.figures(nb)
    stale["fig-pairs"]["caption"] = "A caption written before the runs."
    others = {n: f["caption"] for n, f in stale.items() if n != "fig-pairs"}
    assert captions.set_computed(nb, "experiments") == ["fig-pairs"]
    now = captions.figures(nb)
    assert now["fig-pairs"]["caption"] == captions.COMPUTED["fig-pairs"][1]()
    assert {n: f["caption"] for n, f in now.items() if n != "fig-pairs"} == others
    # a computed figure is written only in its own chapter
    assert captions.set_computed(nb | {"cells": copy.deepcopy(nb["cells"])}, "claims") == []
