"""The command line's promise for bad input: one line on stderr naming the problem, nothing on
stdout, exit status 2, and nothing written. One parametrised test for every subcommand.

The subcommands' normal output is tested beside the code it formats (tests of bounds, advise,
seprank, train and sweep); this file holds only the error contract.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dwlib import cli

BIG = "1" + "0" * 400  # 10^400, past float64

CASES = [
    # argument parsing (argparse, reworded to one line by cli._Parser)
    (("no-such-command",), "invalid choice"),
    (("bounds", "--width", "100", "--heads", "4", "--depth", "2.5"), "positive integer"),
    (("advise", "--depth", "2.5"), "invalid int value"),
    # the library's InputError
    (("bounds", "--width", "16", "--heads", "16", "--depth", "2"), "width must exceed heads"),
    (("bounds", "--width", "100", "--heads", "4", "--depth", "0"), "positive integer"),
    (("corollary1", "--width", "1000", "--heads", "16", "--depth", "7", "--shallow-depth", "2"), "Theorem 1 needs"),
    (("advise", "-5"), "budget must be > 0"),
    (("advise", "0"), "budget must be > 0"),
    (("advise", "lots"), "budget must be a number"),
    (("advise", "nan"), "budget must be finite"),
    (("advise", "--width", "100"), "--width needs --depth"),
    (("advise",), "give a budget"),
    (("advise", "1e9", "--depth", "12"), "not both"),
    (("advise", "--depth", "0"), "depth must be > 0"),
    (("advise", "--depth", "40", "--width", "5140", "--head-size", "128"), "not divisible by head_size"),
    (("advise", "1e9", "--head-size", "0"), "--head-size must be > 0"),
    (("seprank", "--depth", "1", "--width", "3", "--heads", "2"), "heads must divide width"),
    (("sweep", "--shard", "3/3"), "shard i/n needs 0 <= i < n, got '3/3'"),
    (("sweep", "--preset", "nope", "--dry-run"), "nope"),
    # extreme values, with the limit in the message
    (("bounds", "--width", BIG, "--heads", "4", "--depth", "2"), "below 1.8e308"),
    (("corollary1", "--width", BIG, "--heads", "16", "--depth", "6", "--shallow-depth", "2"), "below 1.8e308"),
    (("advise", "--depth", BIG), "below 1.8e308"),
    (("advise", "1e9", "--intercept", "1e308"), "log_width_intercept must be a number from -50.0 to 50.0"),
    (("advise", "1e9", "--span", BIG), "span must be an integer from 0 to 1000"),
    (("advise", "--depth", "10", "--width", "1280", "--tolerance", "inf"), "rel_tol must be finite and >= 0"),
    (("train", "--steps", "1" + "0" * 100), "steps must be an integer from 1 to 1,000,000,000"),
    (("train", "--seed", "-1"), "seed must be an integer from 0 to 4,294,967,295"),
    (("train", "--seed", str(2 ** 32)), "seed must be an integer from 0"),
    (("train", "--depth", "100000"), "depth must be an integer from 1 to 256"),
    (("train", "--depth", "200", "--width", "8192"), "parameters, more than this trainer's limit"),
    (("train", "--out", ""), "out_dir must be a non-empty path"),
    (("train", "--out", "/proc/dwlib-test"), "cannot be written"),
    (("sweep", "--limit", "-1"), "expected an integer >= 0"),
    (("sweep", "--dry-run", "--limit", "2"), "--limit does nothing with --dry-run"),
    (("seprank", "--depth", BIG, "--width", "2", "--heads", "1"), "depth must be an integer from 1 to 64"),
    (("seprank", "--depth", "16", "--width", "1", "--heads", "1"), "would take about"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--templates", "100000"), "grid points"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--templates", "0"), "templates must be an integer"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--part-a", "0"), "A must hold positions in 1..4, got [0]"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--part-a", "a,b"), "comma-separated"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--part-a", "1,"), "comma-separated"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--part-a", "1.5"), "comma-separated"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--position", "0"), "position must be in 1..4, got 0"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--quick"), "--quick does nothing without --sweep"),
    (("seprank", "--depth", "1", "--width", "2", "--heads", "1", "--out", "x.json"), "--out does nothing without"),
    (("seprank", "--sweep", "--depth", "3"), "--depth does nothing with --sweep"),
    (("seprank", "--sweep", "--out", "/proc/dwlib-test.json"), "cannot be written"),
    (("pack", "--out", "x.dwpack", "--splits", "select"), "--splits must name some of train, valid, got"),
    (("pack", "--out", "x.dwpack", "--max-mib", "0"), "--max-mib must be above 0"),
    (("pack", "--out", "x.dwpack", "--corpus", "nope"), "unknown corpus 'nope'"),
    (("pack", "--out", "/proc/dwlib-test.dwpack", "--corpus", "sotu"), "cannot be written"),
    (("sweep", "--cost", "--dry-run"), "--dry-run does nothing with --cost"),
    (("bounds", "--width", "64", "--heads", "8", "--depth", "4", "--embedding-rank", "65"),
     "--embedding-rank 65 exceeds the width 64"),
    (("bounds", "--width", "64", "--heads", "8", "--depth", "4", "--embedding-rank", "0"), "--embedding-rank"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(a)[:80] for a, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, refused):
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:  # argparse's errors exit from inside main()
        status = exit_.code
    out, err = capsys.readouterr()
    prog = "dwlib" if argv[0] == "no-such-command" else f"dwlib {argv[0]}"
    refused(status, err, message, out)
    assert err.startswith(f"{prog}: error: "), err


def test_train_refuses_bad_shape_before_writing_anything(tmp_path, refused):
    """As a real process: the exit status and the one line reach the shell, and the output
    directory is never created."""
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "dwlib", "train", "--no-progress", "--depth", "1",
                        "--width", "32", "--heads", "5", "--steps", "3", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    refused(r.returncode, r.stderr, "width 32 is not divisible by heads 5", r.stdout)
    assert not out.exists()


@pytest.mark.parametrize("raised, status, line", [
    (KeyboardInterrupt(), 130, "dwlib bounds: interrupted (SIGINT)\n"),
    (OSError(28, "No space left on device", "/full/disk/metrics.jsonl"), 2,
     "dwlib bounds: error: /full/disk/metrics.jsonl: No space left on device\n"),
    (PermissionError(13, "Permission denied", "/locked"), 2, "dwlib bounds: error: /locked: Permission denied\n"),
    (OSError(30, "Read-only file system", "/ro/x"), 2, "dwlib bounds: error: /ro/x: Read-only file system\n"),
])
def test_interrupt_and_machine_errors_are_one_line(raised, status, line, monkeypatch, capsys):
    """Ctrl-C exits 130 (128 + SIGINT) and a full disk, a permission or a read-only file system
    exit 2, each with one line naming the path; no traceback."""
    def run(args):
        raise raised
    monkeypatch.setattr(cli, "_run_bounds", run)
    assert cli.main(["bounds", "--width", "100", "--heads", "4", "--depth", "2"]) == status
    assert capsys.readouterr().err == line


def _failing_cleanup(args):
    """A command whose cleanup fails while Ctrl-C unwinds it, as shutil.rmtree's close of a
    descriptor does (EBADF) when the interrupt comes inside it."""
    try:
        raise KeyboardInterrupt
    finally:
        raise OSError(9, "Bad file descriptor")


def test_a_cleanup_that_fails_during_an_interrupt_is_still_the_interrupt(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_run_bounds", _failing_cleanup)
    assert cli.main(["bounds", "--width", "100", "--heads", "4", "--depth", "2"]) == 130
    assert capsys.readouterr().err == "dwlib bounds: interrupted (SIGINT)\n"


def test_a_bug_keeps_its_traceback(monkeypatch):
    """An OSError that is not about the machine (here: no such file, the working directory
    intact) is a bug: it propagates."""
    def run(args):
        raise FileNotFoundError(2, "No such file or directory", "/dwlib/missing")
    monkeypatch.setattr(cli, "_run_bounds", run)
    with pytest.raises(FileNotFoundError):
        cli.main(["bounds", "--width", "100", "--heads", "4", "--depth", "2"])


@pytest.mark.slow
def test_deleted_working_directory_is_one_line(tmp_path, refused):
    gone = tmp_path / "gone"
    gone.mkdir()
    r = subprocess.run([sys.executable, "-c", "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
                        "from dwlib import cli; sys.exit(cli.main(['train', '--steps', '2', '--depth', '1', '--width', '32']))",
                        str(gone)], capture_output=True, text=True, timeout=120)
    refused(r.returncode, r.stderr, "No such file or directory", r.stdout)


def test_bounds_with_an_embedding_rank_reads_eq_8_at_width_r(capsys):
    """--embedding-rank r adds eq. (8)'s upper expression read at width r (past depth log3 r) and
    the smaller of it and the full-width bound; below depth log3 r the bound is the full width's."""
    import json

    from dwlib.core import vocab
    from dwlib.core.bounds import separation_rank_bounds
    for depth, width, r in [(6, 64, 2), (4, 64, 8), (1, 64, 8), (3, 512, 4)]:
        assert cli.main(["bounds", "--width", str(width), "--heads", "8", "--depth", str(depth),
                         "--embedding-rank", str(r), "--json"]) == 0
        e = json.loads(capsys.readouterr().out)["embedding"]
        full = separation_rank_bounds(depth, width, 8)["upper"]
        at_r = vocab.theorem2_upper_at_rank(depth, r)
        assert e["rank"] == r and e["log3_upper_at_rank"] == at_r
        assert e["log3_upper"] == (full if at_r is None else min(full, at_r))
        assert (at_r is None) == (depth <= e["threshold_at_rank"])
    assert cli.main(["bounds", "--width", "64", "--heads", "8", "--depth", "6", "--embedding-rank", "2"]) == 0
    text = capsys.readouterr().out
    assert "embedding of rank 2" in text and "eq. (8) read at width r gives" in text
