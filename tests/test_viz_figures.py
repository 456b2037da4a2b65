"""Every figure of the book is numbered, captioned and referred to, checked from the notebooks'
JSON (nothing is executed).

A chart (a Vega-Lite output) or an image output becomes a numbered figure through its cell's
metadata, ``mystnb: figure: {name, caption}``: myst-nb wraps the output in a figure with that
name and caption, and Sphinx numbers it per chapter ("Figure 3.2"; ``numfig`` in _config.yml,
the chapters numbered in _toc.yml). Here: every such output has a figure name and a caption
that says something (a few sentences, not a label), the names are unique in the book, and the
chapter's prose refers to each figure by number (``{figref}`name```, the book's numref: see
book/_ext/dwbook_sphinx.py; a ``{numref}`` to a figure would log an unresolved reference in
JupyterLab, which resolves references among markdown cells only) and to no figure that does
not exist. tests/browser/test_pages.py checks the same in the built pages: every chart
and image sits in a figure whose caption carries "Figure N.M".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from dwlib.viz.render import MIMETYPE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
MIN_CAPTION_WORDS = 20  # what the figure shows and how to read it: more than a title
FIGREF = re.compile(r"\{figref\}`(fig-[^`]+)`")
NUMREF_TO_FIGURE = re.compile(r"\{numref\}`(?:[^`<]*<)?fig-")
#: the root page's figures are numbered "Figure I.1", "Figure I.2" (no chapter; the book's Sphinx
#: extension adds the I, so they are not the paper's own Figures 1 and 2, which the book discusses);
#: there the text refers to them by name
REF_BY_NAME = re.compile(r"\{ref\}`[^`<]+<(fig-[^`>]+)>`")
ROOT_PAGE = Path(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"]).stem


def _figure_cells(nb: dict):
    """(cell, its figure options or None) for every code cell that outputs a chart or an image."""
    for cell in nb["cells"]:
        kinds = {k for o in cell.get("outputs", []) for k in o.get("data", {})}
        if cell["cell_type"] == "code" and (MIMETYPE in kinds or any(k.startswith("image/") for k in kinds)):
            yield cell, cell.get("metadata", {}).get("mystnb", {}).get("figure")


def _book() -> dict:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in NOTEBOOKS}


def test_every_chart_and_image_is_a_named_captioned_figure():
    book = _book()
    figures = [(stem, "".join(c["source"]).strip().splitlines()[-1], fig)
               for stem, nb in book.items() for c, fig in _figure_cells(nb)]
    assert len(figures) >= 10, "the book's charts were not found"
    bare = [(stem, line) for stem, line, fig in figures
            if not (fig and str(fig.get("name", "")).startswith("fig-") and fig.get("caption"))]
    assert not bare, f"outputs without a figure name and caption: {bare}"
    short = [(fig["name"], len(fig["caption"].split())) for _, _, fig in figures
             if len(fig["caption"].split()) < MIN_CAPTION_WORDS]
    assert not short, f"captions shorter than {MIN_CAPTION_WORDS} words: {short}"
    names = [fig["name"] for _, _, fig in figures]
    assert len(names) == len(set(names)), f"figure names used twice: {names}"


def test_the_text_refers_to_every_figure_by_number():
    book = _book()
    names = {stem: {fig["name"] for _, fig in _figure_cells(nb) if fig} for stem, nb in book.items()}
    every = set().union(*names.values())
    for stem, nb in book.items():
        prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        captions = "".join(fig.get("caption", "") for _, fig in _figure_cells(nb) if fig)
        assert not NUMREF_TO_FIGURE.search(prose + captions), f"{stem}: a figure referred to by numref"
        referred = set(FIGREF.findall(prose))
        if stem == ROOT_PAGE:
            referred |= set(REF_BY_NAME.findall(prose))
        assert names[stem] <= referred, f"{stem}: figures the text never refers to: {names[stem] - referred}"
        unknown = (referred | set(FIGREF.findall(captions))) - every
        assert not unknown, f"{stem}: references to figures that do not exist: {unknown}"


def _extension():
    """The book's Sphinx extension, imported from book/_ext as Sphinx does."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("dwbook_sphinx", ROOT / "book" / "_ext" / "dwbook_sphinx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figures_are_numbered_per_chapter():
    """numfig with the chapters numbered: "Figure 3.2" is the second figure of chapter 3."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    assert config["numfig"] is True and config["numfig_secnum_depth"] == 1
    assert config["numfig_format"]["figure"] == "Figure %s"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    charted = {p.stem for p, nb in zip(NOTEBOOKS, _book().values()) if any(True for _ in _figure_cells(nb))}
    numbered = {Path(ch["file"]).stem for part in toc["parts"] if part.get("numbered")
                for ch in part["chapters"]}
    # every chapter with figures is numbered, except the root page (its figures are "Figure I.1", ...)
    # and the pages the book's extension gives a prefix of their own (the claims: "Figure C.1")
    prefixed = {Path(page).stem for page in _extension().PAGE_PREFIXES}
    assert charted - {Path(toc["root"]).stem} - prefixed <= numbered, charted - numbered
    assert prefixed <= {Path(ch["file"]).stem for part in toc["parts"] for ch in part["chapters"]} - numbered
