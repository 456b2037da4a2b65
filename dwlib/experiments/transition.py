"""The transition budget between depth regimes, measured from sweep results (paper section 5).

Figure 2 of the paper compares a shallow and a deep network at equal non-embedding size
N = 12 L d_x^2: at small N they tie (or the deep one loses), past a transition size the deep
one wins, and the authors' summary states that this transition size grows exponentially with
depth. This module turns the records of :mod:`dwlib.experiments.sweep` into that transition, with a
stated rule and its uncertainty, and fits its growth with depth.

The rule (:func:`transition`). For each depth, the final held-out loss averaged over seeds is
interpolated linearly in log N between the measured budgets (no extrapolation). On the budget
range both depths cover, the gap g(N) = loss_deep(N) - loss_shallow(N) is evaluated on a fine
log grid; the transition is the smallest N at which g turns from positive (shallow better)
to non-positive (deep better), located by linear interpolation. Without such a step the
result says which side held throughout ("shallow wins" or "deep wins"), or "reversed" when the
deep network leads only at the small budgets, and gives no budget.

Uncertainty. Seeds are resampled with replacement at every measured point (a bootstrap, 1000
draws by default) and the rule is applied to each draw: the result reports the share of draws
with a crossing and the 16th, 50th and 84th percentiles of the crossing budget among them.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from dwlib.experiments.transition_fit import fit_from_transitions
from dwlib.errors import require

GRID_POINTS = 400  # log-spaced budgets on which the gap is evaluated


def finished(r: dict) -> bool:
    """A run that completed with a finite final eval loss."""
    return r["status"] == "completed" and r["eval_loss"] is not None and math.isfinite(r["eval_loss"])


def reported(records: list[dict]) -> list[dict]:
    """The runs a comparison reads: in a sweep that chooses a rate per shape (records marked by
    :func:`dwlib.experiments.selection.mark`), the runs at their shape's chosen rate only; else
    all of them."""
    if any("chosen" in r for r in records):
        return [r for r in records if r.get("chosen")]
    return records


def loss_table(records: list[dict]) -> list[dict]:
    """One row per (depth, width): budget, per-seed final eval losses, their mean and std.

    Only completed runs count; a diverged run is listed in ``diverged`` and left out of the mean.
    Of a sweep that chooses rates, only the runs at the chosen rates count (:func:`reported`).
    """
    groups, diverged = defaultdict(list), defaultdict(int)
    budgets = {}
    for r in reported(records):
        key = (r["depth"], r["width"])
        budgets[key] = r["budget"]
        if finished(r):
            groups[key].append((r["seed"], r["eval_loss"]))
        else:
            diverged[key] += 1
    rows = []
    for key in sorted(budgets):
        losses = [loss for _, loss in sorted(groups[key])]
        rows.append({"depth": key[0], "width": key[1], "budget": budgets[key], "losses": losses,
                     "seeds": len(losses), "diverged": diverged[key],
                     "mean": float(np.mean(losses)) if losses else float("nan"),
                     "std": float(np.std(losses, ddof=1)) if len(losses) > 1 else float("nan")})
    return rows


def _curve(rows: list[dict], depth: int):
    pts = sorted((r["budget"], r["losses"]) for r in rows if r["depth"] == depth and r["losses"])
    return np.log([b for b, _ in pts]), [np.asarray(losses) for _, losses in pts]


def _crossing(log_n, gap):
    """(status, log budget or None) for a gap sampled on an increasing log-budget grid.

    'crossing': the first step from g > 0 to g <= 0; 'shallow wins' / 'deep wins': one side
    throughout; 'reversed': the deep network leads at small budgets and loses at large ones
    (the opposite order to the paper's), with no crossing in the paper's direction.
    """
    positive = gap > 0
    down = np.flatnonzero(positive[:-1] & ~positive[1:])
    if down.size:
        i = int(down[0])
        x0, x1, g0, g1 = log_n[i], log_n[i + 1], gap[i], gap[i + 1]
        return "crossing", float(x0 + (x1 - x0) * g0 / (g0 - g1))
    if positive.all():
        return "shallow wins", None
    if not positive.any():
        return "deep wins", None
    return "reversed", None


def size_limited(records: list[dict], tolerance: float = 2.0) -> list[dict]:
    """The records of each depth up to the budget after which its loss stops falling with size.

    For each depth, the seed-mean loss is followed up the measured budgets. The first budget at
    which it rises by more than ``tolerance`` standard errors of a difference of two seed means
    (from the seed spread; the median spread over all points where a point has one seed), or at
    which no run finished, ends that depth: it and the larger budgets are left out. A rise with
    size means something other than size holds that network back (training length, learning
    rate, divergence); the rule detects the rise, not its cause. What remains is the range over
    which the comparison of :func:`transition` is a comparison of sizes.
    """
    rows = loss_table(records)
    spreads = [r["std"] for r in rows if r["seeds"] > 1]
    pooled = float(np.median(spreads)) if spreads else 0.0
    keep = set()
    for depth in sorted({r["depth"] for r in rows}):
        curve = sorted((r for r in rows if r["depth"] == depth), key=lambda r: r["budget"])
        for i, r in enumerate(curve):
            if not r["seeds"]:
                break
            if i:
                prev = curve[i - 1]
                se = math.sqrt(sum((p["std"] if p["seeds"] > 1 else pooled) ** 2 / p["seeds"] for p in (prev, r)))
                if r["mean"] - prev["mean"] > tolerance * se:
                    break
            keep.add((depth, r["width"]))
    return [r for r in records if (r["depth"], r["width"]) in keep]


def paired_gaps(records: list[dict], shallow: int, deep: int) -> list[dict]:
    """Deep minus shallow loss at each target budget both depths reach, seed by seed.

    Runs of one seed draw the same training windows whatever their shape, so two depths can be
    compared within a seed. Returns, per target budget, ``gaps`` (seed: gap) for the seeds both
    depths have, their ``mean``, and ``budgets`` {depth: actual budget 12 L d_x^2}: the widths
    are rounded, so the two networks of a target can differ in size (the rule of
    :func:`transition` interpolates in the actual budget instead).
    """
    records = reported(records)
    loss = {(r["depth"], r["target_budget"], r["seed"]): r["eval_loss"] for r in records if finished(r)}
    actual = {(r["depth"], r["target_budget"]): r["budget"] for r in records}
    rows = []
    for n in sorted({b for L, b, _ in loss if L == shallow} & {b for L, b, _ in loss if L == deep}):
        gaps = {s: loss[(deep, n, s)] - loss[(shallow, n, s)]
                for L, b, s in sorted(loss) if L == shallow and b == n and (deep, n, s) in loss}
        if gaps:
            rows.append({"shallow": shallow, "deep": deep, "target_budget": n, "gaps": gaps,
                         "mean": float(np.mean(list(gaps.values()))),
                         "budgets": {shallow: actual[(shallow, n)], deep: actual[(deep, n)]}})
    return rows


def late_improvement(record: dict, fraction: float = 0.2) -> float:
    """How much a run's held-out loss fell over the last ``fraction`` of its training steps
    (from the first evaluation at or after that point to the last): a run still improving fast
    when it stops is limited by its training length."""
    curve = record["eval_curve"]
    start = (1 - fraction) * curve[-1][0]
    return float(next(loss for step, loss in curve if step >= start) - curve[-1][1])


def _means(losses):
    """Seed-mean loss at each measured budget."""
    return np.array([x.mean() for x in losses])


def _resampled_means(losses, rng):
    """One bootstrap draw of :func:`_means`: each budget's seeds resampled with replacement."""
    return np.array([rng.choice(x, size=x.size).mean() for x in losses])


def _gap_on_grid(xs_s, ys_s, xs_d, ys_d):
    lo, hi = max(xs_s[0], xs_d[0]), min(xs_s[-1], xs_d[-1])
    if not hi > lo:
        return None, None
    grid = np.linspace(lo, hi, GRID_POINTS)
    return grid, np.interp(grid, xs_d, ys_d) - np.interp(grid, xs_s, ys_s)


def _pair_curves(records, shallow, deep):
    """(log budgets, per-seed losses) of the shallow and the deep depth, checked for use."""
    require(shallow < deep, f"shallow depth must be below deep depth, got {shallow} and {deep}")
    rows = loss_table(records)
    xs_s, ls_s = _curve(rows, shallow)
    xs_d, ls_d = _curve(rows, deep)
    require(len(xs_s) >= 2 and len(xs_d) >= 2,
            f"depths {shallow} and {deep} need at least two measured budgets each")
    return xs_s, ls_s, xs_d, ls_d


def transition(records: list[dict], shallow: int, deep: int, n_boot: int = 1000, seed: int = 0) -> dict:
    """The transition budget of the pair (shallow, deep) under the module's rule.

    Returns ``status`` ('crossing', 'shallow wins', 'deep wins', 'reversed' on the seed means), ``budget``
    (the crossing on the seed means, or None), ``range`` (the overlapping budgets),
    ``p_crossing`` (share of bootstrap draws with a crossing) and ``budget_p16``,
    ``budget_p50``, ``budget_p84`` over those draws (None when no draw crosses).
    """
    xs_s, ls_s, xs_d, ls_d = _pair_curves(records, shallow, deep)
    grid, gap = _gap_on_grid(xs_s, _means(ls_s), xs_d, _means(ls_d))
    require(grid is not None, f"depths {shallow} and {deep} cover no common budget range")
    status, log_b = _crossing(grid, gap)
    draws = _crossing_draws(grid, xs_s, ls_s, xs_d, ls_d, n_boot, seed)
    q = np.exp(np.percentile(draws, [16, 50, 84])) if draws else [None] * 3
    return {"shallow": shallow, "deep": deep, "status": status,
            "budget": math.exp(log_b) if log_b is not None else None,
            "range": [float(math.exp(grid[0])), float(math.exp(grid[-1]))],
            "gap_at_low": float(gap[0]), "gap_at_high": float(gap[-1]),
            "p_crossing": len(draws) / n_boot if n_boot else float("nan"),
            "budget_p16": None if q[0] is None else float(q[0]),
            "budget_p50": None if q[1] is None else float(q[1]),
            "budget_p84": None if q[2] is None else float(q[2])}


def _crossing_draws(grid, xs_s, ls_s, xs_d, ls_d, n_boot: int, seed: int) -> list[float]:
    """The log crossing budgets of the bootstrap draws that cross (seeds resampled at every point)."""
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        _, g = _gap_on_grid(xs_s, _resampled_means(ls_s, rng), xs_d, _resampled_means(ls_d, rng))
        st, lb = _crossing(grid, g)
        if st == "crossing":
            draws.append(lb)
    return draws


def transition_interval(records: list[dict], shallow: int, deep: int, level: float = 0.9,
                        n_boot: int = 2000, seed: int = 0) -> dict:
    """A bootstrap interval over seeds for the transition budget of (shallow, deep).

    The seeds of every measured point are resampled with replacement (``n_boot`` draws from a
    generator seeded by ``seed``: the same input gives the same interval), the rule of
    :func:`transition` is applied to each draw, and ``low`` / ``high`` are the (1 - level) / 2
    and (1 + level) / 2 quantiles of the crossing budgets of the draws that cross. Returns also
    ``budget`` (on the seed means, None without a crossing), ``p_crossing`` (the share of draws
    that cross: an interval from few crossing draws says little) and ``min_seeds`` (the fewest
    seeds at a point: a point of one seed adds no spread, so its interval is too narrow).
    """
    require(0 < level < 1, f"level must be between 0 and 1, got {level!r}")
    require(isinstance(n_boot, int) and n_boot >= 1, f"n_boot must be a positive integer, got {n_boot!r}")
    xs_s, ls_s, xs_d, ls_d = _pair_curves(records, shallow, deep)
    grid, gap = _gap_on_grid(xs_s, _means(ls_s), xs_d, _means(ls_d))
    require(grid is not None, f"depths {shallow} and {deep} cover no common budget range")
    status, log_b = _crossing(grid, gap)
    draws = _crossing_draws(grid, xs_s, ls_s, xs_d, ls_d, n_boot, seed)
    low, high = (np.exp(np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])) if draws else (None, None))
    return {"shallow": shallow, "deep": deep, "status": status, "level": level,
            "budget": math.exp(log_b) if log_b is not None else None,
            "low": None if low is None else float(low), "high": None if high is None else float(high),
            "p_crossing": len(draws) / n_boot, "min_seeds": int(min(x.size for x in ls_s + ls_d))}


def gap_trend(records: list[dict], shallow: int, deep: int, n_boot: int = 1000, seed: int = 0) -> dict:
    """Noise against effect for one pair, and where its gap would close if its trend held.

    On the budgets both depths cover, the seed-mean gap g(N) = loss_deep - loss_shallow is
    fitted by least squares as a line in log2 N (on the rule's grid), giving ``slope``, the
    change of the gap per doubling of N (negative: the gap closes as N grows), with its 16th-84th
    percentile over the same seed bootstrap as :func:`transition`.

    Noise: ``seed_std``, the median over the pair's measured points of the std across seeds,
    and ``gap_in_se``, the mean gap divided by the standard error of a difference of two seed
    means at that std (how many standard errors separate the two depths).

    ``closing_budget``: when the slope is negative and the gap still positive at the largest
    budget, the budget at which the fitted line reaches zero, an extrapolation outside the
    measured range (None otherwise).
    """
    xs_s, ls_s, xs_d, ls_d = _pair_curves(records, shallow, deep)

    def fit(ys_s, ys_d):
        grid, gap = _gap_on_grid(xs_s, ys_s, xs_d, ys_d)
        slope, intercept = np.polyfit(grid / math.log(2.0), gap, 1)
        return grid, gap, float(slope), float(intercept)

    grid, gap, slope, intercept = fit(_means(ls_s), _means(ls_d))
    rng = np.random.default_rng(seed)
    slopes = [fit(_resampled_means(ls_s, rng), _resampled_means(ls_d, rng))[2] for _ in range(n_boot)]
    stds = [float(np.std(x, ddof=1)) for x in ls_s + ls_d if x.size > 1]
    seeds = [x.size for x in ls_s + ls_d]
    seed_std = float(np.median(stds)) if stds else float("nan")
    se = seed_std * math.sqrt(2.0 / float(np.median(seeds)))
    closing = None
    if slope < 0 and gap[-1] > 0:
        closing = float(2.0 ** (-intercept / slope))
    return {"shallow": shallow, "deep": deep, "slope": slope,
            "slope_p16": float(np.percentile(slopes, 16)) if slopes else None,
            "slope_p84": float(np.percentile(slopes, 84)) if slopes else None,
            "mean_gap": float(np.mean(gap)), "seed_std": seed_std,
            "gap_in_se": float(np.mean(gap)) / se if se > 0 else float("inf"),
            "range": [float(math.exp(grid[0])), float(math.exp(grid[-1]))], "closing_budget": closing}


def learning_rate_check(records: list[dict], shallow: int, deep: int, reference_lr: float) -> dict:
    """Does a pair's gap survive tuning the learning rate of each depth?

    ``records``: runs of the two depths at one budget each, trained at several peak learning
    rates (the ``mini-lr`` preset). Returns ``losses`` {depth: {lr: mean final eval loss over
    seeds}}, ``best_lr`` {depth: lr with the lowest loss}, ``gap_at_reference`` (loss_deep -
    loss_shallow, both at ``reference_lr``) and ``gap_at_best`` (each depth at its own best
    rate), and ``best_at_edge`` {depth: True when the best rate is the smallest or largest
    tried, so that the optimum may lie outside the range}.
    """
    require(shallow < deep, f"shallow depth must be below deep depth, got {shallow} and {deep}")
    losses = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["depth"] in (shallow, deep) and finished(r):
            losses[r["depth"]][r["config"]["lr"]].append(r["eval_loss"])
    for depth in (shallow, deep):
        require(reference_lr in losses[depth], f"depth {depth} has no completed run at learning rate {reference_lr:g}")
    mean = {L: {lr: float(np.mean(v)) for lr, v in sorted(losses[L].items())} for L in (shallow, deep)}
    best = {L: min(m, key=m.get) for L, m in mean.items()}
    return {"shallow": shallow, "deep": deep, "losses": mean, "best_lr": best,
            "gap_at_reference": mean[deep][reference_lr] - mean[shallow][reference_lr],
            "gap_at_best": mean[deep][best[deep]] - mean[shallow][best[shallow]],
            "best_at_edge": {L: best[L] in (min(m), max(m)) for L, m in mean.items()}}


def adjacent_pairs(depths) -> list[tuple[int, int]]:
    """(L_1, L_2), (L_2, L_3), ... of the sorted depths."""
    depths = sorted(set(depths))
    return list(zip(depths, depths[1:]))


def transitions(records: list[dict], pairs=None, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """:func:`transition` for each pair (default: adjacent depths of the records)."""
    pairs = adjacent_pairs({r["depth"] for r in records}) if pairs is None else pairs
    return [transition(records, s, d, n_boot=n_boot, seed=seed) for s, d in pairs]


def pair_depth(t: dict, depth_of_pair: str) -> float:
    """The depth a pair's transition is attached to: (L_s + L_d) / 2 ('midpoint') or L_d ('deep')."""
    return (t["shallow"] + t["deep"]) / 2 if depth_of_pair == "midpoint" else t["deep"]


def fit_transitions(results: list[dict], depth_of_pair: str = "midpoint"):
    """Fit log(transition budget) against depth over the pairs that cross
    (:func:`dwlib.experiments.transition_fit.fit_from_transitions`); None with fewer than two crossings.

    ``depth_of_pair``: 'midpoint' attaches a pair's transition to (L_s + L_d) / 2 (both tie
    there, so the optimum lies between them), 'deep' to L_d.
    """
    require(depth_of_pair in ("midpoint", "deep"), f"depth_of_pair must be 'midpoint' or 'deep', got {depth_of_pair!r}")
    crossed = [t for t in results if t["status"] == "crossing"]
    if len({t["shallow"] for t in crossed}) < 2:
        return None
    depths = [pair_depth(t, depth_of_pair) for t in crossed]
    return fit_from_transitions(depths, [t["budget"] for t in crossed])


# ---------------------------------------------------------------------------------------------
# Loss at a fixed budget across depths (Kaplan et al.'s observation)


def spread_across_depths(records: list[dict], depths=None, points: int = 5) -> list[dict]:
    """How much the loss depends on depth at a fixed budget, against how much it depends on size.

    Kaplan et al. (2020) observed that, past a few layers, loss depends mainly on the
    non-embedding size N and little on the split between depth and width. For ``depths``
    (default: all), at ``points`` log-spaced budgets inside the range every depth covers, this
    returns the seed-mean losses interpolated in log N, their ``spread`` (max - min over depths),
    the ``best_depth``, and ``per_doubling``: the loss gained by doubling N, averaged over the
    depths (slope of loss in log2 N). A spread well below ``per_doubling`` means depth matters
    less than a factor of two in size.
    """
    rows = loss_table(records)
    depths = sorted({r["depth"] for r in rows}) if depths is None else sorted(depths)
    curves = {L: _curve(rows, L) for L in depths}
    require(all(len(c[0]) >= 2 for c in curves.values()), f"every depth in {depths} needs two measured budgets")
    lo = max(c[0][0] for c in curves.values())
    hi = min(c[0][-1] for c in curves.values())
    require(hi > lo, f"depths {depths} cover no common budget range")
    out = []
    for x in np.linspace(lo, hi, points):
        losses = {L: float(np.interp(x, xs, _means(ls))) for L, (xs, ls) in curves.items()}
        slopes = []
        for xs, ls in curves.values():
            ys, h = _means(ls), math.log(2.0)
            x0, x1 = max(xs[0], x - h / 2), min(xs[-1], x + h / 2)
            slopes.append((np.interp(x0, xs, ys) - np.interp(x1, xs, ys)) / (x1 - x0) * h)
        out.append({"budget": float(math.exp(x)), "losses": losses,
                    "spread": max(losses.values()) - min(losses.values()),
                    "best_depth": min(losses, key=losses.get), "per_doubling": float(np.mean(slopes))})
    return out
