"""Open every page of the built book in headless Chromium, offline, and check it works.

Needs `make book` first (the Makefile's `browser` target does it), or a book built elsewhere
named by DWLIB_BOOK_HTML (its html directory). Chromium comes from
Debian's package; Playwright's Python package drives it through `executable_path` and
never downloads a browser. Every page is opened at a phone's width (390 px) and a desktop's
(1280 px). Per page and width: it loads, raises no page error and logs no console error or
warning, asks for nothing beyond localhost, every formula is typeset by MathJax (no error, no
display numbered twice), every Altair
chart draws marks and fits its column (before and after its sliders move), every slider track
(saved widget or chart binding) is usable and inside the column, the page never scrolls
sideways, every saved widget renders, and moving any bound input (slider, radio button, menu)
of any chart redraws it. Every chart and image sits in a figure numbered "Figure N" or
"Figure N.M" with a caption; no table cell ends in an ellipsis ("..." or its one-character
form); and on the desktop page no code block scrolls sideways (a line wider than its column).
Fonts: every character of visible text (charts' included) is drawn in a font the book ships,
never one of the reader's machine (Chromium names the fonts it drew each element's text in), and
every chart was laid out after its font had loaded; test_layout_does_not_depend_on_the_readers_fonts
draws a page again with the browser's generic fonts changed, and its charts and text must not
move. test_page_checks_catch_a_broken_page shows that these checks fail on a page that breaks them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
# the built book, its server (a fixture) and how a page is opened: tests/browser/built_book.py
from built_book import HTML, PAGES, VIEWPORTS, server  # noqa: F401  (server: a fixture)
from built_book import drawn_page, open_page as _open, wait_drawn as _wait_drawn

MIN_TRACK_PX = 80  # a slider's track narrower than this is hard to use on a touch screen
# What the page check below measures (a list, or a count) and what a non-empty value means.
PAGE_PROBLEMS = {
    "mathUntypeset": "formulas not typeset: {}",
    "mathErrors": "MathJax reported errors",
    "mathTwoNumbers": "displays with two equation numbers: {}",
    "mathClipped": "display formulas wider than the text column: {}",
    "chartErrors": "charts failed: {}",
    "chartsEmpty": "charts drew nothing: {}",
    "chartsUnfitted": "{} charts never fitted to their column",
    "chartsUnfonted": "charts laid out before the book's font had loaded (measured in another): {}",
    "viewsUnrendered": "{} saved widget views did not render",
    "figuresUnnumbered": "charts, images or figures without a numbered caption ('Figure N.M' and text): {}",
    "tableEllipses": "table cells cut off with an ellipsis: {}",
    "codeOverflow": "code blocks wider than their column (they scroll sideways): {}",
}

# Geometry of a page: charts against their container and the text column, slider tracks,
# sideways scrolling. The column is the article's content box.
_LAYOUT_JS = """(minTrack) => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const cs = getComputedStyle(column), cb = column.getBoundingClientRect();
  const left = cb.left + parseFloat(cs.paddingLeft), right = cb.right - parseFloat(cs.paddingRight);
  const charts = [...document.querySelectorAll('.dw-chart')];
  const wide = charts.map((c, i) => {
    const m = c.querySelector('svg.marks, canvas.marks');
    if (!m) return null;
    const r = m.getBoundingClientRect(), box = c.getBoundingClientRect();
    const fits = r.left >= Math.max(left, box.left) - 1 && r.right <= Math.min(right, box.right) + 1;
    return fits ? null : `chart ${i + 1}: drawn ${Math.round(r.left)}-${Math.round(r.right)} px,`
      + ` container ${Math.round(box.left)}-${Math.round(box.right)}, column ${Math.round(left)}-${Math.round(right)}`;
  }).filter(Boolean);
  const tracks = [
    ...[...document.querySelectorAll('.widget-slider .slider-container')].map(t => ['widget slider', t]),
    ...[...document.querySelectorAll('.vega-bindings input[type=range]')].map(t => ['chart slider', t]),
  ];
  const badTracks = tracks.map(([kind, t], i) => {
    const r = t.getBoundingClientRect();
    const name = (t.closest('.widget-slider, .vega-bind') || t).textContent.trim().slice(0, 30);
    if (r.width < minTrack) return `${kind} '${name}': track ${Math.round(r.width)} px wide`;
    if (r.left < left - 1 || r.right > right + 1) return `${kind} '${name}': track outside the column`;
    return null;
  }).filter(Boolean);
  const se = document.scrollingElement;
  return {wide, badTracks, tracks: tracks.length, scroll: [se.scrollWidth, se.clientWidth]};
}"""


def _layout_problems(page) -> list[str]:
    layout = page.evaluate(_LAYOUT_JS, MIN_TRACK_PX)
    out = [f"wider than its column: {w}" for w in layout["wide"]]
    out += [f"slider not usable: {t}" for t in layout["badTracks"]]
    scroll_width, client_width = layout["scroll"]
    if scroll_width > client_width:
        out.append(f"the page scrolls sideways: {scroll_width} px of content in {client_width} px")
    return out


# What the page check measures (PAGE_PROBLEMS names what a non-empty value means). The
# figures, tables and code are those of the article (the whole body on a page without one);
# code is measured only on the desktop page, where no code line should need a scrollbar.
_PAGE_JS = r"""(desktop) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const numberedFigure = f => {
    const caption = f && [...f.children].find(c => c.tagName === 'FIGCAPTION');
    const number = caption && caption.querySelector('.caption-number');
    const text = caption && caption.querySelector('.caption-text');
    return !!(number && /^Figure ([IC]\.)?\d+(\.\d+)*$/.test(number.textContent.trim())
              && text && text.textContent.trim());
  };
  const charts = [...article.querySelectorAll('.dw-chart')];
  return {
    math: document.querySelectorAll('div.math, span.math').length,
    mathUntypeset: [...document.querySelectorAll('div.math, span.math')]
      .filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 60)),
    mathErrors: document.querySelectorAll('mjx-merror').length,
    // a display numbered twice: Sphinx's number beside a \tag, or two tags
    mathTwoNumbers: [...document.querySelectorAll('div.math')].filter(m =>
      m.querySelectorAll('span.eqno').length + m.querySelectorAll('mjx-assistive-mml mlabeledtr').length > 1)
      .map(m => m.textContent.slice(0, 60)),
    mathClipped: [...document.querySelectorAll('mjx-container[display=true]')].filter(m => {
      const f = m.getBoundingClientRect(), box = m.parentElement.getBoundingClientRect();
      const wider = f.left < box.left - 1 || f.right > box.right + 1;
      // a formula wider than its box is cut off unless the box scrolls sideways
      return wider && !['auto', 'scroll'].includes(getComputedStyle(m.parentElement).overflowX);
    }).map(m => m.textContent.slice(0, 60)),
    charts: document.querySelectorAll('.dw-chart').length,
    chartsEmpty: [...document.querySelectorAll('.dw-chart')].filter(c => {
      const m = c.querySelector('svg.marks, canvas.marks');
      if (!m) return true;
      return m.tagName === 'svg' ? m.querySelectorAll('path, rect, text, line, circle, symbol').length === 0
                                 : m.width === 0;
    }).map((c, i) => i + 1),
    chartsUnfitted: [...document.querySelectorAll('.dw-chart')].filter(c => !c.dataset.dwFit).length,
    // dwcharts.js names the font families it loaded before the chart was drawn
    chartsUnfonted: [...document.querySelectorAll('.dw-chart')].map((c, i) => c.dataset.dwFont ? null : i + 1)
      .filter(Boolean),
    chartErrors: [...document.querySelectorAll('.dw-chart-error')].map(e => e.textContent),
    views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
    viewsUnrendered: [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
      .filter(s => !(s.previousElementSibling && s.previousElementSibling.querySelector(
        '.widget-container, .jupyter-widgets, .widget-inline-hbox, .widget-html'))).length,
    figuresUnnumbered: [
      ...charts.map((c, i) => numberedFigure(c.closest('figure')) ? null : `chart ${i + 1}`),
      ...[...article.querySelectorAll('img')].map(im =>
        numberedFigure(im.closest('figure')) ? null : `image ${im.getAttribute('src').slice(0, 40)}`),
      ...[...article.querySelectorAll('figure')].map((f, i) =>
        numberedFigure(f) ? null : `figure ${f.id || i + 1}`),
    ].filter(Boolean),
    tableEllipses: [...article.querySelectorAll('td, th')].map(c => c.textContent.trim())
      .filter(t => t.endsWith('\u2026') || t.endsWith('...')).map(t => t.slice(-60)),
    codeOverflow: desktop ? [...article.querySelectorAll('pre')].filter(p => p.scrollWidth > p.clientWidth + 1)
      .map(p => `${p.scrollWidth} px in ${p.clientWidth}: `
                + p.textContent.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '').slice(0, 60))
      : [],
  };
}"""


# Fonts: which elements to ask Chromium about. Per font (family list, weight, style), the
# elements whose direct text holds a character not seen before in that font, and is drawn
# (MathJax's hidden copy of each formula for screen readers is not); each is marked with
# data-dw-font-probe. A few dozen elements a page instead of thousands, every character covered.
_FONT_PROBES_JS = """() => {
  const seen = new Map();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let marked = 0;
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const el = t.parentElement;
    if (!el || !t.nodeValue.trim() || el.closest('mjx-assistive-mml, script, style, noscript')
        || !el.getClientRects().length || el.hasAttribute('data-dw-font-probe')) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden') continue;
    const font = `${s.fontFamily}|${s.fontWeight}|${s.fontStyle}`;
    const chars = seen.get(font) || new Set();
    seen.set(font, chars);
    const fresh = [...t.nodeValue].filter(c => c.trim() && !chars.has(c));
    if (!fresh.length) continue;
    fresh.forEach(c => chars.add(c));
    el.setAttribute('data-dw-font-probe', '');
    marked++;
  }
  return marked;
}"""


def _text_not_in_book_fonts(page) -> list[str]:
    """The fonts of the reader's machine that Chromium drew text of the page in, instead of one
    the page loaded (a web font, which the book ships), from the DevTools protocol's fonts of
    each element's text: "Font: n elements, 'text', ..." (the first few), one per font."""
    marked = page.evaluate(_FONT_PROBES_JS)
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-dw-font-probe]"})["nodeIds"]
        texts = page.evaluate("() => [...document.querySelectorAll('[data-dw-font-probe]')]"
                              ".map(e => e.textContent.trim().slice(0, 40))")
        assert len(nodes) == len(texts) == marked, (len(nodes), len(texts), marked)
        local: dict[str, list[str]] = {}
        for node, text in zip(nodes, texts):
            for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
                if not font["isCustomFont"]:
                    local.setdefault(font["familyName"], []).append(repr(text))
        return [f"{family}: {len(where)} elements, " + ", ".join(where[:3]) for family, where in local.items()]
    finally:
        cdp.detach()
        page.evaluate("() => document.querySelectorAll('[data-dw-font-probe]')"
                      ".forEach(e => e.removeAttribute('data-dw-font-probe'))")


def _page_problems(page, viewport) -> list[str]:
    """The page's problems by the measures of :data:`PAGE_PROBLEMS`."""
    info = page.evaluate(_PAGE_JS, viewport == "desktop")
    return [message.format(info[key]) for key, message in PAGE_PROBLEMS.items() if info[key]]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("path", PAGES)
def test_page(server, browser, path, viewport):
    with drawn_page(browser, server, path, viewport) as (page, problems):
        failures = _page_problems(page, viewport)
        failures += _layout_problems(page)
        still = _inputs_that_do_not_redraw(page)
        if still:
            failures.append(f"moving these bound inputs did not change their chart: {still}")
        # With every slider at an end, the charts (a marker's note, say) still fit the column.
        failures += [f"after moving the sliders, {p}" for p in _layout_problems(page) if p.startswith("wider")]
        failures += [f"text not in the book's fonts: {t}" for t in _text_not_in_book_fonts(page)]
        failures += problems  # console messages, page errors and requests, sliders' included
        assert not failures, f"{path} at {viewport} width:\n" + "\n".join(failures)


# A chart's bound inputs: range sliders, radio buttons (one per option) and menus.
_BOUND = ".vega-bindings input[type=range], .vega-bindings input[type=radio], .vega-bindings select"


def _inputs_that_do_not_redraw(page) -> list[str]:
    """Move every bound input of every chart on the page, one at a time (a slider to its far
    end, the last radio button of a group that is not checked, a menu's option that is not
    selected) and return 'chart k: input name' for each whose chart's marks did not change
    (k counts the charts with bound inputs)."""
    charts = page.locator(".dw-chart", has=page.locator(_BOUND))
    bad = []
    for c in range(charts.count()):
        chart = charts.nth(c)
        count = chart.evaluate("""(el, sel) => {
            const seen = new Set();  // one radio group counts once
            return [...el.querySelectorAll(sel)].filter(i => i.type !== 'radio'
              || (!seen.has(i.name) && seen.add(i.name))).length; }""", _BOUND)
        for s in range(count):
            before = chart.locator("svg.marks, canvas.marks").first.inner_html()
            name = chart.evaluate(
                """(el, [sel, i]) => {
                  const seen = new Set();
                  const s = [...el.querySelectorAll(sel)].filter(x => x.type !== 'radio'
                    || (!seen.has(x.name) && seen.add(x.name)))[i];
                  const label = s.name || (s.closest('.vega-bind') || s.parentElement).textContent.trim().slice(0, 40);
                  let target = s;
                  if (s.type === 'range') {
                    const lo = parseFloat(s.min), hi = parseFloat(s.max), v = parseFloat(s.value);
                    s.value = String(Math.abs(v - lo) > Math.abs(hi - v) ? lo : hi);
                  } else if (s.type === 'radio') {
                    const group = [...el.querySelectorAll(`input[type=radio][name="${s.name}"]`)];
                    target = group.filter(r => !r.checked).pop();
                    target.checked = true;
                  } else {
                    s.selectedIndex = s.options.length - 1 === s.selectedIndex ? 0 : s.options.length - 1;
                  }
                  target.dispatchEvent(new Event('input', {bubbles: true}));
                  target.dispatchEvent(new Event('change', {bubbles: true}));
                  return label;
                }""",
                [_BOUND, s],
            )
            page.wait_for_timeout(300)
            if chart.locator("svg.marks, canvas.marks").first.inner_html() == before:
                bad.append(f"chart {c + 1}: {name}")
    return bad


def test_book_has_charts_math_widgets_and_sliders():
    """Across the book, in the built HTML: charts, formulas and charts' bound sliders exist (so
    the per-page checks above have something to check; each page's test moves every bound
    slider), and no saved widget view: the static pages have no kernel, so an explorer is shown
    as a chart that computes in the page, never as controls that change nothing (_config.yml,
    dwlib/viz/widgets.py); the chapters hide the output of the live explorers whose chart the
    page already shows, so no explorer's snapshot repeats it."""
    if not PAGES:
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    text = "".join((HTML / p).read_text(encoding="utf-8") for p in PAGES)
    seen = {"charts": text.count('<div class="dw-chart">'),
            "math": len(re.findall(r'class="math[ "]', text)),
            "sliders": len(re.findall(r'"input": "range"', text))}
    assert all(seen.values()), seen
    assert text.count('type="application/vnd.jupyter.widget-view+json"') == 0
    assert text.count('class="dw-explorer-snapshot"') == 0


def test_the_introductions_figures_are_not_the_papers_figure_numbers():
    """The root page is in no numbered part: its figures are "Figure I.1", "Figure I.2" (the
    book's Sphinx extension), never "Figure 1" or "Figure 2", the paper's figures it discusses."""
    if not PAGES:
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    for page, prefix in (("intro", "I"), ("claims", "C")):  # the claims page is unnumbered back matter
        text = (HTML / "book" / f"{page}.html").read_text(encoding="utf-8")
        numbers = re.findall(r'class="caption-number">Figure ([^ <]+)', text)
        assert numbers == [f"{prefix}.{i}" for i in range(1, len(numbers) + 1)], (page, numbers)


def test_charts_refit_when_the_column_changes(server, browser):
    """A chart drawn on a desktop, then the window narrowed to a phone's and widened again:
    the chart follows the column each time, and its slider keeps the reader's value."""
    pages = [p for p in PAGES if p.endswith("intro.html")]
    if not pages:
        pytest.fail("no intro page in the built book")
    page, problems = _open(browser, f"{server}/{pages[0]}", "desktop")
    try:
        _wait_drawn(page)
        chart = page.locator(".dw-chart", has=page.locator(".vega-bindings input[type=range]")).first
        width = lambda: chart.locator("svg.marks").first.bounding_box()["width"]  # noqa: E731
        wide = width()
        value = page.evaluate("""(el) => {
            const s = el.querySelector('.vega-bindings input[type=range]');
            s.value = String((parseFloat(s.min) + 3 * parseFloat(s.max)) / 4);
            s.dispatchEvent(new Event('input', {bubbles: true}));
            return s.value; }""", chart.element_handle())
        for viewport, narrower in (("phone", True), ("desktop", False)):
            page.set_viewport_size(VIEWPORTS[viewport])
            page.wait_for_function("(w) => [...document.querySelectorAll('.dw-chart')].every(c => c.dataset.dwFit"
                                   " && Math.abs(c.dataset.dwFit - c.clientWidth) < 2)",
                                   arg=None, timeout=15_000)
            assert not _layout_problems(page), (viewport, _layout_problems(page))
            assert (width() < wide) if narrower else (width() == pytest.approx(wide, abs=1)), (viewport, width(), wide)
            kept = chart.locator(".vega-bindings input[type=range]").first.input_value()
            assert float(kept) == pytest.approx(float(value)), (viewport, kept, value)
        assert not problems, "\n".join(problems)
    finally:
        page.close()



# What a reader's machine with other fonts changes: the fonts behind the generic families
# ("sans-serif", "serif", "monospace", and the default). Set to one of the DejaVu fonts that every
# Debian machine has, and not the one it uses for "sans-serif" (DejaVu Sans).
OTHER_GENERIC_FONT = "DejaVu Serif"
GENERIC_FAMILIES = ("standard", "fixed", "serif", "sansSerif", "cursive", "fantasy", "math")
# Where the charts and the text are: each chart's drawing (svg.marks) and the article's size,
# in px from the article's top left; and how wide "sans-serif" draws a line (the control).
_GEOMETRY_JS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const a = article.getBoundingClientRect();
  const probe = document.createElement('canvas').getContext('2d');
  probe.font = '16px sans-serif';
  return {
    generic: probe.measureText('The depth-to-width interplay').width,
    article: [a.width, article.scrollHeight],
    charts: [...document.querySelectorAll('.dw-chart svg.marks, .dw-chart canvas.marks')].map(m => {
      const r = m.getBoundingClientRect();
      return [r.left - a.left, r.top - a.top, r.width, r.height];
    }),
  };
}"""


def test_layout_does_not_depend_on_the_readers_fonts(server, browser):
    """The page with the most charts, at a phone's width, drawn twice: as the machine is, and
    with the browser's generic fonts (the fonts a page gets when it names none of its own) set
    to another font. Every chart is drawn at the same place and size, and the article is as
    tall: the book's text and charts use only the fonts it ships."""
    if not PAGES:
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    path = max(PAGES, key=lambda p: (HTML / p).read_text(encoding="utf-8").count('<div class="dw-chart">'))
    seen = {}
    for generic in ("the machine's", OTHER_GENERIC_FONT):
        page = browser.new_page(viewport=VIEWPORTS["phone"])
        try:
            if generic == OTHER_GENERIC_FONT:
                cdp = page.context.new_cdp_session(page)
                cdp.send("Page.enable")
                cdp.send("Page.setFontFamilies", {"fontFamilies": {k: generic for k in GENERIC_FAMILIES}})
            page.goto(f"{server}/{path}", wait_until="load")
            _wait_drawn(page)
            seen[generic] = page.evaluate(_GEOMETRY_JS)
        finally:
            page.close()
    usual, other = seen.values()
    assert usual["generic"] != other["generic"], f"setting the generic fonts to {OTHER_GENERIC_FONT} changed nothing"
    assert usual["charts"], f"{path} drew no charts"
    moved = [f"chart {i + 1}: {a} -> {b}" for i, (a, b) in enumerate(zip(usual["charts"], other["charts"])) if a != b]
    assert not moved and usual["article"] == other["article"], (
        f"{path} with the generic fonts set to {OTHER_GENERIC_FONT}: article {usual['article']} -> {other['article']}; "
        + "; ".join(moved))

# A page that breaks each of the checks on figures, equations, tables and code once, and the
# same page done right. The chart is a stand-in (a container with marks), drawn by nothing.
_CHART = '<div class="dw-chart" data-dw-fit="600"><svg class="marks"><path d="M0,0L9,9"/></svg></div>'
_BROKEN = f"""<!DOCTYPE html><html><body><article class="bd-article" style="width: 600px">
<div class="cell_output">{_CHART}</div>
<figure id="fig-no-number"><div>{_CHART}</div><figcaption><p>A caption, but no number.</p></figcaption></figure>
<figure id="fig-no-text"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><figcaption><p>
  <span class="caption-number">Figure 2.2 </span><span class="caption-text"> </span></p></figcaption></figure>
<div class="math"><span class="eqno">(1)</span>x = y<span class="eqno">(2)</span></div>
<table><tr><td>a cell cut off at the end of the col\u2026</td><td>or with three dots...</td><td>whole</td></tr></table>
<div class="highlight"><pre>result = some_function(with_a_long_argument_list, that_runs, far_past, the_right_edge, of_the_column, and_on, and_on)</pre></div>
</article></body></html>"""
_FIXED = f"""<!DOCTYPE html><html><body><article class="bd-article" style="width: 600px">
<figure id="fig-chart"><div>{_CHART.replace('data-dw-fit="600"', 'data-dw-fit="600" data-dw-font="Arimo"')}</div><figcaption><p><span class="caption-number">Figure 2.1 </span>
  <span class="caption-text">What the chart shows and how to read it.</span></p></figcaption></figure>
<figure id="fig-image"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><figcaption><p>
  <span class="caption-number">Figure 1 </span><span class="caption-text">An image.</span></p></figcaption></figure>
<div class="math">x = y<span class="eqno">(2)</span></div>
<table><tr><td>a whole cell</td><td>ellipses inside... are fine</td></tr></table>
<div class="highlight"><pre>result = some_function(with_a_long_argument_list,
                       that_runs, within, the_column)</pre></div>
</article></body></html>"""
_NEW_CHECKS = ["figuresUnnumbered", "mathTwoNumbers", "tableEllipses", "codeOverflow", "chartsUnfonted"]


def test_page_checks_catch_a_broken_page(browser):
    """The measures of figures, equation numbers, table cells, code lines and charts' fonts fire
    on a page that breaks them (each offender named) and stay quiet on the same page done right;
    code width is measured on the desktop page only. The page loads no fonts: its text is drawn
    in the machine's, which the fonts check names."""
    page = browser.new_page(viewport=VIEWPORTS["desktop"])
    try:
        page.set_content(_BROKEN)
        info = page.evaluate(_PAGE_JS, True)
        assert info["figuresUnnumbered"] == ["chart 1", "chart 2", "image data:image/gif;base64,R0lGODlhAQABAAAAAC",
                                             "figure fig-no-number", "figure fig-no-text"]
        assert info["mathTwoNumbers"] == ["(1)x = y(2)"]
        assert info["tableEllipses"] == ["a cell cut off at the end of the col\u2026", "or with three dots..."]
        assert len(info["codeOverflow"]) == 1 and " px in 600: result = some_function(" in info["codeOverflow"][0]
        assert info["chartsUnfonted"] == [1, 2]
        local = _text_not_in_book_fonts(page)
        assert local and all(" elements, " in f for f in local), local
        assert any("'result = some_function(" in f for f in local), local
        problems = _page_problems(page, "desktop")
        assert all(any(PAGE_PROBLEMS[key].split(":")[0] in p for p in problems) for key in _NEW_CHECKS), problems
        assert page.evaluate(_PAGE_JS, False)["codeOverflow"] == []  # the phone page: not measured
        page.set_content(_FIXED)
        info = page.evaluate(_PAGE_JS, True)
        assert {key: info[key] for key in _NEW_CHECKS} == {key: [] for key in _NEW_CHECKS}
    finally:
        page.close()
