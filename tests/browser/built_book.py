"""The built book as the browser tests open it: where it is, its pages, a local server for it
(the ``server`` fixture), and opening a page offline and waiting until it has drawn. Shared by
test_pages.py and test_reading.py."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import LOCAL_HOSTS  # tests/conftest.py, which also holds the `browser` fixture

ROOT = Path(__file__).resolve().parents[2]
# The built book's html directory: DWLIB_BOOK_HTML for a book built elsewhere (a helper's
# `jupyter-book build --path-output DIR` writes DIR/_build/html).
HTML = Path(os.environ.get("DWLIB_BOOK_HTML") or ROOT / "_build" / "html").resolve()
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if "_static" not in p.parts and "_sources" not in p.parts) if HTML.is_dir() else []


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not PAGES:
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def open_page(browser, url, viewport="desktop"):
    """Load ``url`` at ``viewport``; return the page and the problems seen while loading it."""
    page = browser.new_page(viewport=VIEWPORTS[viewport])
    problems = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)

    def on_request(req):
        u = urlparse(req.url)
        if u.scheme in ("data", "blob", "about"):
            return
        if u.hostname not in LOCAL_HOSTS:
            problems.append(f"request leaves localhost: {req.url}")

    page.on("request", on_request)
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, problems


@contextlib.contextmanager
def drawn_page(browser, server, path, viewport="desktop"):
    """The book's page ``path`` at ``viewport``, drawn as far as it draws (what is missing is
    test_pages' to report), and the problems seen while loading it; closed afterwards. The test
    is skipped if the address redirects."""
    url = f"{server}/{path}"
    page, problems = open_page(browser, url, viewport)
    try:
        if page.url.split("#")[0] != url:
            pytest.skip(f"{path} redirects to {page.url}")
        try:
            wait_drawn(page)
        except Exception:
            pass
        yield page, problems
    finally:
        page.close()


def wait_drawn(page):
    """Wait until MathJax has typeset, every chart has marks and is fitted to its column
    (book/assets/dwcharts.js marks it data-dw-fit), every saved widget is drawn, and the fonts
    the page asked for have loaded."""
    page.wait_for_function(
        """() => {
          const mathOk = [...document.querySelectorAll('div.math, span.math')]
            .every(m => m.querySelector('mjx-container'));
          const chartsOk = [...document.querySelectorAll('.dw-chart')]
            .every(c => (c.querySelector('svg.marks, canvas.marks') && c.dataset.dwFit)
                        || c.querySelector('.dw-chart-error'));
          const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]');
          const widgetsOk = [...views].every(s => s.previousElementSibling
            && s.previousElementSibling.querySelector('.widget-container, .jupyter-widgets, .widget-inline-hbox, .widget-html'));
          return mathOk && chartsOk && widgetsOk && document.fonts.status === 'loaded';
        }""",
        timeout=30_000,
    )
