"""Ctrl-C and SIGTERM: at any moment of ``dwlib train``, ``sweep``, ``seprank`` and
``advise``, one line on stderr and exit status 130 (SIGINT) or 143 (SIGTERM), never ignored,
never a traceback or a warning; what was committed stays usable, and the run resumes to the
result of an uninterrupted one.

The signals are sent as a terminal sends Ctrl-C, to the program's whole process group (each
program starts a session of its own). ``scripts/interrupt_campaign.py`` runs the full campaign
(30 moments per signal); the slow test below runs a few of its moments of each kind."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dwlib import cli, interrupts
from dwlib.experiments import sweep as sweeps
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("interrupt_campaign", ROOT / "scripts" / "interrupt_campaign.py")
campaign = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(campaign)


# --- the line and the statuses ---------------------------------------------------------------------


def test_the_line_names_the_signal_and_says_how_to_resume():
    assert interrupts.status(signal.SIGINT) == 130 and interrupts.status(signal.SIGTERM) == 143
    assert interrupts.line("train", signal.SIGINT) == campaign.LINES[signal.SIGINT]
    assert interrupts.line("sweep", signal.SIGTERM) == ("dwlib sweep: interrupted (SIGTERM); run the same command "
                                                        "again to resume (finished runs are kept)")
    assert interrupts.line("advise", signal.SIGINT) == "dwlib advise: interrupted (SIGINT)"
    assert interrupts.line(None, signal.SIGTERM) == "dwlib: interrupted (SIGTERM)"
    assert interrupts._command(["dwlib", "seprank", "--depth", "2"]) == "seprank"
    assert interrupts._command(["dwlib", "--help"]) is None and interrupts._command(["dwlib"]) is None


def test_sigterm_in_a_subcommand_is_one_line_and_143(monkeypatch, capsys):
    def run(args):
        raise interrupts.Interrupted(signal.SIGTERM)
    monkeypatch.setattr(cli, "_run_advise", run)
    assert cli.main(["advise", "175e9"]) == 143
    assert capsys.readouterr().err == "dwlib advise: interrupted (SIGTERM)\n"
    assert cli.main(["advise", "175e9"]) == 143  # the line again: a second command in one process
    assert capsys.readouterr().err == "dwlib advise: interrupted (SIGTERM)\n"


@pytest.mark.slow  # two runs in this process
def test_a_checkpoint_half_deleted_is_finished_deleting_without_a_warning(corpus, tmp_path, capfd):
    """A process stopped while orbax deleted an old checkpoint (file by file) leaves its step
    directory without ``_CHECKPOINT_METADATA``: the next start removes it, quietly (orbax would
    list it as a checkpoint and warn), and resumes from the newest."""
    cfg = TrainConfig.from_dict(dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=12,
                                     lr=3e-3, eval_interval=3, eval_batches=2, checkpoint_interval=4, corpus=corpus,
                                     out_dir=str(tmp_path / "run")))
    train(cfg, progress=False, verbose=False, stop_after=9)  # checkpoints 4 and 8
    checkpoints = tmp_path / "run" / "checkpoints"
    (checkpoints / "4" / "_CHECKPOINT_METADATA").unlink()  # as orbax's deletion leaves it, some files gone
    capfd.readouterr()
    assert train(cfg, progress=False, verbose=False)["status"] == "completed"
    assert capfd.readouterr().err == ""  # nor a note: the checkpoint at 8 was resumed
    assert sorted(os.listdir(checkpoints)) == ["12", "8"]


# --- the mechanism, in processes of their own (it ends them) ------------------------------------------

PRELUDE = """
import gc, os, signal, sys, time
from dwlib import interrupts
interrupts.install(["dwlib", "train"])
"""

IN_A_GC_CALLBACK = PRELUDE + """
fired = []
def callback(phase, info):  # as jax's _xla_gc_callback: the signal is handled while it runs
    if phase == "start" and not fired:
        fired.append(1)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
gc.callbacks.append(callback)
with interrupts.armed("train"):
    for _ in range(100):
        gc.collect()
        time.sleep(0.01)
print("went on", file=sys.stderr)
interrupts.finish(0)
"""

SWALLOWED = PRELUDE + """
with interrupts.armed("train"):
    while True:  # a library that catches KeyboardInterrupt and carries on
        try:
            if not interrupts.received():
                print("ready", flush=True)
            time.sleep(0.05)
        except KeyboardInterrupt:
            pass
"""


def _program(code: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kw)


def test_an_interrupt_in_a_garbage_collection_callback_is_not_swallowed():
    """Python's handler would raise KeyboardInterrupt inside the callback, where it is printed as
    "Exception ignored" and dropped; here the process ends, with the line."""
    proc = _program(IN_A_GC_CALLBACK)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, campaign.LINES[signal.SIGINT] + "\n")


@pytest.mark.parametrize("second", [False, True])
def test_an_interrupt_caught_and_ignored_still_ends_the_program(second):
    """Code that catches KeyboardInterrupt and goes on: the wake-up thread ends the process
    ``GRACE`` seconds after the signal, at once after a second signal."""
    proc = _program(SWALLOWED)
    assert proc.stdout.readline() == "ready\n"
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)
    if second:
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    seconds = time.monotonic() - t0
    assert (proc.returncode, err) == (143, campaign.LINES[signal.SIGTERM] + "\n")
    assert seconds < (2.5 if second else interrupts.GRACE + 5) and (second or seconds >= interrupts.GRACE - 0.1)


@pytest.mark.slow
@pytest.mark.parametrize("argv, until", [(["advise", "175e9"], 4.0),
                                         (["seprank", "--depth", "1", "--width", "4", "--heads", "2"], 10.0)])
def test_advise_and_seprank_at_random_moments(argv, until):
    """From the first imports to the exit (``until``: about the command's wall time on 2 busy cores):
    the line and the status, or (signal too late) a normal end."""
    rng, ended = random.Random(38), []
    procs = []
    for i in range(4):  # started together, each signalled at its own moment
        proc = subprocess.Popen([sys.executable, "-m", "dwlib", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        procs.append((time.monotonic() + rng.uniform(campaign.STARTUP, until), (signal.SIGINT, signal.SIGTERM)[i % 2], proc))
    late = set()
    for at, signum, proc in sorted(procs, key=lambda p: p[0]):
        time.sleep(max(0.0, at - time.monotonic()))
        if campaign._exited(proc.pid):
            late.add(proc.pid)
        else:
            os.killpg(proc.pid, signum)
    for at, signum, proc in procs:
        out, err = proc.communicate(timeout=120)
        if proc.pid in late:
            assert proc.returncode == 0 and err == "", err
        else:
            assert (proc.returncode, err) == (128 + signum, interrupts.line(argv[0], signum) + "\n"), err
            ended.append(proc.pid)
    assert ended  # at least one signal came while the program ran


# --- dwlib train at moments of every kind (the campaign's, fewer of them) -----------------------------


@pytest.mark.slow
def test_train_interrupted_at_many_moments_resumes_to_the_uninterrupted_result(tmp_path):
    """Random moments, moments while a checkpoint is written, and moments in the evaluation and the
    steps before one: for each signal a chain of runs on one directory, run side by side; each
    moment one line and the documented status, each chain finished equal to the reference."""
    world = campaign.prepare(tmp_path, xla=os.environ.get("JAX_COMPILATION_CACHE_DIR"), measure=False)
    plan = {signal.SIGINT: ["random", "checkpoint", "before-checkpoint"],
            signal.SIGTERM: ["before-checkpoint", "random", "checkpoint"]}
    results, lines = {}, []

    def one(signum):
        results[signum] = campaign.chain(world, f"chain-{signum.name}", [(signum, k) for k in plan[signum]],
                                         seed=int(signum), log=lines.append)

    threads = [threading.Thread(target=one, args=(s,)) for s in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = [o for s in plan for o in results[s]]
    assert len(outcomes) == 6, lines
    failed = [o for o in outcomes if not (o.get("ok") and o["resumed"])]
    assert not failed, "\n".join(lines)


def test_an_interrupted_command_ends_without_reporting_what_it_left():
    """After its one line, an interrupted command ends without the noise of what an interrupted
    checkpoint write leaves to be collected (an event loop whose __del__ fails, coroutines never
    awaited); without the command line's quieting, Python reports both."""
    code = textwrap.dedent("""
        import gc, sys
        from dwlib.cli import _ending_quietly
        class Loop:
            def __del__(self): raise AttributeError("'_UnixSelectorEventLoop' object has no attribute '_ssock'")
        async def save(): pass
        if sys.argv[1] == "quiet":
            _ending_quietly()
        pending, loop = save(), Loop()
        del pending, loop
        gc.collect()
    """)
    noisy = subprocess.run([sys.executable, "-c", code, "noisy"], capture_output=True, text=True, timeout=120)
    assert "never awaited" in noisy.stderr and "_ssock" in noisy.stderr
    quiet = subprocess.run([sys.executable, "-c", code, "quiet"], capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
