"""Sweeps at matched budgets: grids, keys, shards, skipping finished runs, resuming, results."""

import json

import pytest

from dwlib import cli
from dwlib.experiments import sweep as sw
from dwlib.errors import InputError

def tiny_sweep(corpus, seeds=(0,)):
    return sw.Sweep(name="tiny", depths=(1, 2), budgets=(12 * 32 * 32, 12 * 48 * 48), seeds=seeds, head_size=16,
                    tokens_per_run=8 * 16 * 6,
                    train={"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "lr": 3e-3,
                           "eval_interval": 3, "eval_batches": 2, "checkpoint_interval": 3})


def test_grid_rounds_widths_to_head_multiples_and_records_the_actual_budget():
    points = sw.grid([1, 4], [100e3, 400e3], head_size=16)
    assert [(p.depth, p.width) for p in points] == [(1, 96), (1, 176), (4, 48), (4, 96)]
    for p in points:
        assert p.width % 16 == 0 and p.heads == p.width // 16
        assert p.budget == 12 * p.depth * p.width ** 2
        assert abs(p.width - (p.target_budget / (12 * p.depth)) ** 0.5) <= 8  # nearest multiple of 16
    # sqrt(100e3 / 12) = 91.3 -> 96, so the budget moves to 12 * 96^2 = 110,592 (+10.6%)
    assert points[0].budget == 110_592 and points[0].budget_error == pytest.approx(110_592 / 100e3 - 1)


def test_grid_drops_too_narrow_and_duplicate_points():
    points = sw.grid([8], [1e3, 2e3, 24.6e3], head_size=16)  # sqrt(1e3/96) = 3.2 and 4.6 -> 16 twice
    assert [(p.depth, p.width) for p in points] == [(8, 16)]
    assert sw.grid([8], [1e3], head_size=16, min_width=32) == []


def test_presets_are_valid_and_the_mini_grid_straddles_the_thresholds():
    mini = sw.get_preset("mini")
    cfgs = mini.configs()
    assert len(cfgs) == len(mini.points()) * len(mini.seeds)
    widths = sorted({c.width for c in cfgs})
    # log3 d_x = 3 at 27, 4 at 81, 5 at 243: the grid has widths on both sides of each.
    assert widths[0] < 27 and any(27 < w < 81 for w in widths) and any(81 < w < 243 for w in widths)
    assert all(c.steps == mini.steps() for c in cfgs)
    assert sw.get_preset("paper").depths == (6, 12, 18, 24, 30, 36, 48)
    with pytest.raises(InputError, match="unknown preset 'huge'"):
        sw.get_preset("huge")


def test_learning_rates_multiply_the_runs_of_a_point_and_keep_their_keys_apart(corpus):
    import dataclasses

    base = tiny_sweep(corpus)
    swept = dataclasses.replace(base, lrs=(1e-3, 4e-3))
    cfgs = swept.configs()
    assert len(cfgs) == 2 * len(base.configs())
    assert [c.lr for c in cfgs[:2]] == [1e-3, 4e-3] and (cfgs[0].depth, cfgs[0].width) == (cfgs[1].depth, cfgs[1].width)
    assert len({sw.run_key(c) for c in cfgs}) == len(cfgs)
    assert [c.lr for c in base.configs()] == [3e-3] * len(base.configs())  # no lrs: train["lr"]
    lr_preset = sw.get_preset("mini-lr")
    assert {c.lr for c in lr_preset.configs()} == set(lr_preset.lrs) and 2e-3 in lr_preset.lrs
    mini = {(c.depth, c.width) for c in sw.get_preset("mini").configs()}
    assert {(c.depth, c.width) for c in lr_preset.configs()} <= mini  # points of the mini grid


def test_keys_are_stable_distinct_and_ignore_where_a_run_is_written(corpus):
    cfgs = tiny_sweep(corpus, seeds=(0, 1)).configs()
    keys = [sw.run_key(c) for c in cfgs]
    assert len(set(keys)) == len(keys) == 8
    import dataclasses

    moved = dataclasses.replace(cfgs[0], out_dir="/elsewhere", cache_dir="/cache", checkpoint_interval=99)
    assert sw.run_key(moved) == keys[0]
    assert sw.run_key(dataclasses.replace(cfgs[0], lr=1e-4)) != keys[0]


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
    assert [r["status"] for r in first] == ["completed"]
    done_dir = out / "runs" / first[0]["key"]
    stamp = (done_dir / "result.json").stat().st_mtime_ns
    # Sharded continuation: two "machines" share the directory.
    a = sw.run(sweep, out, shard=(0, 2), progress=False)
    b = sw.run(sweep, out, shard=(1, 2), progress=False)
    assert (done_dir / "result.json").stat().st_mtime_ns == stamp  # not redone
    keys = {r["key"] for r in a} | {r["key"] for r in b}
    assert keys == {sw.run_key(c) for c in sweep.configs()}
    results = sw.load_results(out)
    assert len(results) == 4 and [r["depth"] for r in results] == [1, 1, 2, 2]
    for r in results:
        assert r["status"] == "completed" and r["budget"] == 12 * r["depth"] * r["width"] ** 2
        assert r["tokens"] == sweep.steps() * 8 * 16 and r["eval_curve"][-1][0] == sweep.steps()
        assert r["hardware"]["jax"] and "git_commit" in r and r["train_curve"]
    assert all(p["state"] == "done" for p in sw.plan(sweep, out))
    # A stored run trained again for its first steps gives the stored losses.
    import tempfile
    from pathlib import Path

    before = set(Path(tempfile.gettempdir()).glob("dwlib-replay-*"))
    rep = sw.replay(results[0], steps=3)
    assert [e[0] for e in rep["eval"]] == [0, 3] and [t[0] for t in rep["train"]] == [1, 2, 3]
    assert rep["max_abs_diff"] < 1e-4
    assert set(Path(tempfile.gettempdir()).glob("dwlib-replay-*")) == before  # nothing left behind
    with pytest.raises(InputError, match="fewer than 99"):
        sw.replay(results[0], steps=99)


def test_cli_dry_run_and_bad_shard(capsys, tmp_path):
    assert cli.main(["sweep", "--dry-run", "--preset", "mini", "--shard", "1/3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "shard 1/3" in out and "todo" in out
    assert cli.main(["sweep", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["sweep"] == "mini" and len(plan["runs"]) == len(sw.get_preset("mini").configs())
    assert cli.main(["sweep", "--shard", "3/3"]) == 2
    assert capsys.readouterr().err.strip() == "dwlib sweep: error: shard i/n needs 0 <= i < n, got '3/3'"
    assert cli.main(["sweep", "--preset", "nope", "--dry-run"]) == 2


def test_side_by_side_jobs_train_the_same_runs_as_one_process(corpus, tmp_path):
    sweep = tiny_sweep(corpus)
    one = {r["key"]: r for r in sw.run(sweep, tmp_path / "one", progress=False)}
    two = {r["key"]: r for r in sw.run(sweep, tmp_path / "two", progress=False, jobs=2)}
    assert one.keys() == two.keys() and len(one) == 4
    for key in one:
        # one XLA device per worker instead of this process's devices: the same run up to float sums
        assert two[key]["eval_loss"] == pytest.approx(one[key]["eval_loss"], rel=1e-4)
        assert two[key]["hardware"] and two[key]["wall_seconds"] > 0
    with pytest.raises(InputError, match="jobs must be"):
        sw.run(sweep, tmp_path / "three", jobs=0)


def test_publish_stores_the_results_with_the_package(corpus, tmp_path, monkeypatch):
    sweep = tiny_sweep(corpus)
    sw.run(sweep, tmp_path / "out", progress=False, limit=2)
    name = "test-publish-tmp"
    dest = sw.publish(tmp_path / "out", name)
    try:
        assert dest.parent.name == "sweeps" and dest.parent.parent.name == "data"
        assert sw.stored_results(name) == sw.load_results(tmp_path / "out")
        assert len(sw.stored_results(name)) == 2
    finally:
        dest.unlink()
    with pytest.raises(InputError, match="no stored sweep named 'nope'"):
        sw.stored_results("nope")


def test_summary_describes_a_sweep_and_its_stored_runs():
    mini = sw.get_preset("mini")
    recs = [{"config": {"batch_size": 4, "seq_len": 8, "lr": 1e-3, "corpus": "sotu", "vocab_size": 1000},
             "hardware": {"backend": "cpu", "device_kind": "cpu", "jax": "0.0"}, "depth": 1, "width": w, "tokens": 1000,
             "status": s, "wall_seconds": 60} for w, s in ((16, "completed"), (32, "diverged"))]
    rows = sw.summary(mini, recs)
    assert rows["target budgets N"] == "25K, 50K, 100K, 200K, 400K, 800K"
    assert rows["widths d_x"] == "16 to 32 (head size 8)"
    assert rows["runs stored / planned"] == f"2 / {len(mini.configs())}"
    assert rows["runs that diverged"] == 1 and rows["compute dtype"] == "float32"
    assert rows["seeds per point"] == "1"  # as stored: one run at each of the two widths
    assert rows["wall time of the runs, summed"] == "2 min"
    assert sw.summary(sw.get_preset("gpu-slice"), recs)["target budgets N"] == "1M, 3M, 10M, 30M, 100M"
