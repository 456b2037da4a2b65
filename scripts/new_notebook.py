"""Write a chapter notebook, or bring the chapters' Colab install cells up to date.

    python scripts/new_notebook.py sync            # rewrite book/*.ipynb's install cells
    python scripts/new_notebook.py sync --check    # exit 1, naming them, if any is stale

One value says where the book's repository lies: ``repository.url`` in _config.yml (the launch
button uses it too). The first cell of every chapter, which installs dwlib on Colab, is written
from it and from dwlib's jax floor in pyproject.toml; ``sync`` rewrites that cell's source, keeps
it collapsed in JupyterLab (``jupyter.source_hidden`` in its metadata) and sets the notebook's
Colab TPU type, and leaves every other byte of the file (outputs included) as it is.

:func:`write` drafts a new chapter from a list of (kind, source[, tags]) cells, with the book's
standard first cells (Colab install, set-up) and Colab metadata (TPU runtime); after that the
.ipynb is the source (edit it, then `make execute` to refresh its outputs).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tomllib
from pathlib import Path

import yaml

from dwlib.store import write_text

ROOT = Path(__file__).resolve().parents[1]
# The TPU type Colab writes for "v5e-1" (TPU v2-8, "V28", is retired).
TPU_TYPE = "V5E1"
INSTALL_TAGS = ["remove-cell", "nbval-skip"]
# Collapsed in JupyterLab and Notebook 7 (its source hidden, its first line shown): a reader
# meets the chapter, not 25 lines of Colab set-up. The book removes it; Colab runs it first.
INSTALL_METADATA = {"jupyter": {"source_hidden": True}}

# Self-contained (dwlib is not installed when it runs); plain Python, so that tests can run it.
COLAB_TEMPLATE = '''\
# On Colab only: install dwlib from the book's repository, once. The runtime's own jax is kept
# (on a TPU runtime it matches the TPU's libtpu: another jax would break the TPU).
import sys
if "google.colab" in sys.modules:
    import re, subprocess
    from importlib.metadata import distributions
    SOURCE = "@PACKAGE@ @ git+@URL@"
    JAX_FLOOR = "@JAX_FLOOR@"
    have = {re.sub(r"[-_.]+", "-", d.name).lower(): d.version for d in distributions() if d.name}
    jax = have.get("jax", JAX_FLOOR)
    # the runtime's jax packages, pinned at their versions so that pip keeps them
    keep = sorted(f"{n}=={v}" for n, v in have.items()
                  if re.fullmatch(r"jax(lib|-cuda.*)?|libtpu.*", n))
    if "dwlib" in have:
        print(f"dwlib {have['dwlib']} is already installed: nothing to do.")
    elif [int(n) for n in re.findall(r"\\d+", jax)[:3]] < [int(n) for n in JAX_FLOOR.split(".")]:
        raise RuntimeError(
            f"This runtime's jax {jax} is older than dwlib needs (jax >= {JAX_FLOOR}). Choose a "
            "current runtime (Runtime > Change runtime type) or upgrade jax (on a TPU runtime: "
            "%pip install -U 'jax[tpu]'), then restart the session and run this cell again.")
    else:
        pip = [sys.executable, "-m", "pip", "install", "-q", SOURCE, *keep]
        done = subprocess.run(pip, capture_output=True, text=True)
        print(done.stdout + done.stderr, end="")
        done.check_returncode()
        print("Installed dwlib, keeping", " ".join(keep) or "nothing (no jax was installed)")'''

SETUP_CELL = '''import dwlib.book
print(dwlib.book.setup())'''


class ConfigError(ValueError):
    """The configuration or a notebook is not what the script expects (one-line message)."""


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of _config.yml: the one place that names the book's repository."""
    try:
        url = yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        raise ConfigError(f"{root / '_config.yml'}: no repository.url ({type(e).__name__}: {e})") from None
    if not isinstance(url, str) or not re.fullmatch(r"(https://|file://)\S+", url):
        raise ConfigError(f"_config.yml: repository.url must be an https:// (or file://) URL, got {url!r}")
    return url.rstrip("/")


def _project(root: Path) -> dict:
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        project["dependencies"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
        raise ConfigError(f"{root / 'pyproject.toml'}: no project.dependencies ({type(e).__name__}: {e})") from None
    return project


def jax_floor(root: Path = ROOT) -> str:
    """The lowest jax dwlib accepts: the ``jax>=X`` of pyproject.toml's dependencies."""
    deps = _project(root)["dependencies"]
    found = [m.group(1) for d in deps if (m := re.fullmatch(r"jax\s*>=\s*([\d.]+)", d.strip()))]
    if len(found) != 1:
        raise ConfigError(f"pyproject.toml: expected one 'jax>=X' dependency, got {deps}")
    return found[0]


def colab_package(root: Path = ROOT) -> str:
    """What the cell installs: ``dwlib[colab]`` where pyproject.toml has a ``colab`` extra."""
    return "dwlib[colab]" if "colab" in _project(root).get("optional-dependencies", {}) else "dwlib"


def colab_cell(url: str | None = None, floor: str | None = None, package: str | None = None) -> str:
    """The install cell's source, for ``url``, jax ``floor`` and ``package`` (default: the
    configured ones)."""
    url = url if url is not None else repository_url()
    floor = floor if floor is not None else jax_floor()
    package = package if package is not None else colab_package()
    return COLAB_TEMPLATE.replace("@PACKAGE@", package).replace("@URL@", url).replace("@JAX_FLOOR@", floor)


def notebook(cells):
    """A new chapter (an nbformat NotebookNode): the install cell, then ``cells``."""
    import nbformat  # lazy: 2 s to import (measured), and `sync` does not need it

    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "accelerator": "TPU",
        "colab": {"provenance": [], "gpuType": TPU_TYPE},
    })
    out = [nbformat.v4.new_code_cell(colab_cell(), metadata={"tags": list(INSTALL_TAGS), **copy.deepcopy(INSTALL_METADATA)})]
    for cell in cells:
        kind, source, *rest = cell
        tags = rest[0] if rest else []
        if kind == "md":
            out.append(nbformat.v4.new_markdown_cell(source))
        elif kind == "setup":
            out.append(nbformat.v4.new_code_cell(SETUP_CELL, metadata={"tags": ["nbval-ignore-output"]}))
        else:
            out.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags} if tags else {}))
    nb.cells = out
    return nb


def write(path, cells) -> None:
    import nbformat  # lazy: as in notebook()

    nbformat.write(notebook(cells), path)


def dumps(nb: dict) -> str:
    """A notebook as nbformat writes it (so that an untouched notebook round-trips byte for byte)."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def synced(path: Path, source: str) -> tuple[str, str]:
    """(current text, text with the install cell and TPU type brought up to date) of a notebook."""
    text = path.read_text(encoding="utf-8")
    try:
        nb = json.loads(text)
        first, meta = nb["cells"][0], nb["metadata"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise ConfigError(f"{path}: not a notebook with cells") from None
    if first.get("cell_type") != "code" or not set(INSTALL_TAGS) <= set(first.get("metadata", {}).get("tags", [])):
        raise ConfigError(f"{path}: the first cell is not the Colab install cell (tags {INSTALL_TAGS})")
    first["source"] = source.splitlines(keepends=True)
    for key, value in INSTALL_METADATA.items():
        first["metadata"].setdefault(key, {}).update(value)
    meta.setdefault("colab", {})["gpuType"] = TPU_TYPE
    meta["accelerator"] = "TPU"
    return text, dumps(nb)


def sync(paths, check: bool = False, root: Path = ROOT) -> list[Path]:
    """Bring each notebook's install cell up to date (or, with ``check``, only say which are stale),
    from ``root``'s _config.yml and pyproject.toml.

    Every notebook is read and checked before any is written. Returns the stale ones."""
    source = colab_cell(repository_url(root), jax_floor(root), colab_package(root))
    plans = [(Path(p), *synced(Path(p), source)) for p in paths]
    stale = [(p, new) for p, old, new in plans if old != new]
    if not check:
        for path, new in stale:
            write_text(path, new)
    return [p for p, _ in stale]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sync", help="rewrite the chapters' Colab install cells from _config.yml")
    s.add_argument("notebooks", nargs="*", type=Path, help="default: book/*.ipynb")
    s.add_argument("--check", action="store_true", help="write nothing; exit 1 if any is stale")
    args = p.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    try:
        stale = sync(paths, check=args.check)
    except (ConfigError, OSError) as e:
        print(f"new_notebook.py: error: {e}", file=sys.stderr)
        return 2
    verb = "stale" if args.check else "rewritten"
    for path in stale:
        print(f"{verb}: {path}", file=sys.stderr)
    print(f"{len(stale)} of {len(paths)} notebooks {verb}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
