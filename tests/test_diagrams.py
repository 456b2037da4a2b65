"""The drawn figures: the analysed network's architecture diagram and the schematic of the paper's
Figure 1 build, carry the paper's symbols, and hold together geometrically (every label inside its
box and clear of the others, every arrow from one box to the next, the diagram as narrow as a
phone's column); the schematic's curves say what its caption says."""

from __future__ import annotations

import json

import pytest

from dwlib.viz import diagrams

#: the book's column on a 320 px phone (measured in Chromium), less Vega's 5 px padding and the
#: outlines' strokes (about 2 px) on each side
PHONE_ROOM = 272 - 14


def _spec_text(chart) -> str:
    return json.dumps(chart.to_dict(), ensure_ascii=False)


def test_diagram_builds_with_the_papers_symbols():
    spec = _spec_text(diagrams.architecture_diagram())
    for label in ("query", "key", "value", "matrix \u00d7 x\u1d62", "matrix \u00d7 x\u2c7c",
                  "output matrix \u00d7 value", "x\u1d62 and x\u2c7c", "feed-forward matrix",
                  "softmax over j", "1/\u221ad\u2090", "LayerNorm", "ReLU", "residual",
                  "input embedding", "layer l = 1, ..., L", "heads h = 1, ..., H",
                  "layer l, head h", "eq. (3)", "eq. (4)"):
        assert label in spec, label
    # text as a reader writes it: no TeX superscripts or braces, and no code-like subscripts
    # (W_Q, x_i): the matrices are named by their role, positions take Unicode subscripts
    labels = [line for b in diagrams.architecture_boxes() for line in b["lines"]] + list(diagrams.SUBTITLE)
    for line in labels:
        assert "^" not in line and "{" not in line and "_" not in line, line
    kinds = {b["kind"] for b in diagrams.architecture_boxes()}
    assert kinds == {"kept", "removed", "set aside", "frame"}


def test_diagram_sorts_the_parts_as_the_paper_does():
    """Kept: Q, K, V, O and the sum; removed: softmax, LayerNorm, ReLU; set aside: the residual
    connection (appendix) and the input embedding (footnote)."""
    where = {}
    for b in diagrams.architecture_boxes():
        for line in b["lines"]:
            where[line] = b["kind"]
    kind_of = lambda word: {k for line, k in where.items() if word in line}  # noqa: E731
    for word in ("matrix \u00d7 x\u1d62", "matrix \u00d7 x\u2c7c", "score \u00d7 output matrix", "\u03a3 over"):
        assert kind_of(word) == {"kept"}, word
    for word in ("softmax", "LayerNorm", "ReLU"):
        assert kind_of(word) == {"removed"}, word
    for word in ("residual", "embedding"):
        assert kind_of(word) == {"set aside"}, word


def test_the_embedding_is_set_aside_under_the_footnotes_condition():
    """The paper's footnote sets the embedding aside only for realistic vocabulary sizes (a
    low-rank embedding caps the rank, as the vocabulary chapter shows): the box says so, and
    no box claims that it never affects the bounds."""
    embedding = [b for b in diagrams.architecture_boxes() if "embedding" in b["lines"][0]]
    assert len(embedding) == 1
    said = " ".join(embedding[0]["lines"])
    assert "realistic vocabulary" in said and "vocabulary bottleneck" in said, said
    assert not any("no effect on the bounds" in line for b in diagrams.architecture_boxes() for line in b["lines"])


def test_diagram_fits_a_phone_and_every_label_its_box():
    assert diagrams.architecture_diagram().to_dict()["width"] <= PHONE_ROOM
    for line in diagrams.SUBTITLE:  # Vega's subtitle font is 10 px; checked at 11 for room
        assert diagrams.text_width(line, 11) <= PHONE_ROOM, line
    texts = diagrams.architecture_texts()
    for t in texts:
        w = diagrams.text_width(t["text"], t["size"])
        left = t["x"] - (w / 2 if t["align"] == "center" else (w if t["align"] == "right" else 0))
        assert t["x0"] + 2 <= left and left + w <= t["x1"] - 2, (t["text"], left, left + w, t["x0"], t["x1"])
        assert t["y0"] < t["y"] - t["size"] / 2 and t["y"] + t["size"] / 2 < t["y1"], t["text"]
        assert 0 <= left and left + w <= diagrams.DIAGRAM_WIDTH, t["text"]

    def box(t):
        w = diagrams.text_width(t["text"], t["size"])
        left = t["x"] - (w / 2 if t["align"] == "center" else (w if t["align"] == "right" else 0))
        return left, t["y"] - t["size"] / 2, left + w, t["y"] + t["size"] / 2

    boxes = [box(t) for t in texts]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1]), \
                (texts[i]["text"], texts[j]["text"])


def test_every_arrow_runs_from_one_box_to_the_next():
    parts = [b for b in diagrams.architecture_boxes() if b["kind"] != "frame"]
    for a in diagrams.architecture_arrows():
        assert a["y0"] < a["y1"]
        tails = [b for b in parts if b["y1"] == a["y0"] and b["x0"] < a["x"] < b["x1"]]
        heads = [b for b in parts if b["y0"] == a["y1"] and b["x0"] < a["x"] < b["x1"]]
        assert len(tails) == 1 and len(heads) == 1, a
        # nothing in between: the arrow crosses no other box
        crossed = [b for b in parts if b["x0"] < a["x"] < b["x1"] and a["y0"] < b["y0"] < a["y1"]
                   and b is not heads[0]]
        assert not crossed, (a, [c["lines"] for c in crossed])


def test_text_width_grows_with_the_text():
    assert diagrams.text_width("matrix \u00d7 x\u1d62") > diagrams.text_width("key") > 0
    assert diagrams.text_width("ab", 20) == pytest.approx(2 * diagrams.text_width("ab", 10))


def test_schematic_is_marked_and_has_no_numbers_on_its_axes():
    spec = diagrams.depth_ablation_schematic().to_dict()
    text = json.dumps(spec)
    assert "Schematic of the claim, not data" in text and "Kaplan" in text and "Levine" in text
    for channel in ("x", "y"):
        axis = spec["encoding"][channel]["axis"]
        assert axis["labels"] is False and axis["ticks"] is False and axis["title"]


def test_schematic_curves_say_what_the_caption_says():
    """One falling trend; each shallow depth leaves it later than the one before and stays above
    it; no curve ever rises with size; at the largest size the loss falls with depth."""
    df = diagrams.schematic_curves()
    depths = list(diagrams.SCHEMATIC_DEPTHS)
    curves = {d: df[df.depth == d].sort_values("size") for d in depths}
    trend = curves[depths[-1]]["loss"].to_numpy()
    sizes = curves[depths[-1]]["size"].to_numpy()
    leave = []
    for d in depths:
        loss = curves[d]["loss"].to_numpy()
        assert (loss[1:] <= loss[:-1] + 1e-12).all(), d
        above = loss > trend + 1e-9
        assert (loss >= trend - 1e-12).all(), d
        leave.append(sizes[above.argmax()] if above.any() else None)
    assert leave[-1] is None and all(x is not None for x in leave[:-1])
    assert leave[:-1] == sorted(leave[:-1])
    last = [curves[d]["loss"].to_numpy()[-1] for d in depths]
    assert last == sorted(last, reverse=True) and len(set(last)) == len(last)
