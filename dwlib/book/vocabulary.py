"""The numbers, chart frames and claims of the chapter "The vocabulary bottleneck"
(book/vocabulary.ipynb), all from the stored exact measurements (:func:`dwlib.experiments.vocab_sweep.load`)
and from :mod:`dwlib.core.vocab`; the T5-11B arithmetic from the shape the chapter states; and the
trained comparison of the pair 2 vs 4 layers at input-embedding ranks 8, 32 and full, read by its
declared rule (:func:`trained_reading`, :func:`trained_numbers`, :func:`trained_caption`,
:func:`trained_chart`, :func:`trained_table`, :func:`trained_claim`), which raise InputError (one
line) until its sweeps are published."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book import pairs_verdicts as pv
from dwlib.errors import InputError, require
from dwlib.experiments import pairs, vocab_sweep
from dwlib.experiments import vocab_trained as vt
from dwlib.experiments.presets import get_preset
from dwlib.experiments.records import stored_results
from dwlib.experiments.transition import finished, paired_gaps, reported
from dwlib.viz import vocab as charts

#: T5-11B's shape (Raffel et al., 2020): model width, attention heads and each head's dimension
T5_11B = {"d_model": 1024, "heads": 128, "head_dim": 128}
DEPTH_WIDTH, DEPTH_HEADS = 8, 2  # the depth figure's network
WIKI_VOCAB = 1000  # the 2020 paper's experiments: "a vocabulary size of 1000" (section 5)


def _log3(x) -> float:
    return math.log(x) / math.log(3)


def _series(m: dict) -> str:
    return charts.FULL_RANK if m["embedding_rank"] == m["width"] and m["heads"] == 1 else (
        f"r = {m['embedding_rank']}")


def width_frame(data: dict) -> pd.DataFrame:
    """One row per width record: the series (an embedding rank, or the full-rank network), the
    panel (depth), and whether the heads hold r (d_a >= r)."""
    return pd.DataFrame([{"series": _series(m), "panel": f"depth {m['depth']}", "depth": m["depth"],
                          "width": m["width"], "heads": m["heads"], "rank": m["rank"],
                          "heads_hold_r": m["width"] // m["heads"] >= m["embedding_rank"]} for m in data["width"]])


def depth_records(data: dict) -> list[dict]:
    """The records of the depth figure: d_x = 8, two heads, r = 1, 2, 3, by depth."""
    out = [m for part in ("width", "depth", "capped") for m in data[part]
           if (m["width"], m["heads"]) == (DEPTH_WIDTH, DEPTH_HEADS) and m["embedding_rank"] <= 3]
    return sorted(out, key=lambda m: (m["embedding_rank"], m["depth"]))


def depth_frame(data: dict) -> pd.DataFrame:
    """One row per (record, quantity): log3 of the measured rank (``capped`` where the grid's cap set
    it), of the polynomial-space bound at width r, of eq. (8)'s upper expression at r, and of the
    2020 upper bound at the full width."""
    rows = []
    for m in depth_records(data):
        base = {"panel": f"r = {m['embedding_rank']}", "depth": m["depth"], "capped": m["capped"]}
        for q, v in (("measured grid rank", _log3(m["rank"])), ("polynomial-space bound at width r",
                                                                 m["log3_upper_rank"]),
                     ("eq. (8) upper bound at width r", m["log3_upper_eq8_rank"]),
                     ("2020 upper bound at the full width", m["log3_upper_full"])):
            if v is not None:
                rows.append({**base, "quantity": q, "log3": v})
    return pd.DataFrame(rows)


def _join(values) -> str:
    return ", ".join(f"{v:,}" for v in values)


def _crossing(data: dict) -> int | None:
    """The smallest depth from which, at every embedding rank of the depth figure, both bounds at width
    r lie below the 2020 upper bound at the full width (None if none)."""
    recs = depth_records(data)
    below = {L: all(max(m["log3_upper_rank"], m["log3_upper_eq8_rank"] or 0) < m["log3_upper_full"]
                    for m in recs if m["depth"] == L) for L in sorted({m["depth"] for m in recs})}
    depths = sorted(below)
    return next((L for L in depths if all(below[k] for k in depths if k >= L)), None)


def numbers(data: dict | None = None) -> dict:
    """Every number the chapter's prose quotes (names start ``vb_``)."""
    data = vocab_sweep.load() if data is None else data
    wf = width_frame(data)
    fixed = wf[wf.series != charts.FULL_RANK]
    full = wf[wf.series == charts.FULL_RANK].sort_values("width")
    held = fixed[fixed.heads_hold_r]
    same = all(g["rank"].nunique() == 1 for _, g in held.groupby(["depth", "series"]))
    deep = {r: [m for m in depth_records(data) if m["embedding_rank"] == r] for r in (1, 2, 3)}
    r1 = [m["rank"] for m in deep[1]]
    r1_all = [m for part in ("width", "depth") for m in data[part] if m["embedding_rank"] == 1]
    small = fixed[~fixed.heads_hold_r & (fixed.depth == 2)]
    capped = data["capped"][0]
    l2 = held[held.depth == 2].groupby("series")["rank"].first()
    top = deep[1][-1]
    t5 = T5_11B
    inner = t5["heads"] * t5["head_dim"]
    return {
        "vb_N": data["positions"], "vb_primes": " and ".join(f"{p:,}" for p in data["primes"]),
        "vb_n_records": sum(len(data[p]) for p in ("width", "depth", "capped")),
        "vb_all_agree": "agreed" if all(m["agree"] for p in ("width", "depth", "capped") for m in data[p])
        else "did not all agree",
        "vb_sweep_s": data["sweep_seconds"],
        "vb_widths": _join(sorted(held.width.unique())),
        "vb_same": "the same" if same else "not the same",
        "vb_L1_ranks": _join(held[held.depth == 1].groupby("series")["rank"].first()),
        "vb_L2_ranks": _join(l2),
        "vb_full_L1": _join(full[full.depth == 1]["rank"]), "vb_full_L1_w": _join(full[full.depth == 1]["width"]),
        "vb_full_L2": _join(full[full.depth == 2]["rank"]), "vb_full_L2_w": _join(full[full.depth == 2]["width"]),
        "vb_small_da": " and ".join(
            f"{m.rank} at embedding rank {m.series[4:]} (full-rank width {m.series[4:]}: {l2[m.series]})"
            for m in small.itertuples()),
        "vb_cross_L": _crossing(data),
        "vb_r1_ranks": _join(r1), "vb_r1_closed": "equal" if r1 == [(3 ** m["depth"] + 1) // 2 for m in deep[1]]
        else "not equal",
        "vb_r1_n": len(r1_all), "vb_r1_shapes_ok": sum(m["rank"] == (3 ** m["depth"] + 1) // 2 for m in r1_all),
        "vb_r2_ranks": _join(m["rank"] for m in deep[2]),
        "vb_r3_ranks": _join(m["rank"] for m in deep[3] if not m["capped"]),
        "vb_cap_rank": capped["rank"], "vb_cap_V": capped["tokens"], "vb_cap_L": capped["depth"],
        "vb_cap_r": capped["embedding_rank"],
        "vb_r2_steps": " and ".join(f"{_log3(b['rank']) - _log3(a['rank']):.2f}" for a, b in zip(deep[2], deep[2][1:])),
        "vb_r1_top_L": top["depth"], "vb_r1_top_log3": round(_log3(top["rank"]), 2),
        "vb_r1_top_eq8": round(top["log3_upper_eq8_rank"], 1), "vb_r1_top_poly": round(top["log3_upper_rank"], 1),
        "vb_r1_top_full": round(top["log3_upper_full"], 1),
        "vb_wiki_V": WIKI_VOCAB, "vb_wiki_th": round(_log3(WIKI_VOCAB), 1),
        "vb_t5_d": t5["d_model"], "vb_t5_h": t5["heads"], "vb_t5_dh": t5["head_dim"], "vb_t5_inner": f"{inner:,}",
        "vb_t5_ratio": inner // t5["d_model"], "vb_t5_attn": f"{4 * t5['d_model'] * inner:,}",
        "vb_t5_attn_matched": f"{4 * t5['d_model'] ** 2:,}",
    }


def claims(data: dict | None = None) -> list[dict]:
    """The chapter's rows of the claims table (:mod:`dwlib.book.claims` adds them), each verdict by
    the table's rules: a structural claim agrees when every exact measurement bearing on it does;
    what needs data the book does not hold is not testable here; the trained comparison's row
    takes its verdict from its declared rule (:func:`trained_claim`, on the published sweeps)."""
    data = vocab_sweep.load() if data is None else data
    n = numbers(data)
    src = "{cite}`wies2021which`"
    wf = width_frame(data)
    held = wf[(wf.series != charts.FULL_RANK) & wf.heads_hold_r]
    flat = all(g["rank"].nunique() == 1 for _, g in held.groupby(["depth", "series"]))
    full = wf[wf.series == charts.FULL_RANK].sort_values("width")
    rises = all(g["rank"].is_monotonic_increasing and g["rank"].nunique() == len(g) for _, g in full.groupby("depth"))
    deep = [[m["rank"] for m in depth_records(data) if m["embedding_rank"] == r and not m["capped"]] for r in (1, 2, 3)]
    grows = all(all(b > a for a, b in zip(s, s[1:])) for s in deep)
    return [
        {"claim": "the embedding's rank limits what width adds to expressivity", "chapter": "vocabulary",
         "paper": f"the abstract's claim {src}",
         "book": f"exact grid ranks at embedding ranks 1 to 4: {n['vb_same']} at widths {n['vb_widths']} wherever "
                 "each head is as wide as the embedding rank; at full rank they rise with width "
                 "({figref}`fig-vocab-width`)",
         "agreement": "agrees" if flat and rises else "differs"},
        {"claim": "with a small embedding rank only depth still adds expressivity", "chapter": "vocabulary",
         "paper": f"depth gains an added advantage (abstract) {src}",
         "book": f"at embedding rank 1 the rank is {n['vb_r1_ranks']} at depths 1 to {n['vb_r1_top_L']}, $(3^L + 1)/2$ exactly, "
                 f"at every width; at rank 2: {n['vb_r2_ranks']} ({{figref}}`fig-vocab-depth`)",
         "agreement": "agrees" if grows and flat else "differs"},
        {"claim": "the optimal depth-to-width ratio is about 10 times larger over images than over language",
         "chapter": "vocabulary", "paper": f"the abstract {src}",
         "book": "no trained networks on images or language at the needed sizes", "agreement": "not testable here"},
        {"claim": "ALBERT and T5 carry size redundancies of 25% to 50%", "chapter": "vocabulary",
         "paper": f"the abstract {src}",
         "book": f"only the arithmetic: T5-11B's attention inner dimension {n['vb_t5_inner']} is "
                 f"{n['vb_t5_ratio']} times its width {n['vb_t5_d']}", "agreement": "not testable here"},
        trained_claim(),
    ]


def derived_bound_table(data: dict | None = None) -> pd.DataFrame:
    """The depth figure's records as a table: measured rank, grid cap and the bounds (log3; a dash
    where eq. (8) does not apply at width r, L <= log3 r)."""
    data = vocab_sweep.load() if data is None else data
    rows = [{"r": m["embedding_rank"], "L": m["depth"], "V": m["tokens"], "rank": m["rank"], "grid cap": m["grid_cap"],
             "cap binds": "yes" if m["capped"] else "no", "log\N{SUBSCRIPT THREE} rank": round(_log3(m["rank"]), 2),
             "polynomial space at r (log\N{SUBSCRIPT THREE})": round(m["log3_upper_rank"], 2),
             "eq. (8) at r (log\N{SUBSCRIPT THREE})": "\N{EM DASH}" if m["log3_upper_eq8_rank"] is None
             else f"{m['log3_upper_eq8_rank']:.2f}",
             "2020 upper at d\N{LATIN SUBSCRIPT SMALL LETTER X} (log\N{SUBSCRIPT THREE})": round(m["log3_upper_full"], 2)} for m in depth_records(data)]
    return pd.DataFrame(rows).set_index(["r", "L"])


# ---------------------------------------------------------------------------------------------
# The trained comparison: the pair 2 vs 4 layers at input-embedding ranks 8, 32 and full, read by
# its declared rule (dwlib/data/rules/vocab-trained.json, :mod:`dwlib.experiments.vocab_trained`).
#
# Until the rule's three sweeps are published with the package, :func:`trained_records` (and so
# :func:`trained_reading` and everything called without a reading) raises InputError with one line
# saying so; it never returns a partial reading. :func:`trained_published` tells, without raising.

#: the claims table's verdict for each reading of the rule (the table's rules: a prediction the
#: book's trained networks bear out agrees, one they contradict differs, and one they leave
#: undecided is not reproduced by them)
TRAINED_CLAIM_VERDICTS = {vt.SUPPORTED: "agrees", vt.AGAINST: "differs", vt.UNDECIDED: "not reproduced"}
#: where the interval of a difference of gaps lies, for each reading, in the rule's own words
#: (each is a part of that reading's sentence in the rule file)
TRAINED_ZERO = {vt.SUPPORTED: "lies entirely below zero", vt.AGAINST: "lies entirely above zero",
                vt.UNDECIDED: "contains zero"}


def trained_published() -> bool:
    """Whether the three sweeps of the trained comparison are published with the package."""
    try:
        trained_records()
    except InputError:
        return False
    return True


def trained_records() -> dict:
    """``{rank label: records}`` of the rule's three published sweeps; InputError (one line) naming
    the sweeps not yet published."""
    sweeps = vt.rule()["sweeps"]
    out, missing = {}, []
    for label, name in sweeps.items():
        try:
            out[label] = stored_results(name)
        except InputError:
            missing.append(name)
    if missing:
        raise InputError("the trained vocabulary comparison is not published yet: no stored sweep "
                         + " or ".join(repr(m) for m in missing))
    return out


def _spread(seeds) -> str:
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]} to {seeds[-1]}"
    return fmt.listed(str(s) for s in seeds)



def trained_reading(records_by_rank: dict | None = None) -> dict:
    """The rule read on the runs of each rank (default: the published sweeps, :func:`trained_records`),
    on every seed (``all``) and on the seeds that did not choose the rates (``later``). Also the
    seeds, the tokens of a run and the pair's shapes, from the runs. InputError (one line) when a
    difference of gaps lacks a seed of the design or the runs disagree on their length."""
    rule = vt.rule()
    records = trained_records() if records_by_rank is None else records_by_rank
    preset = get_preset(rule["sweeps"]["full"])
    seeds, later = list(preset.seeds), [s for s in preset.seeds if s not in preset.grid_seeds()]
    every = vt.read(records, rule, seeds_planned=len(seeds))
    rest = vt.read(records, rule, seeds=later, seeds_planned=len(later))
    for label, d in every["differences"].items():
        require(d["complete"], f"the trained vocabulary comparison is incomplete: the difference at r = {label} "
                               f"has {len(d['differences'])} of its {len(seeds)} seeds")
    runs = [r for recs in records.values() for r in reported(recs) if r["status"] == "completed"]
    tokens = {r["tokens"] for r in runs}
    require(len(tokens) == 1, f"the trained vocabulary runs differ in length: {sorted(tokens)} tokens")
    sizes = {(r["depth"], r["width"]): r["budget"] for r in runs}
    shapes = [{"depth": L, "width": w, "size": n} for (L, w), n in sorted(sizes.items())]
    require([s["depth"] for s in shapes] == list(rule["pair"]),
            f"the trained vocabulary runs have shapes {[(s['depth'], s['width']) for s in shapes]}, "
            f"not one of each depth {rule['pair']}")
    return {"rule": rule, "all": every, "later": rest, "seeds": seeds, "later_seeds": later,
            "tokens": tokens.pop(), "shapes": shapes}


def _signed(x: float) -> str:
    """A difference with its sign, the minus a true minus sign (−0.007, +0.025)."""
    return f"{x:+.3f}".replace("-", "\N{MINUS SIGN}")


def _interval_text(iv: dict, level: float) -> str:
    return f"{_signed(iv['mean'])} nats ({level:.0%} interval {_signed(iv['low'])} to {_signed(iv['high'])})"


def _in_words(said: str, rule: dict) -> str:
    """A verdict of the declared rule as the prose says it: 'at rank 8', not the rule's 'at r = 8'."""
    return said.replace(f"at r = {rule['primary_rank']}", f"at rank {rule['primary_rank']}")


def trained_verdict_sentence(verdict: str, rule: dict, half: float) -> str:
    """The verdict in words: the rule's sentence for it, and what it means for the prediction (when
    undecided, the size of effect the design could have resolved, as the rule asks)."""
    primary = rule["primary_rank"]
    said = _in_words(rule["verdicts"][verdict], rule)
    if verdict == vt.SUPPORTED:
        return (f"By the declared rule the prediction is supported: {said}. At rank {primary} the deeper network of the pair gains "
                "more against the shallower and wider one than at full rank.")
    if verdict == vt.AGAINST:
        return (f"By the declared rule the prediction is contradicted: {said}. At rank {primary} the deeper network of the pair "
                "gains less against the shallower and wider one than at full rank.")
    return (f"The comparison leaves the prediction undecided: {said}. This design resolves no effect of the "
            f"embedding rank on the pair's gap larger than {half:.3f} nats, not that there is none.")


def trained_numbers(reading: dict | None = None) -> dict:
    """Every value and sentence the trained section's prose quotes (names start ``vt_``), from
    :func:`trained_reading` (default: the published sweeps; InputError until they are)."""
    t = trained_reading() if reading is None else reading
    rule, every, rest = t["rule"], t["all"], t["later"]
    level, primary = rule["level"], str(rule["primary_rank"])
    verdict = every["verdict"]
    d = every["differences"][primary]
    half = d["interval"]["half_width"]
    out = {"vt_verdict": verdict, "vt_verdict_rule": rule["verdicts"][verdict],
           "vt_rule_supported": _in_words(rule["verdicts"][vt.SUPPORTED], rule),
           "vt_rule_against": _in_words(rule["verdicts"][vt.AGAINST], rule),
           "vt_verdict_sentence": trained_verdict_sentence(verdict, rule, half),
           "vt_primary_r": rule["primary_rank"], "vt_half": f"{half:.3f}", "vt_level": f"{level:.0%}",
           "vt_seeds": d["interval"]["n"], "vt_seed_list": _spread(t["seeds"]),
           "vt_tokens": f"{t['tokens']:,}", "vt_budget": fmt.count(rule["target_budget"]),
           "vt_depths": fmt.listed(str(s["depth"]) for s in t["shapes"]),
           "vt_widths": fmt.listed(str(s["width"]) for s in t["shapes"]),
           "vt_sizes": fmt.listed(f"{s['size']:,}" for s in t["shapes"])}
    for label in (str(r) for r in rule["ranks"]):
        g = every["ranks"][label]
        out[f"vt_gap_{label}"] = _interval_text(g["interval"], level)
        out[f"vt_side_{label}"] = g["verdict"]
        out[f"vt_rates_{label}"] = fmt.listed(f"{fmt.value(s['lr'])} ({s['depth']} layers)" for s in g["shapes"])
    for label in (str(r) for r in rule["small_ranks"]):
        x = every["differences"][label]
        out[f"vt_diff_{label}"] = _interval_text(x["interval"], level)
        out[f"vt_reading_{label}"] = x["reading"]
        out[f"vt_zero_{label}"] = TRAINED_ZERO[x["reading"]]
    late = rest["differences"][primary]
    out["vt_margin"] = trained_margin(d["interval"], verdict)
    out["vt_firmness"] = trained_firmness(t)
    out |= {f"vt_log3_{r}": f"{_log3(r):.1f}" for r in rule["small_ranks"]}
    rates = {label: [(g["depth"], g["lr"]) for g in every["ranks"][label]["shapes"]] for label in (primary, "full")}
    (shallow, a), (deep, b) = sorted(rates[primary])
    (_, c), (_, e) = sorted(rates["full"])
    out["vt_rates_note"] = ("" if rates[primary] == rates["full"] else
                            f"At rank {primary} the {shallow}-layer network chose the rate {fmt.value(a)} and the "
                            f"{deep}-layer one {fmt.value(b)}; at full rank, {fmt.value(c)} and {fmt.value(e)}: the "
                            "difference carries the choice of rates as well as the rank.")
    out["vt_takeaway"] = trained_takeaway(t)
    out["vt_pair_short"] = TRAINED_SHORT[verdict]
    out |= {"vt_later_seeds": _spread(t["later_seeds"]), "vt_later_n": late["interval"]["n"],
            "vt_later_diff": _interval_text(late["interval"], level), "vt_later_verdict": rest["verdict"],
            "vt_later_same": "the same verdict" if rest["verdict"] == verdict else "a different verdict",
            "vt_caption": trained_caption(t), "vt_tied": tied_sentence(), "vt_repeat": repeat_sentence()}
    return out


#: the sweep whose pair the full-rank networks repeat with an untied output layer
DOUBLING_SWEEP = "cpu-pairs"


def _chosen(records: list[dict]) -> list[dict]:
    """The runs a comparison reads (:func:`dwlib.experiments.transition.reported`) that finished."""
    return [r for r in reported(records) if finished(r)]


def tied_comparison(full: list[dict] | None = None, doubling: list[dict] | None = None) -> dict | None:
    """The full-rank trained pair against the same pair in the doubling sweep (:data:`DOUBLING_SWEEP`),
    which ties the output layer to the input embedding where these networks have one of their own:
    per depth both mean held-out losses, the seeds' range and the chosen rates; the pair's mean
    gap on each side, paired by seed; and whether the two designs differ in anything but the tying
    (widths, rates, tokens, seeds). None when the doubling sweep has not trained the pair's budget."""
    rule = vt.rule()
    full = _chosen(stored_results(rule["sweeps"]["full"]) if full is None else full)
    budget = rule["target_budget"]
    if doubling is None:
        try:
            doubling = stored_results(DOUBLING_SWEEP)
        except InputError:  # the doubling sweep is not published: nothing to compare with
            return None
    doubling = [r for r in _chosen(doubling) if r["target_budget"] == budget]
    depths = sorted({r["depth"] for r in full})
    if not doubling or {r["depth"] for r in doubling} & set(depths) != set(depths):
        return None
    out = {"budget": budget, "depths": depths, "shapes": {}}
    same = True
    for L in depths:
        a = {r["seed"]: r for r in full if r["depth"] == L}
        b = {r["seed"]: r for r in doubling if r["depth"] == L}
        seeds = sorted(set(a) & set(b))
        same &= (set(a) == set(b) and {r["width"] for r in a.values()} == {r["width"] for r in b.values()}
                 and {r["lr"] for r in a.values()} == {r["lr"] for r in b.values()}
                 and {r["tokens"] for r in a.values()} == {r["tokens"] for r in b.values()})
        out["shapes"][L] = {
            "untied": float(np.mean([a[s]["eval_loss"] for s in seeds])),
            "tied": float(np.mean([b[s]["eval_loss"] for s in seeds])),
            "untied_range": float(np.ptp([a[s]["eval_loss"] for s in seeds])),
            "tied_range": float(np.ptp([b[s]["eval_loss"] for s in seeds])),
            "seeds": seeds}
    shallow, deep = depths[0], depths[-1]
    common = sorted(set(out["shapes"][shallow]["seeds"]) & set(out["shapes"][deep]["seeds"]))

    def gaps(rs):
        (row,) = [x for x in paired_gaps(rs, shallow, deep) if x["target_budget"] == budget]
        return {s: g for s, g in row["gaps"].items() if s in common}
    untied, tied = gaps(full), gaps(doubling)
    # whether the doubling sweep's deeper shape splits its seeds there, as the experiments chapter
    # defines a split (:func:`dwlib.book.pairs_verdicts.seed_groups`)
    split = any(g["split"] for g in pv.seed_groups(DOUBLING_SWEEP)
                if g["target_budget"] == budget and g["depth"] == deep)
    commits = {L: ({r.get("git_commit") for r in full if r["depth"] == L},
                   {r.get("git_commit") for r in doubling if r["depth"] == L}) for L in depths}
    out |= {"gap_untied": float(np.mean(list(untied.values()))), "gap_tied": float(np.mean(list(tied.values()))),
            "untied_interval": pairs.interval(untied.values(), rule["level"]),
            "change": pairs.interval([tied[s] - untied[s] for s in common], rule["level"]),
            "same_code": all(a == b for a, b in commits.values()),
            "same_design": bool(same), "seeds": common, "shallow": shallow, "deep": deep, "tied_split": split}
    return out


#: "compute it from the stored runs", as against None, the comparison found missing
STORED = object()


#: the doubling sweep with its output layer untied: the experiments chapter's second design
UNTIED_SWEEP = "cpu-pairs-untied"


def tied_sentence(t=STORED) -> str:
    """:func:`tied_comparison` in words, for the trained section ('' when the doubling sweep has not
    trained the pair's budget)."""
    t = tied_comparison() if t is STORED else t
    if t is None:
        return ""
    dp = t["shapes"][t["deep"]]
    alike = ("the same widths, rates, seeds and training tokens" if t["same_design"]
             else "the same widths, though not every rate, seed or token count is shared")
    iv, ch = t["untied_interval"], t["change"]
    level = f"{vt.rule()['level']:.0%}"
    side = "still resolved worse" if iv["low"] > 0 else "resolved better" if iv["high"] < 0 else "not resolved"
    # the split came with the tying when the untied seeds lie within the rule's precision target
    split = t["tied_split"] and dp["untied_range"] <= pairs.rule(DOUBLING_SWEEP)["half_width_target"]
    return (f"The full-rank pair is the {t['shallow']} vs {t['deep']} pair at {fmt.count(t['budget'])} of the "
            f"experiments chapter's tied design, with {alike}, but with an output layer of its own where that design "
            "ties it to the input embedding (a vocabulary-by-width matrix outside the non-embedding size, so the "
            f"wider, shallower network gains more parameters). Untied, the {t['deep']}-layer network's seeds lie "
            f"within {dp['untied_range']:.3f} nats of each other, against {dp['tied_range']:.3f} tied, and the gap "
            f"is {_signed(t['gap_untied'])} nats against {_signed(t['gap_tied'])}, {side}; seed by seed it changes "
            f"by {_signed(-ch['mean'])} nats ({level} interval {_signed(-ch['high'])} to {_signed(-ch['low'])})."
            + (" Most of the tied gap at this point came with the seed split, which did not recur untied; the "
               "experiments chapter's untied design, the whole doubling sweep with an output layer of its own, "
               f"{untied_outcome() or 'tests this at its other sizes'}."
               if split else ""))


def repeat_sentence(full: list[dict] | None = None, untied: list[dict] | None = None) -> str:
    """Where the experiments chapter's untied design (:data:`UNTIED_SWEEP`) repeats this chapter's
    full-rank pair run for run (the same run keys, so the same settings), how far their held-out
    losses lie apart, with the run that differs most; '' when no run is shared. The runs were
    trained apart, and with another version of the code where their records say so."""
    rule = vt.rule()
    try:
        full = _chosen(stored_results(rule["sweeps"]["full"]) if full is None else full)
        untied = _chosen(stored_results(UNTIED_SWEEP) if untied is None else untied)
    except InputError:
        return ""
    mine = {r["key"]: r for r in full}
    shared = [(r, mine[r["key"]]) for r in untied if r["key"] in mine]
    if not shared:
        return ""
    there, here = max(shared, key=lambda x: abs(x[0]["eval_loss"] - x[1]["eval_loss"]))
    worst = abs(there["eval_loss"] - here["eval_loss"])
    other_code = any((a.get("git_commit") or "").split("+")[0] != (b.get("git_commit") or "").split("+")[0]
                     for a, b in shared)
    return (f"The experiments chapter's untied design repeats the full-rank runs here with the same settings, run "
            f"for run, yet their held-out losses differ by up to {worst:.4f} nats (the {here['depth']}-layer "
            f"network, seed {here['seed']}: {here['eval_loss']:.4f} here against {there['eval_loss']:.4f} there): "
            f"the two were trained apart{', with different versions of the code,' if other_code else ''} and such "
            "changes can alter how floating-point sums round.")


def untied_outcome(reading: dict | None = None) -> str:
    """What the untied doubling sweep (:data:`UNTIED_SWEEP`) finds by its declared rule, as the
    end of a sentence ('' before any of its points is read): at how many of its points the deeper
    network is resolved worse, and by how much."""
    reading = pv.read(UNTIED_SWEEP) if reading is None else reading
    points = [q for p in reading["pairs"] for q in p["points"]]
    if not points:
        return ""
    worse = [q["mean"] for q in points if q["verdict"] == "deeper worse"]
    n = len(reading["budgets"])
    read = ("" if set(reading["budgets"]) >= set(get_preset(UNTIED_SWEEP).budgets) else
            f" of its {pv.words(n)} complete size{'s' * (n != 1)}")
    where = ("every point" if len(worse) == len(points) else "none of its points" if not worse
             else f"{len(worse)} of its {len(points)} points")
    by = ("" if not worse else f", by {_signed(worse[0])} nats" if len(worse) == 1
          else f", by {_signed(min(worse))} to {_signed(max(worse))} nats")
    return f"finds the deeper network resolved worse at {where}{read}{by}"


#: an interval whose end nearest zero lies within this share of its half-width from zero decides
#: its verdict by a narrow margin, which the text says
NARROW = 0.25


def trained_margin(iv: dict, verdict: str) -> str:
    """A sentence on how near zero a deciding interval ends (empty when undecided or not narrow)."""
    if verdict == vt.UNDECIDED:
        return ""
    near = iv["low"] if verdict == vt.AGAINST else -iv["high"]
    if near >= NARROW * iv["half_width"]:
        return ""
    return (f"The interval's end nearest zero lies {near:.3f} nats from it, so the verdict rests on a narrow "
            "margin.")


def _narrow(t: dict) -> bool:
    """Whether the trained verdict is a narrow one: it decides (supported or against) and either its
    interval ends near zero (:func:`trained_margin`) or the seeds that did not choose the rates, alone,
    read otherwise."""
    every, rest = t["all"], t["later"]
    d = every["differences"][str(t["rule"]["primary_rank"])]
    return every["verdict"] != vt.UNDECIDED and bool(
        trained_margin(d["interval"], every["verdict"]) or rest["verdict"] != every["verdict"])


def trained_firmness(reading: dict | None = None) -> str:
    """How firm the trained verdict is, in one sentence, the one place the chapter says it: how near
    zero the deciding interval ends when that is narrow (:func:`trained_margin`), and the difference
    on the seeds that did not choose the rates alone, with what it leaves of the verdict."""
    t = trained_reading() if reading is None else reading
    rule, every, rest = t["rule"], t["all"], t["later"]
    primary = str(rule["primary_rank"])
    iv = every["differences"][primary]["interval"]
    late = rest["differences"][primary]["interval"]
    diff = f"the difference at rank {primary} is {_interval_text(iv, rule['level'])}"
    later = (f"on seeds {_spread(t['later_seeds'])} alone, which did not choose the learning rates, it is "
             f"{_interval_text(late, rule['level'])}, which "
             + ("gives the same verdict" if rest["verdict"] == every["verdict"] else
                "leaves the prediction undecided" if rest["verdict"] == vt.UNDECIDED else
                f"reads {rest['verdict']}"))
    if trained_margin(iv, every["verdict"]):
        end, near, side = (("lower", iv["low"], "above") if every["verdict"] == vt.AGAINST else
                           ("upper", -iv["high"], "below"))
        return (f"The margin is narrow: {diff}, whose {end} end lies only {near:.3f} nats {side} zero, and "
                f"{later}.")
    return f"{fmt.capitalised(diff)}; {later}."


#: the trained pair's verdict in the few words of the chapter's takeaway (its lead says it in full)
TRAINED_SHORT = {vt.SUPPORTED: "shows that advantage in held-out loss",
                 vt.AGAINST: "does not show it in held-out loss",
                 vt.UNDECIDED: "neither shows it nor rules it out"}


def trained_takeaway(reading: dict | None = None) -> str:
    """One sentence for the chapter's opening: the trained comparison's verdict, and "though narrowly"
    when it is a narrow one (:func:`trained_firmness`, in the trained section, says how narrow, once),
    else what the seeds that did not choose the rates give alone."""
    t = trained_reading() if reading is None else reading
    rule, every, rest = t["rule"], t["all"], t["later"]
    primary = rule["primary_rank"]
    said = {vt.SUPPORTED: f"an embedding of rank {primary} gave the deeper network an added advantage, as predicted",
            vt.AGAINST: f"an embedding of rank {primary} did not give the deeper network an added advantage: the "
                        "result goes against the prediction",
            vt.UNDECIDED: f"the runs neither bear out nor contradict an added advantage for the deeper network at "
                          f"embedding rank {primary}"}[every["verdict"]]
    later = ("the same on the seeds that did not choose the learning rates" if rest["verdict"] == every["verdict"]
             else f"{rest['verdict']} on the seeds that did not choose the learning rates")
    tail = ", though narrowly." if _narrow(t) else f" ({later})."
    shallow, deep = rule["pair"]
    return (f"In one trained pair ({shallow} against {deep} layers, about {fmt.count(rule['target_budget'])} "
            f"non-embedding parameters), {said}{tail}")


def trained_caption(reading: dict | None = None) -> str:
    """The caption of the trained figure: what to conclude (by the verdict), then what it shows."""
    t = trained_reading() if reading is None else reading
    rule, every = t["rule"], t["all"]
    primary, (shallow, deep) = rule["primary_rank"], rule["pair"]
    d = every["differences"][str(primary)]
    conclude = {
        vt.SUPPORTED: f"At embedding rank {primary} the deeper network gains more against the wider one than at "
                      "full rank, as predicted: the interval of the difference lies entirely below zero.",
        vt.AGAINST: f"At embedding rank {primary} the deeper network gains less against the wider one than at "
                    "full rank, against the prediction: the interval of the difference lies entirely above zero.",
        vt.UNDECIDED: f"The embedding rank makes no resolved difference to the pair: the interval of the "
                      f"difference at rank {primary} contains zero, so the runs neither bear out the prediction "
                      "nor contradict it.",
    }[every["verdict"]]
    if _narrow(t):  # how narrow, in words; the prose gives the numbers, once
        head, rest = conclude.split(": ", 1)
        conclude = f"{head}, though narrowly: {rest}"
    return (f"{conclude} Above: at each embedding rank, the held-out loss of the {deep}-layer network minus "
            f"that of the {shallow}-layer one, both of about {fmt.count(rule['target_budget'])} non-embedding "
            f"parameters, seed by seed: the mean over {d['interval']['n']} "
            f"seeds and its paired {rule['level']:.0%} interval. Below: that gap at rank $r$ minus the gap at full "
            "rank. Left of the dashed zero line the deeper network is ahead (above), or gains more at rank $r$ "
            "than at full rank (below).")


def trained_chart(reading: dict | None = None):
    """The trained figure (:func:`dwlib.viz.vocab.trained_chart`) of :func:`trained_reading`."""
    t = trained_reading() if reading is None else reading
    return charts.trained_chart(t["all"], t["rule"])


def trained_table(reading: dict | None = None) -> pd.DataFrame:
    """Every shape's chosen rate and mean held-out loss at each rank, as the rule asks the book to
    report (the pair's gaps are the figure's)."""
    t = trained_reading() if reading is None else reading
    rows = []
    for label in (str(r) for r in t["rule"]["ranks"]):
        g = t["all"]["ranks"][label]
        for s in g["shapes"]:
            rows.append({"embedding rank": "full" if label == "full" else f"r = {label}", "layers": s["depth"],
                         "width": s["width"], "rate": fmt.value(s["lr"]), "seeds": len(s["losses"]),
                         "mean held-out loss (nats)": round(s["mean"], 4)})
    return pd.DataFrame(rows).set_index(["embedding rank", "layers"])


def trained_claim(reading: dict | None = None) -> dict:
    """The claims-table row of the trained prediction (the keys of :func:`claims`' rows): its
    agreement from the rule's verdict (:data:`TRAINED_CLAIM_VERDICTS`)."""
    t = trained_reading() if reading is None else reading
    n = trained_numbers(t)
    verdict = t["all"]["verdict"]
    require(verdict in TRAINED_CLAIM_VERDICTS, f"the trained vocabulary comparison has no verdict ({verdict!r})")
    src = "{cite}`wies2021which`"
    return {"claim": "a small embedding rank gives the deeper network of a trained pair an added advantage",
            "chapter": "vocabulary", "paper": f"depth gains an added advantage (abstract), read for trained "
                                              f"networks {src}",
            "book": f"{verdict}, by the declared rule: {n['vt_depths']} layers at {n['vt_budget']}, gap at rank "
                    f"{n['vt_primary_r']} minus at full rank {n['vt_diff_' + str(n['vt_primary_r'])]}"
                    + _claim_caveats(t, n) + " ({figref}`fig-vocab-trained`)",
            "agreement": TRAINED_CLAIM_VERDICTS[verdict]}


def _claim_caveats(t: dict, n: dict) -> str:
    """What qualifies the trained verdict in the claims row, in plain words: how near zero its
    interval ends, when the chapter calls the margin narrow, and what the seeds that did not choose
    the rates give alone when it differs."""
    iv = t["all"]["differences"][str(n["vt_primary_r"])]["interval"]
    out = []
    if n.get("vt_margin"):  # the verdict rests on a narrow margin (trained_margin)
        out.append(f"{min(abs(iv['low']), abs(iv['high'])):.3f} nats clear of zero")
    later = t["later"]["verdict"]
    if later != t["all"]["verdict"]:
        out.append(f"seeds {n['vt_later_seeds']} alone "
                   + ("leave it undecided" if later == vt.UNDECIDED else f"read it {later}"))
    return (", " + "; ".join(out)) if out else ""
