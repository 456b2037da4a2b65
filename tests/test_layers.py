"""The package's layers, checked from its source: what may import what, where UI and I/O live.

dwlib is built in layers, each importing only those below it:

    base         errors, fmt, store, env      (no dwlib imports above them)
    core/        the paper's mathematics       (pure: no I/O, no UI)
    train/       model, data, optimiser, step, loop, process set-up
    experiments/ presets, sweeps, transitions, catalogues
    viz/         charts and widgets            (the only place for altair and ipywidgets)
    book, cli    the chapters' helpers and the command line (cli, cli_format, interrupts; the only place for argparse)

These tests read the import statements (``ast``), so they run without importing anything.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dwlib"

RANKS = {"core": 1, "train": 2, "experiments": 3, "viz": 4}
BASE = {"__init__", "errors", "fmt", "store", "env"}
TOP = {"book", "cli", "cli_format", "interrupts", "__main__"}
UI_PACKAGES = {"altair", "ipywidgets", "argparse"}
IO_MODULES = {"os", "sys", "pathlib", "json", "pickle", "gzip", "logging", "warnings", "subprocess", "time", "tqdm",
              "importlib", "shutil", "tempfile", "socket", "dwlib.store"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()
IO_BUILTINS = {"open", "print", "input"}
IO_METHODS = {"open", "save", "savez", "savetxt", "load", "loadtxt", "genfromtxt", "memmap", "tofile", "fromfile",
              "dump", "read_text", "write_text", "read_bytes", "write_bytes"}
# what a ``# lazy:`` comment must give: the measured import time that justifies it ("1.2 s")
LAZY_REASON = re.compile(r"# lazy:.*\b\d+(\.\d+)? s\b")


def rank(name: str) -> int:
    parts = name.split(".")
    if len(parts) == 1:
        return 0
    if parts[1] in RANKS:
        return RANKS[parts[1]]
    if parts[1] in BASE:
        return 0
    if parts[1] in TOP:
        return 5
    raise AssertionError(f"{name}: not in any layer (add it to test_layers.py's table)")


def _imported(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if base == "dwlib" or base.startswith("dwlib."):
            # ``from dwlib.core import bounds`` imports the module dwlib.core.bounds
            return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        return [base]
    return []


def _imports(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(module-level imports, imports inside functions), each as (line, module)."""
    tree = ast.parse(path.read_text())
    inner = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(fn):
                if isinstance(n, (ast.Import, ast.ImportFrom)):
                    inner.add(id(n))
    top, lazy = [], []
    for n in ast.walk(tree):
        for mod in _imported(n):
            (lazy if id(n) in inner else top).append((n.lineno, mod))
    return top, lazy


def _dwlib_target(mod: str) -> str | None:
    if mod != "dwlib" and not mod.startswith("dwlib."):
        return None
    while mod not in MODULES:
        mod = mod.rpartition(".")[0]
    return mod


def _importers(target: str) -> list[str]:
    """The dwlib modules that import ``target`` (at any depth of the file)."""
    found = []
    for name, path in MODULES.items():
        top, lazy = _imports(path)
        if any(_dwlib_target(mod) == target for _, mod in top + lazy):
            found.append(name)
    return sorted(found)


def test_only_the_command_line_imports_the_command_line():
    """book/ and cli share the top rank, so the rank test alone would let a chapter import the CLI."""
    assert _importers("dwlib.cli") == ["dwlib.__main__"]
    assert _importers("dwlib.cli_format") == ["dwlib.cli"]


def test_the_plain_model_never_imports_the_fast_path():
    """The fast path reads the plain model's modules; the arrow never points back."""
    assert "dwlib.train.model" not in _importers("dwlib.train.fast") + _importers("dwlib.train.fast_attention")


def test_imports_point_down():
    upward = [f"{name} (layer {rank(name)}) line {line}: {mod}" for name, path in MODULES.items()
              for line, mod in sum(_imports(path), []) if (t := _dwlib_target(mod)) and rank(t) > rank(name)]
    assert not upward, f"imports of a higher layer: {upward}"


def test_no_import_cycle():
    graph = {name: {t for _, mod in sum(_imports(path), []) if (t := _dwlib_target(mod)) and t != name}
             for name, path in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in graph:
        if name not in state:
            visit(name, [name])


def test_imports_at_module_top():
    """Imports sit at the top of modules; the only exceptions are optional third-party packages,
    marked on the line with a ``# lazy:`` comment that says why (a measured import time, or that
    the package is optional). dwlib's own modules are never imported inside a function."""
    hidden = []
    for name, path in MODULES.items():
        lines = path.read_text().splitlines()
        hidden += [f"{name} line {line}: {mod}" for line, mod in _imports(path)[1]
                   if not LAZY_REASON.search(lines[line - 1]) or _dwlib_target(mod)]
    assert not hidden, f"imports inside functions without a measured reason: {hidden}"


@pytest.mark.parametrize("name", ["dwlib.train.config", "dwlib.train.model", "dwlib.core.seprank"])
def test_the_readable_model_and_its_config_import_no_tokenizer(name):
    """Reading the model or building its configuration needs neither the tokenizers package nor
    the corpus code: a corpus name is checked against the small registry in dwlib.train.corpora."""
    seen, todo = set(), [name]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for _, mod in _imports(MODULES[node])[0]:
            assert mod.split(".")[0] != "tokenizers", f"{name} imports tokenizers through {node}"
            if (t := _dwlib_target(mod)) and t != node:
                todo.append(t)
    assert "dwlib.train.data" not in seen, f"{name} imports dwlib.train.data"


def test_imports_are_absolute_and_visible():
    """Relative imports and imports by name at run time (importlib.import_module, __import__)
    would slip past the graph tests above: there are none."""
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        found += [f"{name} line {n.lineno}: relative" for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.level]
        found += [f"{name} line {n.lineno}: by name" for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and {getattr(n.func, "id", None), getattr(n.func, "attr", None)} & {"__import__", "import_module"}]
    assert not found, f"imports the graph tests cannot see: {found}"


def test_ui_only_in_viz_and_cli():
    ui = [f"{name} line {line}: {mod}" for name, path in MODULES.items()
          if not (name.startswith("dwlib.viz") or name == "dwlib.cli")
          for line, mod in sum(_imports(path), []) if mod.split(".")[0] in UI_PACKAGES]
    assert not ui, f"UI or command-line packages imported outside viz and the command line: {ui}"


def test_core_is_pure():
    found = []
    for name in sorted(n for n in MODULES if rank(n) == 1):
        found += [f"{name} line {line}: imports {mod}" for line, mod in sum(_imports(MODULES[name]), [])
                  if mod in IO_MODULES or mod.split(".")[0] in IO_MODULES - {"dwlib.store"}]
        found += [f"{name} line {n.lineno}: calls {n.func.id if isinstance(n.func, ast.Name) else n.func.attr}"
                  for n in ast.walk(ast.parse(MODULES[name].read_text())) if isinstance(n, ast.Call)
                  and (getattr(n.func, "id", None) in IO_BUILTINS or getattr(n.func, "attr", None) in IO_METHODS)]
    assert not found, f"core modules that read, write, print or import I/O: {found}"


def test_library_never_locates_its_own_files():
    """Only dwlib.store knows where the package lies on disk (and only for reading, or for the
    publishing scripts); no other module builds paths from ``__file__``."""
    users = [name for name, path in MODULES.items()
             if name != "dwlib.store" and "__file__" in path.read_text()]
    assert not users, f"modules that locate files through __file__: {users}"


def test_notebooks_define_no_functions():
    """Notebooks narrate and call: what they compute lives in dwlib."""
    defined = []
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(notebook.read_text())["cells"]):
            if cell["cell_type"] != "code":
                continue
            # shell and magic lines (``!pip``, ``%%capture``) are not Python; the rest of the cell is
            source = "".join(line for line in "".join(cell["source"]).splitlines(keepends=True)
                             if not line.lstrip().startswith(("!", "%")))
            tree = ast.parse(source, filename=f"{notebook.name}, cell {i}")
            defined += [f"{notebook.name} cell {i}: {n.name}" for n in ast.walk(tree)
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert not defined, f"notebooks that define functions: {defined}"
