"""The CPU sweep of doubling pairs: its data order (no token twice within a pass), its final
evaluation over every held-out token, its rate grid extended past an edge until the chosen rate
lies inside, and its verdicts read by the rule file declared before its runs."""

import math

import jax
import numpy as np
import pytest

from dwlib.errors import InputError
from dwlib.experiments import group_sweep as gs
from dwlib.experiments import pairs
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.experiments import selection
from dwlib.train import batches
from dwlib.train import data as data_lib
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.model import abstract_params
from dwlib.train.multi import train_group
from dwlib.train.step import loss_fn
from dwlib.viz import pairs as vp


def test_disjoint_sampling_takes_every_window_once_a_pass_in_a_seeded_order():
    tokens = np.arange(10_001)
    seq, batch = 16, 8
    n = (len(tokens) - 1) // seq
    per_pass = n // batch
    starts = [batches.train_batch(tokens, s, batch, seq, 3, "disjoint")[:, 0] for s in range(2 * per_pass)]
    first = np.concatenate(starts[:per_pass])
    assert len(set(first.tolist())) == len(first) == per_pass * batch  # no window twice in a pass
    assert set(first.tolist()) <= {i * seq for i in range(n)}
    second = np.concatenate(starts[per_pass:])
    assert not np.array_equal(first, second)  # the next pass has its own order
    again = batches.train_batch(tokens, 5, batch, seq, 3, "disjoint")
    assert np.array_equal(again, batches.train_batch(tokens, 5, batch, seq, 3, "disjoint"))  # (seed, step)
    assert not np.array_equal(again, batches.train_batch(tokens, 5, batch, seq, 4, "disjoint"))
    windows = batches.train_batch(tokens, 0, batch, seq, 3, "disjoint")
    assert np.array_equal(windows[:, 1:], windows[:, :1] + np.arange(1, seq + 1))  # contiguous
    with pytest.raises(InputError, match="sampling must be one of"):
        batches.train_batch(tokens, 0, batch, seq, 3, "shuffled")
    with pytest.raises(InputError, match="fewer than batch_size"):
        batches.train_batch(tokens[:40], 0, batch, seq, 3, "disjoint")


@pytest.mark.parametrize("length", [1001, 1000, 993, 17])
def test_the_whole_split_predicts_every_token_once(length):
    tokens = np.arange(length)
    parts = batches.whole_split(tokens, 8, 16)
    windows = np.concatenate([p.reshape(-1, 17) for p in parts])
    targets = windows[:, 1:].ravel()
    assert np.array_equal(targets, np.arange(1, 1 + len(targets)))  # each token once, in order
    assert length - 1 - len(targets) < 16  # only a stretch shorter than a window is left out
    assert all(p.ndim == 3 and p.shape[2] == 17 for p in parts)
    per_window = [w[1:].mean() for w in windows]  # a stand-in "loss" per window
    means = [np.mean([w[1:].mean() for w in p.reshape(-1, 17)]) for p in parts]
    assert batches.whole_split_mean(parts, means) == pytest.approx(np.mean(per_window))


def test_the_new_settings_leave_the_stored_runs_keys_alone_and_refuse_bad_values():
    base = TrainConfig.from_dict({"depth": 1, "width": 16, "heads": 2})
    stored = base.to_dict()
    stored.pop("sampling"), stored.pop("final_eval")  # a config written before the fields existed
    assert run_key(stored) == run_key(base)
    assert run_key(base.replace(sampling="disjoint")) != run_key(base)
    assert run_key(base.replace(final_eval="whole")) != run_key(base)
    with pytest.raises(InputError, match="sampling must be one of random, disjoint"):
        base.replace(sampling="both").validate()
    with pytest.raises(InputError, match="final_eval must be one of sample, whole"):
        base.replace(final_eval=1).validate()


@pytest.mark.slow  # one small group compiled, trained and evaluated over the whole split (about 60 s)
def test_a_groups_last_evaluation_reads_every_held_out_token(corpus):
    cfgs = [TrainConfig.from_dict({"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "depth": 1,
                                   "width": 16, "heads": 2, "steps": 6, "eval_interval": 3, "eval_batches": 2,
                                   "checkpoint_interval": 0, "validation_split": True, "sampling": "disjoint",
                                   "final_eval": "whole", "seed": s, "lr": 3e-3}) for s in (0, 1)]
    state, curves = train_group(cfgs, chunk=3, progress=False)
    corpus_data = data_lib.load_corpus(corpus, 300, validation_split=True)
    graphdef, _ = abstract_params(cfgs[0].model)
    for r, curve in enumerate(curves):
        params = jax.tree.map(lambda x: x[r], state["params"])
        for split, field in (("valid", "eval_loss"), ("select", "select_loss")):
            windows = np.concatenate([p.reshape(-1, 17) for p in
                                      batches.whole_split(getattr(corpus_data, split), 8, 16)])
            direct = float(loss_fn(graphdef, params, windows))  # one batch of every window
            assert curve["evals"][-1][field] == pytest.approx(direct, rel=1e-5)
        sample = batches.eval_batches(corpus_data.valid, 2, 8, 16).reshape(-1, 17)
        mid = float(loss_fn(graphdef, params, sample))
        assert [e["step"] for e in curve["evals"]] == [0, 3, 6] and mid != curve["evals"][-1]["eval_loss"]


def _tiny(corpus, **kw):
    base = dict(name="tiny-edges", depths=(1,), budgets=(12 * 32 * 32,), seeds=(0, 1, 2, 3), head_size=16,
                tokens_per_run=8 * 16 * 6, lrs=(1e-3, 2e-3, 4e-3), select_seeds=2, exclude=("diverged-rate",),
                trainer="group", chunk=3, extend_edges=True,
                train={"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "lr": 3e-3,
                       "eval_interval": 3, "eval_batches": 2, "checkpoint_interval": 0, "validation_split": True})
    return ps.Sweep(**{**base, **kw})


def _fake_training(best_lr, eval_steps=lambda cfg: (0, 3, 6)):
    """A stand-in for a group's training: each run's curve, with a validation loss lowest at
    ``best_lr``, evaluated at ``eval_steps(cfg)``."""
    def fake(group, todo, sweep, env, cache_dir, progress, log):
        out = []
        for row in todo:
            cfg = row["config"]
            v = 4.0 + math.log2(cfg.optim.lr / best_lr) ** 2 / 10 + cfg.seed / 1000
            curve = {"seed": cfg.seed, "lr": cfg.optim.lr, "losses": [5.0] * cfg.steps, "diverged_step": None,
                     "evals": [{"step": s, "eval_loss": v + 0.1, "select_loss": v} for s in eval_steps(cfg)]}
            corpus = gs.corpus_identity(cfg)  # what a real group records
            info = {"seconds": 1.0, "tokens_per_s": 1.0, "devices": {"backend": "cpu", "count": 1, "processes": 1},
                    "corpus": {k: corpus[k] for k in ("name", "tokens", "fingerprint")}}
            meta = {**env, "key": row["key"], "target_budget": group["point"].target_budget, "wall_seconds": 1.0,
                    "group": {"stage": group["stage"], "runs": len(todo), "wall_seconds": 1.0, "tokens_per_s": 1.0,
                              "chunk": sweep.chunk}}
            out.append(gs._commit(row, curve, meta, info, log))
        return out
    return fake


@pytest.mark.parametrize("best, tried, chosen", [
    (2e-3, [1e-3, 2e-3, 4e-3], 2e-3),  # inside the grid: no extension
    (2.5e-4, [2.5e-4 / 2, 2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3], 2.5e-4),  # below it: two rates down, then one more
    (8e-3, [1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2], 8e-3),  # above it
])
def test_a_rate_at_an_edge_of_the_grid_is_extended_until_the_chosen_rate_lies_inside(corpus, tmp_path, monkeypatch,
                                                                                     best, tried, chosen):
    monkeypatch.setattr(gs, "_train", _fake_training(best))
    sweep, out = _tiny(corpus), tmp_path / "out"
    first = gs.run(sweep, out, progress=False, limit=1)  # the grid alone
    assert first.counts["completed"] == 6
    done = gs.run(sweep, out, progress=False)
    records = rc.collect(out)
    grid_runs = [r for r in records if r["seed"] in (0, 1)]
    assert sorted({r["lr"] for r in grid_runs}) == pytest.approx(tried)
    assert all(sum(r["lr"] == lr for r in grid_runs) == 2 for lr in {r["lr"] for r in grid_runs})  # both grid seeds
    rest = [r for r in records if r["seed"] in (2, 3)]
    assert [r["lr"] for r in rest] == pytest.approx([chosen, chosen])  # the other seeds at the chosen rate
    choice = selection.choose(records, sweep.grid_seeds(), sweep.exclude)[(1, 32)]
    assert choice["lr"] == pytest.approx(chosen) and not choice["at_edge"]
    assert len(done) == len(records) and done.counts["before"] == 6
    # the summary counts the runs the extensions added to the plan: never "8 of 6 runs finished"
    assert f"{len(records)} of {len(records)} runs finished" in done.line()
    assert gs.run(sweep, out, progress=False).counts["completed"] == 0  # nothing trains twice


def test_the_next_rate_stops_at_the_bounds_and_needs_a_grid():
    sweep = ps.Sweep(name="x", depths=(1,), budgets=(1e4,), seeds=(0, 1), lrs=(0.25, 0.5), select_seeds=1,
                     trainer="group", extend_edges=True, train={"validation_split": True})
    assert sweep.next_rate([0.25, 0.5], 0.5) == 1.0 and sweep.next_rate([0.25, 0.5, 1.0], 1.0) is None
    assert sweep.next_rate([0.25, 0.5, 1.0], 0.5) is None and sweep.next_rate([0.25, 0.5], 0.25) == 0.125
    with pytest.raises(InputError, match="extend_edges needs"):
        ps.Sweep(name="x", depths=(1,), budgets=(1e4,), extend_edges=True)


def _records(gaps_by_budget, shallow=2, deep=4):
    """Records of a pair at its chosen rates: the shallower network at loss 4 at every seed and
    budget, the deeper one at 4 + the given gap."""
    out = []
    for b, gaps in gaps_by_budget.items():
        for s, g in enumerate(gaps):
            for depth, loss in ((shallow, 4.0), (deep, 4.0 + g)):
                out.append({"depth": depth, "width": 8 * depth, "target_budget": b, "budget": int(b), "seed": s,
                            "status": "completed", "eval_loss": loss, "chosen": True})
    return out


def test_a_transition_needs_both_intervals_clear_of_zero_and_the_sign_to_hold_above_it():
    level = pairs.rule("cpu-pairs")["level"]
    crossing = {1e5: [0.10, 0.11, 0.12, 0.09, 0.10, 0.11], 2e5: [0.05, 0.06, 0.04, 0.05, 0.06, 0.05],
                4e5: [-0.03, -0.04, -0.02, -0.03, -0.04, -0.03], 8e5: [-0.01, 0.02, -0.03, -0.01, 0.0, -0.02]}
    rows = pairs.points(_records(crossing), 2, 4, level)
    v = pairs.pair_verdict(rows)
    assert v["transition"]["between"] == (2e5, 4e5)
    assert v["worse"] == [1e5, 2e5] and v["better"] == [4e5] and v["unresolved"] == [8e5]
    assert v["no_better"] == [1e5, 2e5, 8e5]
    back = {**crossing, 8e5: [0.01, 0.02, 0.0, 0.01, 0.02, 0.01]}  # the sign turns back above it
    assert pairs.pair_verdict(pairs.points(_records(back), 2, 4, level))["transition"] is None
    blurred = {**crossing, 4e5: [-0.2, 0.15, -0.1, 0.1, -0.2, 0.05]}  # negative mean, interval spans 0
    assert pairs.pair_verdict(pairs.points(_records(blurred), 2, 4, level))["transition"] is None
    only_three = pairs.points(_records(crossing), 2, 4, level, seeds={2, 3, 4, 5})
    assert all(r["n"] == 4 for r in only_three)


def test_the_interval_is_the_paired_t_interval():
    iv = pairs.interval([0.1, 0.2, 0.3], 0.95)  # t(0.975, 2) = 4.302653
    assert iv["mean"] == pytest.approx(0.2) and iv["half_width"] == pytest.approx(4.302653 * 0.1 / math.sqrt(3), rel=1e-6)
    assert pairs.point_verdict(iv) == pairs.UNRESOLVED  # 0.2 +/- 0.248
    assert pairs.point_verdict(pairs.interval([0.2, 0.25, 0.3], 0.95)) == pairs.WORSE  # 0.25 +/- 0.124
    assert pairs.point_verdict(pairs.interval([-0.2, -0.25, -0.3], 0.95)) == pairs.BETTER
    assert pairs.interval([0.1], 0.95)["half_width"] is None
    assert pairs.power([{"half_width": 0.02}, {"half_width": 0.05}, {"half_width": None}], 0.03)["within"] == 1


def test_complete_budgets_need_every_depth_and_seed():
    recs = _records({1e5: [0.1] * 6, 2e5: [0.1] * 6})
    assert pairs.complete_budgets(recs, (2, 4), range(6)) == [1e5, 2e5]
    recs = [r for r in recs if not (r["target_budget"] == 2e5 and r["seed"] == 5 and r["depth"] == 4)]
    assert pairs.complete_budgets(recs, (2, 4), range(6)) == [1e5]


def test_the_rule_file_is_the_sweeps():
    r = pairs.rule("cpu-pairs")
    sweep = ps.get_preset("cpu-pairs")
    assert {d for pair in r["pairs"] for d in pair} == set(sweep.depths)
    assert all(b == 2 * a for a, b in r["pairs"])
    assert len(sweep.seeds) == 6 and sweep.select_seeds == 2 and sweep.extend_edges
    assert list(sweep.lrs) == [1e-3, 2e-3, 4e-3] and sweep.exclude == ("diverged-rate",)
    assert sweep.train["final_eval"] == "whole" and sweep.train["sampling"] == "disjoint"
    assert sweep.tokens_per_run >= 2_000_000 and sweep.steps() * 32 * 64 == r["tokens_per_run"]


def test_the_pilot_met_the_power_target_at_the_chosen_length():
    """The run length of the rule: the pilot's paired half-width at that length within the target."""
    r = pairs.rule("cpu-pairs")
    pilot = pairs.pilot(rc.stored_results("cpu-pairs-pilot-2m"), 4, 8, r["level"])
    assert pilot["tokens"] == r["tokens_per_run"] and pilot["seeds"] == 6
    assert pilot["half_width"] <= r["half_width_target"]
    with pytest.raises(InputError, match="no declared rule file"):
        pairs.rule("mini")


def test_figure2_draws_each_pairs_points_and_paired_intervals_by_the_rule():
    gaps = {1e5: [0.10, 0.11, 0.12, 0.09, 0.10, 0.11], 2e5: [-0.03, -0.04, -0.02, -0.03, -0.04, -0.03]}
    recs = _records(gaps, 2, 4)
    recs += [{**x, "depth": 8, "width": 64, "eval_loss": x["eval_loss"] + 0.05} for x in recs if x["depth"] == 4]
    r = pairs.rule("cpu-pairs")
    spec = vp.figure2(recs, r).to_dict()
    datasets = list(spec["datasets"].values())
    drawn = [row for d in datasets for row in d if "verdict" in row]
    want = [p for pair in r["pairs"] for p in pairs.points(recs, *pair, r["level"])]
    assert sorted((d["budget"], round(d["gap"], 9), round(d["low"], 9)) for d in drawn) == \
        sorted((p["target_budget"], round(p["mean"], 9), round(p["low"], 9)) for p in want)
    assert {d["verdict"] for d in drawn} == {pairs.WORSE, pairs.BETTER}
    # one row per pair, its losses then its gap, each view with a width of its own (a phone's
    # column shows them one above the other, each narrowed to fit)
    assert spec["columns"] == 2 and len(spec["concat"]) == 2 * len(r["pairs"])
    assert all(isinstance(v["width"], int) for v in spec["concat"])
    assert [v.get("title") for v in spec["concat"][::2]] == [f"{s} vs {d} layers" for s, d in r["pairs"]]


def test_the_verdict_sentences_follow_the_rule(monkeypatch):
    from dwlib.book import pairs_verdicts as pv
    crossing = {1e5: [0.10, 0.11, 0.12, 0.09, 0.10, 0.11], 2e5: [0.05, 0.06, 0.04, 0.05, 0.06, 0.05],
                4e5: [-0.03, -0.04, -0.02, -0.03, -0.04, -0.03]}
    recs = _records(crossing, 2, 4)
    recs += [{**x, "depth": 8, "width": 64, "eval_loss": x["eval_loss"] + 0.1} for x in recs if x["depth"] == 4]
    monkeypatch.setattr(pv, "stored_results", lambda name: recs)
    out = pv.read("cpu-pairs")
    assert out["budgets"] == [1e5, 2e5, 4e5] and out["power"]["points"] == 6
    first, second = out["pairs"]
    assert pv.transition_sentence(first).startswith("4 against 2 layers: a transition between 200K and 400K")
    assert pv.regime_sentence(first) == ("4 layers against 2: the deeper network is better at 400K "
                                         "and no better at 100K and 200K.")
    assert pv.transition_sentence(second) == ("8 against 4 layers: no transition within the range measured "
                                              "(100K, 200K and 400K), by the declared rule.")
    assert pv.of(1, 2, "pair", "crosses") == "one of the two pairs crosses" and pv.of(2, 2, "pair", "crosses") == "both pairs cross"
    # before any budget has every seed of every depth, the sentences say that nothing is decided
    monkeypatch.setattr(pv, "stored_results", lambda name: [x for x in recs if x["depth"] != 8])
    empty = pv.read("cpu-pairs")
    assert empty["budgets"] == [] and "not decided yet" in pv.transition_sentence(empty["pairs"][0])
    assert pv.regime_sentence(second).startswith("8 layers against 4: the deeper network is no better at every size "
                                                 "measured (100K, 200K and 400K); it is worse at")
