"""The catalogue of real models against the fit: the GPT-3 family, the authors' 1-trillion
projection, and the published shapes of later models, all read from ``dwlib/data/models.json``.

The authors' summary ("Bottom lines" of Levine et al. 2020) makes three claims about real
models: the GPT-3 models up to ~10B parameters were too shallow for their size, GPT-3 175B was
too deep, and a 1-trillion parameter network should have depth ~92 and width ~30K.
:func:`gpt3_table` and :func:`trillion_projection` check the first two and the third against
the fit of :mod:`dwlib.core.fit`; :func:`load_models` gives the verdicts on later models.
"""

from __future__ import annotations

from dwlib import store
from dwlib.core.fit import (AUTHORS_FIT, DEFAULT_ABS_TOL, DEFAULT_HEAD_SIZE, DEFAULT_REL_TOL, Fit,
                            budget_for_depth, depth_for_width, optimal_depth, optimal_width,
                            positive_number, practical_shape, verdict)

#: the published shapes this module reads, stored once: the GPT-3 family (Brown et al. 2020,
#: Table 2.1; "gpt3"), the authors' 1T shape ("authors_1t") and later models ("models")
_CATALOGUE = store.packaged_json("models.json")

#: the authors' stated projection for 1 trillion parameters (their summary, "Bottom lines";
#: ``models.json``, "authors_1t").
AUTHORS_1T_DEPTH = _CATALOGUE["authors_1t"]["depth"]
AUTHORS_1T_WIDTH = _CATALOGUE["authors_1t"]["width"]

#: the fields :func:`load_models` adds to each published shape, from :func:`verdict`.
_VERDICT_FIELDS = ("budget", "optimal_depth", "optimal_width", "depth_ratio", "width_ratio", "verdict")


def gpt3_table(fit: Fit = AUTHORS_FIT, head_size: int = DEFAULT_HEAD_SIZE,
               rel_tol: float = DEFAULT_REL_TOL, abs_tol: float = DEFAULT_ABS_TOL) -> list[dict]:
    """The GPT-3 family (Brown et al. 2020, Table 2.1) against the fit, as a list of dicts.

    Per model: name, nominal params, depth, width, heads, budget 12 L d^2, the fit's continuous
    optimal depth and width for that budget, the practical suggestion (integer depth, width a
    multiple of ``head_size``), the verdict with depth and width ratios.
    """
    rows = []
    for m in _CATALOGUE["gpt3"]["models"]:
        name, params, L, d, H = m["name"], m["params"], m["depth"], m["width"], m["heads"]
        v = verdict(L, d, fit=fit, rel_tol=rel_tol, abs_tol=abs_tol)
        p = practical_shape(v["budget"], head_size=head_size, fit=fit)
        rows.append({
            "name": name, "params": params, "depth": L, "width": d, "heads": H,
            "budget": v["budget"],
            "optimal_depth": v["optimal_depth"], "optimal_width": v["optimal_width"],
            "suggested_depth": p["depth"], "suggested_width": p["width"],
            "suggested_heads": p["heads"],
            "depth_ratio": v["depth_ratio"], "width_ratio": v["width_ratio"],
            "verdict": v["verdict"], "source": _CATALOGUE["gpt3"]["source"],
        })
    return rows


def trillion_projection(fit: Fit = AUTHORS_FIT, budget: float = 1e12,
                        vocab_size: int = 50257) -> dict:
    """The fit's optimal shape at 1e12 parameters, compared with the authors' (92, 30K).

    Reported: the fit's continuous optimum (L*, d_x*) for N = 1e12 non-embedding parameters;
    the non-embedding budget 12 * 92 * 30000^2 of the authors' shape and the fit's optimum
    for that budget; the fit's width at depth 92 and its depth for width 30000; the verdict
    on (92, 30000); and the optimum if 1e12 were the total count including a GPT-style
    ``vocab_size`` x d embedding (to see whether total vs non-embedding explains anything).
    The constants are not tuned.

    What it shows (authors' fit): for N = 1e12 the optimum is L* = 94.7, d_x* = 29.66K
    (practical: 95 layers, width 29568 = 231 heads of 128).  So the width matches the stated
    "30K"; the depth is 2.7 layers (2.8%) above the stated 92.  (92, 30000) has
    12 * 92 * 30000^2 = 0.994e12 non-embedding parameters, so the stated shape is a 1T shape
    in the 12 L d^2 count; the fit's optimum for exactly that budget is L* = 94.7, so the
    verdict on (92, 30K) is "near optimal" (depth ratio 0.97).  Total vs non-embedding does
    not explain the gap: a 50257 x 30K embedding is 0.15% of 1T and moves L* by 0.01 layer.
    Nor does rounding of the stated constants: L* = 92 at 1e12 would need a slope of 0.0573
    instead of 0.0555 (or an intercept of 5.206 instead of 5.039).  Read the other way, the fit
    makes 92 layers optimal at 0.72e12, where its width is 25.5K, and makes width 30000
    optimal at depth 95.0.  Our reading: the authors' projection was read off their own curve
    (of which exp(5.039) exp(0.0555 L) is the restatement used later by others) with rounding
    to round numbers; the 3% depth difference is well inside the resolution of the
    experiments behind the fit (see :func:`dwlib.core.fit.verdict`).  We do not adjust the
    constants to match.
    """
    N = positive_number(budget, "budget")
    L_star = float(optimal_depth(N, fit))
    d_star = float(optimal_width(L_star, fit))
    La, da = AUTHORS_1T_DEPTH, AUTHORS_1T_WIDTH
    v = verdict(La, da, fit=fit)
    # total = 12 L d^2 + V d, with d = d_x(L): solve for the non-embedding part by fixed point.
    n_ne = N
    for _ in range(50):
        d_tot = float(optimal_width(float(optimal_depth(n_ne, fit)), fit))
        n_ne = N - vocab_size * d_tot
    L_tot = float(optimal_depth(n_ne, fit))
    return {
        "budget": N,
        "optimal_depth": L_star, "optimal_width": d_star,
        "practical": practical_shape(N, fit=fit),
        "authors_depth": La, "authors_width": da,
        "authors_budget": v["budget"],
        "optimal_depth_for_authors_budget": v["optimal_depth"],
        "optimal_width_for_authors_budget": v["optimal_width"],
        "fit_width_at_authors_depth": float(optimal_width(La, fit)),
        "fit_budget_at_authors_depth": float(budget_for_depth(La, fit)),
        "fit_depth_at_authors_width": float(depth_for_width(da, fit)),
        "authors_verdict": v["verdict"], "authors_depth_ratio": v["depth_ratio"],
        "if_total_with_embedding": {"vocab_size": vocab_size, "non_embedding_budget": n_ne,
                                    "optimal_depth": L_tot,
                                    "optimal_width": float(optimal_width(L_tot, fit))},
    }


def load_models(fit: Fit = AUTHORS_FIT, rel_tol: float = DEFAULT_REL_TOL,
                abs_tol: float = DEFAULT_ABS_TOL) -> list[dict]:
    """Published shapes of real models (``dwlib/data/models.json``), each with its budget
    12 L d^2 and verdict.

    Entries: name, family, depth, width, heads, source (a BibTeX key of book/references.bib),
    optional note (where 12 L d^2 only approximates the model's non-embedding count).  Added:
    budget, optimal_depth, optimal_width, depth_ratio, width_ratio, verdict.
    """
    out = []
    for m in _CATALOGUE["models"]:
        v = verdict(m["depth"], m["width"], fit=fit, rel_tol=rel_tol, abs_tol=abs_tol)
        out.append({**m, **{key: v[key] for key in _VERDICT_FIELDS}})
    return out
