"""The PDF edition (`make pdf`: scripts/build_pdf.py prints the one-page build with Chromium).

Needs `make pdf` first (the Makefile's `browser` target does it), or a build made elsewhere named
by DWLIB_BOOK_SINGLEHTML (the singlehtml directory) and DWLIB_BOOK_PDF (the PDF printed from it).

On the book's PDF (read back with pypdf, strictly): every chapter of _toc.yml begins a page of
its own, in the book's order, with its title (its bookmark points at the top of that page); every
chart of the build is in it once, drawn with axes and marks (the tagged PDF's figure "Chart k");
the formulas are typeset (glyphs drawn in MathJax's fonts, and no TeX source left as text); the
text on the pages is drawn in the fonts the build ships, so that the PDF's pages do not change
with the fonts of the machine that prints it.
Reading 100-odd pages of text in pure Python takes about 10 s of the module's time (the
fixture). On small pages made from the build's own page (its scripts, styles and theme): the
script prints one that draws (the positive control of the checks above: about 5 s, one
Chromium run), and refuses, in one line and writing nothing, one whose chart fails, which asks
for something beyond localhost, and whose formulas MathJax could not typeset (another run);
bad arguments exit 2.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pypdf  # pinned in requirements.txt
import pytest
import yaml

from dwlib.viz.render import chart_html  # the container and script the book writes for a chart

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_pdf.py"
_spec = importlib.util.spec_from_file_location("build_pdf", SCRIPT)  # its margins: where a page's text begins
build_pdf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_pdf)
SITE = Path(os.environ.get("DWLIB_BOOK_SINGLEHTML", ROOT / "_build" / "singlehtml"))
PDF = Path(os.environ.get("DWLIB_BOOK_PDF", ROOT / "_build" / "pdf" / "book.pdf"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
HEADING_ROOM = 72  # pt: a chapter's heading (its top margin) lies within this of the text's top
MAX_PAGES_PER_CHAPTER = 30  # far above the book's (about 8); more means a broken layout
MATH_SYMBOLS = set("∑≤⟨⟩")  # drawn by the book's first displays, eqs. (1) and (7)
TEX_LEFT_AS_TEXT = re.compile(r"\\(frac|sum|mathrm|langle|le|log|left|right|\(|\[)\b")


def _plain(text: str) -> str:
    """Text as compared here: ligatures undone (NFKC), no whitespace at all."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _font_families(site: Path) -> set[str]:
    """The families of every @font-face in the build's stylesheets, without spaces (nor the
    backslash of an escaped one): the PostScript names of their fonts begin so ("Arimo" for
    Arimo-Bold, "DejaVuSans" for DejaVu Sans, "FontAwesome6Free" for Font Awesome\\ 6 Free)."""
    css = "".join(f.read_text(encoding="utf-8") for f in (site / "_static").rglob("*.css"))
    faces = re.findall(r"@font-face\s*\{([^}]*)\}", css)
    return {re.sub(r"[\s\\]+", "", m.group(1)) for face in faces
            if (m := re.search(r"font-family:\s*['\"]?([^'\";]+)", face))}


def _read(path: Path) -> dict:
    """Per page, its text; all text drawn in MathJax's fonts (woff fonts, which Chromium's PDF
    writer embeds as Type 3 fonts; or a font named MJX...); the other fonts of the text within
    the page's margins (without the subset tag: Chromium's page-number footer below them is
    not the book's); the charts, from the tagged PDF's
    structure: scripts/build_pdf.py makes each chart a figure "Chart k", and Vega labels its
    axes ("X-axis titled ...") and marks for screen readers, which the tagged PDF keeps as the
    alternative text of figures inside it; the bookmarks (title, page, top in pt)."""
    reader = pypdf.PdfReader(path, strict=True)
    pages, math, fonts = [], [], set()
    height = float(reader.pages[0].mediabox.height)
    bottom, top = (build_pdf.MARGIN_MM[side] * 72 / 25.4 for side in ("bottom", "top"))

    def visit(text, cm, tm, font, size):
        if font is not None and (font.get("/Subtype") == "/Type3" or "MJX" in str(font.get("/BaseFont", ""))):
            math.append(text)
        elif font is not None and text.strip():
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]  # the text's baseline on the page, in pt
            if bottom <= y <= height - top:
                fonts.add(str(font.get("/BaseFont")).split("+")[-1])

    for page in reader.pages:
        pages.append(page.extract_text(visitor_text=visit))

    def kids(node):
        k = node.get("/K")
        for child in (k if isinstance(k, list) else [] if k is None else [k]):
            child = child.get_object()
            if isinstance(child, dict) and child.get("/Type") == "/StructElem":
                yield child

    def below(node):
        for child in kids(node):
            yield child
            yield from below(child)

    charts = []  # (k, has axes, has marks) of each figure "Chart k"

    def walk(node):
        alt = str(node.get("/Alt", ""))
        if node.get("/S") == "/Figure" and re.fullmatch(r"Chart \d+", alt):
            inner = [str(d.get("/Alt", "")) for d in below(node) if d.get("/S") == "/Figure"]
            axes = [a for a in inner if a.startswith(("X-axis", "Y-axis"))]
            charts.append((int(alt.split()[1]), bool(axes), len(inner) > len(axes)))
        for child in kids(node):
            walk(child)

    walk(reader.trailer["/Root"]["/StructTreeRoot"].get_object())

    outline = []

    def marks(items):
        for item in items:
            if isinstance(item, list):
                marks(item)
            else:
                outline.append((item.title, reader.get_destination_page_number(item), float(item.top)))

    marks(reader.outline)
    text_top = height - top  # pt above the page's foot
    return {"pages": pages, "math": "".join(math), "fonts": fonts, "charts": charts, "outline": outline,
            "text_top": text_top}


# --- the book's PDF -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def book():
    page = SITE / "index.html"
    if not PDF.is_file() or not page.is_file():
        pytest.fail(f"no PDF at {PDF} or no one-page build at {SITE}: run `make pdf` first")
    redirect = re.search(r'url=([^"#?]+)"', page.read_text(encoding="utf-8"))
    html = (SITE / redirect.group(1) if redirect else page).read_text(encoding="utf-8")
    return {"html": html, **_read(PDF)}


def _chapters(html: str) -> list[tuple[str, str]]:
    """(document, title) of each chapter in the one-page build: the book's title first, then
    each document's first heading (the build marks each with a span id="document-...")."""
    def text(fragment):
        return re.sub(r"<[^>]+>", "", fragment).replace("#", "").strip()

    first = re.search(r'<article class="bd-article">.*?<h1>(.*?)</h1>', html, re.S)
    out = [("root", text(first.group(1)))]
    for doc, title in re.findall(r'<span id="document-([^"]+)"></span>.*?<h2>(.*?)</h2>', html, re.S):
        out.append((doc, text(title)))
    return out


@pytest.mark.slow
def test_every_chapter_begins_a_page_in_order(book):
    """Every document of _toc.yml is in the build, and each begins a PDF page of its own, in the
    book's order: the PDF's bookmark for its title points at the top of a page whose text holds
    the title. The page count is plausible for that many chapters."""
    chapters = _chapters(book["html"])
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert [doc for doc, _ in chapters[1:]] == files
    pages = book["pages"]
    assert len(chapters) <= len(pages) <= MAX_PAGES_PER_CHAPTER * len(chapters), len(pages)
    marks = {_plain(title): (page, top) for title, page, top in book["outline"]}
    starts = []
    for doc, title in chapters:
        assert _plain(title) in marks, f"no bookmark for {doc}: {title!r}"
        page, top = marks[_plain(title)]
        down = book["text_top"] - top
        assert down <= HEADING_ROOM, f"{doc} begins {down:.0f} pt down page {page + 1}"
        assert _plain(title) in _plain(pages[page]), f"page {page + 1} does not show {title!r}"
        starts.append(page)
    assert starts == sorted(starts) and len(set(starts)) == len(starts), list(zip(chapters, starts))


#: figures whose chart has marks but no axes: the introduction's threshold explorer (text and
#: sliders) and the analysed model's architecture (boxes and arrows)
AXISLESS = {"fig-threshold-explorer", "fig-analysed-architecture"}


def _axisless(html: str, pos: int) -> bool:
    """Whether the chart at ``pos`` lies in one of the :data:`AXISLESS` figures."""
    opened, closed = html.rfind("<figure", 0, pos), html.rfind("</figure>", 0, pos)
    return opened > closed and re.search(r'id="([^"]+)"', html[opened:html.find(">", opened)]).group(1) in AXISLESS


def test_every_chart_is_drawn_in_the_pdf(book):
    """Each chart of the book is in the PDF once, drawn with its marks and, but for the figures
    of :data:`AXISLESS`, its axes."""
    html = book["html"]
    starts = [m.start() for m in re.finditer('<div class="dw-chart">', html)]
    assert starts
    want = [(k, not _axisless(html, pos), True) for k, pos in enumerate(starts, 1)]
    assert book["charts"] == want, (len(starts), book["charts"])


def test_text_is_in_the_books_fonts(book):
    """Every font of the text on the pages is one of the families the build's stylesheets
    ship (their @font-face rules: the book's fonts, the theme's icons), or MathJax's: none comes
    from the machine that printed it, whose fonts would change where lines break and pages end."""
    shipped = _font_families(SITE)
    assert shipped, f"no @font-face in {SITE / '_static'}"
    foreign = sorted(f for f in book["fonts"] if not any(f == s or f.startswith(s + "-") for s in shipped))
    assert book["fonts"] and not foreign, f"fonts not shipped with the book: {foreign} (shipped: {sorted(shipped)})"


def test_formulas_are_typeset(book):
    """The glyphs come from MathJax's fonts, and no formula is left as TeX source."""
    assert MATH_SYMBOLS <= set(book["math"]), sorted(MATH_SYMBOLS - set(book["math"]))
    left = [m.group(0) for text in book["pages"] for m in TEX_LEFT_AS_TEXT.finditer(text)]
    assert not left, left[:10]


# --- the script, on small pages -----------------------------------------------------------------

def _chart(spec: dict) -> str:
    return chart_html(spec, {"renderer": "svg", "actions": False})


LINE = {"data": {"values": [{"x": i, "y": i * i} for i in range(1, 6)]}, "mark": "line",
        "encoding": {"x": {"field": "x", "type": "quantitative", "title": "tiny x"},
                     "y": {"field": "y", "type": "quantitative", "title": "tiny y"}},
        "width": 300, "height": 120}
FORMULA = r'<div class="math notranslate nohighlight">\[\sum_{j=1}^{N} x_j \le \langle a, b \rangle\]</div>'


def _site(tmp_path: Path, body: str) -> Path:
    """A one-page site: the book's page (its scripts, styles and theme, from SITE/_static) with
    ``body`` in place of the book's article."""
    page = SITE / "index.html"
    if not page.is_file():
        pytest.fail(f"no one-page build at {SITE}: run `make pdf` first")
    redirect = re.search(r'url=([^"#?]+)"', page.read_text(encoding="utf-8"))
    html = (SITE / redirect.group(1) if redirect else page).read_text(encoding="utf-8")
    start = html.index('<article class="bd-article">') + len('<article class="bd-article">')
    end = html.index("</article>", start)
    html = html[:start] + f"<section><h1>A small book</h1>{body}</section>" + html[end:]
    # The side table of contents lists the book's sections, which this page has not: the theme's
    # scroll-spy would fail on them.
    html = re.sub(r'<nav id="pst-page-toc-nav".*?</nav>', "", html, flags=re.S)
    site = tmp_path / "site"
    site.mkdir()
    (site / "_static").symlink_to((SITE / "_static").resolve())
    (site / "index.html").write_text(html, encoding="utf-8")
    return site


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args), "--chromium", CHROMIUM, "--timeout", "60"],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.slow
def test_a_page_that_draws_is_printed(tmp_path):
    """The positive control for the book's checks above: two charts and a formula."""
    site = _site(tmp_path, f"<p>Before.</p>{FORMULA}{_chart(LINE)}{_chart({**LINE, 'mark': 'point'})}")
    out = tmp_path / "small.pdf"
    run = _run(site, out)
    assert run.returncode == 0, run.stderr
    assert "2 charts" in run.stdout and "1 formulas" in run.stdout, run.stdout
    read = _read(out)
    assert read["charts"] == [(1, True, True), (2, True, True)]
    assert MATH_SYMBOLS <= set(read["math"])
    assert "Before." in read["pages"][0] and not TEX_LEFT_AS_TEXT.search("".join(read["pages"]))


# What the script must refuse, each with the words that say so: one page holds them all (one
# Chromium run instead of four), beside a chart and a formula that draw.
BREAKAGES = {
    "charts that failed: ": _chart({**LINE, "mark": "no-such-mark"}),
    "request beyond localhost (refused): http://192.0.2.1/x.png": '<img src="http://192.0.2.1/x.png" alt="">',
    r"formulas MathJax did not typeset: \[\frac{1}{\]":
        r'<div class="math notranslate nohighlight">\[\frac{1}{\]</div>',
    "MathJax errors: ": r'<div class="math notranslate nohighlight">\[x^{1}^{2}\]</div>',
}


@pytest.mark.slow
def test_a_page_that_does_not_draw_is_not_printed(tmp_path):
    """Exit status 1 with one line naming each thing that failed; the PDF already there is left
    as it was, and no temporary file is left beside it."""
    site = _site(tmp_path, FORMULA + _chart(LINE) + "".join(BREAKAGES.values()))
    out = tmp_path / "book.pdf"
    out.write_bytes(b"the previous edition")
    run = _run(site, out)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, (run.stdout, run.stderr)
    missing = [words for words in BREAKAGES if words not in run.stderr]
    assert not missing, (missing, run.stderr)
    assert out.read_bytes() == b"the previous edition"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.pdf", "site"]


@pytest.mark.parametrize("args, expected", [
    (["{tmp}/none", "{tmp}/book.pdf"], "has no index.html"),
    (["{site}", "{tmp}/missing/book.pdf"], "does not exist: create it first"),
    (["{site}", "{tmp}"], "is a directory"),
    (["{site}", "{tmp}/book.pdf", "--timeout", "0"], "--timeout must be > 0"),
])
def test_bad_arguments(tmp_path, args, expected, refused):
    site = tmp_path / "site"
    (site / "_static").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>")
    argv = [a.format(tmp=tmp_path, site=site) for a in args]
    run = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, timeout=60)
    refused(run.returncode, run.stderr, expected, run.stdout)
    assert not (tmp_path / "book.pdf").exists()
