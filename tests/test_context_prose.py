"""The context chapter opens with its result and a figure, states no process narration, and what
the captions of the rank-collapse and induction figures conclude holds for the stored results
(and fails on bent ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dwlib.experiments import context, induction

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "context.ipynb"
#: "within a few layers" and "a modest factor per layer", as the caption uses them
FEW_LAYERS = 5
MODEST_FACTOR = 0.25


def collapse_conclusions(rows: list[dict]) -> list[str]:
    """Failures of the rank-collapse caption on a grid's rows: pure attention below 1e-6 within
    a few layers at every shape, losing more orders of magnitude at each of its first layers; the
    skip-connection variants losing at most a modest factor per layer."""
    g = pd.DataFrame(rows)
    wrong = []
    for (w, h), shape in g.groupby(["width", "heads"]):
        pure = shape[shape.variant == "pure attention"].sort_values("layer")
        below = pure[pure.residual < 1e-6]
        if below.empty or below.layer.min() > FEW_LAYERS:
            wrong.append(f"width {w}, {h} heads: pure attention not below 1e-6 within {FEW_LAYERS} layers")
        for variant in ("attention + residual", "paper layer (eqs. 1\N{EN DASH}2)"):
            v = shape[shape.variant == variant].sort_values("layer").residual.to_numpy()
            if len(v) < 2 or not ((v[1:] / v[:-1]) >= MODEST_FACTOR).all():
                wrong.append(f"width {w}, {h} heads: {variant} falls by more than a modest factor")
    return wrong


def test_the_captions_conclusions_hold_for_the_stored_results():
    grid = context.load_collapse_grid()
    assert collapse_conclusions(grid["rows"]) == []
    ind = induction.load_induction()
    loss = {r["depth"]: r["loss"] for r in ind["runs"]}
    assert loss[2] < loss[1] / 4 and loss[1] < ind["chance_loss"]  # far below; one layer below chance
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    caps = {f["name"]: f["caption"] for c in nb["cells"] if (f := c["metadata"].get("mystnb", {}).get("figure"))}
    # the skip connection slows the collapse to a geometric decay; it does not stop it
    assert "into a slow geometric decay" in caps["fig-rank-collapse"]
    assert "falls far below the one-layer model's" in caps["fig-induction-loss"]
    assert "below chance but far above the two-layer model's loss" in caps["fig-induction-loss"]
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "machine that stored" not in text
    assert "stops the collapse" not in text + caps["fig-rank-collapse"]
    # the result comes first, then its figure: the first markdown after the title cites the
    # first figure, which follows it
    first_fig = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("mystnb", {}).get("figure"))
    first_text = next(i for i, c in enumerate(nb["cells"][2:], 2) if c["cell_type"] == "markdown")
    assert first_text < first_fig and "{figref}`fig-wide-deep`" in "".join(nb["cells"][first_text]["source"])
    # the quoted tables name their primary papers, and the opening sends the reader to each caption
    # for what was checked against them (the captions follow each table's record: test_context_caption)
    assert "{cite}`brown2022wide,liu2020very,clark2019what`" in text
    assert "each caption says which of its numbers have been\nchecked against that paper" in text


def test_the_check_fails_on_a_bent_grid():
    rows = [dict(r) for r in context.load_collapse_grid()["rows"]]
    for r in rows:  # a skip connection that collapses too
        if r["variant"] == "attention + residual" and r["width"] == 16 and r["heads"] == 1 and r["layer"] == 3:
            r["residual"] = 1e-9
    assert any("attention + residual" in w for w in collapse_conclusions(rows))
    rows = [r for r in context.load_collapse_grid()["rows"] if not r["variant"].startswith("paper layer")]
    assert any("paper layer" in w for w in collapse_conclusions(rows))  # a variant missing fails
    rows = [dict(r) for r in context.load_collapse_grid()["rows"]]
    for r in rows:  # pure attention that never collapses
        if r["variant"] == "pure attention" and r["width"] == 16 and r["heads"] == 1:
            r["residual"] = 0.5
    assert any("pure attention" in w for w in collapse_conclusions(rows))
