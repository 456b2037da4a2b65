"""The vocabulary chapter's numbers, chart frames and claims rows, from the stored measurements."""

from __future__ import annotations

import json

from dwlib.experiments import vocab_sweep


def test_the_chapters_numbers_and_claims_follow_the_stored_measurements():
    from dwlib.book import claims, vocabulary
    data = vocab_sweep.load()
    n = vocabulary.numbers(data)
    assert all("_" in k for k in n)
    assert n["vb_r1_closed"] == "equal" and n["vb_r1_shapes_ok"] == n["vb_r1_n"]
    assert n["vb_t5_inner"] == "16,384" and n["vb_t5_ratio"] == 16
    rows = claims.vocabulary_rows()
    trained = vocabulary.TRAINED_CLAIM_VERDICTS[vocabulary.trained_reading()["all"]["verdict"]]
    assert [r["agreement"] for r in rows] == ["agrees", "agrees", "not testable here", "not testable here", trained]
    assert claims._vocabulary_kind(rows[-1]) == claims.TRAINED
    # the rule reads the data: a width record that moves with width at fixed r makes the first row differ
    bent = json.loads(json.dumps(data))
    held = next(m for m in bent["width"] if m["depth"] == 2 and m["embedding_rank"] == 2 and m["width"] == 16)
    held["rank"] += 1
    assert [r["agreement"] for r in vocabulary.claims(bent)][:2] == ["differs", "differs"]
    frame = vocabulary.depth_frame(data)
    assert set(frame.panel) == {"r = 1", "r = 2", "r = 3"} and frame.capped.any()
