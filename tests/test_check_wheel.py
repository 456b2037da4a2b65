"""scripts/check_wheel.py (``make wheel``): its arguments, and that its check of the installed
package can fail. The whole run (a wheel, a fresh environment per Python, the newest dependency
versions) needs a package index and a few minutes: it is `make wheel`, not a unit test."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check_wheel.py"
_spec = importlib.util.spec_from_file_location("check_wheel", SCRIPT)
cw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cw)


@pytest.mark.parametrize("args, message", [
    (["--tests", "tests/nope.py"], "not a test file (or node id) under tests/: tests/nope.py"),
    (["--tests", "setup.py"], "not a test file (or node id) under tests/: setup.py"),
    (["--python", "3.99"], "no usable Python 3.99"),
    (["--python", "/nonexistent/python"], "no usable Python /nonexistent/python"),
])
def test_bad_arguments_are_one_line_and_exit_2(args, message, tmp_path, refused):
    run = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path)
    refused(run.returncode, run.stderr, message, run.stdout)
    assert list(tmp_path.iterdir()) == []


def test_default_tests_exist_and_leave_out_what_needs_the_source_tree():
    for test in cw.TESTS:
        path, _, name = test.partition("::")
        text = (ROOT / path).read_text()
        assert not name or f"def {name}(" in text, test
        assert "ROOT" not in text or name, f"{path} reads the source tree: name the tests that do not"


def test_the_installed_package_check_fails_on_the_source_tree(tmp_path):
    """Run here, where dwlib is this source tree (an editable install), the generated check fails:
    dwlib is not the installed wheel, and a data file the wheel lacks is reported."""
    (tmp_path / "test_installed_wheel.py").write_text(
        cw.INSTALLED_TEST.format(data=["data/models.json", "data/not_in_the_wheel.json"], root=str(ROOT)))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", tmp_path,
                          str(tmp_path / "test_installed_wheel.py")], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1
    assert "FAILED" in run.stdout and "test_dwlib_is_the_installed_wheel" in run.stdout, run.stdout
    assert "not in the wheel: ['data/not_in_the_wheel.json']" in run.stdout, run.stdout
