"""The GPU preset of Figure 2 as declared, its cost estimate, and `dwlib sweep --cost`."""

import dataclasses
import json

import pytest

from dwlib import cli
from dwlib.experiments import cost
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.train.config import TrainConfig


def test_the_gpu_preset_declares_what_the_issue_asks():
    s = ps.get_preset("gpu-fig2")
    assert s.depths == (6, 12, 24) and len(s.budgets) >= 5 and min(s.budgets) == 1e6 and max(s.budgets) == 3e7
    assert len(s.lrs) >= 3 and all(b / a == 2 for a, b in zip(s.lrs, s.lrs[1:]))  # spaced by 2x
    assert len(s.seeds) >= 3 and s.trainer == "group" and s.exclude == ("diverged-rate",)
    assert s.train["validation_split"] is True and s.train["corpus"] == "linux-doc"
    for p in s.points():
        cfg = s.config(p, 0)
        tokens = cfg.steps * cfg.batch_size * cfg.model.seq_len
        assert tokens >= (50e6 if p.target_budget >= 1e7 else 20e6)
    # Widths: every pair of depths at a budget whose widths can both reach 200 has both >= 200.
    for b in s.budgets:
        at = {p.depth: p for p in s.points() if p.target_budget == b}
        for shallow, deep in ((6, 12), (12, 24)):
            if b >= 12 * deep * 208 ** 2:  # both round to >= 200 at this budget
                assert not at[shallow].narrow and not at[deep].narrow


def test_the_flop_count_is_six_per_weight_and_token_plus_attention():
    s = ps.Sweep(name="t", depths=(2,), budgets=(12 * 2 * 64 ** 2,), seeds=(0, 1), head_size=16, tokens_per_run=4096,
                 lrs=(1e-3, 2e-3, 4e-3), select_seeds=1, trainer="group",
                 train={"vocab_size": 300, "seq_len": 32, "batch_size": 8, "eval_interval": 0, "validation_split": True})
    c = cost.plan_cost(s, train_tokens=1024)
    weights = 12 * 2 * 64 ** 2 + 300 * 64  # block matrices and the output projection (the lookups: no products)
    per_token = 6 * weights + 12 * 2 * 32 * 64
    evaluated = 8 * 8 * 32 * 2  # one evaluation at the end: 8 batches of 8 x 32 tokens, held-out and validation
    per_run = 4096 * per_token + evaluated * per_token / 3  # an evaluation is the forward pass: a third
    assert c["runs"] == 4 and c["runs_per_point"] == 4  # 3 rates on seed 0, seed 1 at the chosen rate
    assert c["flops"] == pytest.approx(4 * per_run) and c["budgets"][0]["passes"] == 4.0
    whole = cost.plan_cost(dataclasses.replace(s, train={**s.train, "final_eval": "whole"}), held_out_tokens=5000)
    assert whole["flops"] == pytest.approx(c["flops"] + 4 * 5000 * per_token / 3)  # the whole splits read once
    est = cost.estimate(s, share=0.5, reference_tflops=1.0, target_minutes=1.0)
    assert est["minutes"] == pytest.approx(4 * per_run / 0.5e12 / 60)
    assert est["share_needed"] == pytest.approx(4 * per_run / 60 / 1e12) and est["meets_target"]


def test_the_cpu_rate_is_what_the_stored_cpu_sweep_averaged():
    records = rc.stored_results(cost.CPU_REFERENCE)
    flops = sum(TrainConfig.from_dict(r["config"]).cost()["flops"] for r in records)
    assert cost.cpu_rate() == pytest.approx(flops / sum(r["wall_seconds"] for r in records))
    assert 1e9 < cost.cpu_rate() < 1e12  # GFLOP/s, as two cores give
    est = cost.estimate(ps.get_preset("cpu-pairs"), cpu_rate=cost.cpu_rate())
    assert est["cpu_hours"] == pytest.approx(est["flops"] / cost.cpu_rate() / 3600)


def test_the_gpu_preset_fits_25_minutes_at_40_percent_of_the_benchmark_rate():
    est = cost.estimate(ps.get_preset("gpu-fig2"))
    assert est["meets_target"] and est["share_needed"] <= 0.40  # a design target: an estimate, not a measurement
    assert est["runs"] == 15 * 5  # 15 points x (3 rates on seed 0 + seeds 1, 2 at the chosen rate)


def test_cli_prints_the_cost_and_refuses_options_that_do_nothing(capsys, tmp_path):
    assert cli.main(["sweep", "--preset", "gpu-fig2", "--cost", "--share", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "FLOPs planned" in out and "at 20% of 400 TFLOP/s" in out and "does not meet" in out
    assert cli.main(["sweep", "--preset", "gpu-fig2", "--cost", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meets_target"] is True
    assert cli.main(["sweep", "--preset", "gpu-fig2", "--cost", "--limit", "1"]) == 2
    assert "--limit does nothing with --cost" in capsys.readouterr().err
    assert cli.main(["sweep", "--preset", "gpu-fig2", "--share", "0.3", "--dry-run", "--out", str(tmp_path)]) == 2
    assert cli.main(["sweep", "--preset", "gpu-fig2", "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "* narrower than 200" in out and "and 30 runs of seeds 1, 2 at the rate each shape chooses" in out
