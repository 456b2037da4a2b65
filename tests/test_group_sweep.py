"""A sweep trained shape by shape (dwlib.experiments.group_sweep): the learning-rate grid on the
first seed, the other seeds at the rate chosen on the validation split, each group committed
whole and never trained again, run directories a single run would have written."""

import dataclasses
import json
import subprocess

import numpy as np
import pytest

from dwlib.experiments import group_sweep as gs
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.experiments import selection
from dwlib.experiments import sweep as sw
from dwlib.train.config import run_key
from dwlib.train.loop import train
from dwlib.train.multi import metric_records
from dwlib.train.rundir import metric_line


def tiny(corpus, **kw):
    base = dict(name="tiny-group", depths=(1, 2), budgets=(12 * 32 * 32,), seeds=(0, 1), head_size=16,
                tokens_per_run=8 * 16 * 6, lrs=(1e-3, 2e-3, 4e-3), select_seeds=1, exclude=("diverged-rate",),
                trainer="group", chunk=3,
                train={"corpus": corpus, "vocab_size": 300, "seq_len": 16, "batch_size": 8, "lr": 3e-3,
                       "eval_interval": 3, "eval_batches": 2, "checkpoint_interval": 0, "validation_split": True})
    return ps.Sweep(**{**base, **kw})


@pytest.mark.slow  # two groups compiled (262 s measured with 2 shapes on the shared 2-core machine at load 10-15)
def test_grid_then_chosen_rate_committed_group_by_group(corpus, tmp_path):
    sweep, out = tiny(corpus, depths=(1,)), tmp_path / "out"
    assert [(p.depth, p.width) for p in sweep.points()] == [(1, 32)] and sweep.runs_per_point() == 4
    first = sw.run(sweep, out, limit=1, progress=False)  # one group: the grid (seed 0, three rates)
    assert first.counts["completed"] == 3 and first.counts["left"] == 1  # seed 1, its rate now chosen
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/result.json")}
    assert len(stamps) == 3 and not list(out.glob("runs/.*.group"))
    done = sw.run(sweep, out, progress=False)
    assert done.counts["completed"] == 1 and done.counts["before"] == 3 and len(done) == 4
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # the first group was not trained again
    records = rc.collect(out)
    assert len(records) == 4 and all(r["status"] == "completed" and r["select_loss"] for r in records)
    choice = selection.choose(records, sweep.grid_seeds(), sweep.exclude)
    assert list(choice) == [(1, 32)] and [p.name for p in out.glob("*.json")] == ["sweep.json"]  # nothing derived
    for (depth, width), c in choice.items():
        grid = {r["lr"]: r["select_loss"] for r in records if (r["depth"], r["width"], r["seed"]) == (depth, width, 0)}
        assert sorted(grid) == [1e-3, 2e-3, 4e-3] and c["lr"] == min(grid, key=grid.get)  # lowest validation loss
        seed1 = [r for r in records if (r["depth"], r["width"], r["seed"]) == (depth, width, 1)]
        assert [r["lr"] for r in seed1] == [c["lr"]]  # the second seed trains at the chosen rate only
    marked = selection.chosen_records(list(done))
    assert len(marked) == 2 and {r["seed"] for r in marked} == {0, 1}
    assert all(r["chosen_lr"] == r["lr"] for r in marked)
    assert all(r["narrow"] and r["total_params"] > r["budget"] for r in records)
    assert all(r["group"]["runs"] in (1, 3) for r in records)
    assert all(p["state"] == "done" for p in sw.plan(sweep, out))


@pytest.mark.slow  # a group, a single run and its replay (388 s measured on the shared 2-core machine at load 10-15)
def test_a_group_run_is_the_run_a_single_training_gives(corpus, tmp_path):
    sweep = tiny(corpus, depths=(1,), lrs=(1e-3, 4e-3), select_seeds=None, seeds=(0,))
    sw.run(sweep, tmp_path / "out", progress=False)
    rec = next(r for r in rc.collect(tmp_path / "out") if r["lr"] == 4e-3)
    cfg = sweep.config(sweep.points()[0], 0, 4e-3)
    single = train(cfg.replace(out_dir=str(tmp_path / "single")), progress=False, verbose=False)
    alone = rc.record(tmp_path / "single")
    assert rec["key"] == run_key(cfg) == run_key(rc.record(tmp_path / "single")["config"])  # the same run
    np.testing.assert_allclose([v for _, v in rec["eval_curve"]], [v for _, v in alone["eval_curve"]], rtol=2e-5)
    np.testing.assert_allclose([v for _, v in rec["train_curve"]], [v for _, v in alone["train_curve"]], rtol=2e-5)
    assert rec["eval_loss"] == pytest.approx(single["eval_loss"], rel=2e-5)
    assert sw.replay(rec, steps=3)["max_abs_diff"] < 1e-4  # a stored group run replays as a single run


@pytest.mark.slow  # two groups, one trained twice (175 s measured on the shared 2-core machine at load 10-15)
def test_a_sweep_killed_during_a_group_keeps_the_groups_before_it(corpus, tmp_path, monkeypatch):
    sweep, out = tiny(corpus, seeds=(0,), select_seeds=None, lrs=(1e-3, 2e-3)), tmp_path / "out"
    real, calls = gs.train_group, []

    def dies_second_time(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(gs, "train_group", dies_second_time)
    with pytest.raises(KeyboardInterrupt):
        sw.run(sweep, out, progress=False)
    kept = sorted(p.parent.name for p in out.glob("runs/*/result.json"))
    assert len(kept) == 2 and not list(out.glob("runs/.*.group"))
    monkeypatch.setattr(gs, "train_group", real)
    again = sw.run(sweep, out, progress=False)
    assert again.counts["before"] == 2 and again.counts["completed"] == 2


@pytest.mark.slow  # one group trained twice (43 s measured on the shared 2-core machine at load 5)
def test_a_sweep_killed_between_two_commits_retrains_the_whole_group_bit_for_bit(corpus, tmp_path, monkeypatch):
    """Killed after committing the first run of a group: the next sweep removes the temporary a
    dead process left, trains the group again as it was composed and commits the missing run,
    whose curve is the first training's bit for bit (a group of one differs in the last digits)."""
    sweep, out = tiny(corpus, depths=(1,), seeds=(0,), select_seeds=None, lrs=(1e-3, 4e-3)), tmp_path / "out"
    real_train, real_commit, curves, committed = gs.train_group, gs._commit, [], []

    def recorded(cfgs, **kw):
        state, runs = real_train(cfgs, **kw)
        curves.append(runs)
        return state, runs

    def killed_after_one(row, *args):
        if committed:
            raise KeyboardInterrupt
        committed.append(row["key"])
        return real_commit(row, *args)

    monkeypatch.setattr(gs, "train_group", recorded)
    monkeypatch.setattr(gs, "_commit", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        sw.run(sweep, out, progress=False)
    rows = [r for g in gs.groups(sweep, out) for r in g["rows"]]
    assert [r["state"] for r in rows] == ["done", "todo"] and rows[0]["key"] == committed[0]
    first = (out / "runs" / rows[0]["key"] / "metrics.jsonl").read_bytes()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = out / "runs" / f".{rows[1]['key']}.{dead.pid}.group"  # as a kill at the commit's first moment leaves it
    stale.mkdir()
    (stale / "config.json").write_text("{")
    monkeypatch.setattr(gs, "_commit", real_commit)
    again = sw.run(sweep, out, progress=False)
    assert again.counts["completed"] == 1 and again.counts["before"] == 1 and not stale.exists()
    assert len(curves) == 2 and curves[1] == curves[0]  # the whole group again, bit for bit
    assert (out / "runs" / rows[0]["key"] / "metrics.jsonl").read_bytes() == first  # not committed twice
    cfg = rows[1]["config"]
    lines = [metric_line(r) for r in metric_records(curves[0][1], cfg.eval_interval)]
    assert (out / "runs" / rows[1]["key"] / "metrics.jsonl").read_text() == "".join(x + "\n" for x in lines)
    assert rc.record(out / "runs" / rows[1]["key"])["group"]["runs"] == 2
    stored = json.loads((out / "runs" / rows[1]["key"] / "config.json").read_text())  # what it computes, not where
    assert "out_dir" not in stored and "cache_dir" not in stored and run_key(stored) == rows[1]["key"]
    assert not any('"lr"' in x for x in lines)  # the schedule gives each step's rate: not stored


def test_group_presets_refuse_unknown_rules(corpus, tmp_path):
    from dwlib.errors import InputError

    with pytest.raises(InputError, match="unknown exclusion rule"):
        tiny(corpus, exclude=("after-the-fact",))
    with pytest.raises(InputError, match="select_seeds"):
        dataclasses.replace(tiny(corpus), select_seeds=3)
    with pytest.raises(InputError, match="needs trainer='group' and a validation split"):
        dataclasses.replace(tiny(corpus), trainer="single")


def test_a_sweep_refuses_to_add_runs_on_another_corpus(corpus, tmp_path):
    """The rest of a sweep on another text (a system package at another version) would be
    compared with runs that read the first: refused before anything trains."""
    from dwlib.errors import InputError
    from dwlib.train import data as data_lib
    sweep, out = tiny(corpus, depths=(1,)), tmp_path / "out"
    cfg = sweep.configs()[0]
    meta = data_lib.load_corpus(cfg.corpus, cfg.model.vocab_size, seq_len=cfg.model.seq_len,
                                validation_split=True).meta
    out.mkdir()
    sw.claim(sweep, out)  # a sweep's folder (its sweep.json), one run finished in it
    finished = out / "runs" / "0123456789ab"
    finished.mkdir(parents=True)
    same = {"corpus": {"name": cfg.corpus, "tokens": meta["tokens"], "fingerprint": meta["fingerprint"]}}
    (finished / "result.json").write_text(json.dumps(same))
    gs.check_one_corpus(sweep, out)  # the same text: nothing to say
    other = {"corpus": {"name": cfg.corpus, "tokens": {"train": 12345}, "fingerprint": "5b1569606b0b6de9"}}
    (finished / "result.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match=r"fingerprint 5b1569606b0b6de9 \(12345 training tokens\).*"
                                         + meta["fingerprint"]):
        sw.run(sweep, out, progress=False)
    assert [p.name for p in (out / "runs").iterdir()] == ["0123456789ab"]  # nothing trained


@pytest.mark.slow  # one group trained whole, then again killed after its first checkpoint and resumed
def test_a_group_killed_while_it_trains_resumes_from_its_checkpoint_bit_for_bit(corpus, tmp_path, monkeypatch):
    """A checkpoint at every chunk boundary (CHECKPOINT_SECONDS 0); killed right after the first
    (step 3 of 6), the next sweep resumes the group there, commits runs whose metrics are those of
    an uninterrupted group byte for byte, and deletes the checkpoint."""
    sweep = tiny(corpus, depths=(1,), seeds=(0,), select_seeds=None, lrs=(1e-3, 4e-3))
    monkeypatch.setattr(gs, "CHECKPOINT_SECONDS", 0)
    whole = sw.run(sweep, tmp_path / "whole", progress=False)
    assert whole.counts["completed"] == 2 and not list((tmp_path / "whole" / "runs").glob(".group-*"))
    real_save, starts = gs.GroupCheckpoint.save, []

    def killed_after_saving(self, step, *args):
        real_save(self, step, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(gs.GroupCheckpoint, "save", killed_after_saving)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        sw.run(sweep, out, progress=False)
    assert not list(out.glob("runs/*/result.json")) and [p.name for p in out.glob("runs/.group-*/*")
                                                        if p.name.isdigit()] == ["3"]
    monkeypatch.setattr(gs.GroupCheckpoint, "save", real_save)
    real_train = gs.train_group

    def recorded(cfgs, **kw):
        starts.append(kw["state"]["step"])
        return real_train(cfgs, **kw)

    monkeypatch.setattr(gs, "train_group", recorded)
    again = sw.run(sweep, out, progress=False)
    assert starts == [3] and again.counts["completed"] == 2 and not list((out / "runs").glob(".group-*"))
    for key in (r["key"] for r in again):
        assert ((out / "runs" / key / "metrics.jsonl").read_bytes()
                == (tmp_path / "whole" / "runs" / key / "metrics.jsonl").read_bytes())
        assert rc.record(out / "runs" / key)["eval_loss"] == rc.record(tmp_path / "whole" / "runs" / key)["eval_loss"]
