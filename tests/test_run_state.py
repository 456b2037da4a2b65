"""A training run's state on disk: kills at any moment, two processes on one run,
corrupt files of every kind, a changed corpus or device count, a full disk, strict JSON.

Each case ends in the uninterrupted run's curve and summary, bit for bit, or in one clear line
(StateError / exit 2), never in a traceback or a silently different result."""

import errno
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orbax.checkpoint as ocp
import pytest

from dwlib import cli
from dwlib.errors import InputError, StateError
from dwlib.store import exclusive
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train
from dwlib.train.rundir import read_metrics

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")
TINY = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=8, steps=12, lr=3e-3,
            eval_interval=3, eval_batches=2, checkpoint_interval=4)  # checkpoints at 4, 8, 12; evals at 0, 3, ...
TIMING = ("tokens_per_s", "seconds_this_session")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A corpus, its cache, and the uninterrupted run every case is compared with."""
    root = tmp_path_factory.mktemp("state")
    (root / "corpus.txt").write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    ref = train(config(root, "reference"), progress=False, verbose=False)
    return root, ref, (root / "reference" / "metrics.jsonl").read_text()


def config(root: Path, name: str, **kw) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "corpus": str(root / "corpus.txt"), "cache_dir": str(root / "cache"),
                                  "out_dir": str(root / name), **kw})


def untimed(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in TIMING}


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("dwlib:")]


def stopped(root: Path, name: str, steps: int) -> Path:
    """A run "killed" after ``steps`` steps (checkpoints at 4 and 8 when steps >= 8)."""
    assert train(config(root, name), progress=False, verbose=False, stop_after=steps)["status"] == "stopped"
    return root / name


def lines(path: Path) -> list[str]:
    return (path / "metrics.jsonl").read_text().splitlines()


def finish_and_compare(world, run: Path, capsys) -> list[str]:
    """Train ``run`` to the end; assert it equals the reference; return the notes it printed."""
    root, ref, ref_metrics = world
    result = train(config(root, run.name), progress=False, verbose=False)
    assert untimed(result) == untimed(ref)
    assert (run / "metrics.jsonl").read_text() == ref_metrics
    return notes(capsys.readouterr().err)


# --- metrics.jsonl ------------------------------------------------------------------------------


def _drop_line(run, text):
    rows = lines(run)
    rows.remove(text)
    (run / "metrics.jsonl").write_text("".join(r + "\n" for r in rows))


CORRUPT_METRICS = {
    # name: (steps done before, how metrics.jsonl is damaged, step resumed from, a note expected)
    "missing": (9, lambda run: (run / "metrics.jsonl").unlink(), 0, "metrics.jsonl is missing"),
    "torn tail": (9, lambda run: (run / "metrics.jsonl").write_text((run / "metrics.jsonl").read_text()[:-9]),
                  8, None),  # the torn line is after the checkpoint: cut back silently
    "torn covered": (8, lambda run: (run / "metrics.jsonl").write_text((run / "metrics.jsonl").read_text()[:-9]),
                     4, "line 11 is not a metrics record"),
    "garbage": (9, lambda run: (run / "metrics.jsonl").write_text(
        "\n".join("garbage \x00\xff" if i == 8 else r for i, r in enumerate(lines(run))) + "\n"),
        4, "line 9 is not a metrics record"),
    "losses lost": (9, lambda run: [_drop_line(run, r) for r in lines(run) if '"step": 6,' in r and '"loss"' in r],
                    4, "where the loss of step 6 is due"),
}


@pytest.mark.parametrize("case", CORRUPT_METRICS)
def test_damaged_metrics_fall_back_to_a_checkpoint_they_cover(world, case, capsys):
    done, damage, resumed_from, note = CORRUPT_METRICS[case]
    run = stopped(world[0], f"metrics-{case.replace(' ', '-')}", done)
    damage(run)
    capsys.readouterr()
    printed = finish_and_compare(world, run, capsys)
    if note is None:
        assert printed == []
    else:
        assert len(printed) == 1 and note in printed[0], printed
        assert printed[0].endswith(f"resuming from step {resumed_from}" if resumed_from
                                   else "starting again from step 0")


# --- checkpoints --------------------------------------------------------------------------------


def _overwrite_arrays(step_dir: Path) -> None:
    for f in step_dir.rglob("*"):
        if f.is_file() and "ocdbt" in str(f):
            f.write_bytes(b"\x00" * max(1, f.stat().st_size // 2))


@pytest.mark.parametrize("which", ["newest", "both"])
def test_corrupt_checkpoints_fall_back_to_an_intact_one_or_to_step_0(world, which, capsys):
    run = stopped(world[0], f"ckpt-{which}", 9)
    for step in ([8] if which == "newest" else [4, 8]):
        _overwrite_arrays(run / "checkpoints" / str(step))
    capsys.readouterr()
    root, ref, ref_metrics = world
    assert untimed(train(config(root, run.name), progress=False, verbose=False)) == untimed(ref)
    assert (run / "metrics.jsonl").read_text() == ref_metrics
    printed = capsys.readouterr().err.splitlines()  # the note, and nothing from orbax or TensorStore
    assert len(printed) == 1 and "the checkpoint at step 8 cannot be read (state/" in printed[0], printed
    assert printed[0].endswith("resuming from step 4" if which == "newest" else "starting again from step 0")


def test_checkpoints_without_their_file_digests_are_read_unchecked(world, capsys):
    """A checkpoint written before each stored the SHA-256 of its files (or by a process killed
    between orbax's commit and that file) resumes as before."""
    run = stopped(world[0], "ckpt-undigested", 9)
    for digests in (run / "checkpoints").glob("*/dwlib_files.json"):
        digests.unlink()
    capsys.readouterr()
    assert finish_and_compare(world, run, capsys) == []


def test_a_full_disk_during_a_checkpoint_leaves_no_half_checkpoint(world, monkeypatch):
    """Fault injection: the checkpoint's writer fails as TensorStore does on ENOSPC (after creating
    its temporary directory); OSError(ENOSPC), one line; the run resumes intact afterwards."""
    root, ref, ref_metrics = world
    real_save = ocp.CheckpointManager.save

    def full_disk(self, step, *args, **kw):
        if step == 8:
            tmp = Path(self.directory) / f"{step}.orbax-checkpoint-tmp-1"
            (tmp / "state").mkdir(parents=True)
            raise ValueError(f"RESOURCE_EXHAUSTED: Error writing {tmp}/state/d/x: No space left on device "
                             "[os_error_code='28']")
        return real_save(self, step, *args, **kw)

    monkeypatch.setattr(ocp.CheckpointManager, "save", full_disk)
    with pytest.raises(OSError) as err:
        train(config(root, "full"), progress=False, verbose=False)
    assert err.value.errno == errno.ENOSPC and "\n" not in str(err.value) and "step 8" in str(err.value)
    assert sorted(os.listdir(root / "full" / "checkpoints")) == ["4"]
    monkeypatch.setattr(ocp.CheckpointManager, "save", real_save)
    assert untimed(train(config(root, "full"), progress=False, verbose=False)) == untimed(ref)
    assert (root / "full" / "metrics.jsonl").read_text() == ref_metrics


# --- config.json, result.json, the directory ----------------------------------------------------


def cli_train(root: Path, out: str, capsys, *extra) -> tuple[int, str, str]:
    """``dwlib train`` on the tiny shape: (exit status, stderr, stdout)."""
    argv = ["train", "--no-progress", "--json", "--corpus", str(root / "corpus.txt"), "--cache-dir",
            str(root / "cache"), "--depth", "1", "--width", "32", "--heads", "2", "--vocab-size", "300", "--seq-len",
            "32", "--batch-size", "8", "--steps", "12", "--lr", "3e-3", "--eval-interval", "3",
            "--checkpoint-interval", "4", "--out", out, *extra]
    status = cli.main(argv)
    printed = capsys.readouterr()
    return status, printed.err, printed.out


def test_garbage_config_is_one_line(world, capsys, refused):
    run = stopped(world[0], "bad-config", 5)
    (run / "config.json").write_text('{"depth": 1, "wid')
    status, err, out = cli_train(world[0], str(run), capsys)
    refused(status, err, "config.json cannot be read", out)
    with pytest.raises(StateError):
        train(config(world[0], "bad-config"), progress=False, verbose=False)


@pytest.mark.parametrize("damage", ["garbage", "without evals", "metrics without evals"])
def test_an_untrustworthy_result_is_completed_again(world, damage, capsys):
    root, ref, ref_metrics = world
    run = root / f"result-{damage.replace(' ', '-')}"
    train(config(root, run.name), progress=False, verbose=False)
    if damage == "garbage":
        (run / "result.json").write_text("{\n  \"status\": \"compl")
    elif damage == "without evals":
        result = json.loads((run / "result.json").read_text())
        del result["eval_loss"]
        (run / "result.json").write_text(json.dumps(result))
    else:
        (run / "metrics.jsonl").write_text("".join(r + "\n" for r in lines(run) if "eval_loss" not in r))
    capsys.readouterr()
    printed = finish_and_compare(world, run, capsys)
    assert printed and "completing the run again" in printed[0], printed
    assert json.loads((run / "result.json").read_text())["status"] == "completed"


def test_output_directories_that_are_not_runs_are_refused(world, tmp_path, capsys, refused):
    root = world[0]
    with pytest.raises(InputError, match="non-empty path"):
        train(config(root, "x").replace(out_dir=""), progress=False, verbose=False)
    other = tmp_path / "photos"
    other.mkdir()
    (other / "holiday.jpg").write_bytes(b"\xff\xd8")
    status, err, out = cli_train(root, str(other), capsys)
    refused(status, err, "holds no dwlib run", out)
    assert sorted(os.listdir(other)) == ["holiday.jpg"]  # nothing taken over
    (tmp_path / "file").write_text("x")
    status, err, out = cli_train(root, str(tmp_path / "file"), capsys)
    refused(status, err, "is not a directory", out)
    status, err, out = cli_train(root, str(tmp_path / "new"), capsys, "--seq-len", "5000")  # fits in memory, not in the corpus
    refused(status, err, "seq_len", out)
    assert not (tmp_path / "new").exists()  # refused before anything is created


def test_a_run_in_use_is_refused_with_one_line(world, capsys, refused):
    run = stopped(world[0], "busy", 5)
    before = (run / "metrics.jsonl").read_text()
    with exclusive(run / ".lock", "test"):  # as another process holding the run would
        status, err, out = cli_train(world[0], str(run), capsys)
    refused(status, err, "in use by another process", out)
    assert (run / "metrics.jsonl").read_text() == before


def test_a_run_being_created_is_in_use_not_foreign(world, capsys, refused):
    """The moment between another process taking a new run's lock and its config.json landing:
    the directory holds only the lock and that process's temporary files (an atomic write, a
    write probe). That is a run in use, not a foreign directory."""
    run = world[0] / "being-created"
    run.mkdir()
    (run / ".config.json.99999.tmp").write_text("{")
    (run / ".dwlib-probe-abc").write_text("")
    with exclusive(run / ".lock", "test"):
        status, err, out = cli_train(world[0], str(run), capsys)
    refused(status, err, "in use by another process", out)
    # the other process killed there, its temporary files left behind: the run starts anyway
    assert train(config(world[0], "being-created"), progress=False, verbose=False)["status"] == "completed"


def test_a_foreign_directory_with_a_lock_file_is_left_alone(world, tmp_path, capsys, refused):
    other = tmp_path / "project"
    other.mkdir()
    (other / ".lock").write_text("someone else's")
    (other / "notes.txt").write_text("x")
    status, err, out = cli_train(world[0], str(other), capsys)
    refused(status, err, "holds no dwlib run", out)
    assert (other / ".lock").read_text() == "someone else's" and sorted(os.listdir(other)) == [".lock", "notes.txt"]


def test_a_changed_corpus_is_refused_on_resume(world, capsys):
    root = world[0]
    corpus = root / "edited.txt"
    corpus.write_text((root / "corpus.txt").read_text())
    train(config(root, "edited", corpus=str(corpus)), progress=False, verbose=False, stop_after=5)
    time.sleep(0.01)
    corpus.write_text((root / "corpus.txt").read_text().replace("union", "nation"))
    with pytest.raises(StateError) as err:
        train(config(root, "edited", corpus=str(corpus)), progress=False, verbose=False)
    message = str(err.value)
    assert "\n" not in message and "corpus" in message
    assert len(set(re.findall(r"\b[0-9a-f]{16}\b", message))) == 2, message  # both fingerprints named


# --- strict JSON, divergence --------------------------------------------------------------------


def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"bare {name} in JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.slow  # a step compiled for its own learning rate
def test_metrics_and_results_are_strict_json_and_divergence_counts_its_tokens(world):
    root = world[0]
    result = train(config(root, "diverged", lr=1e9, warmup=0.0, clip_norm=1e30), progress=False, verbose=False)
    assert result["status"] == "diverged" and 1 <= result["diverged_step"] < 10  # within the first chunk
    step = result["diverged_step"]
    assert result["steps_done"] == step and result["tokens_seen"] == step * 8 * 32
    records = [_strict(line) for line in lines(root / "diverged")]
    assert records[-1]["step"] == step and records[-1]["loss"] is None and records[-1]["nonfinite"] in ("nan", "inf")
    _strict((root / "diverged" / "result.json").read_text())
    losses, _ = read_metrics(root / "diverged")
    assert len(losses) == step and losses[-1] != losses[-1] or abs(losses[-1]) == float("inf")


# --- processes: kills at any moment, two at once, another device count (slow) --------------------


def _env(root: Path, devices: int = 1, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DWLIB_", "XLA_", "JAX_"))}
    return {**env, "DWLIB_CPU_DEVICES": str(devices), "JAX_PLATFORMS": "cpu", "DWLIB_CACHE": str(root / "cache"),
            "JAX_COMPILATION_CACHE_DIR": str(root / "xla"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0", **extra}


def _argv(root: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "dwlib", "train", "--no-progress", "--corpus", str(root / "corpus.txt"),
            "--depth", "1", "--width", "32", "--heads", "2", "--vocab-size", "300", "--seq-len", "32",
            "--batch-size", "8", "--steps", "24", "--lr", "3e-3", "--eval-interval", "6",
            "--checkpoint-interval", "4", "--out", str(out)]


@pytest.fixture(scope="module")
def raced(world):
    """The same run started twice at once on one directory (in two processes)."""
    root = world[0]
    procs = [subprocess.Popen(_argv(root, root / "raced"), env=_env(root), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    return [(p.wait(timeout=300), *p.communicate()) for p in procs]


@pytest.mark.slow
def test_two_processes_on_one_run_one_trains_the_other_exits_2(world, raced, refused):
    root = world[0]
    codes = sorted(rc for rc, _, _ in raced)
    assert codes == [0, 2], raced
    refused(*next((rc, e, "in use by another process", o) for rc, o, e in raced if rc == 2))
    losses, evals = read_metrics(root / "raced")
    assert len(losses) == 24 and [e["step"] for e in evals] == [0, 6, 12, 18, 24]


KILLS = [  # (where the process is killed, at which step, what it interrupts)
    ("after-checkpoint", 8, "right after a checkpoint is committed"),
    ("during-checkpoint", 12, "while a checkpoint is written"),
    ("loss", 15, "in the middle of a chunk of steps, its metrics unflushed"),
    ("before-checkpoint", 20, "after the metrics are made durable, before the checkpoint"),
    ("before-result", 24, "after the last checkpoint, before result.json"),
]

# ``dwlib`` with the run directory's methods wrapped to SIGKILL the process at one point (the
# library holds no hook for it): argv is the point, the step, a delay (for "during-checkpoint":
# the kill comes that many seconds into the checkpoint's writing), then the command line.
KILLER = """
import os, signal, sys, threading
point, at, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sys.argv = ["dwlib", *sys.argv[4:]]
import dwlib.__main__ as entry
from dwlib.train.checkpoint import RunDir

def kill():
    os.kill(os.getpid(), signal.SIGKILL)

save, log, close = RunDir.save, RunDir.log, RunDir.close

def save_then_kill(self, step, state):
    if step == at and point == "before-checkpoint":
        self.sync()
        kill()
    if step == at and point == "during-checkpoint":
        self.sync()
        threading.Timer(delay, kill).start()
    save(self, step, state)
    if step == at and point == "after-checkpoint":
        kill()

def log_then_kill(self, rec):
    if point == "loss" and rec.get("step") == at and "loss" in rec:
        kill()
    log(self, rec)

def close_then_kill(self, result=None):
    if point == "before-result" and result is not None and result["steps_done"] == at:
        self.sync()
        kill()
    close(self, result)

RunDir.save, RunDir.log, RunDir.close = save_then_kill, log_then_kill, close_then_kill
entry.main()
"""


@pytest.mark.slow
def test_killed_at_any_moment_and_resumed_equals_uninterrupted(world, raced, refused):
    """SIGKILL at the points above and at a random moment, resuming each time on one directory,
    and once with another device count (refused: the losses would differ in the last bits)."""
    root, rng = world[0], random.Random(21)
    run = root / "killed"
    reference = root / "raced"  # the race's winner trained uninterrupted

    def start(argv):
        proc = subprocess.run(argv, env=_env(root), capture_output=True, text=True, timeout=300)
        assert "Traceback" not in proc.stderr and not notes(proc.stderr), proc.stderr[-3000:]
        return proc

    for point, step, what in KILLS:
        killer = [sys.executable, "-c", KILLER, point, str(step), str(rng.uniform(0.0, 0.03))]
        assert start(killer + _argv(root, run)[3:]).returncode == -9, what
        if point == "after-checkpoint":  # resuming on two devices instead of one: refused, one line
            proc = subprocess.run(_argv(root, run), env=_env(root, devices=2), capture_output=True, text=True,
                                  timeout=300)
            refused(proc.returncode, proc.stderr, "devices cpu:1", proc.stdout)
            assert "devices cpu:2" in proc.stderr
    proc = subprocess.Popen(_argv(root, run), env=_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(rng.uniform(2.0, 6.0))  # a random moment: importing, restoring, training or writing
    proc.kill()
    assert b"Traceback" not in proc.communicate()[1]
    assert start(_argv(root, run)).returncode == 0
    assert (run / "metrics.jsonl").read_text() == (reference / "metrics.jsonl").read_text()
    done, ref = (json.loads((d / "result.json").read_text()) for d in (run, reference))
    assert untimed(done) == untimed(ref)


@pytest.mark.slow
def test_a_really_full_disk_during_a_checkpoint_is_one_line(world, tmp_path):
    """The output directory on a 96 KB tmpfs (in a user namespace): the first checkpoint does not
    fit. One OSError line (ENOSPC), no traceback, no half-written checkpoint left."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here to mount a small tmpfs")
    root, mount = world[0], tmp_path / "small"
    mount.mkdir()
    script = tmp_path / "full.py"
    script.write_text(f"""
import os, sys
from dwlib.train.loop import train
from dwlib.train.config import TrainConfig
try:
    train(TrainConfig.from_dict({dict(TINY, corpus=str(root / "corpus.txt"))!r} | {{"out_dir": sys.argv[1]}}),
          progress=False, verbose=False)
except OSError as err:
    print(err.errno, err)
print(sorted(os.listdir(os.path.join(sys.argv[1], "checkpoints"))))
""")
    cmd = f"mount -t tmpfs -o size=96k tmpfs {mount} && {sys.executable} {script} {mount}/run"
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", cmd], env=_env(root), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-3000:]
    first, listing = proc.stdout.strip().splitlines()
    assert first.startswith(f"{errno.ENOSPC} ") and "no space left on device" in first.lower(), first
    assert listing == "[]"  # no half-written checkpoint (nor orbax's temporary directory)
