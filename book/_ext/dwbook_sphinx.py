"""Sphinx glue for the offline book.

- Removes exact duplicate ``<script>`` entries from each page. Sphinx 7.4 writes inline
  scripts that extensions add after the builder starts twice; sphinx-thebe's
  ``const THEBE_JS_URL = ...`` then raises a SyntaxError on every page.
- Leaves out the saved widget state and the ipywidgets HTML manager, which the static pages never use.
- Adds assets/dwcharts.js, which fits each chart to its column (a phone's included), after
  the Vega libraries (``html_js_files`` come at priority 800) and before the charts' scripts.
- Adds assets/dwmath.js, which draws a display formula wider than its column smaller, down to
  a limit (past it the formula scrolls sideways in its own box, from its start).
- Adds assets/dwtables.js and assets/dwtables.css, which show each table of the text as stacked
  blocks on a narrow screen, or wherever it is wider than its column (one block a row, each cell
  under its column's header), so that no column lies off-screen; other tables, and paper, keep
  the ordinary table.
- Adds assets/dwfigures.css, the style of numbered figures. A chart becomes a figure through
  its cell's metadata (``mystnb: figure: {name, caption}``, which myst-nb wraps around the
  output); Sphinx numbers it per chapter (``numfig`` with the chapters numbered in _toc.yml).
- Adds the role ``{figref}`name```, which the text uses to refer to a figure: Sphinx's numref
  ("Figure 3.2", a link). Not numref itself: jupyterlab-myst resolves references only among
  markdown cells, so a numref to a figure named in a code cell's metadata logs "Cross
  reference target was not found" there; a role it does not know, it shows as text.
- Numbers the root page's figures "Figure I.1", "Figure I.2" (I for the introduction): the root
  page is in no numbered part, so Sphinx would number them "Figure 1", "Figure 2", the numbers
  of the paper's own figures, which the introduction discusses. The claims at a glance, in the
  unnumbered back matter, number theirs "Figure C.1" for the same reason.
- Loads dwbook_eval: the ``{eval}`` role renders the result stored in its markdown cell, the
  number JupyterLab shows (the chapters quote every computed number that way).
"""

from docutils import nodes
from sphinx import addnodes



#: what myst-nb adds to a page whose notebook saved widget state: the state and the ipywidgets
#: HTML manager that would draw it. The static book never draws a widget view
#: (nb_mime_priority_overrides in _config.yml), so neither is sent.
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        # Inline scripts carry filename None or "" depending on how they were added.
        attributes = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", None) or "", tuple(sorted(attributes.items())))
        if key in seen or attributes.get("type") == WIDGET_STATE or "html-manager" in key[0]:
            continue
        seen.add(key)
        unique.append(js)
    scripts[:] = unique


def _figref(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{figref}`fig-name``` -> the pending reference a ``{numref}`fig-name``` makes."""
    target = text.strip()
    env = inliner.document.settings.env
    ref = addnodes.pending_xref(rawtext, refdomain="std", reftype="numref", reftarget=target.lower(),
                                refexplicit=False, refwarn=True, refdoc=env.docname)
    ref += nodes.inline(rawtext, target, classes=["xref", "std", "std-numref"])
    ref.line = lineno
    return [ref], []


#: the prefix of the root page's figure numbers ("Figure I.2")
ROOT_PREFIX = "I"
#: the other pages in no numbered part that have figures, with their prefix ("Figure C.1" for the
#: claims at a glance, in the back matter)
PAGE_PREFIXES = {"book/claims": "C"}


def _number_root_figures(app, env):
    """Once Sphinx has numbered the figures (``env-get-updated``, before the consistency check),
    put :data:`ROOT_PREFIX` before each number on the root page, and each page's prefix of
    :data:`PAGE_PREFIXES` on those pages; idempotent, since a later build may keep the numbers."""
    for page, prefix in ((app.config.root_doc, ROOT_PREFIX), *PAGE_PREFIXES.items()):
        figures = env.toc_fignumbers.get(page, {}).get("figure", {})
        # Sphinx counts the figures of unnumbered pages on from one page to the next: renumber
        # each page's own from 1, in their order
        plain = sorted((number, fid) for fid, number in figures.items() if number and number[0] != prefix)
        for i, (_, fid) in enumerate(plain, start=1):
            figures[fid] = (prefix, i)


def setup(app):
    app.setup_extension("dwbook_eval")
    app.add_role("figref", _figref)
    app.connect("env-check-consistency", _number_root_figures)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.add_js_file("dwcharts.js", priority=900)
    app.add_js_file("dwmath.js", priority=900)
    app.add_css_file("dwbook.css")
    app.add_css_file("dwfigures.css")
    app.add_js_file("dwtables.js", priority=900)
    app.add_css_file("dwtables.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
