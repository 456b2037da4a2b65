"""The numbers, chart frames and claims of the chapter "The vocabulary bottleneck"
(book/vocabulary.ipynb), all from the stored exact measurements (:func:`dwlib.experiments.vocab_sweep.load`)
and from :mod:`dwlib.core.vocab`; the T5-11B arithmetic from the shape the chapter states."""

from __future__ import annotations

import math

import pandas as pd

from dwlib.experiments import vocab_sweep

#: T5-11B's shape (Raffel et al., 2020): model width, attention heads and each head's dimension
T5_11B = {"d_model": 1024, "heads": 128, "head_dim": 128}
DEPTH_WIDTH, DEPTH_HEADS = 8, 2  # the depth figure's network
WIKI_VOCAB = 1000  # the 2020 paper's experiments: "a vocabulary size of 1000" (section 5)


def _log3(x) -> float:
    return math.log(x) / math.log(3)


def _series(m: dict) -> str:
    return "full rank (r = d_x, one head)" if m["embedding_rank"] == m["width"] and m["heads"] == 1 else (
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
    fixed = wf[wf.series != "full rank (r = d_x, one head)"]
    full = wf[wf.series == "full rank (r = d_x, one head)"].sort_values("width")
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
            f"{m.rank} for r = {m.series[4:]} (full-rank width {m.series[4:]}: {l2[m.series]})"
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
    what needs data the book does not hold is not testable here."""
    data = vocab_sweep.load() if data is None else data
    n = numbers(data)
    src = "{cite}`wies2021which`"
    wf = width_frame(data)
    held = wf[(wf.series != "full rank (r = d_x, one head)") & wf.heads_hold_r]
    flat = all(g["rank"].nunique() == 1 for _, g in held.groupby(["depth", "series"]))
    full = wf[wf.series == "full rank (r = d_x, one head)"].sort_values("width")
    rises = all(g["rank"].is_monotonic_increasing and g["rank"].nunique() == len(g) for _, g in full.groupby("depth"))
    deep = [[m["rank"] for m in depth_records(data) if m["embedding_rank"] == r and not m["capped"]] for r in (1, 2, 3)]
    grows = all(all(b > a for a, b in zip(s, s[1:])) for s in deep)
    return [
        {"claim": "the embedding's rank limits what width adds to expressivity", "chapter": "vocabulary",
         "paper": f"the abstract's claim {src}",
         "book": f"exact grid ranks of the analysed network at embedding ranks 1 to 4: {n['vb_same']} at widths "
                 f"{n['vb_widths']} where the heads hold r; at full rank they rise with width",
         "agreement": "agrees" if flat and rises else "differs"},
        {"claim": "with a small embedding rank only depth still adds expressivity", "chapter": "vocabulary",
         "paper": f"depth gains an added advantage (abstract) {src}",
         "book": f"at r = 1 the rank is {n['vb_r1_ranks']} at depths 1 to {n['vb_r1_top_L']}, (3^L + 1)/2 exactly, "
                 f"at every width; at r = 2: {n['vb_r2_ranks']}",
         "agreement": "agrees" if grows and flat else "differs"},
        {"claim": "the optimal depth-to-width ratio is about 10x larger over images than over language",
         "chapter": "vocabulary", "paper": f"the abstract {src}",
         "book": "no trained networks on images or language at the needed sizes", "agreement": "not testable here"},
        {"claim": "ALBERT and T5 carry size redundancies of 25% to 50%", "chapter": "vocabulary",
         "paper": f"the abstract {src}",
         "book": f"only the arithmetic: T5-11B's attention inner dimension {n['vb_t5_inner']} is "
                 f"{n['vb_t5_ratio']} times its width {n['vb_t5_d']}", "agreement": "not testable here"},
    ]


def derived_bound_table(data: dict | None = None) -> pd.DataFrame:
    """The depth figure's records as a table: measured rank, grid cap and the bounds (log3; a dash
    where eq. (8) does not apply at width r, L <= log3 r)."""
    data = vocab_sweep.load() if data is None else data
    rows = [{"r": m["embedding_rank"], "L": m["depth"], "V": m["tokens"], "rank": m["rank"], "grid cap": m["grid_cap"],
             "cap binds": "yes" if m["capped"] else "no", "log3 rank": round(_log3(m["rank"]), 2),
             "polynomial space at r (log3)": round(m["log3_upper_rank"], 2),
             "eq. (8) at r (log3)": "\N{EM DASH}" if m["log3_upper_eq8_rank"] is None
             else f"{m['log3_upper_eq8_rank']:.2f}",
             "2020 upper at d_x (log3)": round(m["log3_upper_full"], 2)} for m in depth_records(data)]
    return pd.DataFrame(rows).set_index(["r", "L"])
