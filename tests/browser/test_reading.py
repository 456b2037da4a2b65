"""What a reader of the built book meets on a phone, and in its prose.

On a phone (every chapter opened once, at 390 px wide, then narrowed to 360 and 320 px):

- no display formula is cut off: its start (its left edge) is inside the page and inside the
  box that clips it, and its end is too unless that box scrolls sideways (book/assets/dwmath.js
  draws a wide formula smaller, then lets it scroll from its start); at 390 px (NO_SCROLL_WIDTH)
  no display formula may scroll at all: the whole formula and its number are in view;
- no two texts of a chart overlap (labels, notes, titles, axis labels), at 390 and 320 px;
- every control on the page does something: each input, menu or saved widget control is moved
  in turn, and something on the page outside the control itself must change (a control that
  only moves its own readout is dead: the static book has no kernel).

In the prose (the paragraphs of each page, outside code cells and their outputs): no code
identifier or file path (an inline code span, a snake_case name, a dotted module path, a path
or file name with an extension, "dwlib." anywhere) unless :data:`ALLOWED_CODE` names it, and no
paragraph over :data:`MAX_WORDS` words. The prose checks read the built HTML; they need no
browser.

test_reading_checks_catch_a_broken_page shows each check failing on a page that breaks it.
"""

from __future__ import annotations

import html.parser
import re

import pytest
# the built book, its server (a fixture) and how a page is opened: tests/browser/built_book.py
from built_book import HTML, PAGES, server  # noqa: F401  (server: a fixture)
from built_book import drawn_page

PHONE_WIDTHS = (390, 360, 320)
# Chart texts are compared at the widest and the narrowest phone (a chart redraws at each width,
# which is what takes time): labels are placed for the narrowest plot and the layout test
# (tests/test_viz_layout.py) shows that widening never makes them collide.
OVERLAP_WIDTHS = (390, 320)
# At this width every display formula fits its column whole (a long one broken into lines):
# none scrolls sideways. Narrower phones may scroll a formula from its start.
NO_SCROLL_WIDTH = 390
MAX_WORDS = 150
#: inline code a reader needs in the prose, by exact text: the commands that build and check
#: the book on the reader's machine, and the one that lists the command line's commands.
ALLOWED_CODE = {"make book", "make test", "dwlib --help"}

# --------------------------------------------------------------------------------------------
# In the browser

# Display formulas cut off at the current width: for each MathJax display, its drawing
# (mjx-math) against the nearest box that clips it and against the window; with noScroll, also
# a display whose own box or clipping box scrolls sideways (its content wider than the box).
_MATH_JS = r"""(noScroll) => {
  const vw = document.documentElement.clientWidth;
  const clipper = el => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') return e;
    }
    return null;
  };
  return [...document.querySelectorAll('mjx-container[display="true"]')].map(c => {
    const m = c.querySelector('mjx-math');
    if (!m || !c.getClientRects().length) return null;
    const r = m.getBoundingClientRect();
    const box = clipper(m);
    const b = box ? box.getBoundingClientRect() : {left: 0, right: vw};
    const left = Math.max(0, b.left), right = Math.min(vw, b.right);
    const scrolls = box && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                    && b.left >= -1 && b.right <= vw + 1;
    const what = `'${c.textContent.slice(0, 50)}'`;
    if (r.left < left - 1) return `${what} starts ${Math.round(left - r.left)} px left of its box or the page`;
    if (r.right > right + 1 && !scrolls) return `${what} ends ${Math.round(r.right - right)} px past its box, which does not scroll`;
    const over = Math.max(...[c, box].filter(Boolean).map(e => e.scrollWidth - e.clientWidth));
    if (noScroll && over > 1) return `${what} is ${over} px wider than its box, so it scrolls sideways (break it into lines)`;
    return null;
  }).filter(Boolean);
}"""

# Texts of a chart's drawing whose boxes overlap (by more than a sliver: 2 px each way).
_OVERLAP_JS = r"""() => {
  const out = [];
  document.querySelectorAll('.dw-chart').forEach((chart, k) => {
    const texts = [...chart.querySelectorAll('svg.marks text')]
      .filter(t => t.textContent.trim() && getComputedStyle(t).opacity !== '0'
                   && getComputedStyle(t).visibility !== 'hidden')
      .map(t => ({t: t.textContent.trim(), r: t.getBoundingClientRect()}))
      .filter(x => x.r.width > 0 && x.r.height > 0);
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].r, b = texts[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 2 && h > 2) out.push(`chart ${k + 1}: '${texts[i].t.slice(0, 40)}' and '${texts[j].t.slice(0, 40)}'`);
      }
    }
  });
  return out;
}"""

# The controls of the article, each with the box that is the control itself (its label and
# readout included), marked data-dw-control = its index.
_CONTROLS_JS = r"""() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const own = c => c.closest('.vega-bind, .widget-slider, .widget-dropdown, .widget-inline-hbox, .widget-text, .widget-checkbox') || c;
  const seen = new Set();
  const found = [...article.querySelectorAll(
      'input:not([type=hidden]), select, textarea, .noUi-handle, [role=slider]')]
    .filter(c => {
      if (c.closest('form')) return false;  // the search page's search box: the theme's, not the book's
      if (c.type === 'radio') { if (seen.has(c.name)) return false; seen.add(c.name); }
      const o = own(c);
      if (seen.has(o)) return false;  // a widget slider's handle and its readout: one control
      seen.add(o);
      return true;
    });
  found.forEach((c, i) => own(c).setAttribute('data-dw-control', String(i)));
  return found.length;
}"""

# The article as a reader sees it, without one control's own box: its text and every chart's
# drawing.
_STATE_JS = r"""(i) => {
  const article = (document.querySelector('article.bd-article') || document.body).cloneNode(true);
  article.querySelectorAll(`[data-dw-control="${i}"]`).forEach(e => e.remove());
  return article.textContent + [...article.querySelectorAll('svg.marks')].map(s => s.innerHTML).join('');
}"""

# Move control i: a slider to its far end, another radio button or menu option, a widget
# slider's handle by the End key (pressed from Python), a text field to another value.
_MOVE_JS = r"""(i) => {
  const box = document.querySelector(`[data-dw-control="${i}"]`);
  const c = box.matches('input, select, textarea, .noUi-handle, [role=slider]') ? box
    : box.querySelector('input:not([type=hidden]), select, textarea, .noUi-handle, [role=slider]');
  const label = (box.textContent || c.name || c.tagName).trim().slice(0, 40);
  let target = c;
  if (c.matches('.noUi-handle, [role=slider]')) return [label, 'key'];
  if (c.type === 'range') {
    const lo = parseFloat(c.min), hi = parseFloat(c.max), v = parseFloat(c.value);
    c.value = String(Math.abs(v - lo) > Math.abs(hi - v) ? lo : hi);
  } else if (c.type === 'radio') {
    const group = [...document.querySelectorAll(`input[type=radio][name="${c.name}"]`)];
    target = group.filter(r => !r.checked).pop();
    target.checked = true;
  } else if (c.type === 'checkbox') {
    c.checked = !c.checked;
  } else if (c.tagName === 'SELECT') {
    c.selectedIndex = c.options.length - 1 === c.selectedIndex ? 0 : c.options.length - 1;
  } else {
    c.value = String(parseFloat(c.value) * 2 || 1);
  }
  target.dispatchEvent(new Event('input', {bubbles: true}));
  target.dispatchEvent(new Event('change', {bubbles: true}));
  return [label, 'set'];
}"""


def _dead_controls(page) -> list[str]:
    """Each control of the article moved in turn; those after whose move nothing on the page
    outside the control's own box changed."""
    dead = []
    for i in range(page.evaluate(_CONTROLS_JS)):
        before = page.evaluate(_STATE_JS, i)
        label, how = page.evaluate(_MOVE_JS, i)
        if how == "key":
            handle = page.locator(f'[data-dw-control="{i}"]').locator(".noUi-handle, [role=slider]").first
            handle.focus()
            handle.press("End")
        page.wait_for_timeout(300)
        if page.evaluate(_STATE_JS, i) == before:
            dead.append(f"control {i + 1} ('{label}')")
    return dead


# Every chart fitted to its container's present width (book/assets/dwcharts.js).
_CHARTS_FITTED = ("() => [...document.querySelectorAll('.dw-chart')].every(c => c.dataset.dwFit"
                  " && Math.abs(c.dataset.dwFit - c.clientWidth) < 2)")


def _math_fitted(page, width: int) -> None:
    """Set the window to ``width`` px and wait until book/assets/dwmath.js has fitted every
    display formula to it (each carries data-dw-scale again)."""
    page.evaluate("() => document.querySelectorAll('mjx-container[display=\"true\"]')"
                  ".forEach(c => delete c.dataset.dwScale)")
    page.set_viewport_size({"width": width, "height": 844})
    try:
        page.wait_for_function("() => [...document.querySelectorAll('mjx-container[display=\"true\"]')]"
                               ".every(c => c.dataset.dwScale)", timeout=10_000)
    except Exception:  # measured as it is: a page without the fitting fails below
        pass


CHAPTERS = [p for p in PAGES if p.startswith("book/") and not p.endswith("bibliography.html")]


@pytest.mark.parametrize("path", CHAPTERS)
def test_phone_page_holds(server, browser, path):  # noqa: F811
    with drawn_page(browser, server, path, "phone") as (page, _):
        failures = []
        for width in PHONE_WIDTHS:
            _math_fitted(page, width)
            failures += [f"at {width} px, a display formula {p}"
                         for p in page.evaluate(_MATH_JS, width == NO_SCROLL_WIDTH)]
            if width in OVERLAP_WIDTHS:
                page.wait_for_function(_CHARTS_FITTED, timeout=15_000)
                failures += [f"at {width} px, chart texts overlap: {p}" for p in page.evaluate(_OVERLAP_JS)]
        failures += [f"at {PHONE_WIDTHS[-1]} px, moving it changes nothing on the page: {c}"
                     for c in _dead_controls(page)]
    assert not failures, f"{path}:\n" + "\n".join(failures)


# --------------------------------------------------------------------------------------------
# The prose, from the built HTML

_SKIP = {"div": ("cell_output", "cell_input", "highlight", "output", "math"), "pre": (), "table": (),
         "nav": (), "footer": (), "script": (), "style": ()}
_CODE_NAME = {
    "a snake_case name": re.compile(r"(?<![\w\\])[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+(?!\w)"),
    "a dotted module path": re.compile(r"\bdwlib\.|\b[a-z_][a-z0-9_]*\.(?:[a-z_][a-z0-9_]*\.)*[a-z_]*_[a-z0-9_]*\b"),
    "a file path or name": re.compile(
        r"(?:\b[\w.-]+/[\w./-]*|\b[\w-]+)\.(?:py|ipynb|jsonl?|ya?ml|toml|cfg|csv|js|css|txt|sh|npz|pkl)\b"),
}


class _Prose(html.parser.HTMLParser):
    """The paragraphs of a page's article: (text, [inline code spans]) each, leaving out code
    cells and their outputs, tables, code blocks and formulas (MathJax's source: ``d_x`` is
    mathematics, not code)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[tuple[str, list[str]]] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, skipped)
        self._article = 0
        self._p: list[str] | None = None
        self._code: list[str] = []
        self._in_code = 0
        self._code_text: list[str] = []

    def _skipped(self) -> bool:
        return any(s for _, s in self._stack)

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "input", "meta", "link", "wbr"):
            return
        cls = (dict(attrs).get("class") or "").split()
        skip = (tag in _SKIP and (not _SKIP[tag] or any(c in _SKIP[tag] for c in cls))) or \
               (tag == "span" and "math" in cls)
        if tag == "article" and "bd-article" in cls:
            self._article += 1
        self._stack.append((tag, skip))
        if self._article and not self._skipped() and tag == "p":
            self._p, self._code = [], []
        if self._p is not None and tag == "code":
            self._in_code += 1
            if self._in_code == 1:
                self._code_text = []

    def handle_endtag(self, tag):
        while self._stack:
            top, _ = self._stack.pop()
            if top == "code" and self._p is not None:
                self._in_code -= 1
                if self._in_code == 0:
                    self._code.append("".join(self._code_text).strip())
            if top == "p" and self._p is not None and not self._skipped():
                text = re.sub(r"\s+", " ", "".join(self._p)).strip()
                if text:
                    self.paragraphs.append((text, self._code))
                self._p = None
            if top == "article":
                self._article -= 1
            if top == tag:
                break

    def handle_data(self, data):
        if self._p is None or self._skipped():
            return
        if self._in_code:
            self._code_text.append(data)
            self._p.append(" ")  # a code span is not prose: its words are checked as code
        else:
            self._p.append(data)


def prose_problems(page_html: str) -> list[str]:
    """The prose's code names and paths (not in :data:`ALLOWED_CODE`) and its paragraphs over
    :data:`MAX_WORDS` words, each with the start of its paragraph."""
    parser = _Prose()
    parser.feed(page_html)
    out = []
    for text, code in parser.paragraphs:
        where = f"in '{text[:60]}...'"
        out += [f"inline code '{c}' {where}" for c in code if c and c not in ALLOWED_CODE]
        for kind, pattern in _CODE_NAME.items():
            out += [f"{kind} '{m.group(0)}' {where}" for m in pattern.finditer(text)
                    if m.group(0) not in ALLOWED_CODE]
        words = len(text.split())
        if words > MAX_WORDS:
            out.append(f"a paragraph of {words} words (more than {MAX_WORDS}): '{text[:60]}...'")
    return out


@pytest.mark.parametrize("path", CHAPTERS)
def test_prose_reads_as_words(path):
    problems = prose_problems((HTML / path).read_text(encoding="utf-8"))
    assert not problems, f"{path}: {len(problems)} problems:\n" + "\n".join(problems)


# --------------------------------------------------------------------------------------------
# The checks fail on a page that breaks them

_LONG = " ".join(["word"] * (MAX_WORDS + 1))
_BROKEN_PROSE = f"""<article class="bd-article">
<p>Computed by <code class="docutils literal"><span class="pre">dwlib.core.bounds</span></code> here.</p>
<p>The rates are in results/cpu-pairs/summary.json and the function depth_threshold gives it.</p>
<p>{_LONG}</p>
<div class="cell_output"><p>dwlib.core.fit and load_models() are fine in an output.</p></div>
<p>Width <span class="math notranslate nohighlight">\\(d_x\\)</span>, e.g. a thousand, i.e. wide.</p>
</article>"""

_BROKEN_PAGE = """<!DOCTYPE html><html><body><article class="bd-article" style="width: 360px">
<div class="math" style="display: flex; flex-direction: row-reverse; overflow: hidden">
  <mjx-container display="true" style="display: block; min-width: 600px; flex-grow: 1">
    <mjx-math style="display: block">a very long formula that does not fit</mjx-math></mjx-container></div>
<div class="math" style="overflow-x: auto">
  <mjx-container display="true" style="display: block; overflow-x: auto">
    <mjx-math style="display: inline-block; width: 500px">a formula that scrolls</mjx-math></mjx-container></div>
<div class="dw-chart"><svg class="marks" width="300" height="60">
  <text x="10" y="20" font-size="14">a label here</text><text x="30" y="24" font-size="14">over another</text>
  <text x="10" y="55" font-size="14">apart</text></svg></div>
<p id="out">1,024</p>
<label class="vega-bind"><input type="range" min="0" max="10" value="3" id="dead"></label>
<label class="vega-bind"><input type="range" min="0" max="10" value="3" id="live"
  oninput="document.getElementById('out').textContent = this.value"></label>
</article></body></html>"""


def test_reading_checks_catch_a_broken_page(browser):
    """A formula pushed off the left edge by a reversed flex row (as the theme lays out
    div.math), a formula that scrolls sideways in its box (allowed only below 390 px), two chart
    labels drawn over each other, one dead slider beside a live one, code
    names, a path and a long paragraph in the prose: each is found, and nothing else is."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.set_content(_BROKEN_PAGE)
        clipped = page.evaluate(_MATH_JS, False)
        assert len(clipped) == 1 and "starts" in clipped[0] and "a very long formula" in clipped[0], clipped
        clipped = page.evaluate(_MATH_JS, True)
        assert len(clipped) == 2 and "scrolls sideways" in clipped[1] and "a formula that scrolls" in clipped[1], clipped
        assert page.evaluate(_OVERLAP_JS) == ["chart 1: 'a label here' and 'over another'"]
        dead = _dead_controls(page)
        assert len(dead) == 1 and dead[0].startswith("control 1 "), dead
    finally:
        page.close()
    problems = prose_problems(_BROKEN_PROSE)
    assert [p.split(" '")[0] for p in problems] == [
        "inline code", "a snake_case name", "a file path or name", f"a paragraph of {MAX_WORDS + 1} words (more than {MAX_WORDS}):"], problems
    assert prose_problems("<article class='bd-article'><p>Width d, e.g. a thousand.</p></article>") == []
