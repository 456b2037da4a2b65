"""Open every page of the built book in headless Chromium, offline, and check it works.

Needs `make book` first (the Makefile's `browser` target does it). Chromium comes from
Debian's package; Playwright's Python package drives it through `executable_path` and
never downloads a browser. Per page: it loads, raises no page or console error, asks for
nothing beyond localhost, every formula is typeset by MathJax, every Altair chart draws
marks, every saved widget renders, and moving any bound slider of any chart redraws it.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic", "--no-sandbox", "--disable-gpu"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
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


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium, or set CHROMIUM")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def _open(browser, url):
    """Load ``url``; return the page and the problems seen while loading it."""
    page = browser.new_page()
    problems = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)

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


def _wait_drawn(page):
    """Wait until MathJax has typeset, every chart has marks and every saved widget is drawn."""
    page.wait_for_function(
        """() => {
          const mathOk = [...document.querySelectorAll('div.math, span.math')]
            .every(m => m.querySelector('mjx-container'));
          const chartsOk = [...document.querySelectorAll('.dw-chart')]
            .every(c => c.querySelector('svg.marks, canvas.marks') || c.querySelector('.dw-chart-error'));
          const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]');
          const widgetsOk = [...views].every(s => s.previousElementSibling
            && s.previousElementSibling.querySelector('.widget-container, .jupyter-widgets, .widget-inline-hbox, .widget-html'));
          return mathOk && chartsOk && widgetsOk;
        }""",
        timeout=30_000,
    )


@pytest.mark.parametrize("path", PAGES)
def test_page(server, browser, path):
    url = f"{server}/{path}"
    page, problems = _open(browser, url)
    try:
        if page.url.split("#")[0] != url:
            pytest.skip(f"{path} redirects to {page.url}")
        try:
            _wait_drawn(page)
        except Exception:  # report what is missing below instead of a bare timeout
            pass
        info = page.evaluate(
            """() => ({
              math: document.querySelectorAll('div.math, span.math').length,
              mathUntypeset: [...document.querySelectorAll('div.math, span.math')]
                 .filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 60)),
              mathErrors: document.querySelectorAll('mjx-merror').length,
              mathClipped: [...document.querySelectorAll('mjx-container[display=true]')].filter(m => {
                 const f = m.getBoundingClientRect(), box = m.parentElement.getBoundingClientRect();
                 return f.left < box.left - 1 || f.right > box.right + 1;  // the column hides the rest
              }).map(m => m.textContent.slice(0, 60)),
              charts: document.querySelectorAll('.dw-chart').length,
              chartsEmpty: [...document.querySelectorAll('.dw-chart')].filter(c => {
                 const m = c.querySelector('svg.marks, canvas.marks');
                 if (!m) return true;
                 return m.tagName === 'svg' ? m.querySelectorAll('path, rect, text, line, circle, symbol').length === 0
                                            : m.width === 0;
              }).map(c => c.id),
              chartErrors: [...document.querySelectorAll('.dw-chart-error')].map(e => e.textContent),
              views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
              viewsUnrendered: [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
                 .filter(s => !(s.previousElementSibling && s.previousElementSibling.querySelector(
                    '.widget-container, .jupyter-widgets, .widget-inline-hbox, .widget-html'))).length,
            })"""
        )
        assert not problems, "\n".join(problems)
        assert not info["mathUntypeset"], f"formulas not typeset: {info['mathUntypeset']}"
        assert info["mathErrors"] == 0, "MathJax reported errors"
        assert not info["mathClipped"], f"display formulas wider than the text column: {info['mathClipped']}"
        assert not info["chartErrors"], f"charts failed: {info['chartErrors']}"
        assert not info["chartsEmpty"], f"charts drew nothing: {info['chartsEmpty']}"
        assert info["viewsUnrendered"] == 0, f"{info['viewsUnrendered']} saved widget views did not render"
        still = _sliders_that_do_not_redraw(page)
        assert not still, f"moving these bound sliders did not change their chart: {still}"
    finally:
        page.close()


def _sliders_that_do_not_redraw(page) -> list[str]:
    """Move every bound slider of every chart on the page to its far end, one at a time, and
    return 'chart-id: slider name' for each whose chart's marks did not change."""
    charts = page.locator(".dw-chart", has=page.locator(".vega-bindings input[type=range]"))
    bad = []
    for c in range(charts.count()):
        chart = charts.nth(c)
        sliders = chart.locator(".vega-bindings input[type=range]")
        for s in range(sliders.count()):
            before = chart.locator("svg.marks, canvas.marks").first.inner_html()
            name = page.evaluate(
                """([el, i]) => {
                  const s = el.querySelectorAll('.vega-bindings input[type=range]')[i];
                  const lo = parseFloat(s.min), hi = parseFloat(s.max), v = parseFloat(s.value);
                  s.value = String(Math.abs(v - lo) > Math.abs(hi - v) ? lo : hi);
                  s.dispatchEvent(new Event('input', {bubbles: true}));
                  s.dispatchEvent(new Event('change', {bubbles: true}));
                  return s.name || (s.closest('.vega-bind') || s.parentElement).textContent.trim().slice(0, 40);
                }""",
                [chart.element_handle(), s],
            )
            page.wait_for_timeout(300)
            if chart.locator("svg.marks, canvas.marks").first.inner_html() == before:
                bad.append(f"{chart.get_attribute('id')}: {name}")
    return bad


def test_book_has_charts_math_widgets_and_a_moving_slider(server, browser):
    """Across the book: charts, formulas and widgets exist, and a bound slider redraws a chart."""
    seen = {"charts": 0, "math": 0, "views": 0, "sliders": 0}
    moved = None
    for path in PAGES:
        url = f"{server}/{path}"
        page, _ = _open(browser, url)
        try:
            if page.url.split("#")[0] != url:
                continue
            try:
                _wait_drawn(page)
            except Exception:
                pass
            counts = page.evaluate(
                """() => ({charts: document.querySelectorAll('.dw-chart').length,
                          math: document.querySelectorAll('div.math, span.math').length,
                          views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
                          sliders: document.querySelectorAll('.dw-chart .vega-bindings input[type=range]').length})"""
            )
            for k in seen:
                seen[k] += counts[k]
            if moved is None and counts["sliders"]:
                moved = _move_first_slider(page)
        finally:
            page.close()
    assert seen["charts"] > 0 and seen["math"] > 0 and seen["views"] > 0, seen
    assert seen["sliders"] > 0, "no bound slider in the book"
    assert moved, "moving a bound slider did not change its chart's marks"


def _move_first_slider(page) -> bool:
    chart = page.locator(".dw-chart", has=page.locator(".vega-bindings input[type=range]")).first
    before = chart.locator("svg.marks, canvas.marks").first.inner_html()
    page.evaluate(
        """(el) => {
          const s = el.querySelector('.vega-bindings input[type=range]');
          const lo = parseFloat(s.min), hi = parseFloat(s.max), v = parseFloat(s.value);
          s.value = String(Math.abs(v - lo) > Math.abs(hi - v) ? lo : hi);
          s.dispatchEvent(new Event('input', {bubbles: true}));
          s.dispatchEvent(new Event('change', {bubbles: true}));
        }""",
        chart.element_handle(),
    )
    page.wait_for_timeout(500)
    after = chart.locator("svg.marks, canvas.marks").first.inner_html()
    return before != after
