"""What the vocabulary chapter will show of the trained comparison (the pair 2 vs 4 layers at
input-embedding ranks 8, 32 and full), on synthetic records built as tests/test_vocab_trained.py
builds them: the figure draws each rank's paired gap and each small rank's difference of gaps with
their intervals and zero, and fits a phone; the glued values and sentences follow the declared rule
(its verdicts and its words) in the three cases, supported, against and undecided, and recompute
from the runs; the claims row takes its agreement from the rule's verdict; nothing is read before
the sweeps are published."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_vocab_trained import RULE, design, expected_interval, records

from dwlib.book import claims
from dwlib.book import vocabulary as vb
from dwlib.errors import InputError
from dwlib.experiments import pairs
from dwlib.experiments import vocab_trained as vt
from dwlib.viz import vocab as vv
from dwlib.viz.layout import NARROW_WIDTH

ROOT = Path(__file__).resolve().parents[1]
TOKENS = RULE["tokens_per_run"]
CASES = {vt.SUPPORTED: {"8": -0.08, "32": -0.02, "full": 0.05},
         vt.AGAINST: {"8": 0.15, "32": 0.05, "full": 0.05},
         vt.UNDECIDED: {"8": 0.05, "32": 0.05, "full": 0.05}}
#: the book's column on a 320 px phone (measured in Chromium, as in tests/test_diagrams.py) and on a
#: 390 px one (the same 48 px of margins), less Vega's 5 px padding on each side
PHONE_320_ROOM, PHONE_390_ROOM = 272 - 10, 390 - 48 - 10
#: where the interval of the primary difference lies, by verdict (the caption's words)
TRAINED_SIDES = {vt.SUPPORTED: "lies entirely below zero", vt.AGAINST: "lies entirely above zero",
                 vt.UNDECIDED: "contains zero"}


def with_tokens(by_rank, tokens=TOKENS):
    """The records as a sweep stores them: each run says how many tokens it trained on."""
    return {label: [{**r, "tokens": tokens} for r in recs] for label, recs in by_rank.items()}


def case(verdict, seed=0):
    return with_tokens(design(CASES[verdict], seed=seed))


@pytest.fixture(scope="module")
def readings():
    return {v: vb.trained_reading(case(v)) for v in CASES}


# --- the figure ---------------------------------------------------------------------------------

def _views(spec):
    for key in ("layer", "concat", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            yield from _views(sub)
    if "mark" in spec:
        yield spec


def _rows(spec, panel):
    """The drawn rows of one panel (0: gaps, 1: differences)."""
    view = spec["vconcat"][panel]
    names = {v["data"]["name"] for v in _views(view) if "data" in v and "field" in v["encoding"].get("y", {})}
    assert len(names) == 1
    return spec["datasets"][names.pop()]


@pytest.mark.parametrize("verdict", list(CASES))
def test_the_figure_draws_every_ranks_gap_and_difference_with_zero(readings, verdict):
    t = readings[verdict]
    spec = vv.trained_chart(t["all"], t["rule"]).to_dict()
    assert len(spec["vconcat"]) == 2
    gaps, diffs = _rows(spec, 0), _rows(spec, 1)
    assert [g["rank"] for g in gaps] == ["r = 8", "r = 32", "full rank"]
    assert [d["rank"] for d in diffs] == ["r = 8", "r = 32"]
    for row, label in zip(gaps, ("8", "32", "full")):
        iv = t["all"]["ranks"][label]["interval"]
        assert (row["mean"], row["low"], row["high"], row["seeds"]) == pytest.approx(
            (iv["mean"], iv["low"], iv["high"], 6))
        assert row["side"] == t["all"]["ranks"][label]["verdict"]
    for row, label in zip(diffs, ("8", "32")):
        d = t["all"]["differences"][label]
        low, high = expected_interval(list(d["differences"].values()))  # recomputed from the per-seed values
        assert (row["low"], row["high"]) == pytest.approx((low, high))
        assert row["reading"] == vv.READING_LABELS[d["reading"]]
    assert diffs[0]["reading"].startswith(verdict)
    # zero marked in both panels, on the one axis they share, which holds every interval
    for panel in spec["vconcat"]:
        zeros = [v for v in _views(panel) if v.get("mark", {}).get("type") == "rule"
                 and v["encoding"]["x"]["field"] == "zero"]
        assert len(zeros) == 1 and zeros[0]["mark"]["strokeDash"]
        assert spec["datasets"][zeros[0]["data"]["name"]] == [{"zero": 0.0}]
    domains = {json.dumps(v["encoding"]["x"]["scale"]["domain"]) for v in _views(spec)}
    assert len(domains) == 1
    lo, hi = json.loads(domains.pop())
    ends = [r[k] for r in gaps + diffs for k in ("low", "high")]
    assert lo < min(ends + [0.0]) and max(ends + [0.0]) < hi
    # the colours of the Figure 2 view: below zero blue, above orange, neither grey
    colours = {v["encoding"]["color"]["field"]: v["encoding"]["color"]["scale"] for v in _views(spec)
               if "color" in v["encoding"]}
    side = dict(zip(colours["side"]["domain"], colours["side"]["range"]))
    read = dict(zip(colours["reading"]["domain"], colours["reading"]["range"]))
    assert side[pairs.BETTER] == read[vv.READING_LABELS[vt.SUPPORTED]] == "#0072b2"
    assert side[pairs.WORSE] == read[vv.READING_LABELS[vt.AGAINST]]
    assert side[pairs.UNRESOLVED] == read[vv.READING_LABELS[vt.UNDECIDED]]


def test_the_figure_fits_a_phone(readings):
    """Views with widths of their own (the charts script narrows them on a phone), legends below,
    the panels' axes lined up; drawn, the chart fits a 390 px phone's column at its own sizes and a
    320 px phone's once its views are narrowed to the narrowest plot the book draws."""
    t = readings[vt.UNDECIDED]
    spec = vv.trained_chart(t["all"], t["rule"]).to_dict()
    assert all(isinstance(v["width"], int) and v["width"] <= 260 for v in spec["vconcat"])
    legends = [v["encoding"][c]["legend"] for v in _views(spec) for c in ("color", "shape") if c in v["encoding"]]
    assert legends and all(g["orient"] == "bottom" for g in legends)
    extents = {(v["encoding"]["y"]["axis"]["minExtent"], v["encoding"]["y"]["axis"]["maxExtent"])
               for v in _views(spec) if "field" in v["encoding"].get("y", {})}
    assert extents == {(vv.RANK_LABEL_ROOM, vv.RANK_LABEL_ROOM)}
    vlc = pytest.importorskip("vl_convert")

    def drawn_width(s):
        return float(re.search(r'<svg[^>]* width="([\d.]+)"', vlc.vegalite_to_svg(json.dumps(s))).group(1))

    assert drawn_width(spec) <= PHONE_390_ROOM
    narrow = json.loads(json.dumps(spec))
    for v in narrow["vconcat"]:
        v["width"] = NARROW_WIDTH
    assert drawn_width(narrow) <= PHONE_320_ROOM


def test_the_figure_needs_a_reading_with_runs():
    with pytest.raises(InputError, match="no seed with every run"):
        vv.trained_chart(vt.read({}, RULE), RULE)


# --- the glued values -------------------------------------------------------------------------

def minus(text: str) -> str:
    """The text with true minus signs, as the prose writes negative numbers."""
    return text.replace("-", "\N{MINUS SIGN}")


@pytest.mark.parametrize("verdict", list(CASES))
def test_the_glued_values_follow_the_rule(readings, verdict):
    t = readings[verdict]
    n = vb.trained_numbers(t)
    assert all("_" in k and k.startswith("vt_") for k in n)
    assert n["vt_verdict"] == verdict and n["vt_verdict_rule"] == RULE["verdicts"][verdict]
    # the rule's verdict in the prose's words: "at rank 8", not the rule's "at r = 8"
    assert RULE["verdicts"][verdict].replace("at r = 8", "at rank 8") in n["vt_verdict_sentence"]
    assert "r = 8" not in n["vt_verdict_sentence"]
    d = t["all"]["differences"]["8"]
    low, high = expected_interval(list(d["differences"].values()))
    mean, half = (low + high) / 2, (high - low) / 2
    assert n["vt_diff_8"] == minus(f"{mean:+.3f} nats (95% interval {low:+.3f} to {high:+.3f})")
    assert n["vt_half"] == f"{half:.3f}" and n["vt_seeds"] == 6 and n["vt_level"] == "95%"
    if verdict == vt.UNDECIDED:  # the rule's words: the effect the design could resolve, not that there is none
        said = "resolves no effect of the embedding rank on the pair's gap larger than"
        assert said in RULE["reported_otherwise"] and "not that there is none" in RULE["reported_otherwise"]
        assert f"{said} {half:.3f} nats, not that there is none" in n["vt_verdict_sentence"]
    else:
        assert "resolves no effect" not in n["vt_verdict_sentence"]
    for label in ("8", "32"):  # each difference's side of zero in the words of the rule's verdicts
        reading = t["all"]["differences"][label]["reading"]
        assert n[f"vt_reading_{label}"] == reading and n[f"vt_zero_{label}"] in RULE["verdicts"][reading]
    for label, gap in CASES[verdict].items():  # each rank's gap and the side it puts ahead, in the rule's words
        iv = t["all"]["ranks"][label]["interval"]
        assert n[f"vt_gap_{label}"].startswith(minus(f"{iv['mean']:+.3f} nats"))
        assert abs(iv["mean"] - gap) < 0.02
        assert n[f"vt_side_{label}"] in (pairs.BETTER, pairs.WORSE, pairs.UNRESOLVED)
        assert n[f"vt_side_{label}"].split(":")[0] in RULE["reported_otherwise"]
        assert n[f"vt_rates_{label}"] == "0.002 (2 layers) and 0.002 (4 layers)"  # the chosen runs' rates
    assert (n["vt_depths"], n["vt_widths"], n["vt_sizes"]) == ("2 and 4", "88 and 64", "185,856 and 196,608")
    assert n["vt_tokens"] == f"{TOKENS:,}" and n["vt_budget"] == "200K"
    assert n["vt_later_seeds"] == "2 to 5" and n["vt_later_n"] == 4 and n["vt_seed_list"] == "0 to 5"
    assert n["vt_later_verdict"] == verdict and n["vt_later_same"] == "the same verdict"
    assert n["vt_caption"] == vb.trained_caption(t)


def test_the_caption_says_what_to_conclude_by_the_verdict(readings):
    firsts = {v: vb.trained_caption(readings[v]).split(": ")[0] for v in CASES}
    assert len(set(firsts.values())) == 3
    assert "as predicted" in firsts[vt.SUPPORTED] and "against the prediction" in firsts[vt.AGAINST]
    assert "no resolved difference" in firsts[vt.UNDECIDED]
    for v in CASES:
        text = vb.trained_caption(readings[v])
        assert TRAINED_SIDES[v] in text and "mean over 6 seeds" in text and "95% interval" in text



def test_the_values_come_from_the_runs():
    """Run length, shapes and seeds are read from the records, not from the rule or the presets."""
    longer = vb.trained_numbers(vb.trained_reading(with_tokens(design(CASES[vt.SUPPORTED]), tokens=1_000_448)))
    assert longer["vt_tokens"] == "1,000,448"
    mixed = with_tokens(design(CASES[vt.SUPPORTED]))
    mixed["32"] = [{**r, "tokens": 7} if r["seed"] == 3 else r for r in mixed["32"]]
    with pytest.raises(InputError, match="differ in length"):
        vb.trained_reading(mixed)
    shifted = case(vt.SUPPORTED)
    for recs in shifted.values():
        for r in recs:
            if r["depth"] == 2 and r["chosen"]:
                r["config"] = {**r["config"], "lr": 4e-3}
    assert vb.trained_numbers(vb.trained_reading(shifted))["vt_rates_8"] == "0.004 (2 layers) and 0.002 (4 layers)"


def _rank_8_differs(diffs: dict) -> dict:
    """Records at every rank in which only rank 8 gives the 4-layer network a gap (``diffs``, by
    seed) over the 2-layer one; the full and rank-32 runs have none."""
    by_rank = {}
    for label in ("8", "32", "full"):
        losses = {}
        for s, x in diffs.items():
            losses[(2, s)] = 4.0 + 0.01 * s
            losses[(4, s)] = losses[(2, s)] + (x if label == "8" else 0.0)
        by_rank[label] = records(label, losses)
    return by_rank


def test_seeds_2_to_5_are_read_apart_from_the_rate_choosing_seeds():
    """Differences of gaps that put r = 8 below zero over six seeds but not over seeds 2 to 5 alone
    (the full and r = 32 runs have no gap at all)."""
    diffs = {0: -0.05, 1: -0.05, 2: -0.05, 3: -0.05, 4: 0.01, 5: -0.09}
    n = vb.trained_numbers(vb.trained_reading(with_tokens(_rank_8_differs(diffs))))
    six, four = list(diffs.values()), [diffs[s] for s in (2, 3, 4, 5)]
    assert expected_interval(six)[1] < 0 and expected_interval(four)[0] < 0 < expected_interval(four)[1]
    assert n["vt_verdict"] == vt.SUPPORTED and n["vt_later_verdict"] == vt.UNDECIDED
    assert n["vt_later_same"] == "a different verdict"
    lo, hi = expected_interval(four)
    assert n["vt_later_diff"] == minus(f"{np.mean(four):+.3f} nats (95% interval {lo:+.3f} to {hi:+.3f})")


def test_an_incomplete_design_is_refused():
    by_rank = case(vt.SUPPORTED)
    by_rank["full"] = [r for r in by_rank["full"] if r["seed"] != 5]
    with pytest.raises(InputError, match="incomplete: the difference at r = 8 has 5 of its 6 seeds"):
        vb.trained_reading(by_rank)


def test_nothing_is_read_before_the_sweeps_are_published(monkeypatch):
    by_name = {RULE["sweeps"][label]: recs for label, recs in case(vt.SUPPORTED).items()}

    def stored(name, missing=()):
        if name in missing or name not in by_name:
            raise InputError(f"no stored sweep named {name!r}")
        return by_name[name]

    monkeypatch.setattr(vb, "stored_results", lambda name: stored(name, ("vocab-r8", "vocab-full")))
    assert not vb.trained_published()
    with pytest.raises(InputError, match=r"^the trained vocabulary comparison is not published yet: "
                                         r"no stored sweep 'vocab-r8' or 'vocab-full'$"):
        vb.trained_numbers()
    monkeypatch.setattr(vb, "stored_results", stored)
    assert vb.trained_published() and vb.trained_numbers()["vt_verdict"] == vt.SUPPORTED
    assert vb.trained_chart().to_dict()["vconcat"] and not vb.trained_table().empty


def test_the_table_gives_every_shapes_rate_and_mean_loss(readings):
    t = readings[vt.AGAINST]
    table = vb.trained_table(t)
    assert list(table.index) == [(r, L) for r in ("r = 8", "r = 32", "full") for L in (2, 4)]
    for label, name in (("8", "r = 8"), ("32", "r = 32"), ("full", "full")):
        for s in t["all"]["ranks"][label]["shapes"]:
            row = table.loc[(name, s["depth"])]
            assert row["width"] == s["width"] and row["seeds"] == 6
            assert row["mean held-out loss (nats)"] == pytest.approx(np.mean(list(s["losses"].values())), abs=1e-4)


# --- the claims row ---------------------------------------------------------------------------

def test_the_claims_row_takes_its_agreement_from_the_rules_verdict(readings):
    want = {vt.SUPPORTED: "agrees", vt.AGAINST: "differs", vt.UNDECIDED: "not reproduced"}
    for verdict, agreement in want.items():
        row = vb.trained_claim(readings[verdict])
        assert row["agreement"] == agreement and agreement in claims.VERDICTS
        assert row["chapter"] == "vocabulary" and "{cite}`wies2021which`" in row["paper"]
        assert vb.trained_numbers(readings[verdict])["vt_diff_8"] in row["book"] and row["book"].startswith(verdict)
        claims._row(row["claim"], row["chapter"], row["paper"], row["book"], row["agreement"], "vocabulary")
    rows = [vb.trained_claim(readings[v]) for v in CASES]
    assert claims.summary_sentence(rows) == ("Of the 3 claims, 1 agrees, 1 differs and 1 is not reproduced "
                                             "by the book's trained networks.")


def recompute(rule: dict, files: dict) -> tuple:
    """The rule read from stored files alone (the chosen, completed runs; per seed the gap deeper
    minus shallower at each rank and its difference at the primary rank from full rank; the
    t interval): the verdict, the seeds and the interval."""
    shallow, deep = rule["pair"]
    gaps = {}
    for label, f in files.items():
        runs = [json.loads(line) for line in Path(f).read_text().splitlines() if line.strip()]
        loss = {(r["depth"], r["seed"]): r["eval_loss"] for r in runs if r.get("chosen") and r["status"] == "completed"
                and r["target_budget"] == rule["target_budget"]}
        gaps[label] = {s: loss[(deep, s)] - loss[(shallow, s)] for L, s in loss if L == shallow and (deep, s) in loss}
    primary = str(rule["primary_rank"])
    seeds = sorted(set(gaps[primary]) & set(gaps["full"]))
    low, high = expected_interval([gaps[primary][s] - gaps["full"][s] for s in seeds])
    return ("supported" if high < 0 else "against" if low > 0 else "undecided"), seeds, (low, high)


@pytest.mark.parametrize("verdict", list(CASES))
def test_the_recomputation_reads_synthetic_files_as_the_chapter_does(tmp_path, readings, verdict):
    files = {}
    for label, recs in case(verdict).items():
        files[label] = tmp_path / f"{label}.jsonl"
        files[label].write_text("".join(json.dumps(r) + "\n" for r in recs))
    got, seeds, (low, high) = recompute(RULE, files)
    iv = readings[verdict]["all"]["differences"]["8"]["interval"]
    assert got == verdict and seeds == list(range(6)) and (low, high) == pytest.approx((iv["low"], iv["high"]))


def test_the_published_sweeps_give_the_verdict_recomputed_from_their_files():
    """Once the three sweeps are published: the claims row's agreement and the glued verdict are the
    rule's, recomputed from the stored files and the rule file alone (:func:`recompute`),
    independently of the functions the chapter calls."""
    rule = json.loads((ROOT / "dwlib" / "data" / "rules" / "vocab-trained.json").read_text())
    files = {label: ROOT / "dwlib" / "data" / "sweeps" / f"{name}.jsonl" for label, name in rule["sweeps"].items()}
    if not all(f.exists() for f in files.values()):
        assert not vb.trained_published()
        pytest.skip("the trained vocabulary sweeps are not published yet")
    verdict, seeds, (low, high) = recompute(rule, files)
    assert len(seeds) == 6 and rule["verdicts"][verdict]
    n = vb.trained_numbers()
    assert n["vt_verdict"] == verdict and n["vt_seeds"] == len(seeds)
    assert n["vt_half"] == f"{(high - low) / 2:.3f}"
    assert vb.trained_claim()["agreement"] == {"supported": "agrees", "against": "differs",
                                               "undecided": "not reproduced"}[verdict]


# --- the margin, the rates and the one-sentence reading -------------------------------------------

def test_a_deciding_interval_near_zero_is_called_narrow_and_only_then():
    wide = {"low": 0.02, "high": 0.06, "half_width": 0.02}
    near = {"low": 0.004, "high": 0.044, "half_width": 0.02}
    assert vb.trained_margin(wide, vt.AGAINST) == ""
    assert "narrow margin" in vb.trained_margin(near, vt.AGAINST) and "0.004 nats" in vb.trained_margin(near, vt.AGAINST)
    below = {"low": -0.044, "high": -0.004, "half_width": 0.02}
    assert "narrow margin" in vb.trained_margin(below, vt.SUPPORTED)
    assert vb.trained_margin(near, vt.UNDECIDED) == ""


def test_the_takeaway_says_each_verdict_and_the_later_seeds_reading(readings):
    words = {vt.SUPPORTED: "as predicted", vt.AGAINST: "goes against the prediction", vt.UNDECIDED: "neither bear out"}
    for verdict, said in words.items():
        text = vb.trained_takeaway(readings[verdict])
        assert said in text and "seeds that did not choose the learning rates" in text, text
        assert "narrowly" not in text
        assert text == vb.trained_numbers(readings[verdict])["vt_takeaway"]


def test_a_narrow_verdict_is_said_in_full_once_and_flagged_elsewhere():
    """A verdict whose interval ends near zero and that the seeds that did not choose the rates
    leave undecided: the firmness sentence gives the difference, its interval, how near zero it
    ends and the later seeds' reading; the opening and the caption only say "though narrowly"."""
    diffs = {0: 0.05, 1: 0.06, 2: 0.0, 3: 0.01, 4: 0.09, 5: 0.03}  # interval just above zero
    t = vb.trained_reading(with_tokens(_rank_8_differs(diffs)))
    low, high = expected_interval(list(diffs.values()))
    assert 0 < low < vb.NARROW * (high - low) / 2 and expected_interval([diffs[s] for s in (2, 3, 4, 5)])[0] < 0
    n = vb.trained_numbers(t)
    assert n["vt_verdict"] == vt.AGAINST and n["vt_later_verdict"] == vt.UNDECIDED
    said = n["vt_firmness"]
    assert n["vt_diff_8"] in said and f"only {low:.3f} nats above zero" in said
    assert n["vt_later_diff"] in said and "leaves the prediction undecided" in said and "seeds 2 to 5" in said
    for text in (n["vt_takeaway"], n["vt_caption"]):
        assert "narrowly" in text and f"{low:.3f}" not in text and "seeds 2 to 5" not in text, text
    row = vb.trained_claim(t)
    assert row["book"].startswith(vt.AGAINST) and f"{low:.3f} nats clear of zero" in row["book"]
    assert "seeds 2 to 5 alone leave it undecided" in row["book"] and len(row["book"].split()) <= 45


def test_the_rates_note_appears_exactly_when_the_chosen_rates_differ_from_full_rank(readings):
    for verdict, t in readings.items():
        every = t["all"]["ranks"]
        same = ([(g["depth"], g["lr"]) for g in every["8"]["shapes"]]
                == [(g["depth"], g["lr"]) for g in every["full"]["shapes"]])
        note = vb.trained_numbers(t)["vt_rates_note"]
        assert (note == "") == same, (verdict, note)


def test_the_untied_sweeps_outcome_is_one_clause_from_its_points():
    from dwlib.experiments.presets import get_preset

    def reading(verdicts, budgets):
        points = [{"verdict": v, "mean": m} for v, m in verdicts]
        return {"pairs": [{"points": points}], "budgets": budgets}
    planned = list(get_preset(vb.UNTIED_SWEEP).budgets)
    assert vb.untied_outcome(reading([], [])) == ""
    text = vb.untied_outcome(reading([("deeper worse", 0.2), ("deeper worse", 0.05)], planned[:1]))
    assert text == "finds the deeper network resolved worse at every point of its one complete size, by +0.050 to +0.200 nats"
    text = vb.untied_outcome(reading([("deeper worse", 0.1), ("not resolved", 0.01)], planned))
    assert text == "finds the deeper network resolved worse at 1 of its 2 points, by +0.100 nats"
