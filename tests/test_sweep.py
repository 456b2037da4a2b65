"""Sweeps at matched budgets: grids, presets, keys, shards, skipping finished runs, resuming, records."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dwlib import cli
from dwlib.errors import InputError
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.experiments import sweep as sw
from dwlib.train.config import run_key

ROOT = Path(__file__).resolve().parents[1]

def tiny_sweep(corpus, seeds=(0,)):
    return ps.Sweep(name="tiny", depths=(1, 2), budgets=(12 * 32 * 32, 12 * 48 * 48), seeds=seeds, head_size=16,
                    tokens_per_run=8 * 16 * 6,
                    train={"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "lr": 3e-3,
                           "eval_interval": 3, "eval_batches": 2, "checkpoint_interval": 3})


def test_grid_rounds_widths_to_head_multiples_and_records_the_actual_budget():
    points = ps.grid([1, 4], [100e3, 400e3], head_size=16)
    assert [(p.depth, p.width) for p in points] == [(1, 96), (1, 176), (4, 48), (4, 96)]
    for p in points:
        assert p.width % 16 == 0 and p.heads == p.width // 16
        assert p.budget == 12 * p.depth * p.width ** 2
        assert abs(p.width - (p.target_budget / (12 * p.depth)) ** 0.5) <= 8  # nearest multiple of 16
    # sqrt(100e3 / 12) = 91.3 -> 96, so the budget moves to 12 * 96^2 = 110,592 (+10.6%)
    assert points[0].budget == 110_592 and points[0].budget_error == pytest.approx(110_592 / 100e3 - 1)


def test_grid_drops_too_narrow_and_duplicate_points():
    points = ps.grid([8], [1e3, 2e3, 24.6e3], head_size=16)  # sqrt(1e3/96) = 3.2 and 4.6 -> 16 twice
    assert [(p.depth, p.width) for p in points] == [(8, 16)]
    assert ps.grid([8], [1e3], head_size=16, min_width=32) == []


def test_presets_are_valid_and_the_mini_grid_straddles_the_thresholds():
    mini = ps.get_preset("mini")
    cfgs = mini.configs()
    assert len(cfgs) == len(mini.points()) * len(mini.seeds)
    widths = sorted({c.model.width for c in cfgs})
    # log3 d_x = 3 at 27, 4 at 81, 5 at 243: the grid has widths on both sides of each.
    assert widths[0] < 27 and any(27 < w < 81 for w in widths) and any(81 < w < 243 for w in widths)
    assert all(c.steps == mini.steps() for c in cfgs)
    assert ps.get_preset("paper").depths == (6, 12, 18, 24, 30, 36, 48)
    with pytest.raises(InputError, match="unknown preset 'huge'"):
        ps.get_preset("huge")


def test_learning_rates_multiply_the_runs_of_a_point_and_keep_their_keys_apart(corpus):
    base = tiny_sweep(corpus)
    swept = dataclasses.replace(base, lrs=(1e-3, 4e-3))
    cfgs = swept.configs()
    assert len(cfgs) == 2 * len(base.configs())
    assert [c.optim.lr for c in cfgs[:2]] == [1e-3, 4e-3] and cfgs[0].model == cfgs[1].model
    assert len({run_key(c) for c in cfgs}) == len(cfgs)
    assert [c.optim.lr for c in base.configs()] == [3e-3] * len(base.configs())  # no lrs: train["lr"]
    lr_preset = ps.get_preset("mini-lr")
    assert {c.optim.lr for c in lr_preset.configs()} == set(lr_preset.lrs) and 2e-3 in lr_preset.lrs
    mini = {c.model for c in ps.get_preset("mini").configs()}
    assert {c.model for c in lr_preset.configs()} <= mini  # points of the mini grid


def test_keys_are_distinct_and_the_presets_give_the_stored_runs_their_names(corpus):
    cfgs = tiny_sweep(corpus, seeds=(0, 1)).configs()
    assert len({run_key(c) for c in cfgs}) == len(cfgs) == 8
    for name in ("mini", "mini-lr", "gpu-slice"):
        stored = {p.name for p in (ROOT / "results" / name / "runs").iterdir()}
        keys = {run_key(c) for c in ps.get_preset(name).configs()}
        assert stored and stored <= keys, name  # every stored run is a run of its preset, under its key
        assert {c.model.ops for c in ps.get_preset(name).configs()} == {"fast"}  # as the stored runs were trained


def test_shards_are_disjoint_and_cover_the_sweep():
    items = list(range(11))
    parts = [sw.shard_of(items, (i, 3)) for i in range(3)]
    assert sorted(sum(parts, [])) == items and all(set(a).isdisjoint(b) for a in parts for b in parts if a is not b)
    assert sw.parse_shard("2/5") == (2, 5)
    for bad in ("5/5", "-1/2", "a/b", "1"):
        with pytest.raises(InputError, match="shard"):
            sw.parse_shard(bad)


def test_a_killed_sweep_resumes_without_redoing_finished_runs(corpus, tmp_path):
    sweep, out = tiny_sweep(corpus), tmp_path / "out"
    first = sw.run(sweep, out, limit=1, progress=False)
    assert [r["status"] for r in first] == ["completed"] and first.counts["left"] == 3
    done_dir = out / "runs" / first[0]["key"]
    stamp = (done_dir / "result.json").stat().st_mtime_ns
    # Sharded continuation: two "machines" share the directory.
    a = sw.run(sweep, out, shard=(0, 2), progress=False)
    b = sw.run(sweep, out, shard=(1, 2), progress=False)
    assert (done_dir / "result.json").stat().st_mtime_ns == stamp  # not redone
    keys = {r["key"] for r in a} | {r["key"] for r in b}
    assert keys == {run_key(c) for c in sweep.configs()}
    assert not (out / "results.jsonl").exists()  # the runs are the only copy
    results = rc.collect(out)
    assert len(results) == 4 and [r["depth"] for r in results] == [1, 1, 2, 2]
    for r in results:
        assert r["status"] == "completed" and r["budget"] == 12 * r["depth"] * r["width"] ** 2
        assert r["tokens"] == sweep.steps() * 8 * 16 and r["eval_curve"][-1][0] == sweep.steps()
        assert r["hardware"]["jax"] and "git_commit" in r and r["train_curve"]
    assert all(p["state"] == "done" for p in sw.plan(sweep, out))
    # A stored run trained again for its first steps gives the stored losses.
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("dwlib-replay-*"))
    rep = sw.replay(results[0], steps=3)
    assert [e[0] for e in rep["eval"]] == [0, 3] and [t[0] for t in rep["train"]] == [1, 2, 3]
    assert rep["max_abs_diff"] < 1e-4
    assert set(Path(tempfile.gettempdir()).glob("dwlib-replay-*")) == before  # nothing left behind
    with pytest.raises(InputError, match="fewer than 99"):
        sw.replay(results[0], steps=99)


def test_cli_dry_run_lists_the_plan(capsys, tmp_path):
    assert cli.main(["sweep", "--dry-run", "--preset", "mini", "--shard", "1/3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "shard 1/3" in out and "todo" in out
    assert cli.main(["sweep", "--dry-run", "--json", "--out", str(tmp_path)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["sweep"] == "mini" and len(plan["runs"]) == len(ps.get_preset("mini").configs())


def test_publishing_writes_the_records_where_it_is_told(corpus, tmp_path):
    sw.run(tiny_sweep(corpus), tmp_path / "out", progress=False, limit=2)
    dest = tmp_path / "published" / "tiny.jsonl"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "publish_sweep.py"), str(tmp_path / "out"),
                           "--out", str(dest)], capture_output=True, text=True, timeout=120, env=os.environ)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [json.loads(line) for line in dest.read_text().splitlines()] == rc.collect(tmp_path / "out")
    with pytest.raises(InputError, match="no stored sweep named 'nope'"):
        rc.stored_results("nope")


def test_the_published_sweeps_are_the_records_of_the_stored_runs():
    """dwlib/data/sweeps/<name>.jsonl is what scripts/publish_sweep.py makes of results/<name>."""
    names = sorted(p.stem for p in (ROOT / "dwlib" / "data" / "sweeps").glob("*.jsonl"))
    assert names == sorted(p.name for p in (ROOT / "results").iterdir() if p.is_dir())
    for name in names:
        assert rc.stored_results(name) == rc.collect(ROOT / "results" / name), name


def test_summary_describes_a_sweep_and_its_stored_runs():
    mini = ps.get_preset("mini")
    recs = [{"config": {"batch_size": 4, "seq_len": 8, "lr": 1e-3, "corpus": "sotu", "vocab_size": 1000},
             "hardware": {"backend": "cpu", "device_kind": "cpu", "jax": "0.0"}, "depth": 1, "width": w, "tokens": 1000,
             "status": s, "wall_seconds": 60, "lr": 1e-3} for w, s in ((16, "completed"), (32, "diverged"))]
    rows = rc.summary(mini, recs)
    assert rows["target budgets N"] == "25K, 50K, 100K, 200K, 400K, 800K"
    assert rows["widths d_x"] == "16 to 32 (head size 8)"
    assert rows["runs stored / planned"] == f"2 / {len(mini.configs())}"
    assert rows["runs that diverged"] == 1 and rows["compute dtype"] == "float32"
    assert rows["seeds per point"] == "1"  # as stored: one run at each of the two widths
    assert rows["wall time of the runs, summed"] == "2 min"
    assert rc.summary(ps.get_preset("gpu-slice"), recs)["target budgets N"] == "1M, 3M, 10M, 30M, 100M"
    assert rows["peak learning rate"] == "0.001"  # one rate for every run
    grid = ps.get_preset("cpu-fig2")
    assert rc.summary(grid, recs)["peak learning rate"] == "grid 0.002, 0.004, 0.008, 0.016"
    chosen = [{**r, "lr": lr, "chosen_lr": c} for r, lr, c in zip(recs, (4e-3, 1.6e-2), (4e-3, 1.6e-2))]
    assert rc.summary(grid, chosen)["peak learning rate"] == ("grid 0.002, 0.004, 0.008, 0.016; chosen per shape "
                                                              "on the validation split: 0.004, 0.016")
