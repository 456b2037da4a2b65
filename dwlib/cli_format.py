"""Output formatting of the dwlib command line: JSON, and each subcommand's text.

:mod:`dwlib.cli` parses arguments and calls the library; this prints what the library returns,
in sentences of at most :data:`WRAP` columns where they can be long.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from dataclasses import asdict

from dwlib import fmt
from dwlib.core.fit import rule_words


def print_json(obj) -> None:
    """Print ``obj`` as indented JSON (the ``--json`` output of every subcommand)."""
    json.dump(finite_or_none(obj), sys.stdout, indent=2, sort_keys=False, allow_nan=False)  # strict JSON
    sys.stdout.write("\n")


def finite_or_none(obj):
    """``obj`` with every non-finite float replaced by None (JSON has no inf or NaN)."""
    if isinstance(obj, dict):
        return {k: finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def print_plan(sweep, rows: list[dict], shard: tuple[int, int], as_json: bool) -> None:
    """The runs of a sweep's shard and their state (``dwlib sweep --dry-run``); ``narrow``: width
    below 200. Steps per run differ by budget where the sweep sets tokens per budget."""
    steps = sorted({r["config"].steps for r in rows}) or [sweep.steps()]
    if as_json:
        print_json({"sweep": sweep.name, "description": sweep.description, "steps": sweep.steps(),
                    "shard": list(shard), "runs": [
                        {"key": r["key"], "state": r["state"], "depth": r["config"].model.depth,
                         "width": r["config"].model.width, "heads": r["config"].model.heads,
                         "seed": r["config"].seed, "lr": r["config"].optim.lr, "steps": r["config"].steps,
                         "budget": r["point"].budget, "target_budget": r["point"].target_budget,
                         "narrow": r["point"].narrow}
                        for r in rows]})
        return
    span = f"{steps[0]}" if len(steps) == 1 else f"{steps[0]}-{steps[-1]}"
    print(f"sweep {sweep.name}: {sweep.description}; {span} steps a run; "
          f"shard {shard[0]}/{shard[1]}: {len(rows)} runs")
    print(f"{'key':<12} {'L':>3} {'d_x':>5} {'H':>3} {'seed':>4} {'lr':>8} {'steps':>7} {'budget':>10} "
          f"{'target':>10}  state")
    for r in rows:
        m, pt = r["config"].model, r["point"]
        print(f"{r['key']:<12} {m.depth:>3} {m.width:>5}{'*' if pt.narrow else ' '}{m.heads:>2} "
              f"{r['config'].seed:>4} {r['config'].optim.lr:>8.2g} {r['config'].steps:>7} {pt.budget:>10,} "
              f"{pt.target_budget:>10,.0f}  {r['state']}")
    if any(r["point"].narrow for r in rows):
        print("* narrower than 200 (flagged in the records)")
    if sweep.select_seeds is not None:
        later = len(sweep.points()[shard[0]::shard[1]]) * (len(sweep.seeds) - sweep.select_seeds) \
            - sum(r["config"].seed not in sweep.grid_seeds() for r in rows)
        if later:
            print(f"and {later} runs of seeds {', '.join(map(str, sweep.seeds[sweep.select_seeds:]))} at the rate "
                  "each shape chooses, listed once its grid has finished")


def cost_lines(est: dict) -> list[str]:
    """A sweep's cost estimate (:func:`dwlib.experiments.cost.estimate`) as text: one line per
    budget, then the totals and the verdict."""
    out = [f"sweep {est['sweep']}: {est['runs']} runs ({est['runs_per_point']} a point), "
           f"{est['flops']:.3g} FLOPs planned (6 per weight and token, output projection included, + attention)"]
    for b in est["budgets"]:
        passes = f", {b['passes']:.1f} passes over the training split" if "passes" in b else ""
        out.append(f"  budget {b['target_budget']:.3g}: {b['points']} points (widths {min(b['widths'])}-"
                   f"{max(b['widths'])}, {b['narrow']} narrower than 200), {b['runs']} runs x {b['tokens']:,} "
                   f"tokens{passes}; {b['flops']:.3g} FLOPs")
    out.append(f"at {est['assumed_share']:.0%} of {est['reference_tflops']:.0f} TFLOP/s (the benchmark shape's "
               f"rate, assumed as the sweep average): {est['minutes']:.1f} min; "
               f"{est['target_minutes']:.0f} min needs {est['share_needed']:.0%} of it: "
               f"{'meets' if est['meets_target'] else 'does not meet'} the target (an estimate, not a measurement)")
    if "cpu_rate" in est:
        out.append(f"on 2 CPU cores at {est['cpu_rate'] / 1e9:.0f} GFLOP/s (what the stored CPU sweep averaged, "
                   f"compilation and evaluation included): {est['cpu_hours']:.1f} h (an estimate)")
    return out


def seprank_lines(m: dict) -> list[str]:
    """``dwlib seprank``: a :func:`dwlib.experiments.seprank_sweep.measure_one` result as text."""
    lo, hi, thm = m["log3_lower"], m["log3_upper"], m["theorem"]
    lines = [f"L={m['depth']} d_x={m['width']} H={m['heads']} N={m['positions']} A={m['A']}: grid rank {m['rank']} "
             f"over GF(p) (repeats {m['ranks']}, M={m['templates']}, matrix {m['matrix_shape']})"]
    if "history" in m:
        lines.append(f"grid growth (M, rank, grid cap): {m['history']}; saturated: {m['saturated']}")
    lines.append(f"polynomial-space bound {m['poly_dim']}; log3 rank = {math.log(max(m['rank'], 1), 3):.3f}; "
                 + (f"theorem {thm} bounds on log3 sep: [{lo:.3f}, {hi:.3f}]" if thm else
                    "neither theorem applies (on the threshold, or width <= heads)"))
    return lines


def print_cost(est: dict, as_json: bool) -> None:
    """A sweep's cost estimate (:func:`dwlib.experiments.cost.estimate`), as text or JSON."""
    if as_json:
        print_json(est)
    else:
        print("\n".join(cost_lines(est)))


WRAP = 76  # columns of the sentences a command prints (a book page's code column, a terminal)


def print_bounds(out: dict, as_json: bool) -> None:
    """``dwlib bounds``: the threshold, the regime and both bounds, as text or JSON."""
    if as_json:
        print_json(finite_or_none(out))
        return
    eq = {1: "Theorem 1, eq. (7)", 2: "Theorem 2, eq. (8)"}.get(out["theorem"], "neither theorem applies")
    lo, hi = out["log3_sep"]["lower"], out["log3_sep"]["upper"]
    print(f"depth {out['depth']}, width {out['width']}, heads {out['heads']}")
    print(f"threshold log3(width) = {out['threshold']:.4f}; regime: {out['regime']} ({eq})")
    print(f"log3 sep:  {lo:.6g} <= log3 sep <= {hi:.6g}")
    print(f"log10 sep: {out['log10_sep']['lower']:.6g} <= log10 sep <= {out['log10_sep']['upper']:.6g}")
    if "embedding" in out:
        e = out["embedding"]
        print(f"embedding of rank {e['rank']}: log3 r = {e['threshold_at_rank']:.4f}; ", end="")
        if e["log3_upper_at_rank"] is None:
            print(f"eq. (8) read at width r needs depth > log3 r, so the upper bound stays {e['log3_upper']:.6g}")
        else:
            print(f"eq. (8) read at width r gives log3 sep <= {e['log3_upper_at_rank']:.6g}, "
                  f"so log3 sep <= {e['log3_upper']:.6g} (the book's derivation)")
    if out["note"]:
        print(f"note: {out['note']}")


def print_corollary1(out: dict, as_json: bool) -> None:
    """``dwlib corollary1``: the width a shallower network needs, in lines of at most WRAP columns."""
    if as_json:
        print_json(finite_or_none(out))
        return
    lines = [f"deep network: depth {out['depth']}, width {out['width']}, heads {out['heads']}",
             f"its eq. (7) lower bound: log3 sep >= {out['log3_sep_target']:.6g}"]
    if out["any_width"]:
        lines.append(fmt.any_width_sentence(out["shallow_depth"]))
    else:
        lines.append(f"a depth-{out['shallow_depth']} network needs width >= "
                     f"{fmt.power_of_ten(out['log10_shallow_width'], 4)} (log10 {out['log10_shallow_width']:.4f})")
        lines.append("for its eq. (7) upper bound to reach that")
    if out["note"]:
        lines.append(f"note: {out['note']}")
    print("\n".join(textwrap.fill(line, WRAP, subsequent_indent="  ") for line in lines))


def print_pack(header: dict, out: str, as_json: bool) -> None:
    """``dwlib pack``: the pack's header without the tokenizer (JSON), or one line."""
    if as_json:
        print_json({k: v for k, v in header.items() if k != "tokenizer_json"})
        return
    counts = ", ".join(f"{a['name']} {a['tokens']:,}" for a in header["arrays"])
    cut = "; a prefix of whole documents, the split did not fit" if header["prefix"] else ""
    print(f"packed {header['corpus_key']} ({counts} tokens{cut}) into {out}: {header['bytes'] / 2**20:.2f} MiB")


def print_installed_pack(header: dict, pack: str, folder: str, as_json: bool) -> None:
    """``dwlib install-pack``: where the cache now is, and what it holds."""
    if as_json:
        print_json({"folder": folder, "pack": pack, **{k: v for k, v in header.items() if k != "tokenizer_json"}})
        return
    counts = ", ".join(f"{a['name']} {a['tokens']:,}" for a in header["arrays"])
    print(f"installed {pack} ({header['corpus_key']}: {counts} tokens) as the corpus cache in {folder}")


def print_advise_budget(N: float, head_size: int, best: dict, near: list[dict], fit, as_json: bool) -> int:
    """``dwlib advise <budget>``: the suggested shape and the practical shapes near it."""
    if as_json:
        print_json({"budget": N, "fit": asdict(fit), "suggested": best, "nearby": near})
        return 0
    print(f"budget N = {fmt.count(N)} non-embedding parameters (12 L d²)")
    print(f"optimal (continuous): depth {best['optimal_depth']:.2f}, "
          f"width {best['optimal_width']:.0f}")
    print(f"suggested: depth {best['depth']}, width {best['width']} "
          f"({fmt.heads(best['heads'], head_size)}), actual budget {fmt.count(best['budget'])}")
    print("nearby practical shapes:")
    print(f"  {'depth':>5} {'width':>7} {'heads':>5} {'budget':>8}  verdict")
    for s in near:
        print(f"  {s['depth']:>5} {s['width']:>7} {s['heads']:>5} {fmt.count(s['budget']):>8}"
              f"  {s['verdict']}")
    return 0


def print_advise_depth(r: dict, head_size: int, as_json: bool) -> int:
    """``dwlib advise --depth L``: the optimal width for a depth and its practical shape."""
    if as_json:
        print_json(r)
        return 0
    print(f"depth {r['depth']}: optimal width {r['optimal_width']:.0f}, "
          f"optimal at budget {fmt.count(r['budget'])}")
    print(f"practical: width {r['width']} ({fmt.heads(r['heads'], head_size)}), "
          f"budget {fmt.count(r['practical_budget'])}")
    return 0


def print_verdict(v: dict, as_json: bool) -> int:
    """``dwlib advise --depth L --width d``: the verdict on a shape."""
    if as_json:
        print_json(v)
        return 0
    heads = f", {fmt.heads(v['heads'], v['head_size'])}" if "heads" in v else ""
    print(f"depth {v['depth']}, width {v['width']}{heads}: budget {fmt.count(v['budget'])}")
    print(f"{v['verdict']}: optimal depth for this budget {v['optimal_depth']:.1f} "
          f"(ratio {v['depth_ratio']:.2f}, {v['depth_difference']:+.1f} layers), "
          f"optimal width {v['optimal_width']:.0f} (width ratio {v['width_ratio']:.2f})")
    print(f"rule: {rule_words(v['rule'])}")
    return 0

