"""dwlib.store: atomic writes and the per-file lock."""

import subprocess
import sys

import pytest

from dwlib.errors import InputError
from dwlib.store import exclusive, write_json


def test_exclusive_refuses_a_second_holder_and_frees_on_exit(tmp_path):
    lock = tmp_path / ".lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from dwlib.store import exclusive\n"
         f"with exclusive({str(lock)!r}, 'run x'):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(InputError, match=rf"run x is in use by another process \(pid {holder.pid}\)"):
            with exclusive(lock, "run x"):
                pass
    finally:
        holder.kill()  # a killed holder leaves no stale lock
        holder.wait()
    with exclusive(lock, "run x"):
        pass


def test_exclusive_is_not_reentrant_across_file_descriptors(tmp_path):
    with exclusive(tmp_path / ".lock", "results file"):
        with pytest.raises(InputError, match="results file is in use"):
            with exclusive(tmp_path / ".lock", "results file"):
                pass


def test_write_json_leaves_no_temporary_file(tmp_path):
    write_json(tmp_path / "a.json", {"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
