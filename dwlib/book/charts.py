"""The book's charts: myst-nb turns each chart output into the book's offline HTML.

A chart's output in a notebook is its Vega-Lite spec under :data:`dwlib.viz.render.MIMETYPE`
(which JupyterLab draws by itself). myst-nb knows no Vega MIME type, so this plugin, named
in pyproject.toml under the ``myst_nb.mime_renderers`` entry point, hands it the HTML of
:func:`dwlib.viz.render.chart_html` instead, ranked above every other representation.
"""

from __future__ import annotations

import dataclasses

from dwlib.viz import render


class VegaLiteHTML:
    """myst-nb mime-render plugin: a Vega-Lite output becomes the book's chart HTML."""

    mime_priority_overrides = [("*", render.MIMETYPE, 1)]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type != render.MIMETYPE or inline:  # a chart is a block, never inline
            return None
        options = (data.output_metadata or {}).get(render.MIMETYPE, {}).get("embed_options")
        html = render.chart_html(render.book_spec(data.content), options)
        return renderer.render_text_html(dataclasses.replace(data, mime_type="text/html", content=html))
