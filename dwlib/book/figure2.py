"""The experiments chapter's lead: the paper's Figure 2 beside the CPU doubling-pairs sweep, read
by its declared rule, and what the earlier sweeps could and could not decide.

:func:`chart` draws the doubling pairs over the budgets the rule reads (every seed of every
depth), or, while no budget is complete, the runs stored so far; :func:`numbers` gives every
value and sentence the chapter's prose quotes; :func:`earlier_table` reads the earlier sweeps by
the same rule; :func:`bounds_table` says where eqs. (7) and (8) separate the two networks of a
pair at the trained shapes.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book import pairs_verdicts as pv
from dwlib.core import bounds, sizes
from dwlib.core.fit import AUTHORS_FIT, optimal_width
from dwlib.experiments import pairs
from dwlib.experiments.presets import get_preset
from dwlib.experiments.records import stored_results
from dwlib.viz import pairs as vp

SWEEP = pv.RULE_SWEEP
#: the earlier sweeps, in the order the chapter gives them
EARLIER = ("cpu-fig2", "mini", "gpu-slice")


@functools.cache
def reading() -> dict:
    """The doubling sweep read by its rule (:func:`dwlib.book.pairs_verdicts.read`)."""
    return pv.read(SWEEP)


def chart():
    """The two-pair figure over the complete budgets, or every stored run while none is complete."""
    r = reading()
    return vp.figure2(stored_results(SWEEP), r["rule"], budgets=r["budgets"] or None, conclusion=chart_conclusion(r))


def chart_conclusion(r: dict) -> str:
    """The figure's finding, short enough for its subtitle: where the deeper network is no
    better, and whether a pair crosses, by the rule."""
    if not r["budgets"]:
        return "no size complete: no verdict"
    where = pv.span(r["budgets"], get_preset(SWEEP).budgets)
    better = [p for p in r["pairs"] if p["verdict"]["better"]]
    n = len(pv.crossing(r))
    head = f"deeper no better {where}" if not better else f"deeper better in {len(better)} pair{'s' * (len(better) > 1)}"
    return head + ("; no crossing" if n == 0 else f"; {n} crossing{'s' * (n > 1)}")


def authors_range(shallow: int, deep: int) -> tuple[float, float]:
    """The authors' fit read as in the rule file: depth L is optimal at N(L) = 12 L d(L)^2, so the
    pair (L, 2L) crosses between N(L) and N(2L)."""
    return tuple(12 * L * float(optimal_width(L, AUTHORS_FIT)) ** 2 for L in (shallow, deep))


def bounds_rows(sweep: str = SWEEP, shallow_deep=None, budgets=None) -> list[dict]:
    """At each target budget and pair of a sweep's preset: both networks' widths (the preset's
    rounding to whole heads), the bounds on log3 sep that apply to each (eq. (7) below its
    threshold log3 d_x, eq. (8) above), and whether they separate the two (one network's lower
    bound above the other's upper bound)."""
    preset = get_preset(sweep)
    prs = shallow_deep or (pv.EARLIER_PAIRS.get(sweep) or [tuple(p) for p in pairs.rule(SWEEP)["pairs"]])
    rows = []
    for b in budgets or preset.budgets:
        for s, d in prs:
            w = {L: sizes.width_for_budget(b, L, preset.head_size) for L in (s, d)}
            bd = {L: bounds.separation_rank_bounds(L, w[L], w[L] // preset.head_size) for L in (s, d)}
            deeper = bd[d]["lower"] > bd[s]["upper"]
            shallower = bd[s]["lower"] > bd[d]["upper"]
            rows.append({"pair": f"{s} vs {d}", "budget": b, "widths": f"{w[s]}, {w[d]}",
                         "shallow eq.": 7 if bd[s]["theorem"] == 1 else 8, "deep eq.": 7 if bd[d]["theorem"] == 1 else 8,
                         "shallow upper": bd[s]["upper"], "deep lower": bd[d]["lower"],
                         "separated": "deeper more expressive" if deeper else "shallower more expressive"
                         if shallower else "not separated"})
    return rows


def bounds_table() -> pd.DataFrame:
    """:func:`bounds_rows` of the doubling sweep, as the chapter shows it."""
    df = pd.DataFrame(bounds_rows())
    df["budget"] = [fmt.count(b) for b in df["budget"]]
    df = df.rename(columns={"widths": "widths (shallow, deep)", "shallow upper": "shallow: upper bound",
                            "deep lower": "deep: lower bound", "shallow eq.": "shallow: eq.", "deep eq.": "deep: eq."})
    return df.set_index(["pair", "budget"]).round(2)


def earlier_rows() -> list[dict]:
    """Each earlier sweep's doubling pairs read by the declared rule: budgets, seeds, the median
    paired half-width, the point verdicts counted, and whether the pair crosses."""
    rows = []
    for name in EARLIER:
        r = pv.read_by_rule(name)
        for p in r["pairs"]:
            pts = p["points"]
            halves = [x["half_width"] for x in pts if x["half_width"] is not None]
            v = p["verdict"]
            rows.append({"sweep": pv.NAMES[name], "pair": f"{p['shallow']} vs {p['deep']}",
                         "budgets": f"{fmt.count(pts[0]['target_budget'])} to {fmt.count(pts[-1]['target_budget'])}",
                         "seeds": "-".join(sorted({str(x["n"]) for x in pts}, key=int)),
                         "mean gaps (nats)": f"{min(x['mean'] for x in pts):+.3f} to {max(x['mean'] for x in pts):+.3f}",
                         "median half-width (nats)": f"{np.median(halves):.3f}" if halves else "none (one seed)",
                         "deeper worse / unresolved / better": f"{len(v['worse'])} / {len(v['unresolved'])} / {len(v['better'])}",
                         "crosses by the rule": "yes" if v["transition"] else "no"})
    return rows


def earlier_table() -> pd.DataFrame:
    return pd.DataFrame(earlier_rows()).set_index(["sweep", "pair"]).round(3)


def _seed_std(name: str) -> float:
    return float(np.nanmedian([s["std"] for s in pairs.seed_spread(stored_results(name)) if s["std"] is not None]))


def verdict_sentence(r: dict) -> str:
    """The rule's verdict on the doubling sweep over the sizes it reads, in one sentence."""
    if not r["budgets"]:
        return ("No size has results for every seed of every depth, so the declared rule gives no verdict, "
                "and the figure shows the runs stored without drawing one from them.")
    where = pv.span(r["budgets"], get_preset(SWEEP).budgets)
    better = [p for p in r["pairs"] if p["verdict"]["better"]]
    head = (f"{where[:1].upper() + where[1:]} non-embedding parameters, "
            + ("the deeper network of each pair is no better than the shallower one" if not better else
               "the deeper network is better in " + pv._and([f"{p['deep']} against {p['shallow']} layers at "
                                                             f"{pv._sizes(p['verdict']['better'])}" for p in better])))
    if len(r["budgets"]) == 1:
        return head + "; a transition lies between two sizes, so a single size cannot show one."
    n = len(pv.crossing(r))
    return head + (", and neither pair crosses by the declared rule." if n == 0 and len(r["pairs"]) == 2 else
                   f", and {pv.of(n, len(r['pairs']), 'pair', 'crosses')} by the declared rule.")


def separated_text(rows: list[dict], head_size: int) -> str:
    """Each point at which the bounds separate the two networks, with why: which equation bounds
    each network there and where the shallower one sits against its threshold log3 d_x."""
    out = []
    for x in rows:
        s, d = (int(v) for v in x["pair"].split(" vs "))
        w_s, w_d = (int(v) for v in x["widths"].split(", "))
        th = float(bounds.depth_threshold(w_s))
        side = "just above" if s - 1 < th < s else "above" if th < s else "below"
        out.append(f"{x['pair']} at {fmt.count(x['budget'])}, where the {s}-layer network's width of {w_s} puts it "
                   f"{side} its threshold (log3 {w_s} = {th:.2f}), so that its upper bound is eq. ({x['shallow eq.']})'s "
                   f"{x['shallow upper']:.1f}, below the {d}-layer network's lower bound of {x['deep lower']:.1f}"
                   if x["separated"] == "deeper more expressive" else
                   f"{x['pair']} at {fmt.count(x['budget'])}, where the shallower network is the more expressive")
    return "; ".join(out)


def reproduced_sentence(r: dict, earlier: list[dict]) -> str:
    """Whether any stored sweep reproduces the paper's Figure 2 (both pairs of one sweep crossing
    by the rule), in one sentence."""
    own = len(pv.crossing(r))
    old = sum(x["crosses by the rule"] == "yes" for x in earlier)
    if own and own == len(r["pairs"]):
        return "The CPU doubling-pairs sweep reproduces the paper's Figure 2 at its scale: both pairs cross."
    if own:
        return (f"The CPU doubling-pairs sweep reproduces the paper's Figure 2 in part: "
                f"{pv.of(own, len(r['pairs']), 'pair', 'crosses')}.")
    return ("No stored sweep of this book reproduces the paper's Figure 2: " +
            ("the earlier sweeps, read by the same rule, show no crossing either." if not old else
             f"of the earlier sweeps' pairs, read by the same rule, {pv.of(old, len(earlier), 'pair', 'crosses')}."))


def widths_below(sweep: str = SWEEP, limit: int = 200) -> tuple[int, int]:
    """How many of the sweep's planned shapes (depth, budget) have a width below ``limit``, of how many."""
    preset = get_preset(sweep)
    w = [sizes.width_for_budget(b, L, preset.head_size) for b in preset.budgets for L in preset.depths]
    return sum(x < limit for x in w), len(w)


def numbers() -> dict:
    """Every value and sentence the chapter's prose quotes, from the stored runs."""
    r = reading()
    preset = get_preset(SWEEP)
    others_seeds = tuple(s for s in preset.seeds if s >= preset.select_seeds)
    others = pv.read(SWEEP, seeds=others_seeds)
    rule = r["rule"]
    narrow = widths_below()
    ranges = {tuple(p): authors_range(*p) for p in rule["pairs"]}
    bd = bounds_rows()
    sep = [x for x in bd if x["separated"] != "not separated"]
    old = bounds_rows("cpu-fig2", budgets=(max(get_preset("cpu-fig2").budgets),))
    one_two = next(x for x in old if x["pair"] == "1 vs 2")
    earlier = earlier_rows()
    return {
        "fx_verdict": verdict_sentence(r), "fx_coverage": pv.coverage_sentence(SWEEP),
        "fx_pairs": " ".join([pv.pair_sentence(p) for p in r["pairs"]] + [pv.regime_summary(r)]),
        "fx_transitions": pv.transition_summary(r),
        "fx_power": pv.power_sentence(r),
        "fx_others": pv.seeds_sentence(r, others, others_seeds),
        "fx_sizes": pv.size_sentence(r, preset.head_size),
        "fx_share": rule["half_width_share"],
        "fx_tokens_per_param_small": rule["tokens_per_run"] / min(preset.budgets),
        "fx_tokens_per_param_large": rule["tokens_per_run"] / max(preset.budgets),
        "fx_largest": fmt.count(max(preset.budgets)),
        "fx_narrow": narrow[0], "fx_shapes": narrow[1],
        "fx_sep_detail": separated_text(sep, preset.head_size) or "none",
        "fx_old_cross_text": pv.of(sum(x["crosses by the rule"] == "yes" for x in earlier), len(earlier), "pair", "crosses"),
        "fx_reproduced": reproduced_sentence(r, earlier),
        "fx_budgets": pv._sizes(preset.budgets), "fx_n_seeds": len(preset.seeds),
        "fx_n_select": preset.select_seeds, "fx_n_select_words": pv.words(preset.select_seeds),
        "fx_n_seeds_words": pv.words(len(preset.seeds)), "fx_tokens_m": rule["tokens_per_run"] / 1e6,
        "fx_rates": ", ".join(f"{x:g}" for x in preset.lrs), "fx_level": rule["level"],
        "fx_target": rule["half_width_target"],
        "fx_authors": "; ".join(f"{s} vs {d} between {fmt.count(lo)} and {fmt.count(hi)}"
                                for (s, d), (lo, hi) in ranges.items()),
        "fx_sep_n": len(sep), "fx_sep_points": len(bd),
        "fx_sep_text": ("; ".join(f"{x['pair']} at {fmt.count(x['budget'])}: {x['separated']}" for x in sep)
                        or "at none of them"),
        "fx_old_upper": one_two["shallow upper"], "fx_old_lower": one_two["deep lower"],
        "fx_old_budget": fmt.count(one_two["budget"]),
        "fx_old_n": len(earlier), "fx_old_cross": sum(x["crosses by the rule"] == "yes" for x in earlier),
        "fx_gpu_lead": -min(x["mean"] for x in pv.read_by_rule("gpu-slice")["pairs"][0]["points"]),
        "fx_runs": len(stored_results(SWEEP)),
        "fx_hours": sum(x.get("wall_seconds") or 0 for x in stored_results(SWEEP)) / 3600,
        "fx_std_fig2": _seed_std("cpu-fig2"), "fx_std_mini": _seed_std("mini"), "fx_std_gpu": _seed_std("gpu-slice"),
    }
