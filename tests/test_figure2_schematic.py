"""The schematic of the paper's Figure 2 claim: marked as a schematic, no numbers on its axes,
the two networks of a pair equal before the pair's transition and the deeper lower after it, the
12 vs 24 transition later than the 6 vs 12 one."""

from __future__ import annotations

import json

from dwlib.viz import figure2_schematic as fs


def test_the_schematic_draws_the_papers_claim():
    data = fs.schematic_curves()
    for pair, t in fs.TRANSITIONS.items():
        d = data[data["pair"] == pair].pivot(index="size", columns="role", values="loss")
        before, after = d[d.index <= t + 1e-9], d[d.index > t + 1e-9]
        gap = before["shallower"] - before["deeper"]
        assert (gap - fs.SPLIT).abs().max() < 1e-12  # "perform comparably": a constant hair apart
        assert (after["shallower"] - after["deeper"] > fs.SPLIT + 1e-9).all()  # then the deeper better
        assert after["shallower"].iloc[-1] - after["deeper"].iloc[-1] > 5 * fs.SPLIT
    assert fs.TRANSITIONS["depths 12 and 24"] > fs.TRANSITIONS["depths 6 and 12"]


def test_the_schematic_is_marked_and_its_axes_carry_no_numbers():
    spec = fs.figure2_schematic().to_dict()
    assert spec["title"]["text"] == "Schematic of the claim, not data"
    text = json.dumps(spec)
    assert '"labels": false' in text and '"ticks": false' in text
    assert [v["title"] for v in spec["concat"]] == list(fs.TRANSITIONS)
