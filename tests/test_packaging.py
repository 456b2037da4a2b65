"""What ``pip install dwlib`` promises: every third-party module dwlib imports is declared.

A module that arrives only through another package's dependencies works until that package
drops it; pandas did exactly that here once. The check reads dwlib's import statements and
pyproject.toml, and maps modules to distributions with the installed metadata.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Imported only where an optional tool is present, behind a ``try``/``except ImportError`` that
# tolerates its absence: myst-nb exists only in a book build (dwlib.book.glue).
OPTIONAL_TOOLS = {"myst_nb"}


def _imported_top_level() -> set[str]:
    names = set()
    for path in (ROOT / "dwlib").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "dwlib"}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return {re.split(r"[<>=!~;\[ ]", s, maxsplit=1)[0].strip().lower().replace("_", "-") for s in specs}


def test_every_imported_module_is_declared():
    owners = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = []
    for module in sorted(_imported_top_level() - OPTIONAL_TOOLS):
        dists = {d.lower().replace("_", "-") for d in owners.get(module, [])}
        assert dists, f"{module} is imported by dwlib but not installed here"
        if not dists & declared:
            missing.append(f"{module} (from {', '.join(sorted(dists))})")
    assert not missing, f"imported by dwlib but not declared in pyproject.toml: {missing}"


def test_licence_is_an_spdx_string():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str), "project.license as a table is deprecated (PEP 639)"
