"""The trained vocabulary-bottleneck comparison before any of its runs: the declared rule agrees
with the three presets that train it, their cost and memory estimates count the factored
embedding, and the rule's reading (dwlib.experiments.vocab_trained) gives the verdict the rule
file defines on synthetic records: supported, against, undecided."""

import math

import numpy as np
import pytest
from scipy import stats

from dwlib.errors import InputError
from dwlib.experiments import cost
from dwlib.experiments import vocab_trained as vt
from dwlib.experiments.presets import get_preset
from dwlib.train.memory import step_bytes
from dwlib.train.model import parameter_counts

RULE = vt.rule()


def presets():
    return {label: get_preset(name) for label, name in RULE["sweeps"].items()}


def test_the_presets_train_what_the_rule_declares():
    sweeps = presets()
    assert set(sweeps) == {"8", "32", "full"} and RULE["primary_rank"] == 8 and RULE["small_ranks"] == [8, 32]
    shapes = None
    for label, s in sweeps.items():
        assert s.depths == tuple(RULE["pair"]) and s.budgets == (RULE["target_budget"],)
        assert s.seeds == tuple(range(6)) and s.select_seeds == 2 and s.extend_edges  # the rule's seeds and rate choice
        assert s.lrs == (1e-3, 2e-3, 4e-3) and s.exclude == ("diverged-rate",) and s.trainer == "group"
        configs = s.configs()
        assert {c.model.embedding_rank for c in configs} == {vt.rank_of(label)}
        assert {c.model.tied for c in configs} == {False}
        assert {c.steps * c.batch_size * c.model.seq_len for c in configs} == {RULE["tokens_per_run"]}
        assert {(c.corpus, c.validation_split, c.final_eval, c.sampling) for c in configs} == \
            {("linux-doc", True, "whole", "disjoint")}
        these = sorted((p.depth, p.width, p.budget) for p in s.points())
        assert shapes is None or these == shapes
        shapes = these
        # every setting but the embedding rank is shared across the ranks
        assert {k: v for k, v in s.train.items() if k != "embedding_rank"} == \
            {k: v for k, v in sweeps["full"].train.items() if k != "embedding_rank"}
    assert shapes == [(2, 88, 185_856), (4, 64, 196_608)]
    for depth, width, budget in shapes:  # the design's words name the widths and sizes
        assert f"{width}" in RULE["design"] and f"{budget:,}" in RULE["design"]


def test_the_cost_and_memory_estimates_count_the_factored_embedding():
    sweeps = presets()
    full = cost.plan_cost(sweeps["full"])
    for label in ("8", "32"):
        r = int(label)
        plan = cost.plan_cost(sweeps[label])
        assert plan["runs"] == full["runs"] == 20
        lift = sum(sweeps[label].runs_per_point() * RULE["tokens_per_run"] * 6 * r * p.width
                   for p in sweeps[label].points())
        assert plan["flops"] - full["flops"] == pytest.approx(lift, rel=1e-9)
        for p in sweeps[label].points():
            small, plain = sweeps[label].config(p, 0), sweeps["full"].config(p, 0)
            saved = (1000 + 64) * (p.width - r) - r * p.width  # tables at r instead of d_x, plus the lift
            assert parameter_counts(plain.model)["embeddings"] - parameter_counts(small.model)["embeddings"] == saved
            assert step_bytes(plain)["state"] - step_bytes(small)["state"] == 16 * saved


# --- the rule's reading, on synthetic records ---------------------------------------------------

SHAPES = {2: 88, 4: 64}


def records(label, losses, other_rate=True):
    """Records of one rank: ``losses`` {(depth, seed): held-out loss} at the chosen rate 2e-3 and,
    when ``other_rate``, the same runs at 4e-3 with a loss that would reverse every gap (not
    chosen: the reading must leave them out)."""
    out = []
    for (depth, seed), loss in losses.items():
        for lr, chosen, value in [(2e-3, True, loss)] + ([(4e-3, False, loss + (1.0 if depth == 2 else -1.0))]
                                                          if other_rate else []):
            out.append({"key": f"{label}-{depth}-{seed}-{lr}", "status": "completed", "depth": depth,
                        "width": SHAPES[depth], "seed": seed, "target_budget": 200e3,
                        "budget": 12 * depth * SHAPES[depth] ** 2, "eval_loss": value, "chosen": chosen,
                        "config": {"embedding_rank": vt.rank_of(label), "tied": False, "lr": lr}})
    return out


def design(gap_by_rank, seeds=range(6), noise=0.01, seed=0):
    """The three ranks' records with the deeper network's gap ``gap_by_rank[label]`` plus per-seed
    noise (shared by the ranks, as paired seeds share their data, and a part of its own)."""
    rng = np.random.default_rng(seed)
    shared = {s: rng.normal(0, noise) for s in seeds}
    out = {}
    for label, gap in gap_by_rank.items():
        losses = {}
        for s in seeds:
            base = 4.0 + rng.normal(0, 0.05)
            losses[(2, s)] = base
            losses[(4, s)] = base + gap + shared[s] + rng.normal(0, noise / 2)
        out[label] = records(label, losses)
    return out


def expected_interval(values):
    v = np.asarray(values, float)
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return v.mean() - half, v.mean() + half


@pytest.mark.parametrize("gaps,verdict,r32", [
    ({"8": -0.08, "32": -0.02, "full": 0.05}, vt.SUPPORTED, vt.SUPPORTED),   # deeper gains at small rank
    ({"8": 0.15, "32": 0.05, "full": 0.05}, vt.AGAINST, vt.UNDECIDED),      # deeper loses more at small rank
    ({"8": 0.05, "32": 0.05, "full": 0.05}, vt.UNDECIDED, vt.UNDECIDED),    # no effect of the rank
])
def test_the_rule_reads_support_against_and_undecided(gaps, verdict, r32):
    out = vt.read(design(gaps), RULE, seeds_planned=6)
    assert out["verdict"] == verdict and out["differences"]["32"]["reading"] == r32
    d = out["differences"]["8"]
    assert d["complete"] and len(d["differences"]) == 6
    low, high = expected_interval(list(d["differences"].values()))
    assert d["interval"]["low"] == pytest.approx(low) and d["interval"]["high"] == pytest.approx(high)
    for label, gap in gaps.items():  # the per-rank gaps are the deeper minus the shallower, chosen runs only
        assert out["ranks"][label]["interval"]["mean"] == pytest.approx(gap, abs=0.02)
        assert [s["lr"] for s in out["ranks"][label]["shapes"]] == [2e-3, 2e-3]
    assert out["ranks"]["8"]["verdict"] == ("deeper better" if gaps["8"] < -0.03 else "deeper worse")


def test_the_differences_are_paired_seed_by_seed():
    """A gap that moves with the seed, identically at every rank, cancels in the difference: the
    interval of the difference is narrow though each rank's gap spreads widely."""
    seeds = range(6)
    by_rank = {}
    for label, shift in (("8", -0.04), ("32", 0.0), ("full", 0.0)):
        by_rank[label] = records(label, {**{(2, s): 4.0 for s in seeds},
                                         **{(4, s): 4.0 + 0.2 * (s - 2.5) + shift + 0.001 * (s % 2) for s in seeds}})
    out = vt.read(by_rank, RULE, seeds_planned=6)
    assert out["ranks"]["full"]["verdict"] == "no difference resolved"
    assert out["differences"]["8"]["interval"]["mean"] == pytest.approx(-0.04)
    assert out["verdict"] == vt.SUPPORTED


def test_seeds_subsets_and_incomplete_designs():
    by_rank = design({"8": -0.08, "32": -0.02, "full": 0.05})
    later = vt.read(by_rank, RULE, seeds=(2, 3, 4, 5), seeds_planned=4)
    assert sorted(later["differences"]["8"]["differences"]) == [2, 3, 4, 5] and later["differences"]["8"]["complete"]
    # a seed missing at full rank drops out of every difference; one seed alone decides nothing
    by_rank["full"] = [r for r in by_rank["full"] if r["seed"] != 5]
    out = vt.read(by_rank, RULE, seeds_planned=6)
    assert len(out["differences"]["8"]["differences"]) == 5 and not out["differences"]["8"]["complete"]
    one = {label: [r for r in recs if r["seed"] == 0] for label, recs in by_rank.items()}
    assert vt.read(one, RULE, seeds_planned=6)["verdict"] == vt.UNDECIDED
    assert vt.read({}, RULE)["verdict"] is None  # nothing trained yet


def test_runs_of_another_rank_are_refused():
    by_rank = design({"8": -0.08, "32": -0.02, "full": 0.05})
    by_rank["8"] = by_rank["32"]
    with pytest.raises(InputError, match="need rank 8 and an untied output"):
        vt.read(by_rank, RULE)
    tied = design({"8": 0.0, "32": 0.0, "full": 0.0})
    tied["full"] = [{**r, "config": {**r["config"], "tied": True}} for r in tied["full"]]
    with pytest.raises(InputError, match="the full runs need rank None"):
        vt.read(tied, RULE)
    with pytest.raises(InputError, match="unknown rank"):
        vt.read({"16": []}, RULE)



def test_the_published_sweeps_are_read_by_their_names(monkeypatch):
    """read_stored reads each rank from the sweep the rule names, and calls a design complete at the
    presets' six seeds (or at the seeds asked for)."""
    by_rank = design({"8": -0.08, "32": -0.02, "full": 0.05})
    by_name = {RULE["sweeps"][label]: recs for label, recs in by_rank.items()}
    monkeypatch.setattr(vt, "stored_results", lambda name: by_name[name])
    out = vt.read_stored()
    assert out["rule"] == RULE and out["verdict"] == vt.SUPPORTED and out["differences"]["8"]["complete"]
    assert vt.read_stored(seeds=(2, 3, 4, 5))["differences"]["8"]["complete"]
    by_name["vocab-full"] = [r for r in by_name["vocab-full"] if r["seed"] != 0]
    assert not vt.read_stored()["differences"]["8"]["complete"]
