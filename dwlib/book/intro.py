"""The introduction's numbers: where published models sit relative to the depth threshold."""

from __future__ import annotations

import math

import pandas as pd

from dwlib import fmt
from dwlib.book import figure2  # the experiments chapter's verdict, which the introduction states
from dwlib.book.references import sources
from dwlib.core.bounds import corollary2, corollary2_smallest_constant, depth_threshold, regime
from dwlib.experiments import pairs
from dwlib.experiments.catalogue import load_models
from dwlib.experiments.presets import get_preset

_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def number_words(n: int) -> str:
    """A count as a reader reads it: in words up to ten ('six'), in figures above ('15')."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else f"{n:,}"


def how_many(k: int, n: int, noun: str, singular: str = "", plural: str = "", these: bool = True) -> str:
    """``k`` of ``n`` things in English, with the verb agreeing: 'none of these six models has',
    'one of these six models has', 'two of these six models have', 'all six models have' (or
    'both models have'). ``noun`` is plural; ``singular``/``plural`` are the verb phrase's two
    forms (optional); ``these=False`` says 'the' instead of 'these'."""
    if not (0 <= k <= n and n > 0):
        raise ValueError(f"how_many needs 0 <= k <= n and n > 0, got k = {k}, n = {n}")
    the = "these" if these else "the"
    verb = singular if k in (0, 1) else plural
    if k == n:
        verb = plural if n > 1 else singular
        head = "both" if n == 2 else (f"all {number_words(n)}" if n > 1 else "the one")
        phrase = f"{head} {noun}" if n > 1 else f"{head} {noun.rstrip('s')}"
    elif k == 0:
        phrase = f"none of {the} {number_words(n)} {noun}"
    else:
        phrase = f"{number_words(k)} of {the} {number_words(n)} {noun}"
    return f"{phrase} {verb}".strip()


SHOWN = ("BERT-base", "BERT-large", "GPT-2 XL (1.5B)", "LLaMA-65B", "OPT-175B", "PaLM-540B")


def models_table(names=SHOWN) -> pd.DataFrame:
    """The models ``names`` from dwlib's table of shapes: name, depth, width, source (author and
    year), their threshold log3(d_x) (2 decimals, as shown) and the regime of their depth."""
    models = pd.DataFrame([m for m in load_models() if m["name"] in names])[["name", "depth", "width", "source"]]
    models["source"] = sources(models["source"])
    models["threshold log3(d_x)"] = depth_threshold(models["width"].to_numpy()).round(2)
    models["regime of its depth"] = regime(models["depth"].to_numpy(), models["width"].to_numpy())
    return models


#: BERT-large's attention heads (Devlin et al. 2019), the third number of its shape
BERT_LARGE_HEADS = 16


def _corollary2_numbers(width: int, depth: int, heads: int) -> dict:
    """Corollary 2's shallower network for a deep shape, at the smallest constant for which the
    bounds show it out-ranking the deep one (the corollaries chapter works it out): how many
    times wider it is."""
    c_min = corollary2_smallest_constant(width, heads, depth)
    edge = corollary2(width, heads, depth, constant=c_min)
    return {"c2_ratio_bert": 10 ** edge["log10_shallow_width"] / width, "intro_c2_c": c_min}


def fit_sentence(r: dict | None = None) -> str:
    """Where the authors' fit places the first transition of the declared pairs, and what the
    sizes read leave of that range, in one short sentence (the experiments chapter gives the
    rest): 'Read as placing a pair's transition between the sizes at which its two depths are
    optimal, the authors' fit puts the 2 vs 4 transition between 714K and 1.78M; the deeper
    network is still worse at 1.6M, so a transition could lie only above it.' By the rule a
    transition needs the deeper network ahead at every larger size read, so none lies at or below
    a size where it is resolved worse."""
    r = r or figure2.reading()
    (lo, hi), (s, d) = min((figure2.authors_range(*p), tuple(p)) for p in r["rule"]["pairs"])
    text = (f"Read as placing a pair's transition between the sizes at which its two depths are optimal, the "
            f"authors' fit puts the {s} vs {d} transition between {fmt.count(lo)} and {fmt.count(hi)}")
    top = max(r["budgets"]) if r["budgets"] else 0.0
    if not top:
        return text + "."
    if top < lo:
        return text + ", above the sizes read, so they test the paper's first regime, not its transition."
    points = next((p["points"] for p in r["pairs"] if (p["shallow"], p["deep"]) == (s, d)), [])
    worse = [x["target_budget"] for x in points if x["verdict"] == pairs.WORSE]
    if worse and max(worse) >= lo and not any(x["verdict"] == pairs.BETTER for x in points):
        return text + (f"; the deeper network is still worse at {fmt.count(max(worse))}, so a transition could lie only "
                       "above it.")
    return text + "."


def numbers() -> dict:
    """The numbers the introduction's prose quotes (glue name -> value)."""
    models = models_table()
    by_name = models.set_index("name")
    bert, big = by_name.loc["BERT-large"], by_name.loc["PaLM-540B"]
    return {
        "intro_experiments_short": figure2.intro_short(),  # the opening's one sentence on it
        "intro_fit": fit_sentence(),  # where the authors' fit puts the first transition, in short
        "intro_experiments": figure2.intro_sentence(head=False),  # the sweep's counts, below the opening
        "lth_bert_large": float(bert["threshold log3(d_x)"]),
        "width_bert_large": int(bert["width"]),
        "depth_bert_large": int(bert["depth"]),
        "lth_big": float(big["threshold log3(d_x)"]),
        "width_big": int(big["width"]),
        "depth_big": int(big["depth"]),
        "n_depth_efficient": int((models["regime of its depth"] == "depth-efficient").sum()),
        "n_models": len(models),
        "depth_efficient_models": how_many(int((models["regime of its depth"] == "depth-efficient").sum()),
                                           len(models), "models", "has its", "have their"),
        "layers_below_bert_large": math.floor(bert["threshold log3(d_x)"]),
        "lth_million": float(depth_threshold(1e6)),
        **_corollary2_numbers(int(bert["width"]), int(bert["depth"]), BERT_LARGE_HEADS),
        # the depths of the authors' experiments (their summary), as the `paper` preset holds them
        "paper_depths": f"{min(get_preset('paper').depths)} to {max(get_preset('paper').depths)}",
    }
