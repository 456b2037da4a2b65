"""The trainer of dwlib.train.loop: overfitting, exact resume, data parallelism, divergence, CLI errors."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dwlib import cli
from dwlib.train import loop as train_module
from dwlib.errors import InputError
from dwlib.train.loop import TrainConfig, train


def tiny(corpus, tmp_path, **kw):
    base = dict(depth=1, width=32, vocab_size=300, seq_len=32, batch_size=8, steps=12, lr=3e-3,
                eval_interval=4, eval_batches=2, checkpoint_interval=4, corpus=corpus)
    return TrainConfig(**{**base, **kw})


def test_tiny_model_overfits_a_tiny_corpus(corpus, tmp_path):
    result = train(tiny(corpus, tmp_path, depth=2, steps=120, lr=1e-2, warmup=0.1, eval_interval=60),
                   progress=False, verbose=False)
    assert result["status"] == "completed"
    first, last = result["train_losses"][0], result["train_loss"]
    assert abs(first - np.log(300)) < 0.3, first
    assert last < 0.5, last  # a repeated paragraph is memorised
    assert result["eval_loss"] < 0.5


def test_interrupted_and_resumed_training_equals_uninterrupted(corpus, tmp_path):
    whole = train(tiny(corpus, tmp_path, out_dir=str(tmp_path / "whole")), progress=False, verbose=False)
    parts = tiny(corpus, tmp_path, out_dir=str(tmp_path / "parts"))
    assert train(parts, progress=False, verbose=False, stop_after=6)["status"] == "stopped"  # "killed" at 6
    assert not (tmp_path / "parts" / "result.json").exists()
    resumed = train(parts, progress=False, verbose=False)  # resumes from the checkpoint at step 4
    assert resumed["train_losses"] == whole["train_losses"]  # bit for bit
    assert resumed["evals"] == whole["evals"]
    steps = [json.loads(l)["step"] for l in (tmp_path / "parts" / "metrics.jsonl").read_text().splitlines()]
    assert steps == [json.loads(l)["step"] for l in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    assert sorted(os.listdir(tmp_path / "parts")) == ["checkpoints", "config.json", "metrics.jsonl", "result.json"]
    assert train(parts, progress=False, verbose=False)["train_losses"] == whole["train_losses"]  # finished: stored


def test_divergence_is_recorded_not_raised(corpus, tmp_path):
    result = train(tiny(corpus, tmp_path, lr=1e9, warmup=0.0, clip_norm=1e30, out_dir=str(tmp_path / "d")),
                   progress=False, verbose=False)
    assert result["status"] == "diverged" and 1 <= result["diverged_step"] <= 12
    assert json.loads((tmp_path / "d" / "result.json").read_text())["status"] == "diverged"


def test_eight_devices_give_the_losses_of_one(corpus, tmp_path):
    """The batch split over 8 simulated CPU devices computes what one device computes."""
    script = textwrap.dedent(f"""
        import json, jax
        from dwlib.train.loop import TrainConfig, train
        cfg = TrainConfig(depth=1, width=32, vocab_size=300, seq_len=32, batch_size=8, steps=6, lr=3e-3,
                          eval_interval=3, eval_batches=2, corpus={corpus!r})
        r = train(cfg, progress=False, verbose=False)
        print(json.dumps({{"devices": r["devices"]["count"], "losses": r["train_losses"], "evals": r["evals"]}}))
    """)
    out = {}
    for n in (1, 8):  # the flag must be set before JAX starts: one process each
        env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}", "JAX_PLATFORMS": "cpu"}
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out[n]["devices"] == n
    np.testing.assert_allclose(out[8]["losses"], out[1]["losses"], rtol=1e-4)
    np.testing.assert_allclose([e["eval_loss"] for e in out[8]["evals"]], [e["eval_loss"] for e in out[1]["evals"]],
                               rtol=1e-4)


HOST_MEMORY_PROBE = textwrap.dedent("""
    import ctypes, json, resource, threading
    from dwlib.train.loop import configure_host_memory
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


def test_train_sets_up_host_memory_first(corpus, tmp_path, monkeypatch):
    """train() asks for the host-memory setting before the devices are set up (here JAX already runs, so
    the setting itself declines: see the probe above for what it does in a fresh process)."""
    calls = []
    monkeypatch.setattr(train_module, "configure_host_memory", lambda: calls.append("host") or False)
    monkeypatch.setattr(train_module, "configure_cpu_devices", lambda: calls.append("devices"))
    train(tiny(corpus, tmp_path, steps=2, eval_interval=0, checkpoint_interval=0), progress=False, verbose=False)
    assert calls[:2] == ["host", "devices"]
    assert train_module._jax_started() and "jax" in sys.modules


def run_cli(capsys, *args):
    """``dwlib train ARGS`` in this process, handled as dwlib.cli.main handles it (InputError: one line, 2)."""
    parser = cli._Parser(prog="dwlib")
    train_module.add_commands(parser.add_subparsers(dest="command", parser_class=cli._Parser))
    parsed = parser.parse_args(["train", "--no-progress", *args])
    try:
        status = parsed.run(parsed)
    except InputError as err:
        print(f"dwlib train: error: {err}", file=sys.stderr)
        status = 2
    return status, capsys.readouterr().err.strip()


def test_bad_input_gives_one_line_and_status_2(corpus, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    cases = [
        (["--width", "30", "--heads", "4"], "not divisible by heads"),
        (["--depth", "0"], "depth must be"),
        (["--corpus", "nonsense"], "unknown corpus 'nonsense'"),
        (["--corpus", str(tmp_path / "missing.txt")], "does not exist"),
        (["--corpus", corpus, "--vocab-size", "300", "--seq-len", "100000"], "too small"),
        (["--corpus", corpus, "--vocab-size", "300", "--batch-size", "3", "--seq-len", "16"], None),  # valid
    ]
    (tmp_path / "empty.txt").write_text("")
    cases.append((["--corpus", str(tmp_path / "empty.txt")], "empty"))
    (tmp_path / "file").write_text("x")
    cases.append((["--corpus", corpus, "--out", str(tmp_path / "file" / "sub")], "not a directory"))
    monkeypatch.setattr("dwlib.train.data._hub_reachable", lambda timeout=5.0: False)
    cases.append((["--corpus", "wikitext-103"], "needs network access"))
    for args, message in cases:
        if message is None:
            continue
        status, err = run_cli(capsys, "--out", str(out), "--steps", "2", *args)
        assert status == 2, (args, err)
        assert message in err and err.count("\n") == 0 and err.startswith("dwlib train: error:"), err
        assert not out.exists(), args  # validated before anything was created


def test_cli_runs_and_bad_input_exits_2_as_a_process(corpus, tmp_path):
    env = {**os.environ}
    base = [sys.executable, "-m", "dwlib", "train", "--no-progress", "--corpus", corpus, "--vocab-size", "300",
            "--depth", "1", "--width", "32", "--seq-len", "16", "--batch-size", "4", "--steps", "3",
            "--out", str(tmp_path / "run")]
    bad = subprocess.run(base + ["--heads", "5"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0, bad.stderr
    assert "width 32 is not divisible by heads 5" in bad.stderr and not (tmp_path / "run").exists()
    ok = subprocess.run(base + ["--json"], env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["status"] == "completed" and result["steps_done"] == 3
    assert json.loads(ok.stdout)["config"]["heads"] == 2
