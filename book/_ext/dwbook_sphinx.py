"""Sphinx glue for the offline book.

- Removes exact duplicate ``<script>`` entries from each page. Sphinx 7.4 writes inline
  scripts that extensions add after the builder starts twice; sphinx-thebe's
  ``const THEBE_JS_URL = ...`` then raises a SyntaxError on every page.
- Adds the MathJax 2 shim that the saved-widget renderer needs (see assets/mathjax2-shim.js).
- Adds assets/dwcharts.js, which fits each chart to its column (a phone's included), after
  the Vega libraries (``html_js_files`` come at priority 800) and before the charts' scripts.
"""


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        # Inline scripts carry filename None or "" depending on how they were added.
        key = (getattr(js, "filename", None) or "",
               tuple(sorted((getattr(js, "attributes", {}) or {}).items())))
        if key in seen:
            continue
        seen.add(key)
        unique.append(js)
    scripts[:] = unique


def setup(app):
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.add_js_file("mathjax2-shim.js", priority=100)
    app.add_js_file("dwcharts.js", priority=900)
    app.add_css_file("dwbook.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
