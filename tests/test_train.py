"""The trainer (dwlib.train): overfitting, exact resume, data parallelism, divergence, host memory,
configs and run keys."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dwlib import cli
from dwlib.errors import InputError
from dwlib.train.config import TrainConfig, run_key
from dwlib.train.loop import train
from dwlib.train.rundir import read_metrics

ROOT = Path(__file__).resolve().parents[1]
STORED = sorted(ROOT.glob("results/*/runs/*/config.json"))


def tiny(corpus, **kw):
    base = dict(depth=1, width=32, vocab_size=300, seq_len=32, batch_size=8, steps=12, lr=3e-3,
                eval_interval=4, eval_batches=2, checkpoint_interval=4, corpus=corpus)
    return TrainConfig.from_dict({**base, **kw})


def test_tiny_model_overfits_a_tiny_corpus(corpus, tmp_path):
    cfg = tiny(corpus, depth=2, steps=120, lr=1e-2, warmup=0.1, eval_interval=60, out_dir=str(tmp_path / "r"))
    result = train(cfg, progress=False, verbose=False)
    assert result["status"] == "completed"
    losses, evals = read_metrics(tmp_path / "r")
    assert abs(losses[0] - np.log(300)) < 0.3, losses[0]
    assert result["train_loss"] < 0.5  # a repeated paragraph is memorised
    assert result["eval_loss"] < 0.5 and result["eval_loss"] == evals[-1]["eval_loss"]


def test_interrupted_and_resumed_training_equals_uninterrupted(corpus, tmp_path):
    whole = train(tiny(corpus, out_dir=str(tmp_path / "whole")), progress=False, verbose=False)
    parts = tiny(corpus, out_dir=str(tmp_path / "parts"))
    assert train(parts, progress=False, verbose=False, stop_after=6)["status"] == "stopped"  # "killed" at 6
    assert not (tmp_path / "parts" / "result.json").exists()
    resumed = train(parts, progress=False, verbose=False)  # resumes from the checkpoint at step 4
    metrics = {name: (tmp_path / name / "metrics.jsonl").read_text() for name in ("whole", "parts")}
    assert metrics["parts"] == metrics["whole"]  # every loss, rate and evaluation, bit for bit
    timing = ("tokens_per_s", "seconds_this_session")
    assert {k: v for k, v in resumed.items() if k not in timing} == {k: v for k, v in whole.items() if k not in timing}
    assert sorted(os.listdir(tmp_path / "parts")) == [".lock", "checkpoints", "config.json", "metrics.jsonl",
                                                      "result.json"]
    assert train(parts, progress=False, verbose=False) == resumed  # finished: the stored summary
    with pytest.raises(InputError, match=r"different config \(lr\)"):
        train(parts.replace(lr=1e-3), progress=False, verbose=False)


def test_the_curve_is_stored_once(corpus, tmp_path):
    train(tiny(corpus, steps=4, out_dir=str(tmp_path / "r")), progress=False, verbose=False)
    result = json.loads((tmp_path / "r" / "result.json").read_text())
    assert not {"evals", "train_losses", "config"} & result.keys()
    losses, evals = read_metrics(tmp_path / "r")
    assert len(losses) == 4 and [e["step"] for e in evals] == [0, 4]


def test_a_run_directory_stores_no_machine_path_and_no_learning_rate(corpus, tmp_path):
    """config.json holds what the run computes, not where it ran (its output and cache
    directories); metrics.jsonl holds the losses, not the rate the schedule gives each step."""
    cfg = tiny(corpus, steps=4, out_dir=str(tmp_path / "r"), cache_dir=str(tmp_path / "cache"))
    train(cfg, progress=False, verbose=False)
    stored = json.loads((tmp_path / "r" / "config.json").read_text())
    assert "out_dir" not in stored and "cache_dir" not in stored
    assert TrainConfig.from_dict(stored).replace(out_dir=cfg.out_dir, cache_dir=cfg.cache_dir) == cfg
    lines = [json.loads(line) for line in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and not any("lr" in rec for rec in lines)


def test_divergence_is_recorded_not_raised(corpus, tmp_path):
    result = train(tiny(corpus, lr=1e9, warmup=0.0, clip_norm=1e30, out_dir=str(tmp_path / "d")),
                   progress=False, verbose=False)
    assert result["status"] == "diverged" and 1 <= result["diverged_step"] <= 12
    assert result["eval_loss"] is None
    assert json.loads((tmp_path / "d" / "result.json").read_text())["status"] == "diverged"


def test_eight_devices_give_the_losses_of_one(corpus, tmp_path):
    """The batch split over 8 simulated CPU devices computes what one device computes."""
    script = textwrap.dedent(f"""
        import json, sys
        from dwlib.train.rundir import read_metrics
        from dwlib.train.config import TrainConfig
        from dwlib.train.loop import train
        cfg = TrainConfig.from_dict(dict(depth=1, width=32, vocab_size=300, seq_len=32, batch_size=8, steps=6,
                                         lr=3e-3, eval_interval=3, eval_batches=2, corpus={corpus!r},
                                         out_dir=sys.argv[1]))
        r = train(cfg, progress=False, verbose=False)
        losses, evals = read_metrics(sys.argv[1])
        print(json.dumps({{"devices": r["devices"]["count"], "losses": losses, "evals": evals}}))
    """)
    out = {}
    for n in (1, 8):  # the flag must be set before JAX starts: one process each
        env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}", "JAX_PLATFORMS": "cpu"}
        proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / f"d{n}")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out[n]["devices"] == n
    np.testing.assert_allclose(out[8]["losses"], out[1]["losses"], rtol=1e-4)
    np.testing.assert_allclose([e["eval_loss"] for e in out[8]["evals"]], [e["eval_loss"] for e in out[1]["evals"]],
                               rtol=1e-4)


HOST_MEMORY_PROBE = textwrap.dedent("""
    import ctypes, json, resource, threading
    from dwlib.train.process import configure_host_memory
    kept = configure_host_memory()
    libc, size, faults = ctypes.CDLL(None), 96 << 20, []
    libc.prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE: 4 KB pages even where huge pages are always on
    libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    def work():  # as XLA's launch threads do: a large scratch block per call, freed on return
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
            block = libc.malloc(size)
            ctypes.memset(block, 1, size)
            libc.free(block)
            faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)
    thread = threading.Thread(target=work)
    thread.start(); thread.join()
    print(json.dumps({"kept": kept, "faults": faults, "pages": size // resource.getpagesize()}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux") or __import__("platform").libc_ver()[0] != "glibc",
                    reason="glibc's allocator only")
def test_freed_host_memory_is_reused_without_page_faults():
    """configure_host_memory: a large block freed by a thread comes back without faulting its pages
    in again; glibc's default (DWLIB_HOST_MEMORY=system) faults them all in on every call."""
    out = {}
    for mode in ("keep", "system"):
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES" and not k.startswith("MALLOC_")}
        env["DWLIB_HOST_MEMORY"] = mode
        proc = subprocess.run([sys.executable, "-c", HOST_MEMORY_PROBE], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    pages = out["keep"]["pages"]
    assert out["keep"]["kept"] is True and out["system"]["kept"] is False
    assert max(out["keep"]["faults"][1:]) < pages // 20, out  # reused: almost nothing faulted in again
    assert min(out["system"]["faults"][1:]) > pages // 2, out  # the default: faulted in again each time


def test_config_is_flat_on_disk_and_nested_in_memory():
    cfg = TrainConfig.from_dict({"depth": 3, "width": 64, "lr": 1e-3, "batch_size": 4})
    assert (cfg.model.depth, cfg.model.heads, cfg.optim.lr, cfg.batch_size) == (3, 1, 1e-3, 4)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(InputError, match="unknown training setting 'depht'"):
        TrainConfig.from_dict({"depht": 3})


def test_every_stored_run_is_named_by_its_key():
    """Run keys are stable: the key of each stored config (read into a TrainConfig and back) is
    its directory's name, whatever its ``ops``, directory or checkpoint interval."""
    assert STORED
    wrong = []
    for path in STORED:
        stored = json.loads(path.read_text())
        cfg = TrainConfig.from_dict(stored)
        moved = {**stored, "ops": "plain", "out_dir": "/elsewhere", "cache_dir": "/c", "checkpoint_interval": 7}
        if not (run_key(stored) == run_key(cfg) == run_key(moved) == path.parent.name
                and run_key({**stored, "seed": stored["seed"] + 1}) != path.parent.name):
            wrong.append(f"{path.parts[-4]}/{path.parts[-2]}")
    assert not wrong, f"stored runs not named by their key: {wrong}"


def test_cli_trains_and_prints_the_summary(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    status = cli.main(["train", "--no-progress", "--json", "--corpus", corpus, "--vocab-size", "300", "--depth", "1",
                       "--width", "32", "--seq-len", "16", "--batch-size", "4", "--steps", "3", "--out", str(out)])
    printed = json.loads(capsys.readouterr().out)
    assert status == 0 and printed["status"] == "completed" and printed["steps_done"] == 3
    assert printed["config"]["heads"] == 2  # the default head count, resolved and recorded
    assert json.loads((out / "config.json").read_text()) == printed["config"]
