"""The numbers and tables of the chapter "The analysed model" (book/analysed_model.ipynb)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from dwlib import fmt
from dwlib.core import analysed
from dwlib.store import packaged_json

#: a cell of the counting table whose terms are too many to write out (the prose says so)
NOT_LISTED = "\N{EM DASH}"
#: figures quoted from other papers, each with its source's BibTeX key (dwlib/data)
QUOTED_FILE = "quoted_figures.json"


def quoted_figures() -> dict:
    """The figures the chapter quotes from other papers, by name: each with ``value``, its
    ``source`` (a BibTeX key of book/references.bib) and where the book read it."""
    return packaged_json(QUOTED_FILE)["figures"]


def cited_numbers(figures: dict | None = None) -> dict:
    """Glue values of the relaxations' evidence: the WikiText-103 test perplexities that
    section 2.3 of the paper quotes (:func:`quoted_figures`)."""
    f = quoted_figures() if figures is None else figures
    return {"ppl_sa_first": f["press2019_self_attention_first"]["value"],
            "ppl_interleaved": f["press2019_interleaved"]["value"],
            "ppl_interleaved_pm": f["press2019_interleaved"]["plus_minus"],
            "ppl_lstm": f["rae2018_lstm"]["value"]}


def n_params(params) -> int:
    """Number of weights in a params pytree (a list of dicts of arrays)."""
    return sum(int(np.prod(a.shape)) for layer in params for a in layer.values())


def shapes_table(theta, transformer, x, y, z) -> pd.DataFrame:
    """Input and output shapes and parameter counts of the two networks (per layer in d_x^2)."""
    depth, width, _ = analysed.shape_of(theta)
    return pd.DataFrame({
        "network": ["analysed, eq. (3)", "Transformer, eqs. (1)\u2013(2)"],
        "input shape (positions, width)": [str(x.shape)] * 2,
        "output shape": [str(y.shape), str(z.shape)],
        "parameters": [n_params(theta), n_params(transformer)],
        "per layer, in units of width²": [n_params(theta) / (depth * width**2), n_params(transformer) / (depth * width**2)],
    }).set_index("network")


def homogeneity(theta, transformer, x, t: int = 2, seed: int = 0):
    """(table, glue values) of the homogeneity checks y(t x) = t^(3^L) y(x): exactly, in 64-bit
    integers (depth 2, width 4, 2 heads, integer weights in [-2, 2]), with and without residual;
    and in floating point for ``theta`` and the Transformer layers ``transformer``."""
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        theta_int = [{k: jnp.asarray(rng.integers(-2, 3, size=v.shape), jnp.int64) for k, v in layer.items()}
                     for layer in analysed.constant_params(2, 4, 2)]
        x_int = jnp.asarray(rng.integers(-2, 3, size=(5, 4)), jnp.int64)
        checks = {}
        for residual in (False, True):
            lhs = analysed.forward(theta_int, t * x_int, residual=residual)
            rhs = t ** analysed.degree(2) * analysed.forward(theta_int, x_int, residual=residual)
            checks[residual] = bool(jnp.all(lhs == rhs))
        nonzero = int(jnp.sum(analysed.forward(theta_int, x_int) != 0))
    depth = len(transformer)
    float_res = analysed.homogeneity_residual(theta, x, t=float(t))
    z, z_tx = analysed.transformer_forward(transformer, x), analysed.transformer_forward(transformer, t * x)
    scaled = t ** analysed.degree(depth) * z
    tf_res = float(jnp.max(jnp.abs(z_tx - scaled)) / jnp.max(jnp.abs(scaled)))
    table = pd.DataFrame({
        "check": ["y(2x) = 2\u2079 y(x), integers, depth 2 (all entries)",
                  "same, with residual connections",
                  "float32, depth 3: relative deviation from 2\u00b2\u2077 y(x) below 10\u207b\u2075",
                  "Transformer, depth 3: relative deviation from 2\u00b2\u2077 z(x) below 10\u207b\u2075"],
        "holds": [checks[False], checks[True], float_res < 1e-5, tf_res < 1e-5],
    }).set_index("check")
    numbers = {"hom_exact": "holds" if checks[False] else "fails", "hom_nonzero": nonzero,
               "hom_res_exact": "holds" if checks[True] else "fails", "hom_tf_dev": tf_res}
    return table, numbers


def counting(depths=(1, 2, 3, 4), positions=(2, 3)):
    """(table, glue values): the number of terms of y^{L,i} counted by the network itself
    (:func:`dwlib.core.analysed.count_terms`), C read back from it, (3^L - 1)/2, and for small
    cases the symbolic expansion (:func:`dwlib.core.analysed.expansion_terms`)."""
    rows = []
    for depth in depths:
        for n in positions:
            if analysed.summed_indices(depth) * np.log2(n) >= 63:
                continue
            count = analysed.count_terms(depth, n)
            row = {"depth L": depth, "positions N": n, "network output = number of terms": count,
                   "C read back: log of the output, base N": round(float(np.log(count) / np.log(n)), 9),
                   "(3ᴸ − 1)/2": (3**depth - 1) // 2}
            if n ** ((3**depth - 1) // 2) <= 2**16:
                terms = analysed.expansion_terms(depth, n)
                row["terms written out"] = len(terms)
                row["factors per term"] = len(terms[0])
            rows.append(row)
    counts = pd.DataFrame(rows).set_index(["depth L", "positions N"])
    same = (counts["C read back: log of the output, base N"] == counts["(3ᴸ − 1)/2"]).all()
    numbers = {"count_ok": "equals" if same else "does not equal",
               "count_big": int(counts.loc[(4, 2), "network output = number of terms"]),
               "count_c4": analysed.summed_indices(4)}
    # the same count rounded, for the prose (the table gives it in full)
    numbers["count_big_sci"] = fmt.sci(float(np.log10(numbers["count_big"])),
                                       superscript=True)
    # as a reader sees it: counts with separators, and a dash where the terms are too many to list
    shown = counts.copy()
    shown["network output = number of terms"] = shown["network output = number of terms"].map(fmt.integer)
    for name in ("terms written out", "factors per term"):
        shown[name] = [NOT_LISTED if pd.isna(v) else fmt.integer(v) for v in shown[name]]
    return shown, numbers


PRIME = 2_147_483_647  # 2^31 - 1, the largest modulus dwlib.core.analysed accepts


def _degree_in_t(values: list[int], modulus: int) -> int:
    """Degree of the polynomial f with f(t) = values[t] (t = 0, 1, ...) over GF(p), by finite
    differences: the highest order k whose k-th difference is not zero (-1 for f = 0). Needs
    more values than the degree and p above the degree (then k! is invertible)."""
    diffs, degree = [v % modulus for v in values], -1
    for k in range(len(values)):
        if any(diffs):
            degree = k
        diffs = [(b - a) % modulus for a, b in zip(diffs, diffs[1:])]
    return degree


def degrees(depths=(1, 2, 3), n_positions: int = 3, width: int = 4, heads: int = 2, seed: int = 0):
    """(table, glue values): the degree of one output entry y_1^{i} (i = 1) of the analysed
    network as a polynomial in t when t scales all inputs, only x^i, or only the input x^k at
    one other position k, measured over GF(2^31 - 1) by finite differences of the network's
    outputs at t = 0, 1, ..., 3^L + 1 (random integer weights and inputs; exact mod p).

    Each term g^L of eq. (4) multiplies 3^L input entries: one from x^i and two from each of
    the C summed vectors, so the total degree is 1 + 2C = 3^L, the degree in x^i alone is 3^L
    (the term with every summed index at i) and in any other x^k alone 2C = 3^L - 1 (every
    summed index at k). The table checks all three on the network itself."""
    rng = np.random.default_rng(seed)
    rows = []
    with jax.enable_x64(True):
        for depth in depths:
            theta = [{k: jnp.asarray(rng.integers(0, PRIME, size=v.shape), jnp.int64) for k, v in layer.items()}
                     for layer in analysed.constant_params(depth, width, heads)]
            x = rng.integers(0, PRIME, size=(n_positions, width), dtype=np.int64)
            ts = np.arange(3 ** depth + 2)
            row = {"depth L": depth, "3ᴸ": 3 ** depth, "2C = 3ᴸ − 1": 3 ** depth - 1}
            for name, scaled in (("degree in all inputs", slice(None)), ("degree in its own position's input alone", [0]),
                                 ("degree in another position's input alone", [1])):
                batch = np.repeat(x[None], len(ts), axis=0)  # int64: t x < 2^31 * 30, no overflow
                batch[:, scaled, :] = batch[:, scaled, :] * ts[:, None, None] % PRIME
                y = analysed.forward(theta, jnp.asarray(batch), modulus=PRIME)
                row[name] = _degree_in_t([int(v) for v in y[:, 0, 0]], PRIME)
            rows.append(row)
    table = pd.DataFrame(rows).set_index("depth L")
    agree = ((table["degree in all inputs"] == table["3ᴸ"]).all() and (table["degree in its own position's input alone"] == table["3ᴸ"]).all()
             and (table["degree in another position's input alone"] == table["2C = 3ᴸ − 1"]).all())
    return table, {"deg_agree": "agree" if agree else "do not all agree"}
