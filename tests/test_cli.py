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
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    try:
        status = cli.main(list(argv))
    except SystemExit as exit_:  # argparse's errors exit from inside main()
        status = exit_.code
    out, err = capsys.readouterr()
    prog = "dwlib" if argv[0] == "no-such-command" else f"dwlib {argv[0]}"
    assert status == 2
    assert out == ""
    assert err.startswith(f"{prog}: error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert message in err


def test_train_refuses_bad_shape_before_writing_anything(tmp_path):
    """As a real process: the exit status and the one line reach the shell, and the output
    directory is never created."""
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "dwlib", "train", "--no-progress", "--depth", "1",
                        "--width", "32", "--heads", "5", "--steps", "3", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "width 32 is not divisible by heads 5" in r.stderr
    assert not out.exists()
