"""The guidelines chapter's numbers and tables: the fit's optimum across budgets, GPT-3 and
later models against it, the 1T projection, and the transitions our own sweeps measured."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.book import pairs_verdicts as pv
from dwlib.book.references import author_year, sources
from dwlib.core.fit import (AUTHORS_EXPERIMENT_DEPTHS, AUTHORS_FIT, DEFAULT_ABS_TOL, DEFAULT_HEAD_SIZE,
                            DEFAULT_REL_TOL, Fit, optimal_depth, optimal_shape, rule_words)
from dwlib.core.fit_uncertainty import rounding_box, slope_for_optimum, threshold_against_fit
from dwlib.experiments.catalogue import AUTHORS_1T_DEPTH, gpt3_table, load_models, trillion_projection
from dwlib.experiments.presets import get_preset

#: the stored sweeps whose transitions the chapter fits, each on its own (their corpora,
#: learning rates and precisions differ); the GPU slice keeps only its size-limited runs.
OWN_SWEEPS = ("cpu-pairs", "cpu-pairs-untied", "cpu-fig2", "mini", "gpu-slice")


def optimal_table(budgets=10.0 ** np.arange(6, 14), fit: Fit = AUTHORS_FIT) -> pd.DataFrame:
    """:func:`dwlib.core.fit.optimal_shape` at each budget: L* to a tenth, d* to a unit."""
    opt = optimal_shape(budgets, fit)
    return pd.DataFrame({"budget N": [fmt.count(n) for n in budgets],
                         "optimal depth L*": np.round(opt["depth"], 1),
                         "optimal width d*": np.round(opt["width"]).astype(int)}).set_index("budget N")


def gpt3_frame(fit: Fit = AUTHORS_FIT) -> pd.DataFrame:
    """:func:`dwlib.experiments.catalogue.gpt3_table` as the chapter shows it."""
    gpt3 = pd.DataFrame(gpt3_table(fit))
    return pd.DataFrame({
        "model": gpt3["name"],
        "depth L": gpt3["depth"], "width d": gpt3["width"],
        "budget 12 L d²": [fmt.count(n) for n in gpt3["budget"]],
        "optimal L*": gpt3["optimal_depth"].round(1), "optimal d*": gpt3["optimal_width"].round().astype(int),
        "suggested shape": [f"{L} × {d}" for L, d in zip(gpt3["suggested_depth"], gpt3["suggested_width"])],
        "L / L*": gpt3["depth_ratio"].round(2),
        "verdict": gpt3["verdict"],
    }).set_index("model")


def trillion_table(fit: Fit = AUTHORS_FIT) -> pd.DataFrame:
    """:func:`dwlib.experiments.catalogue.trillion_projection` as a column of values."""
    t = trillion_projection(fit)
    p, emb = t["practical"], t["if_total_with_embedding"]
    n = _budget_text(t["budget"])
    return pd.Series({
        f"fit: optimal depth L* for N = {n}": f"{t['optimal_depth']:.2f}",
        f"fit: optimal width d* for N = {n}": f"{t['optimal_width']:,.0f}",
        "fit: practical shape": f"{p['depth']} × {p['width']} ({p['heads']} heads)",
        "authors: depth × width": f"{t['authors_depth']} × {t['authors_width']}",
        "authors' shape: budget 12 L d²": fmt.count(t["authors_budget"]),
        "fit: L* for that budget": f"{t['optimal_depth_for_authors_budget']:.2f}",
        f"fit: width at depth {t['authors_depth']}": f"{t['fit_width_at_authors_depth']:,.0f}",
        f"fit: depth at width {t['authors_width']}": f"{t['fit_depth_at_authors_width']:.2f}",
        "verdict on the authors' shape": f"{t['authors_verdict']} (L / L* = {t['authors_depth_ratio']:.3f})",
        f"fit: L* if {n} included a {emb['vocab_size']}-token embedding": f"{emb['optimal_depth']:.2f}",
    }, name="value").to_frame()


def _budget_text(n: float) -> str:
    """A budget for a table's label: a whole power of ten as 10¹², anything else as 175B."""
    k = round(math.log10(n))
    return fmt.ten_to(k) if n == 10.0 ** k else fmt.count(n)


#: what the models table says of a model whose catalogue entry calls its verdict not meaningful
#: (12 L d^2 misdescribes its size: T5-11B); the models chart draws it as a grey "no verdict".
NO_VERDICT = "no verdict (see the notes)"


def _judged(real: pd.DataFrame) -> pd.Series:
    """True for each model whose verdict means something (its entry lacks verdict_meaningful: false)."""
    if "verdict_meaningful" not in real:
        return pd.Series(True, index=real.index)
    return real["verdict_meaningful"].ne(False)


def models_frame(models: list[dict]) -> pd.DataFrame:
    """Published shapes (:func:`dwlib.experiments.catalogue.load_models`) with their verdicts;
    a model whose verdict the catalogue calls not meaningful gets neither a verdict nor a depth
    ratio (a dash)."""
    real = pd.DataFrame(models)
    judged = _judged(real)
    return pd.DataFrame({
        "model": real["name"], "shape L × d": [f"{L} × {d}" for L, d in zip(real["depth"], real["width"])],
        "budget 12 L d²": [fmt.count(n) for n in real["budget"]],
        "optimal L*": real["optimal_depth"].round(1),
        "L / L*": [f"{r:.2f}" if ok else "\N{EM DASH}" for r, ok in zip(real["depth_ratio"], judged)],
        "verdict": real["verdict"].where(judged, NO_VERDICT), "source": sources(real["source"]),
    }).set_index("model")


#: the catalogue notes' shorthand, rewritten for readers (in order): formulas as mathematics,
#: "~" as "about", code names as words
_NOTE_WORDS = (
    (r"fit d_x = exp\(([\d.]+)\) exp\(([\d.]+) L\)", r"fit of eq. {ref}`(G1) <eq-fit>`, a = \1 and b = \2,"),
    (r"~\(2/3\)4d", "about (2/3) \N{MULTIPLICATION SIGN} 4d"),
    (r"\b(its|the) ~(?=[\d.]+B\b)", r"\1 roughly "),
    (r"d_ff = 4 d", "a feed-forward width of 4d"),
    (r"d_ff = (\d+)", lambda m: f"a feed-forward width of {int(m.group(1)):,}"),
    (r"~([\d.]+) (L )?d\^2", lambda m: f"about {m.group(1)} {m.group(2) or ''}d\N{SUPERSCRIPT TWO}"),
    (r"12 L d\^2", "12 L d\N{SUPERSCRIPT TWO}"),
    (r"\(~([\d.]+B)\)", r"(about \1)"),
    (r"~(?=[\d.]+B\b|\d+ layers)", "about "),
    (r"(\d{5,})", lambda m: f"{int(m.group(1)):,}"),
    (r" >> d_model", ", far above the width"),
    (r"d_model", "the width"),
    (r"key/value", "key and value"),
)


#: the catalogue notes' citations of the paper, as the book's citation role for the version they
#: mean: the guideline (the fit of the optimal width) is given in the arXiv version
_NOTE_CITATIONS = ((r"Levine et al\. \(2020\)", "levine2020interplay"),)


def model_note(note: str) -> str:
    """A catalogue note in a reader's words: no code names, its few formulas in plain text (the notes
    are a Markdown output, which the PDF prints without typesetting TeX), the guideline's fit linked
    to its equation and its citations as the book's citation role (the output is read as MyST)."""
    for pattern, repl in _NOTE_WORDS:
        note = re.sub(pattern, repl, note)
    for pattern, key in _NOTE_CITATIONS:
        author_year(key)  # a key the bibliography lacks is an error here, not a broken link
        note = re.sub(pattern, f"{{cite:t}}`{key}`", note)
    return note[:1].upper() + note[1:] + ("" if note.endswith(".") else ".")


def model_notes(models: list[dict]) -> str:
    """The models' notes (where 12 L d^2 only approximates their size) as a Markdown list."""
    return "\n".join(f"- **{m['name']}**: {model_note(m['note'])}" for m in models if m.get("note"))


def recovery_table(known: Fit, recovered: Fit) -> pd.DataFrame:
    """A known fit's constants beside those recovered from its transitions (10 decimals)."""
    return pd.DataFrame({"known": [known.log_width_intercept, known.depth_slope],
                         "recovered": [f"{recovered.log_width_intercept:.10f}", f"{recovered.depth_slope:.10f}"]},
                        index=["intercept a", "slope b"])


@functools.cache
def own_readings() -> dict[str, dict]:
    """Every stored sweep read by the one declared rule (:mod:`dwlib.book.pairs_verdicts`), by
    the name a reader meets."""
    return {pv.NAMES[name]: pv.read_by_rule(name) for name in OWN_SWEEPS}


def own_fits_table() -> pd.DataFrame:
    """Each stored sweep's doubling pairs and those that cross by the declared rule (with the
    budgets between which they cross), one row a sweep; a slope b needs two crossing pairs in one
    sweep. The verdicts themselves are the experiments chapter's."""
    rows = []
    for label, r in own_readings().items():
        pairs = [f"{p['shallow']} vs {p['deep']}" for p in r["pairs"]]
        if not r["pairs"][0]["points"] and r["budgets"] is not None:
            crossing = "not read: no size has all its runs"
        else:
            crossing = "; ".join(
                f"{p['shallow']} vs {p['deep']}, between {fmt.count(t['between'][0])} and {fmt.count(t['between'][1])}"
                for p in r["pairs"] if (t := p["verdict"]["transition"])) or "none"
        rows.append({"sweep": fmt.capitalised(label.removeprefix("the ")), "doubling pairs": fmt.listed(pairs),
                     "crossing by the rule": crossing})
    return pd.DataFrame(rows).set_index("sweep")


def shape_frame(shape: dict) -> pd.DataFrame:
    """A shape the fit returns (:func:`dwlib.core.fit.optimal_shape` or :func:`~dwlib.core.fit.verdict`)
    as a table a reader reads: one row a quantity, rounded for reading."""
    names = {"budget": ("budget 12 L d²", fmt.count), "depth": ("depth L", _shape_value),
             "width": ("width d", _shape_value), "optimal_depth": ("optimal depth L*", lambda v: f"{v:.1f}"),
             "optimal_width": ("optimal width d*", lambda v: f"{v:,.0f}"),
             "depth_ratio": ("L / L*", lambda v: f"{v:.2f}"),
             "depth_difference": ("L − L*", lambda v: f"{v:+.1f}".replace("-", "\N{MINUS SIGN}")),
             "width_ratio": ("d / d*", lambda v: f"{v:.2f}"), "verdict": ("verdict", str), "rule": ("rule", rule_words)}
    return pd.DataFrame({"value": {names[k][0]: names[k][1](v) for k, v in shape.items() if k in names}})


def _shape_value(v) -> str:
    return f"{v:,}" if isinstance(v, (int, np.integer)) else f"{v:,.1f}"


# ---------------------------------------------------------------------------------------------
# The numbers the prose quotes

def _decade_gains(fit: Fit, lo: int = 9, hi: int = 13) -> list[float]:
    """Layers the optimal depth gains per tenfold budget, 10^lo to 10^hi."""
    return [optimal_depth(10.0 ** (k + 1), fit) - optimal_depth(10.0 ** k, fit)
            for k in range(lo, hi)]


def _fit_numbers(fit: Fit) -> dict:
    depths = AUTHORS_EXPERIMENT_DEPTHS
    finest = min(zip(depths, depths[1:]), key=lambda s: s[1] / s[0])
    return {
        "fit_a": fit.log_width_intercept,
        "fit_b": fit.depth_slope,
        "exp_depths": ", ".join(str(L) for L in depths),
        "width_factor_per_layer": math.exp(fit.depth_slope),
        "width_at_depth0": math.exp(fit.log_width_intercept),
        "layers_per_decade_asymptotic": math.log(10) / (2 * fit.depth_slope),
        "layers_added_1e11_1e12": optimal_depth(1e12, fit) - optimal_depth(1e11, fit),
        # layers added per tenfold budget over the decades from 1e9 to 1e13
        "layers_per_decade_lo": min(_decade_gains(fit)),
        "layers_per_decade_hi": max(_decade_gains(fit)),
        "tol_rel_pct": 100 * DEFAULT_REL_TOL,
        "tol_abs": int(DEFAULT_ABS_TOL),
        "tol_rel": DEFAULT_REL_TOL,
        "finest_depth_step_pct": 100 * (finest[1] / finest[0] - 1),
        "finest_lo": finest[0],
        "finest_hi": finest[1],
        "head_size": DEFAULT_HEAD_SIZE,
        "exp_depth_max": max(depths),
    }


def _gpt3_numbers(fit: Fit) -> dict:
    gpt3 = pd.DataFrame(gpt3_table(fit))
    named = gpt3.set_index("name")
    big, b13 = named.loc["GPT-3 175B"], named.loc["GPT-3 13B"]
    shallow = gpt3[gpt3["verdict"] == "too shallow"]
    return {
        "gpt3_n": len(gpt3),
        "gpt3_n_shallow": len(shallow),
        "gpt3_n_deep": int((gpt3["verdict"] == "too deep").sum()),
        "gpt3_shallow_ratio_min": float(shallow["depth_ratio"].min()),
        "gpt3_shallow_ratio_max": float(shallow["depth_ratio"].max()),
        "gpt3_small_depth": int(gpt3["depth"].iloc[0]),
        "gpt3_small_opt": float(gpt3["optimal_depth"].iloc[0]),
        "gpt3_13b_opt": float(b13["optimal_depth"]),
        "gpt3_13b_depth": int(b13["depth"]),
        "gpt3_175b_depth": int(big["depth"]),
        "gpt3_175b_width": int(big["width"]),
        "gpt3_175b_budget_b": float(big["budget"]) / 1e9,
        "gpt3_175b_opt_depth": float(big["optimal_depth"]),
        "gpt3_175b_opt_width": float(big["optimal_width"]),
        "gpt3_175b_ratio": float(big["depth_ratio"]),
        "gpt3_175b_width_ratio": float(big["width_ratio"]),
        "gpt3_175b_sugg_depth": int(big["suggested_depth"]),
        "gpt3_175b_sugg_width": int(big["suggested_width"]),
        "gpt3_175b_sugg_heads": int(big["suggested_heads"]),
    }


def _trillion_numbers(fit: Fit) -> dict:
    t = trillion_projection(fit)
    emb = t["if_total_with_embedding"]
    return {
        "t_opt_depth": t["optimal_depth"],
        "t_opt_width_k": t["optimal_width"] / 1e3,
        "t_prac_depth": t["practical"]["depth"],
        "t_prac_width": t["practical"]["width"],
        "t_prac_heads": t["practical"]["heads"],
        "t_auth_depth": t["authors_depth"],
        "t_auth_width_k": t["authors_width"] / 1e3,
        "t_auth_budget_t": t["authors_budget"] / 1e12,
        "t_opt_depth_auth_budget": t["optimal_depth_for_authors_budget"],
        "t_depth_gap": t["optimal_depth"] - t["authors_depth"],
        "t_depth_gap_pct": 100 * (t["optimal_depth"] / t["authors_depth"] - 1),
        "t_auth_ratio": t["authors_depth_ratio"],
        "t_width_at_92_k": t["fit_width_at_authors_depth"] / 1e3,
        "t_budget_at_92_t": t["fit_budget_at_authors_depth"] / 1e12,
        "t_depth_at_30k": t["fit_depth_at_authors_width"],
        "t_emb_depth": emb["optimal_depth"],
        "t_emb_shift": t["optimal_depth"] - emb["optimal_depth"],
        "t_tol_layers": max(DEFAULT_REL_TOL * t["optimal_depth_for_authors_budget"], DEFAULT_ABS_TOL),
        "t_vocab": emb["vocab_size"],
        "t_auth_width": t["authors_width"],
    }


def _names(names) -> str:
    """'A', 'A and B', 'A, B and C'; 'none' for no name."""
    names = list(names)
    if not names:
        return "none"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _shown_numbers(real: pd.DataFrame, fit: Fit) -> dict:
    """Verdict counts over what the models chart shows: the published models with a
    verdict and the GPT-3 sizes."""
    shown = pd.concat([real, pd.DataFrame(gpt3_table(fit))])
    counts = shown["verdict"].value_counts()
    return {"shown_n": len(shown),
            "shown_n_shallow": int(counts.get("too shallow", 0)),
            "shown_n_near": int(counts.get("near optimal", 0)),
            "shown_n_deep": int(counts.get("too deep", 0))}


def _model_numbers(fit: Fit) -> dict:
    every = pd.DataFrame(load_models(fit))
    judged = _judged(every)
    real = every[judged]  # the counts leave out models whose verdict is not meaningful
    counts = real["verdict"].value_counts()
    named = real.set_index("name")
    small = real[real["budget"] < 1e10]
    ratio = {glue: float(named.loc[name, "depth_ratio"]) for glue, name in (
        ("jurassic_ratio", "Jurassic-1 Jumbo"), ("bloomberg_ratio", "BloombergGPT"),
        ("palm_ratio", "PaLM-540B"), ("llama7_ratio", "LLaMA-7B"), ("gopher_ratio", "Gopher-280B"))}
    return {
        "real_n": len(real),
        "real_unjudged": _names(every.loc[~judged, "name"]),
        "small_n": len(small),
        "small_n_shallow": int((small["verdict"] == "too shallow").sum()),
        "real_n_shallow": int(counts.get("too shallow", 0)),
        "real_n_near": int(counts.get("near optimal", 0)),
        "real_n_deep": int(counts.get("too deep", 0)),
        **_shown_numbers(real, fit),
        **ratio,
        "models_borderline": borderline_sentence(fit),
    }


#: how close to the edge of the "near optimal" band a verdict is called borderline: within this
#: fraction of the optimal depth (L / L* within 0.02 of the edge's ratio)
BORDERLINE = 0.02


def borderline_models(fit: Fit = AUTHORS_FIT, margin: float = BORDERLINE) -> list[dict]:
    """The models with a verdict whose depth ratio L / L* lies within ``margin`` of an edge of the
    near-optimal band (1 -+ max(rho L*, delta) / L*), with the verdict each gets under the slope
    the authors' own 1-trillion projection implies (:func:`slope_for_optimum`)."""
    every = pd.DataFrame(load_models(fit))
    real = every[_judged(every)]
    b92 = slope_for_optimum(1e12, AUTHORS_1T_DEPTH, fit.log_width_intercept)
    other = {m["name"]: m["verdict"] for m in load_models(Fit(fit.log_width_intercept, b92))}
    out = []
    for _, m in real.iterrows():
        half = max(DEFAULT_REL_TOL * m["optimal_depth"], DEFAULT_ABS_TOL) / m["optimal_depth"]
        edge = 1 - half if m["depth_ratio"] < 1 else 1 + half
        if abs(m["depth_ratio"] - edge) <= margin:
            out.append({"name": m["name"], "depth_ratio": float(m["depth_ratio"]), "edge": edge,
                        "verdict": m["verdict"], "verdict_b92": other[m["name"]], "b92": b92})
    return sorted(out, key=lambda m: m["depth_ratio"])


def borderline_sentence(fit: Fit = AUTHORS_FIT, margin: float = BORDERLINE) -> str:
    """One sentence naming the borderline verdicts (:func:`borderline_models`) and those that the
    slope of the authors' own projection would change."""
    rows = borderline_models(fit, margin)
    if not rows:
        return f"No verdict lies within {margin:.0%} of L* of an edge of the near-optimal band."
    by_verdict: dict[str, list[str]] = {}
    for m in rows:
        by_verdict.setdefault(m["verdict"], []).append(f"{m['name']} at {m['depth_ratio']:.3f}")
    named = "; ".join(f"{v}: {_names(ns)}" for v, ns in by_verdict.items())
    changed = [m for m in rows if m["verdict_b92"] != m["verdict"]]
    n = len(rows)
    head = (f"{'One verdict lies' if n == 1 else f'{pv.words(n).capitalize()} verdicts lie'} within "
            f"{margin:.0%} of L* of an edge of the near-optimal band, so {'it is' if n == 1 else 'they are'} "
            f"borderline (L / L* given): {named}")
    if not changed:
        return head + (f"; the slope b = {rows[0]['b92']:.4f} that the authors' own 1-trillion projection "
                       "would imply if its depth were exact changes none of them.")
    moved = _names(f"{m['name']} becomes {m['verdict_b92']}" for m in changed)
    return head + (f"; with the slope b = {rows[0]['b92']:.4f} that the authors' own 1-trillion projection "
                   f"would imply if its depth were exact rather than rounded, {moved}.")


def _own_numbers() -> dict:
    readings = own_readings()
    decided = {k: r for k, r in readings.items() if r["budgets"] is None or r["budgets"]}
    n_pairs = sum(len(r["pairs"]) for r in decided.values())
    n_cross = sum(len(pv.crossing(r)) for r in decided.values())
    two = [k for k, r in decided.items() if len(pv.crossing(r)) >= 2]
    return {
        "own_pairs_text": _pairs_text(len(decided), n_pairs, n_cross),
        "own_n_sweeps": len(decided),
        "own_slope_text": (("no sweep has even one" if not n_cross else "no sweep has two")
                           + ", so there is no measured slope" if not two
                           else f"{', '.join(two)} {'has' if len(two) == 1 else 'have'} two"),
        "own_scope": scope_sentence(),
    }


def _pairs_text(n_sweeps: int, n_pairs: int, n_cross: int) -> str:
    """'The four stored sweeps with a verdict hold nine doubling pairs, and none of them crosses'
    (counts up to ten in words)."""
    sweeps = "The one stored sweep with a verdict holds" if n_sweeps == 1 else \
        f"The {pv.words(n_sweeps)} stored sweeps with a verdict hold"
    pairs = "one doubling pair" if n_pairs == 1 else f"{pv.words(n_pairs)} doubling pairs"
    if n_cross == 0:
        cross = "it does not cross" if n_pairs == 1 else "none of them crosses"
    elif n_cross == n_pairs:
        cross = "it crosses" if n_pairs == 1 else f"all {pv.words(n_pairs)} cross"
    else:
        cross = f"{pv.words(n_cross)} of them {'crosses' if n_cross == 1 else 'cross'}"
    return f"{sweeps} {pairs}, and {cross}"


def scope_sentence(sweep: str | None = None) -> str:
    """Which budgets the doubling sweep's verdicts rest on, as a plain fact: those at which every
    seed of every depth is stored (empty when that is every budget the sweep has)."""
    sweep = sweep or pv.lead()
    planned = get_preset(sweep).budgets
    done = pv.read(sweep)["budgets"] or []
    name = pv.NAMES[sweep]
    if not done:
        return (f"{name[:1].upper() + name[1:]} has no budget at which every seed of every depth "
                "is stored, so it gives no verdict here.")
    if len(done) == len(planned):
        return ""
    sizes = pv._sizes(done)
    what = "one budget" if len(done) == 1 else f"{len(done)} of its {len(planned)} budgets"
    only = "the only one" if len(done) == 1 else "the only ones"
    return (f"For {name} that verdict rests on {what}, {sizes} non-embedding parameters, "
            f"{only} at which every seed of every depth is stored.")


def numbers(fit: Fit = AUTHORS_FIT) -> dict:
    """The numbers the chapter's prose quotes (glue name -> value)."""
    return {**_fit_numbers(fit), **_gpt3_numbers(fit), **_trillion_numbers(fit),
            **_model_numbers(fit), **_own_numbers()}


# ---------------------------------------------------------------------------------------------
# How precisely the fit is known, and the fit against the depth threshold L_th = log3 d_x

PRECISION_BUDGETS = (1e9, 175e9, 1e12)
THRESHOLD_DEPTHS = AUTHORS_EXPERIMENT_DEPTHS + (96,)


def precision_table(budgets=PRECISION_BUDGETS) -> pd.DataFrame:
    """The printed constants, and what they give, over the values their printing allows
    (:func:`dwlib.core.fit_uncertainty.rounding_box`)."""
    box = rounding_box(budgets)
    b = AUTHORS_FIT.depth_slope
    rows = [("intercept a", AUTHORS_FIT.log_width_intercept, box["intercept"]), ("slope b", b, box["slope"]),
            ("width factor per layer e\N{MODIFIER LETTER SMALL B}", math.exp(b), box["width_factor"]),
            ("ln 3 / b", math.log(3.0) / b, box["ln3_over_slope"])]
    rows += [(f"optimal depth L* at N = {fmt.count(n)}", L, r)
             for n, L, r in zip(box["budgets"], box["optimal_depth"], box["optimal_depth_range"])]
    return pd.DataFrame([{"quantity": q, "as printed": f"{v:.6g}", "lowest": f"{r[0]:.6g}", "highest": f"{r[1]:.6g}"}
                         for q, v, r in rows]).set_index("quantity")


def threshold_frame(depths=THRESHOLD_DEPTHS) -> pd.DataFrame:
    """The fit's optimal width at each depth beside its threshold log3 d_x(L)
    (:func:`dwlib.core.fit_uncertainty.threshold_against_fit`)."""
    t = threshold_against_fit(depths)
    return pd.DataFrame({"depth L": t["depth"].astype(int), "fit's width d_x(L)": np.round(t["width"]).astype(int),
                         "threshold log3 d_x(L)": np.round(t["log3_width"], 2), "L / log3 d_x(L)": np.round(t["ratio"], 2),
                         "regime": np.where(t["above_threshold"], "above (Theorem 2)", "below (Theorem 1)")}
                        ).set_index("depth L")


def _all_or_some(n: int, total: int) -> str:
    """'all 7', 'none of the 7', '6 of the 7': a count among a total, as English."""
    return f"all {total}" if n == total else f"none of the {total}" if n == 0 else f"{n} of the {total}"


def precision_numbers() -> dict:
    """The numbers of the sections on the fit's precision and on the threshold (glue name -> value)."""
    box = rounding_box(PRECISION_BUDGETS)
    a, b = AUTHORS_FIT.log_width_intercept, AUTHORS_FIT.depth_slope
    b92 = slope_for_optimum(1e12, AUTHORS_1T_DEPTH, a)
    half = 0.5 * (box["slope"][1] - box["slope"][0])
    t = threshold_against_fit(THRESHOLD_DEPTHS)
    ratio = {int(L): float(r) for L, r in zip(t["depth"], t["ratio"])}
    return {
        "fp_a_lo": box["intercept"][0], "fp_a_hi": box["intercept"][1],
        "fp_b_lo": box["slope"][0], "fp_b_hi": box["slope"][1],
        "fp_f_lo": box["width_factor"][0], "fp_f_hi": box["width_factor"][1],
        "fp_L175": box["optimal_depth"][1], "fp_L175_lo": box["optimal_depth_range"][1][0],
        "fp_L175_hi": box["optimal_depth_range"][1][1],
        "fp_1t_depth": AUTHORS_1T_DEPTH, "fp_b92": b92, "fp_f92": math.exp(b92), "fp_b92_halfunits": (b92 - b) / half,
        "fp_cross": t["crossing_depth"], "fp_cross_width": float(np.exp(a + b * t["crossing_depth"])),
        "fp_n_exp_above": int(sum(L > t["crossing_depth"] for L in AUTHORS_EXPERIMENT_DEPTHS)),
        "fp_n_exp": len(AUTHORS_EXPERIMENT_DEPTHS),
        "fp_exp_above": _all_or_some(int(sum(L > t["crossing_depth"] for L in AUTHORS_EXPERIMENT_DEPTHS)),
                                     len(AUTHORS_EXPERIMENT_DEPTHS)),
        "fp_ratio6": ratio[6], "fp_ratio48": ratio[48], "fp_ratio96": ratio[96],
        "fp_limit": t["limit_ratio"], "fp_limit_lo": box["ln3_over_slope"][0], "fp_limit_hi": box["ln3_over_slope"][1],
        "fp_limit92": math.log(3.0) / b92, "fp_factor": t["fit_width_factor"],
    }
