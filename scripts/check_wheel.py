"""Build dwlib's wheel and test it installed, as `pip install` gives it to a user.

    python scripts/check_wheel.py                          # Python 3.11 and 3.12
    python scripts/check_wheel.py --python 3.12 --python /opt/py313/bin/python3
    python scripts/check_wheel.py --tests tests/test_bounds.py tests/test_cli.py

For each Python: a fresh virtual environment in a temporary folder, the wheel installed there
with the newest dependency versions pyproject.toml allows (no requirements.txt pins), and a
subset of the unit tests run against the installed package: from a copy of the test files in
the temporary folder, so that this source tree is not importable (a generated test checks that
the dwlib imported is the one in the environment, and that every data file under dwlib/data
came with the wheel). The wheel is built from the files git would commit (tracked, or new and
not ignored), so that a file left out of git, or out of the wheel, fails here as it would for a
user. Exit status: 0 all passed, 1 a build, install or test failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ["3.11", "3.12"]
# Chosen for what a dependency's new release can break, and for speed (tests that need the book
# or results/ are left out): the mathematics (numpy, jax), the model, optimiser and checkpoints
# (flax nnx, optax, orbax), the tokenizer, the packaged data, charts (altair, pandas), the
# command line. Files or pytest node ids.
TESTS = [
    "tests/test_bounds.py", "tests/test_fit.py", "tests/test_advise.py", "tests/test_transition_fit.py",
    "tests/test_data.py", "tests/test_viz_bounds.py", "tests/test_viz_guidelines.py", "tests/test_cli.py",
    "tests/test_catalogue.py::test_gpt3_table_as_published", "tests/test_catalogue.py::test_trillion_projection",
    "tests/test_model.py::test_dense_matches_nnx_linear",
    "tests/test_model.py::test_unembed_loss_matches_the_tied_output_and_optax",
    "tests/test_model.py::test_parameter_counts_match_the_parameter_tree",
    "tests/test_train.py::test_interrupted_and_resumed_training_equals_uninterrupted",
]
# what the tests need besides dwlib's own dependencies
TEST_REQUIREMENTS = ["pytest"]

INSTALLED_TEST = '''\
"""Written by scripts/check_wheel.py: the dwlib under test is the installed wheel."""
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import dwlib
from dwlib import store

DATA = {data!r}
SOURCE_TREE = {root!r}


def test_dwlib_is_the_installed_wheel():
    where = Path(dwlib.__file__).resolve()
    assert where.is_relative_to(Path(sys.prefix).resolve()), where
    assert not where.is_relative_to(SOURCE_TREE), where
    assert importlib.metadata.distribution("dwlib").read_text("INSTALLER").strip() == "pip"


def test_every_data_file_came_with_the_wheel():
    package = Path(dwlib.__file__).resolve().parent
    missing = [name for name in DATA if not (package / name).is_file()]
    assert not missing, f"not in the wheel: {{missing}}"
    assert store.packaged_path("models.json").is_file()


def test_the_command_line_entry_point_is_installed():
    dwlib_cmd = Path(sys.prefix) / "bin" / "dwlib"
    out = subprocess.run([str(dwlib_cmd), "bounds", "--width", "1000", "--heads", "16", "--depth", "6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)
'''


class Failed(Exception):
    """A step failed (exit status 1)."""


def log(message: str) -> None:
    print(f"[check_wheel {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(cmd, what: str, **kw) -> subprocess.CompletedProcess:
    """Run ``cmd``; on failure, show its output and raise :class:`Failed` naming ``what``."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode:
        sys.stdout.write(proc.stdout[-6000:] + proc.stderr[-6000:])
        raise Failed(f"{what} failed (exit status {proc.returncode})")
    return proc


def find_python(spec: str) -> tuple[str, str]:
    """(path, "X.Y") of an interpreter: ``spec`` is a path, a command, or a version such as 3.12
    (looked for as pythonX.Y on PATH, then under pyenv's versions)."""
    if re.fullmatch(r"3\.\d+", spec):
        candidates = [shutil.which(f"python{spec}")]
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{spec}.*/bin/python")), reverse=True)
    else:
        candidates = [shutil.which(spec) or spec]
    probe = "import sys, venv; print('%d.%d' % sys.version_info[:2], sys.executable)"
    for cand in filter(None, candidates):
        try:
            out = subprocess.run([cand, "-c", probe], capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        version, _, executable = out.stdout.strip().partition(" ")
        if out.returncode == 0 and (not re.fullmatch(r"3\.\d+", spec) or version == spec):
            return executable or cand, version
    raise argparse.ArgumentTypeError(f"no usable Python {spec} (with venv) found: pass --python /path/to/python")


def source_files(root: Path) -> list[str]:
    """What a commit would hold of the package: tracked, or new and not ignored."""
    out = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
               "pyproject.toml", "README.md", "LICENSE*", "dwlib"], "git ls-files", cwd=root).stdout
    return sorted(n for n in set(out.split("\0")) if n and (root / n).is_file())


def build_wheel(tmp: Path) -> tuple[Path, list[str]]:
    """Copy the package's files to tmp/src, build the wheel into tmp/dist; (wheel, data files)."""
    src = tmp / "src"
    names = source_files(ROOT)
    for name in names:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    log(f"building the wheel from {len(names)} files")
    t0 = time.perf_counter()
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp / "dist", src], "building the wheel")
    wheel = next((tmp / "dist").glob("dwlib-*.whl"))
    data = [n.removeprefix("dwlib/") for n in names if n.startswith("dwlib/data/")]
    inside = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in data if f"dwlib/{n}" not in inside]
    log(f"built {wheel.name} ({wheel.stat().st_size // 1024} KiB, {len(inside)} files) "
        f"in {time.perf_counter() - t0:.0f} s")
    if missing:
        raise Failed(f"data files missing from the wheel (pyproject.toml's package-data): {missing}")
    return wheel, data


def check(python: str, version: str, wheel: Path, data: list[str], tests: list[str], tmp: Path, n: int) -> dict:
    """Fresh environment for ``python``, the wheel installed, the tests run there."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    venv = tmp / f"venv{n}-{version}"
    bin_py = venv / "bin" / "python"
    t0 = time.perf_counter()
    full = run([python, "-c", "import platform; print(platform.python_version())"], "probing Python").stdout.strip()
    log(f"Python {full} ({python}): new environment {venv}")
    run([python, "-m", "venv", "--without-pip", venv], f"creating a virtual environment with {python}", env=env)
    log(f"Python {version}: installing {wheel.name} and {', '.join(TEST_REQUIREMENTS)} "
        "(newest allowed versions)")
    # this pip installs into the new environment (--python), which needs none of its own; no .pyc
    # files written ahead (--no-compile): Python compiles what the tests import, as it imports it
    run([sys.executable, "-m", "pip", "--python", bin_py, "install", "-q", "--no-compile", wheel,
         *TEST_REQUIREMENTS], "installing the wheel", env=env)
    t_install = time.perf_counter() - t0
    versions = run([bin_py, "-c", "import importlib.metadata as m; print(' '.join(f'{n} {m.version(n)}' for n in "
                    "('jax', 'jaxlib', 'flax', 'optax', 'orbax-checkpoint', 'numpy', 'pandas', 'altair', "
                    "'tokenizers')))"], "reading versions", env=env).stdout.strip()
    log(f"Python {version}: installed in {t_install:.0f} s: {versions}")
    # the tests, copied out of the source tree, plus the check that dwlib is the installed one
    where = tmp / f"tests{n}-{version}"
    (where / "tests").mkdir(parents=True)
    for name in {"tests/conftest.py", *(t.split("::")[0] for t in tests)}:
        shutil.copy2(ROOT / name, where / name)
    (where / "tests" / "test_installed_wheel.py").write_text(
        INSTALLED_TEST.format(data=data, root=str(ROOT.resolve())))
    t1 = time.perf_counter()
    log(f"Python {version}: running {len(tests)} test selections (and test_installed_wheel.py) "
        "against the installed package")
    proc = subprocess.run([bin_py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", where,
                           "tests/test_installed_wheel.py", *tests], cwd=where, env=env, capture_output=True, text=True)
    t_tests = time.perf_counter() - t1
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    log(f"Python {version}: tests {'passed' if proc.returncode == 0 else 'FAILED'} in {t_tests:.0f} s: {summary}")
    if proc.returncode:
        sys.stdout.write(proc.stdout[-8000:] + proc.stderr[-4000:])
    return {"python": version, "ok": proc.returncode == 0, "install_s": t_install, "tests_s": t_tests,
            "summary": summary, "versions": versions}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", action="append", metavar="PYTHON",
                   help="a version (3.12), command or path; repeat for several (default: 3.11 and 3.12)")
    p.add_argument("--tests", nargs="+", default=TESTS, metavar="TEST",
                   help="test files or node ids under tests/ (default: a fast subset)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = p.parse_args(argv)
    bad = [t for t in args.tests if not re.fullmatch(r"tests/test_\w+\.py(::\S+)?", t)
           or not (ROOT / t.split("::")[0]).is_file()]
    try:
        if bad:
            raise argparse.ArgumentTypeError(f"not a test file (or node id) under tests/: {' '.join(bad)}")
        pythons = [find_python(spec) for spec in args.python or PYTHONS]
    except argparse.ArgumentTypeError as e:
        print(f"check_wheel.py: error: {e}", file=sys.stderr)
        return 2
    floor = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="dwlib-wheel-"))
    results = []
    try:
        wheel, data = build_wheel(tmp)
        # the interpreters side by side: each install waits on the index and each test run
        # keeps one core busy, so two at once take about the time of one on a 2-core machine
        with ThreadPoolExecutor(max_workers=len(pythons)) as pool:
            futures = [pool.submit(check, python, version, wheel, data, args.tests, tmp, n)
                       for n, (python, version) in enumerate(pythons)]
            results = [f.result() for f in futures]
    except Failed as e:
        log(f"error: {e}")
        return 1
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"done in {time.perf_counter() - start:.0f} s (requires-python {floor})")
    for r in results:
        log(f"  Python {r['python']}: {'ok' if r['ok'] else 'FAILED'}: install {r['install_s']:.0f} s, "
            f"tests {r['tests_s']:.0f} s ({r['summary']})")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
