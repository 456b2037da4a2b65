"""The chapters' Colab install cell: one repository URL (_config.yml's ``repository.url``), a TPU
type Colab offers today, and what the cell does, run for real.

The cell's behaviour is tested offline in throwaway environments: the exact cell source (the
template of scripts/new_notebook.py, with a ``file://`` URL of a git copy of this repository), a
pretend Colab runtime that already holds jax, jaxlib and libtpu, and a local package folder of
stand-in wheels for dwlib's dependencies in which the newest flax wants a newer jax. Left alone,
pip would replace the runtime's jax there (the control below checks that it would); the cell must
not.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
SCRIPT = ROOT / "scripts" / "new_notebook.py"
_spec = importlib.util.spec_from_file_location("new_notebook", SCRIPT)
nn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nn)

URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT.get("optional-dependencies", {})
PACKAGE = "dwlib[colab]" if "colab" in EXTRAS else "dwlib"  # what the cell installs
# what it pulls in, with each floor: dwlib's dependencies and those of its Colab extra
FLOORS = dict(re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([\d.]+)", d).groups()
              for d in PROJECT["dependencies"] + EXTRAS.get("colab", []))
JAX = FLOORS["jax"]


# ---- one URL, derived everywhere ------------------------------------------------------------

@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_each_install_cell_is_the_one_written_from_the_config(nb):
    notebook = json.loads(nb.read_text())
    assert "".join(notebook["cells"][0]["source"]) == nn.colab_cell(), \
        f"{nb.name}: stale install cell: run `python scripts/new_notebook.py sync`"
    assert f'SOURCE = "{PACKAGE} @ git+{URL}"' in nn.colab_cell() and f'JAX_FLOOR = "{JAX}"' in nn.colab_cell()
    assert notebook["metadata"]["accelerator"] == "TPU"
    assert notebook["metadata"]["colab"]["gpuType"] == nn.TPU_TYPE == "V5E1"  # TPU v5e-1
    # first, and collapsed in JupyterLab (tests/live checks that JupyterLab shows it so)
    assert notebook["cells"][0]["metadata"]["jupyter"] == {"source_hidden": True}
    assert set(nn.INSTALL_TAGS) <= set(notebook["cells"][0]["metadata"]["tags"])


def test_a_drafted_chapter_gets_the_same_cell_and_runtime():
    nb = nn.notebook([("md", "# A chapter"), ("setup", "")])
    assert nb.cells[0].source == nn.colab_cell()
    assert nb.cells[0].metadata["jupyter"] == {"source_hidden": True}
    assert nb.metadata["colab"]["gpuType"] == "V5E1" and nb.metadata["accelerator"] == "TPU"


def test_the_url_is_written_nowhere_else():
    """Outside _config.yml, the URL (or any git+ install of it) is only in the generated cells."""
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split("\0")
    copies = []
    for name in filter(None, tracked):
        path = ROOT / name
        if name == "_config.yml" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "".join("".join(c["source"]) for c in cells[1:])
        if URL in text or re.search(r"git\+(https?|ssh|file)://", text):
            copies.append(name)
    assert not copies, f"the repository URL is copied into {copies}: derive it from _config.yml"


def _book_copy(tmp_path, url):
    """A root with _config.yml (``url``), pyproject.toml and two chapters, for the sync script."""
    (tmp_path / "book").mkdir()
    config = (ROOT / "_config.yml").read_text().replace(f"url: {URL}\n", f"url: {url}\n")
    (tmp_path / "_config.yml").write_text(config)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for name in ("intro.ipynb", "separation_rank.ipynb"):
        shutil.copy(ROOT / "book" / name, tmp_path / "book")
    return sorted((tmp_path / "book").glob("*.ipynb"))


def test_a_new_url_makes_the_cells_stale_and_sync_rewrites_only_them(tmp_path):
    url = "https://example.org/someone/depth-width-book"
    paths = _book_copy(tmp_path, url)
    before = {p: json.loads(p.read_text()) for p in paths}
    assert nn.sync(paths, check=True, root=tmp_path) == paths
    assert {p: json.loads(p.read_text()) for p in paths} == before  # --check writes nothing
    assert nn.sync(paths, root=tmp_path) == paths
    for p in paths:
        after = json.loads(p.read_text())
        assert f'@ git+{url}"' in "".join(after["cells"][0]["source"]) and URL not in p.read_text()
        after["cells"][0]["source"] = before[p]["cells"][0]["source"]
        assert after == before[p]  # outputs, metadata, other cells: untouched
    assert nn.sync(paths, check=True, root=tmp_path) == []


def test_sync_collapses_an_install_cell_that_is_not(tmp_path):
    paths = _book_copy(tmp_path, URL)
    nb = json.loads(paths[0].read_text())
    del nb["cells"][0]["metadata"]["jupyter"]
    paths[0].write_text(nn.dumps(nb))
    assert nn.sync(paths, check=True, root=tmp_path) == [paths[0]]
    nn.sync(paths, root=tmp_path)
    assert json.loads(paths[0].read_text())["cells"][0]["metadata"]["jupyter"] == {"source_hidden": True}


def test_sync_round_trips_an_up_to_date_notebook_byte_for_byte(tmp_path):
    paths = _book_copy(tmp_path, URL)
    before = [p.read_bytes() for p in paths]
    assert nn.sync(paths, root=tmp_path) == []
    assert [p.read_bytes() for p in paths] == before


def test_sync_command_line(tmp_path, refused):
    paths = _book_copy(tmp_path, URL)
    run = subprocess.run([sys.executable, str(SCRIPT), "sync", "--check", *map(str, paths)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "0 of 2 notebooks stale"
    nb = json.loads(paths[0].read_text())
    nb["cells"][0]["source"] = ["print('old')"]
    paths[0].write_text(json.dumps(nb))
    run = subprocess.run([sys.executable, str(SCRIPT), "sync", "--check", *map(str, paths)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and f"stale: {paths[0]}" in run.stderr
    # bad input: one line, status 2, nothing written (not even the stale notebook before it)
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["# no install cell"]})
    paths[1].write_text(json.dumps(nb))
    stale = paths[0].read_text()
    run = subprocess.run([sys.executable, str(SCRIPT), "sync", *map(str, paths)], capture_output=True, text=True)
    refused(run.returncode, run.stderr, "is not the Colab install cell", run.stdout)
    assert paths[0].read_text() == stale


# ---- the cell, run ---------------------------------------------------------------------------

RUNNER = """\
import sys, types
if sys.argv[1] == "colab":
    sys.modules["google.colab"] = types.ModuleType("google.colab")
exec(compile(open(sys.argv[2]).read(), "<install cell>", "exec"), {"__name__": "__main__"})
"""


def _wheel(folder: Path, name: str, version: str, requires=()) -> None:
    """A stand-in wheel: a module with ``__version__`` and the metadata pip reads."""
    mod = re.sub(r"[-.]", "_", name)
    dist = f"{mod}-{version}.dist-info"
    files = {
        f"{mod}/__init__.py": f"__version__ = {version!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test_colab\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{p},,\n" for p in [*files, f"{dist}/RECORD"])
    with zipfile.ZipFile(folder / f"{mod}-{version}-py3-none-any.whl", "w") as z:
        for path, text in files.items():
            z.writestr(path, text)


def _venv(path: Path, pip: bool) -> Path:
    """A bare virtual environment; with ``pip``, this interpreter's pip made importable in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site = next(path.glob("lib/python*/site-packages"))
    if pip:
        shelf = path / "pip-shelf"
        shelf.mkdir()
        (shelf / "pip").symlink_to(Path(importlib.util.find_spec("pip").origin).parent)
        (site / "pip-shelf.pth").write_text(f"{shelf}\n")
    return site


def _snapshot(site: Path) -> dict:
    return {str(p.relative_to(site)): p.stat().st_mtime_ns for p in sorted(site.rglob("*"))}


class World:
    """Throwaway Colab stand-in: git copy of the repository, local package folder, environment."""

    def __init__(self, tmp: Path):
        t = tmp
        # the repository, as the cell will fetch it: what a build of dwlib needs, committed
        repo = t / "repo"
        names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                                "pyproject.toml", "README.md", "dwlib"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\0")
        for name in (n for n in names if n and (ROOT / n).is_file()):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
        git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-C", str(repo)]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
            subprocess.run(git + args, check=True)
        self.url = f"file://{repo}"
        # the package index: stand-ins for each dependency at its floor, and a newer jax that the
        # newest flax requires; a real setuptools to build dwlib with
        wheels = t / "wheels"
        wheels.mkdir()
        for name, floor in FLOORS.items():
            needs = {"jax": [f"jaxlib=={floor}"], "flax": [f"jax>={JAX}"]}.get(name, [])
            _wheel(wheels, name, floor, needs)
        _wheel(wheels, "jaxlib", JAX)
        _wheel(wheels, "jax", "99.0", ["jaxlib==99.0"])
        _wheel(wheels, "jaxlib", "99.0")
        _wheel(wheels, "flax", "99.0", ["jax>=99.0"])
        _wheel(wheels, "libtpu", "0.0.1")
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                              ":all:", "-d", str(wheels), "setuptools>=77"], capture_output=True, text=True)
        assert got.returncode == 0, f"a setuptools wheel is needed to build dwlib: {got.stderr}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        self.env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels),
                        PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        # the runtime: jax, jaxlib and libtpu installed, as on a Colab TPU runtime
        self.venv = t / "runtime"
        self.site = _venv(self.venv, pip=True)
        self.pip("install", "-q", f"jax=={JAX}", f"jaxlib=={JAX}", "libtpu==0.0.1")
        self.runner = t / "runner.py"
        self.runner.write_text(RUNNER)
        self.cell = t / "cell.py"
        self.cell.write_text(nn.colab_cell(self.url, JAX))

    def python(self, venv: Path, *args) -> subprocess.CompletedProcess:
        return subprocess.run([str(venv / "bin" / "python"), *args], env=self.env, cwd=venv,
                              capture_output=True, text=True, timeout=300)

    def pip(self, *args) -> subprocess.CompletedProcess:
        run = self.python(self.venv, "-m", "pip", *args)
        assert run.returncode == 0, run.stderr
        return run

    def run_cell(self, venv: Path | None = None, colab: bool = True) -> subprocess.CompletedProcess:
        return self.python(venv or self.venv, str(self.runner), "colab" if colab else "local", str(self.cell))

    def installed(self) -> dict:
        out = {}
        for meta in self.site.glob("*.dist-info/METADATA"):
            fields = dict(line.split(": ", 1) for line in meta.read_text().splitlines()[:3] if ": " in line)
            out[fields["Name"].lower()] = fields["Version"]
        return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return World(tmp_path_factory.mktemp("colab"))


def test_outside_colab_the_cell_does_nothing(world):
    before = _snapshot(world.site)
    run = world.run_cell(colab=False)
    assert run.returncode == 0 and run.stdout == run.stderr == "", run.stderr
    assert _snapshot(world.site) == before


def test_control_left_alone_pip_would_replace_the_runtimes_jax(world):
    """Without the cell's pins, this package folder makes pip swap jax: the test below means something."""
    report = world.venv / "report.json"
    world.pip("install", "-q", "--dry-run", "--report", str(report), f"dwlib @ git+{world.url}")
    planned = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert planned["jax"] == "99.0" and planned["flax"] == "99.0", planned


def test_the_cell_installs_dwlib_keeps_jax_and_twice_is_harmless(world):
    runtime = {n: world.installed()[n] for n in ("jax", "jaxlib", "libtpu")}
    kept = {p: t for p, t in _snapshot(world.site).items() if p.startswith(("jax", "libtpu"))}
    run = world.run_cell()
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Installed dwlib, keeping jax=={JAX} jaxlib=={JAX} libtpu==0.0.1" in run.stdout, run.stdout
    have = world.installed()
    assert have["dwlib"] == PROJECT["version"]
    assert all(name.lower() in have for name in FLOORS), sorted(set(FLOORS) - set(have))
    assert {n: have[n] for n in runtime} == runtime
    assert have["flax"] == FLOORS["flax"]  # the newest flax that fits the runtime's jax
    direct = json.loads(next(world.site.glob("dwlib-*.dist-info/direct_url.json")).read_text())
    assert direct["url"] == world.url and direct["vcs_info"]["vcs"] == "git"
    assert {p: t for p, t in _snapshot(world.site).items() if p.startswith(("jax", "libtpu"))} == kept
    # second run: nothing fetched, nothing installed, nothing touched
    before = _snapshot(world.site)
    again = world.run_cell()
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"dwlib {have['dwlib']} is already installed: nothing to do.\n"
    assert _snapshot(world.site) == before


@pytest.mark.parametrize("jax, too_old", [("0.4.34", True), ("0.4.9", True), ("0.3.99", True),
                                          (JAX, False), ("0.4.36.dev20241122", False), ("0.10.2", False)])
def test_the_cell_refuses_a_jax_below_the_floor(world, tmp_path, jax, too_old):
    """A runtime with an old jax: the cell says what to do, and installs nothing. (This runtime has
    no pip: a jax that passes the check gets as far as pip, and fails there.)"""
    site = _venv(tmp_path / "old", pip=False)
    (site / f"jax-{jax}.dist-info").mkdir()
    (site / f"jax-{jax}.dist-info" / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax\nVersion: {jax}\n")
    run = world.run_cell(tmp_path / "old")
    assert run.returncode == 1
    message = f"RuntimeError: This runtime's jax {jax} is older than dwlib needs (jax >= {JAX})."
    assert (message in run.stderr) == too_old, run.stderr
    if too_old:
        assert "upgrade jax" in run.stderr and "run this cell again" in run.stderr
    else:
        assert "No module named pip" in run.stdout + run.stderr, run.stdout + run.stderr
