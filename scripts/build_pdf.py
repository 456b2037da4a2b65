"""Print the book's one-page build (Jupyter Book's singlehtml builder) to a PDF with Chromium.

    jupyter-book build . --builder singlehtml           # every chapter in one page: _build/singlehtml
    python scripts/build_pdf.py _build/singlehtml _build/pdf/book.pdf

`make pdf` runs both. The page is served from localhost and opened offline in Debian's
Chromium (driven by Playwright's Python package, never a downloaded browser), laid out at the
paper's text width under the print stylesheet (book/assets/dwprint.css), and printed only when
MathJax has typeset every formula without error, every chart has drawn its marks within the
column, and nothing was requested beyond localhost; otherwise nothing is written and the script
says what failed. Links inside the book become links inside the PDF; the PDF has bookmarks
(from the headings) and numbered pages. The PDF shows what the static pages show: an explorer is
never drawn as its ipywidget controls (`nb_mime_priority_overrides` in _config.yml ranks the
widget view last), but as its static form, a Vega chart computed in the page where it has one
(its bound sliders print as their names and values; book/assets/dwprint.css hides the range
inputs), else its saved HTML snapshot, the values of its controls and its panel
(dwlib/viz/widgets.py). A saved widget view left in the page fails the print.

The PDF is written to a temporary file beside OUT and renamed onto OUT, so OUT is either the
previous file or the whole new one. Exit status: 0 written, 1 the page did not draw or print
cleanly, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

# The flags that keep Chromium off the network on its own (as tests/conftest.py).
CHROMIUM_ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic", "--no-sandbox", "--disable-gpu"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PAPERS = {"A4": (210.0, 297.0), "Letter": (215.9, 279.4)}  # mm
MARGIN_MM = {"top": 16.0, "bottom": 18.0, "left": 18.0, "right": 18.0}
CSS_PX_PER_MM = 96 / 25.4
FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')

# Ready to print: MathJax has finished its first typesetting (its startup promise has settled),
# the fonts have loaded, and every chart has drawn and been fitted to the column by
# book/assets/dwcharts.js (or failed).
_READY_JS = """() => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise && !window.dwMathSettled) {
    window.dwMathSettled = 'waiting';
    mj.startup.promise.then(() => { window.dwMathSettled = 'done'; },
                            err => { window.dwMathSettled = 'failed'; console.error(err); });
  }
  const mathDone = !document.querySelector('.math') || window.dwMathSettled === 'done'
      || window.dwMathSettled === 'failed';
  const chartsDone = [...document.querySelectorAll('.dw-chart')].every(c =>
      (c.querySelector('svg.marks, canvas.marks') && c.dataset.dwFit) || c.querySelector('.dw-chart-error'));
  return mathDone && chartsDone && document.fonts.status === 'loaded';
}"""

# A display formula wider than the column would be cut off on paper (on screen its box scrolls):
# it is scaled down to the column's width, by at most MIN_MATH_ZOOM (smaller than that fails).
MIN_MATH_ZOOM = 0.7
_FIT_MATH_JS = """(minZoom) => {
  const zooms = [];
  for (const m of document.querySelectorAll('mjx-container[display=true]')) {
    const box = m.parentElement, cs = getComputedStyle(box);
    const room = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const wide = m.getBoundingClientRect().width;
    if (wide > room + 1) {
      const zoom = Math.max(minZoom, (room - 2) / wide);
      m.style.zoom = String(zoom);
      zooms.push(zoom);
    }
  }
  return zooms;
}"""

# What is on the page, measured in the print layout: the keys under "problems" must be empty.
_CHECK_JS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const cs = getComputedStyle(article), ab = article.getBoundingClientRect();
  const left = ab.left + parseFloat(cs.paddingLeft), right = ab.right - parseFloat(cs.paddingRight);
  const charts = [...document.querySelectorAll('.dw-chart')];
  const maths = [...document.querySelectorAll('div.math, span.math')];
  const short = el => el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 60);
  const outside = el => { const r = el.getBoundingClientRect(); return r.left < left - 1 || r.right > right + 1; };
  return {
    charts: charts.length,
    math: maths.length,
    // the one-page build marks where each document after the first begins
    documents: 1 + document.querySelectorAll('span[id^="document-"]').length,
    problems: {
      'charts that failed': [...document.querySelectorAll('.dw-chart-error')].map(short),
      'charts that drew no marks': charts.map((c, i) => {
        const m = c.querySelector('svg.marks, canvas.marks');
        const drawn = m && (m.tagName === 'svg' ? m.querySelectorAll('path, rect, line, symbol, circle').length > 0
                                                : m.width > 0);
        return drawn ? null : `chart ${i + 1}`;
      }).filter(Boolean),
      'charts wider than the text column': charts.map((c, i) => {
        const m = c.querySelector('svg.marks, canvas.marks');
        return m && outside(m) ? `chart ${i + 1}` : null;
      }).filter(Boolean),
      'formulas MathJax did not typeset': maths.filter(m => !m.querySelector('mjx-container')).map(short),
      'MathJax errors': [...document.querySelectorAll('mjx-merror')].map(short),
      'display formulas wider than the text column': [...document.querySelectorAll('mjx-container[display=true]')]
          .filter(outside).map(short),
      'saved widget views (controls) in the print': [...document.querySelectorAll(
          'script[type="application/vnd.jupyter.widget-view+json"]')].map((s, i) => `view ${i + 1}`),
    },
  };
}"""

# In the tagged PDF each chart is a figure with the alternative text "Chart k" (k counts the
# book's charts), holding the figures Vega's own labels make of its axes and marks.
_LABEL_CHARTS_JS = """() => {
  document.querySelectorAll('.dw-chart').forEach((c, i) => {
    c.setAttribute('role', 'figure');
    c.setAttribute('aria-label', `Chart ${i + 1}`);
  });
}"""

# Links on paper: one to a place in the book becomes a link inside the PDF (its fragment); one
# to another local page (the search page, a source file) would be dead on paper and is dropped.
_LINKS_JS = """(page) => {
  let inside = 0, dropped = 0;
  for (const a of document.querySelectorAll('a[href]')) {
    const u = new URL(a.href, location.href);
    if (u.origin !== location.origin) continue;
    if (u.pathname === '/' || u.pathname === '/' + page) {
      a.setAttribute('href', u.hash || '#');
      inside++;
    } else {
      a.removeAttribute('href');
      dropped++;
    }
  }
  return [inside, dropped];
}"""


class BuildError(Exception):
    """The page did not draw or print cleanly: exit status 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _root_document(site: Path) -> str:
    """The page that holds the book: index.html, or the page its redirect names."""
    index = site / "index.html"
    if not index.is_file():
        raise ValueError(f"{site} has no index.html: build it with `jupyter-book build . --builder singlehtml`")
    text = index.read_text(encoding="utf-8", errors="replace")
    redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"#?]+)"', text, re.IGNORECASE)
    page = redirect.group(1) if redirect else "index.html"
    if not (site / page).is_file():
        raise ValueError(f"{site}/index.html redirects to {page}, which is not there")
    if not (site / "_static").is_dir():
        raise ValueError(f"{site} has no _static folder: not a Sphinx HTML build")
    return page


def _check_out(out: Path) -> None:
    if out.is_dir():
        raise ValueError(f"{out} is a directory: give the PDF's file name")
    if not out.parent.is_dir():
        raise ValueError(f"{out.parent} does not exist: create it first")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write in {out.parent}")


def parse_args(argv=None) -> argparse.Namespace:
    p = _Parser(prog="build_pdf.py", description=__doc__.splitlines()[0])
    p.add_argument("site", type=Path, help="a singlehtml build (the folder with index.html and _static)")
    p.add_argument("out", type=Path, help="the PDF to write")
    p.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                   help="Chromium's executable (default: $CHROMIUM or /usr/bin/chromium)")
    p.add_argument("--paper", choices=sorted(PAPERS), default="A4")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds to wait for the page to draw (default 300: a busy 2-core machine)")
    args = p.parse_args(argv)
    try:
        args.page = _root_document(args.site)
        _check_out(args.out)
    except ValueError as err:
        p.error(str(err))
    if not (os.path.isfile(args.chromium) and os.access(args.chromium, os.X_OK)):
        p.error(f"Chromium not found at {args.chromium}: apt-get install chromium, or pass --chromium")
    if not args.timeout > 0:
        p.error(f"--timeout must be > 0, got {args.timeout}")
    return args


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The site's files; "/" is the book's page, so that its links (written for the site's root)
    resolve."""

    page = "index.html"

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/":
            self.path = "/" + self.page
        elif path == "/searchindex.js" and not Path(self.directory, "searchindex.js").exists():
            # The one-page build writes no search index, but its page still loads one (the
            # theme's search box, hidden on paper): an empty script stands in for it.
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def _serve(site: Path, page: str):
    handler = functools.partial(type("Handler", (_Handler,), {"page": page}), directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _line(text: str) -> str:
    """A message's first line (a console error may carry its stack)."""
    return text.strip().split("\n", 1)[0]


def _watch(page, problems: list[str]) -> None:
    """Record page errors, console errors and warnings, and requests beyond localhost (which are
    refused)."""
    page.on("pageerror", lambda e: problems.append(f"page error: {_line(str(e))}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {_line(m.text)}")
            if m.type in ("error", "warning") else None)

    def route(r):
        u = urlparse(r.request.url)
        if u.scheme in ("data", "blob", "about") or u.hostname in LOCAL_HOSTS:
            r.continue_()
        else:
            problems.append(f"request beyond localhost (refused): {r.request.url}")
            r.abort()

    page.route("**/*", route)
    page.on("response", lambda r: problems.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None)


def print_book(args: argparse.Namespace) -> dict:
    """Open the book, check that it drew, print it to a temporary file and rename that onto
    args.out. Returns what was measured; raises BuildError when the page did not draw."""
    width_mm, height_mm = PAPERS[args.paper]
    text_width = (width_mm - MARGIN_MM["left"] - MARGIN_MM["right"]) * CSS_PX_PER_MM
    text_height = (height_mm - MARGIN_MM["top"] - MARGIN_MM["bottom"]) * CSS_PX_PER_MM
    httpd = _serve(args.site, args.page)
    problems: list[str] = []
    started = time.monotonic()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                # Laid out at the paper's text width under the print stylesheet from the start, so
                # that each chart is fitted (book/assets/dwcharts.js) to the printed column.
                page = browser.new_page(viewport={"width": round(text_width), "height": round(text_height)})
                page.emulate_media(media="print")
                _watch(page, problems)
                page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/", wait_until="load",
                          timeout=args.timeout * 1000)
                try:
                    page.wait_for_function(_READY_JS, timeout=args.timeout * 1000, polling=250)
                except PlaywrightError:
                    problems.append(f"the page had not finished drawing after {args.timeout:g} s")
                zooms = page.evaluate(_FIT_MATH_JS, MIN_MATH_ZOOM)
                info = page.evaluate(_CHECK_JS)
                info["zooms"] = zooms
                problems += [f"{what}: {', '.join(items)}" for what, items in info["problems"].items() if items]
                if not info["charts"]:
                    problems.append("the page has no charts: is this the book's build?")
                if not info["math"]:
                    problems.append("the page has no formulas: is this the book's build?")
                if problems:
                    raise BuildError("; ".join(problems))
                info["links"] = page.evaluate(_LINKS_JS, args.page)
                page.evaluate(_LABEL_CHARTS_JS)
                drawn = time.monotonic()
                fd, tmp = tempfile.mkstemp(prefix=f".{args.out.name}.", suffix=".part", dir=args.out.parent)
                os.close(fd)
                try:
                    page.pdf(path=tmp, format=args.paper, print_background=True, outline=True, tagged=True,
                             display_header_footer=True, header_template="<span></span>",
                             footer_template=FOOTER, margin={k: f"{v}mm" for k, v in MARGIN_MM.items()})
                    data = Path(tmp).read_bytes()
                    if not (data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")):
                        raise BuildError("Chromium wrote something that is not a whole PDF")
                    if problems:  # a late console error while printing
                        raise BuildError("; ".join(problems))
                    os.replace(tmp, args.out)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
            finally:
                browser.close()
    finally:
        httpd.shutdown()
    info.update(draw_s=drawn - started, print_s=time.monotonic() - drawn, bytes=len(data))
    return info


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        info = print_book(args)
    except BuildError as err:
        print(f"build_pdf.py: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # a full disk, a folder made read-only meanwhile
        print(f"build_pdf.py: cannot write {args.out}: {err.strerror or err}", file=sys.stderr)
        return 1
    except PlaywrightError as err:  # Chromium would not start, crashed, or never loaded the page
        print(f"build_pdf.py: Chromium: {_line(str(err))}", file=sys.stderr)
        return 1
    inside, dropped = info["links"]
    zooms = info["zooms"]
    scaled = f"{len(zooms)} wide display(s) scaled to fit, the most to {min(zooms):.0%}" if zooms else "none scaled"
    print(f"{args.out}: {info['bytes'] / 2**20:.1f} MiB; {info['documents']} chapters, {info['charts']} charts, "
          f"{info['math']} formulas ({scaled}); {inside} links inside the book ({dropped} local links dropped); "
          f"drawn in {info['draw_s']:.0f} s, printed in {info['print_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
