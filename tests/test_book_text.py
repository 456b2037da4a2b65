"""The chapters' prose, checked from the notebooks' JSON (nothing is executed).

- No leftover sentence from the book's drafting.
- One equation-numbering scheme (stated in the introduction): the paper's equations carry the
  paper's numbers as ``\\tag{n}``, the book's own referred-to displays a chapter letter
  (``\\tag{G1}``), and Sphinx numbers nothing. Multi-line tagged displays are
  ``\\begin{equation*} ... \\tag{n} \\end{equation*}``, which Sphinx passes to MathJax as
  written (a ``$$`` display with line breaks is wrapped in ``split``, where MathJax refuses a
  tag). A display that Sphinx numbers (a labelled ``$$ ... $$ (label)`` or an unstarred amsmath
  environment such as ``\\begin{equation}``) would show a second number beside a tag, or a
  number that collides with the paper's.
- Every number in a chapter's prose, ``{eval}`glued["name:spec"]```, is glued by that chapter:
  its name is a string in the chapter's code (dwlib/book/*.py or the notebook's code cells), and
  the notebook's saved outputs hold it (so the saved notebook, re-executed by ``make execute``,
  matches its prose).
- What JupyterLab and the book show of it, the result stored in the markdown cell's metadata,
  is the saved glue output (which nbval compares with a fresh run) formatted exactly as myst-nb's
  ``{glue:text}`` role formats it, glued before the cell that quotes it, and no ``{glue}`` role
  is left (JupyterLab shows its name): :func:`dwlib.book.prose.problems`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
BOOK_CODE = sorted((ROOT / "dwlib" / "book").glob("*.py"))

LEFTOVERS = ("as they are written", "Chapters appear in the table of contents")
PAPER_TAGS = {str(n) for n in range(1, 10)}  # the paper numbers its equations (1) to (9)
OWN_TAG = re.compile(r"[A-Z]\d+")            # the book's own: a chapter letter and a number
TAG = re.compile(r"\\tag\*?\{([^}]*)\}")
DISPLAY = re.compile(r"\$\$(.*?)\$\$([^\n]*)", re.S)
NUMBERED_ENV = re.compile(r"\\begin\{(equation|align|alignat|gather|multline|flalign|eqnarray)\}")
GLUE_ROLE = re.compile(r'\{eval\}`glued\["([^"`:]+)')


def _markdown(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _saved_glue(path: Path) -> set[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {o["metadata"]["scrapbook"]["name"] for c in cells for o in c.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


def _ids(paths):
    return [p.stem for p in paths]


def test_found_the_notebooks():
    assert len(NOTEBOOKS) >= 9 and BOOK_CODE


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_no_leftover_sentences(path):
    text = "\n".join(_markdown(path))
    assert not [s for s in LEFTOVERS if s in text], f"{path.name}: leftover drafting sentence"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_no_display_numbered_by_sphinx(path):
    """Sphinx numbers labelled $$ displays and unstarred amsmath environments: none may exist."""
    for text in _markdown(path):
        envs = NUMBERED_ENV.findall(text)
        assert not envs, f"{path.name}: \\begin{{{envs[0]}}} is numbered by Sphinx; use \\begin{{{envs[0]}*}} ... \\tag{{n}}"
        for body, after in DISPLAY.findall(text):
            assert not after.strip().startswith("("), (
                f"{path.name}: labelled display {after.strip()} is numbered by Sphinx; use a `(label)=` "
                "target before it and \\tag{...} inside it")
            assert len(TAG.findall(body)) <= 1, f"{path.name}: a display with two tags: {body.strip()[:60]}"
            # Sphinx wraps a $$ display that breaks lines in \begin{split}, where MathJax refuses \tag
            assert not (TAG.search(body) and "\\\\" in body), (
                f"{path.name}: a multi-line $$ display with a \\tag (MathJax: tag not allowed in split); "
                "write it as \\begin{equation*}...\\tag{n}\\end{equation*}")


def test_tags_follow_the_scheme():
    """Tags are the paper's numbers (1)-(9) or the book's own letter-and-number tags, and each
    own tag is used once in the whole book (the paper's may be repeated: the same equation)."""
    own = {}
    for path in NOTEBOOKS:
        for text in _markdown(path):
            for tag in TAG.findall(text):
                assert tag in PAPER_TAGS or OWN_TAG.fullmatch(tag), f"{path.name}: tag ({tag}) fits neither scheme"
                if tag not in PAPER_TAGS:
                    assert tag not in own, f"({tag}) is used in {own[tag]} and {path.name}"
                    own[tag] = path.name


def test_the_scheme_is_stated_in_the_introduction():
    intro = "\n".join(_markdown(ROOT / "book" / "intro.ipynb"))
    assert "carry the paper's numbers" in intro and "(G1)" in intro


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_glued_names_are_in_the_chapters_code(path):
    """Static: every name the prose uses is a string in dwlib/book/*.py or the chapter's code."""
    code = _code(path) + "\n".join(p.read_text(encoding="utf-8") for p in BOOK_CODE)
    strings = set(re.findall(r"""(?<![\w])["']([A-Za-z_]\w*)["']""", code))
    # names built by f-strings, e.g. f"gap_low_{key}": the fixed parts, anything between
    patterns = [re.compile("".join(r"\w+" if part.startswith("{") else re.escape(part)
                                   for part in re.split(r"(\{[^}]*\})", body)))
                for body in re.findall(r"""\bf["']([A-Za-z_]\w*\{[^"']*)["']""", code)]
    used = {n.strip() for text in _markdown(path) for n in GLUE_ROLE.findall(text)}
    missing = sorted(n for n in used - strings if not any(p.fullmatch(n) for p in patterns))
    assert not missing, f"{path.name}: prose uses glue names no code defines: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_glued_names_are_in_the_saved_outputs(path):
    """The saved notebook glues every name its prose uses (re-execute it after changing either)."""
    used = {n.strip() for text in _markdown(path) for n in GLUE_ROLE.findall(text)}
    missing = sorted(used - _saved_glue(path))
    assert not missing, f"{path.name}: not glued in the saved outputs (re-execute the notebook): {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_glued_names_are_not_words(path):
    """Every glued name has an underscore, so that it is never a word of the prose: the live
    test fails when a glued name shows in the rendered text (a name such as "lr" or "widest"
    would be found in sentences that merely use the word)."""
    from dwlib.book import prose

    words = sorted(n for n in prose.glue_outputs(json.loads(path.read_text(encoding="utf-8"))) if "_" not in n)
    assert not words, f"{path.name}: glued names without an underscore: {words}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_the_prose_shows_its_saved_numbers(path):
    """Every inline expression has a stored result, that result is its glued value formatted, the
    value is glued before the prose quotes it, and no glue role is left (dwlib.book.prose)."""
    from dwlib.book import prose

    nb = json.loads(path.read_text(encoding="utf-8"))
    assert any(prose.expressions("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown")
    found = prose.problems(nb)
    assert not found, f"{path.name}:\n" + "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_the_prose_formats_as_myst_nb_glue_did(path):
    """dwlib's formatting of a glued value (the kernel's, in JupyterLab) is myst-nb's
    ``{glue:text}`` formatting, for every expression of the book: an independent check of
    :func:`dwlib.book.prose.format_value` against the formatter the book used before."""
    from myst_nb.core.variables import format_plain_text

    from dwlib.book import prose

    nb = json.loads(path.read_text(encoding="utf-8"))
    glued = prose.glue_outputs(nb)
    differ = []
    for _, expr, text in prose.expected(nb):
        name, spec = prose.parse(expr)
        theirs = format_plain_text(glued[name][1], spec or "s")
        if text != theirs:
            differ.append(f"{expr}: dwlib {text!r}, myst-nb {theirs!r}")
    assert not differ, f"{path.name}: {differ}"


# ---------------------------------------------------------------------------------------------
# What the saved outputs and the visible code show (the book renders both as saved)

CODE_COLUMNS = 76  # dwlib.book.CODE_COLUMNS: a code line that fits the desktop page's column
HIDDEN = {"remove-cell", "remove-input"}
CELL = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.S)
BIB_KEYS = set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text(encoding="utf-8")))


def _code_cells(path: Path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, c) for i, c in enumerate(cells) if c["cell_type"] == "code"]


def test_code_columns_is_the_books():
    from dwlib.book import CODE_COLUMNS as book_columns
    assert book_columns == CODE_COLUMNS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_visible_code_fits_the_column(path):
    """Every line of a code cell the page shows fits the text column: no sideways scrollbar."""
    wide = [f"cell {i}: {line.strip()[:50]} ({len(line)})" for i, c in _code_cells(path)
            if not HIDDEN & set(c["metadata"].get("tags", []))
            for line in "".join(c["source"]).splitlines() if len(line) > CODE_COLUMNS]
    assert not wide, f"{path.name}: code lines over {CODE_COLUMNS} characters: {wide}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_saved_tables_are_whole(path):
    """No table cell in the saved outputs is cut ("..." or "…"), NaN, or a raw BibTeX key."""
    bad = []
    for i, c in _code_cells(path):
        for out in c.get("outputs", []):
            page = "".join(out.get("data", {}).get("text/html", ""))
            for cell in CELL.findall(page):
                text = re.sub(r"<[^>]+>", "", cell).strip()
                if text.endswith(("...", "\N{HORIZONTAL ELLIPSIS}")) or text in ("NaN", "nan", "None") or text in BIB_KEYS:
                    bad.append(f"cell {i}: {text[-40:]!r}")
    assert not bad, f"{path.name}: table cells cut, missing or uncited: {bad}"
