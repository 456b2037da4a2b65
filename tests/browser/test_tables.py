"""The book's tables on a phone and on a desktop.

Every chapter is opened at 1280 px, then narrowed to 390 px. The tables checked are those of the
text (a cell's pandas table, a list-table, a saved explorer's table), not tables drawn inside a
chart or an ipywidget.

- At 1280 px the tables look as before: each is laid out as a table (its cells side by side) and
  a table's header row is visible. There, each body cell's headers are found by where they stand:
  the header cells (of every header row) above its column, and each row's row headers (pandas'
  index, a cell spanning rows included) by the rows they cover.
- At 610 and 820 px (between the two layouts) every table fits its column, as a table or
  stacked, and nothing scrolls sideways.
- At 390 px nothing scrolls sideways (the page, the table and every box around it fit their
  column); every non-empty cell is visible and its text lies inside the column and the window; a
  cell's words break only between words (a word split across two lines is a fault; a break after
  a hyphen or a slash is not) and its lines start at one left edge (none wraps under its
  header); every cell shows its column's headers, those found at 1280 px
  (book/assets/dwtables.js writes them before the cell), and every row still shows all its row
  headers.

test_table_checks_catch_a_broken_page shows the checks failing on a wide table left as it is,
on one whose words are broken anywhere and on one whose values wrap under their headers, and passing once book/assets/dwtables.js and
dwtables.css are on the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
# the built book, its server (a fixture) and how a page is opened: tests/browser/built_book.py
from built_book import PAGES, server  # noqa: F401  (server: a fixture)
from built_book import drawn_page

ASSETS = Path(__file__).resolve().parents[2] / "book" / "assets"
PHONE, DESKTOP = 390, 1280
MIDDLE = (610, 820)  # a small tablet in portrait, a larger one: neither the phone's nor the desktop's layout
CHAPTERS = [p for p in PAGES if p.startswith("book/") and not p.endswith("bibliography.html")]

# The tables of the text and their parts, shared by the checks below.
_COMMON_JS = r"""
  const SKIP = '.vega-embed, .dw-chart, .jupyter-widgets, [class*="widget-"], mjx-container, pre, .highlight';
  const article = document.querySelector('article.bd-article') || document.body;
  const tables = [...article.querySelectorAll('table')].filter(t => !t.closest(SKIP));
  const text = el => (el.textContent || '').replace(/\s+/g, ' ').trim();
  const rowsOf = t => [...t.rows].filter(r => r.closest('table') === t);
  const headOf = t => {
    const rows = rowsOf(t);
    const head = rows.filter(r => r.parentElement.tagName === 'THEAD');
    if (head.length) return head;
    return rows.length && [...rows[0].cells].every(c => c.tagName === 'TH') ? [rows[0]] : [];
  };
  const bodyOf = t => { const h = headOf(t); return rowsOf(t).filter(r => !h.includes(r)); };
  const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const where = (t, cell) => `table ${tables.indexOf(t) + 1}, cell '${text(cell).slice(0, 40)}'`;
"""

# At 1280 px: each table is a table with its header row shown; each body cell is marked
# data-dw-test-id and its expected headers (column headers by horizontal overlap, in header
# order; row headers of its row by vertical overlap) are kept on window.__dwTables.
_DESKTOP_JS = "() => {" + _COMMON_JS + r"""
  const out = [], expected = {}, rowsAbove = {};
  let id = 0, rowId = 0;
  const overlap = (a, b, lo, hi) => Math.min(a[hi], b[hi]) - Math.max(a[lo], b[lo]);
  tables.forEach((t, k) => {
    const name = `table ${k + 1}`;
    if (!shown(t)) return;
    if (getComputedStyle(t).display !== 'table') out.push(`${name} is not laid out as a table (display ${getComputedStyle(t).display})`);
    const head = headOf(t), body = bodyOf(t);
    if (head.length && !head.some(r => shown(r) && r.getBoundingClientRect().height > 0 && text(r)))
      out.push(`${name}: its header row is not visible`);
    const heads = head.flatMap(r => [...r.cells]).filter(shown)
      .map(c => ({t: text(c), r: c.getBoundingClientRect()}));
    const labelsOf = r => [...new Set(heads.filter(h => h.t && overlap(h.r, r, 'left', 'right') > 2).map(h => h.t))];
    const rowHeads = body.flatMap(r => [...r.cells]).filter(c => c.tagName === 'TH' && shown(c))
      .map(c => ({t: text(c), r: c.getBoundingClientRect(), row: c.parentElement}));
    body.forEach(row => {
      if (!shown(row)) return;
      const rr = row.getBoundingClientRect();
      const covering = rowHeads.filter(h => overlap(h.r, rr, 'top', 'bottom') > 2 && h.t);
      const names = covering.map(h => h.t);
      row.dataset.dwTestRow = String(++rowId);
      // row headers spanning this row from a row above: a copy of one in this row names it too
      rowsAbove[rowId] = covering.filter(h => h.row !== row).map(h => ({text: h.t, labels: labelsOf(h.r), th: true}));
      [...row.cells].filter(shown).forEach(cell => {
        if (getComputedStyle(cell).display !== 'table-cell')
          out.push(`${where(t, cell)} is not a table cell at ${window.innerWidth} px`);
        const before = getComputedStyle(cell, '::before').content;
        if (before && before !== 'none' && before !== 'normal' && before !== '""')
          out.push(`${where(t, cell)} shows a label (${before}) at ${window.innerWidth} px`);
        const r = cell.getBoundingClientRect();
        const labels = labelsOf(r);
        cell.dataset.dwTestId = String(++id);
        expected[id] = {labels, names: cell.tagName === 'TH' ? [] : names, text: text(cell), th: cell.tagName === 'TH'};
      });
    });
  });
  window.__dwTables = {expected, rowsAbove};
  return out;
}"""

# Between the phone and the desktop: every table fits its column, laid out as a table or stacked
# (the page's script stacks a table wider than its box), and nothing scrolls sideways.
_MIDDLE_JS = "() => {" + _COMMON_JS + r"""
  const out = [], vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1)
    out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} px wide in a ${vw} px window)`);
  const col = article.getBoundingClientRect();
  tables.forEach((t, k) => {
    if (!shown(t)) return;
    const name = `table ${k + 1}`, tr = t.getBoundingClientRect();
    if (tr.left < Math.max(0, col.left) - 1 || tr.right > Math.min(vw, col.right) + 1)
      out.push(`${name} (${Math.round(tr.width)} px) is wider than its column (${Math.round(col.width)} px)`);
    for (let e = t; e && e !== article; e = e.parentElement)
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
        out.push(`${name}: its box ${e.tagName.toLowerCase()}.${[...e.classList].join('.')} scrolls sideways (${e.scrollWidth} px in ${e.clientWidth})`);
  });
  return out;
}"""

# At 390 px: what a reader cannot see or read, as sentences.
_PHONE_JS = "() => {" + _COMMON_JS + r"""
  const out = [], {expected, rowsAbove} = window.__dwTables || {expected: {}, rowsAbove: {}};
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1)
    out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} px wide in a ${vw} px window)`);
  const colRect = article.getBoundingClientRect();
  const left = Math.max(0, colRect.left), right = Math.min(vw, colRect.right);
  const label = cell => {
    const s = getComputedStyle(cell, '::before');
    if (s.display === 'none' || !s.content || ['none', 'normal'].includes(s.content)) return [];
    const m = s.content.match(/^"(.*)"$/s);
    const v = (m ? m[1].replace(/\\(.)/g, '$1') : s.content).trim();
    return v ? v.split(' · ').map(x => x.trim()) : [];
  };
  const same = (a, b) => a.length === b.length && a.every(x => b.includes(x));
  tables.forEach((t, k) => {
    const name = `table ${k + 1}`;
    if (!shown(t)) return;
    const tr = t.getBoundingClientRect();
    if (tr.left < left - 1 || tr.right > right + 1)
      out.push(`${name} (${Math.round(tr.width)} px) is wider than its column (${Math.round(right - left)} px)`);
    for (let e = t; e && e !== article; e = e.parentElement) {
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
        out.push(`${name}: its box ${e.tagName.toLowerCase()}.${[...e.classList].join('.')} scrolls sideways (${e.scrollWidth} px in ${e.clientWidth})`);
    }
    bodyOf(t).forEach(row => {
      const cells = [...row.cells];
      const rowShown = cells.filter(c => shown(c) && text(c)).map(c => text(c));
      cells.forEach(cell => {
        const id = cell.dataset.dwTestId;
        let exp = id ? expected[id] : null;
        if (!exp)  // a copy the page made of a row header spanning rows: it names its row too
          exp = (rowsAbove[row.dataset.dwTestRow] || []).find(h => h.text === text(cell));
        if (!exp || !exp.text) return;
        if (id) exp.names.filter(n => !rowShown.includes(n))
          .forEach(n => out.push(`${where(t, cell)}: its row no longer shows its row header '${n}'`));
        if (!shown(cell) || cell.getBoundingClientRect().width === 0) {
          if (id) out.push(`${where(t, cell)} is not visible`);
          return;
        }
        const range = document.createRange();
        range.selectNodeContents(cell);
        const r = range.getBoundingClientRect();
        if (r.left < left - 1 || r.right > right + 1)
          out.push(`${where(t, cell)}: its text runs outside the column (${Math.round(r.left)} to ${Math.round(r.right)} px, column ${Math.round(left)} to ${Math.round(right)})`);
        // a box inside the cell that clips: what it holds is drawn inside it (MathJax's hidden
        // copy of a formula for screen readers, clipped on purpose, left out)
        [...cell.querySelectorAll('*')].filter(e => !e.closest('mjx-container') && getComputedStyle(e).overflowX !== 'visible')
          .forEach(e => {
            const b = e.getBoundingClientRect();
            const cut = [...e.querySelectorAll('*')].filter(d => !d.closest('mjx-assistive-mml'))
              .map(d => d.getBoundingClientRect()).filter(q => q.width > 0)
              .some(q => q.left < b.left - 1 || q.right > b.right + 1);
            if (cut) out.push(`${where(t, cell)}: part of it is cut off by its box ${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`);
          });
        // a value of several lines keeps one left edge: none of it wraps under its header
        // (its text's line boxes and its formulas, each line by what overlaps it vertically)
        const boxes = [...cell.querySelectorAll('mjx-container')].map(m => m.getBoundingClientRect());
        const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let n = texts.nextNode(); n; n = texts.nextNode()) {
          if (n.parentElement.closest('mjx-container') || !n.data.trim()) continue;
          const q = document.createRange();
          q.selectNodeContents(n);
          boxes.push(...q.getClientRects());
        }
        const lines = [];
        boxes.filter(q => q.width > 0 && q.height > 0).sort((a, b) => a.top - b.top).forEach(q => {
          const line = lines.find(l => Math.min(l.bottom, q.bottom) - Math.max(l.top, q.top) > Math.min(l.bottom - l.top, q.height) / 2);
          if (line) line.left = Math.min(line.left, q.left);
          else lines.push({top: q.top, bottom: q.bottom, left: q.left});
        });
        const starts = lines.map(l => l.left);
        if (starts.length > 1 && Math.max(...starts) - Math.min(...starts) > 2)
          out.push(`${where(t, cell)}: its lines start at different places (${Math.round(Math.min(...starts))} and ${Math.round(Math.max(...starts))} px): it wraps under its header`);
        const shows = label(cell);
        if (exp.labels.length && !same(shows, exp.labels))
          out.push(`${where(t, cell)} shows ${shows.length ? `the header '${shows.join(' · ')}'` : 'no header'}, not '${exp.labels.join(' · ')}'`);
        // words broken inside: a piece of a word (split after a hyphen, dash or slash) on two lines
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (n.parentElement.closest('mjx-container')) continue;
          for (const m of n.data.matchAll(/[^\s\-\/\u2013\u2014]+[\-\/\u2013\u2014]*/g)) {
            const w = document.createRange();
            w.setStart(n, m.index);
            w.setEnd(n, m.index + m[0].length);
            const tops = new Set([...w.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.bottom)));
            if (tops.size > 1) out.push(`${where(t, cell)}: the word '${m[0]}' is broken across lines`);
          }
        }
      });
    });
  });
  return out;
}"""


def _checks(page) -> list[str]:
    """The desktop checks at 1280 px, the middle widths', then the phone checks at 390 px, as one
    list of faults."""
    page.set_viewport_size({"width": DESKTOP, "height": 800})
    page.wait_for_timeout(200)
    faults = [f"at {DESKTOP} px, {f}" for f in page.evaluate(_DESKTOP_JS)]
    for width in MIDDLE:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)
        faults += [f"at {width} px, {f}" for f in page.evaluate(_MIDDLE_JS)]
    page.set_viewport_size({"width": PHONE, "height": 844})
    page.wait_for_timeout(300)
    return faults + [f"at {PHONE} px, {f}" for f in page.evaluate(_PHONE_JS)]


@pytest.mark.parametrize("path", CHAPTERS)
def test_tables_read_on_a_phone(server, browser, path):  # noqa: F811
    with drawn_page(browser, server, path) as (page, _):
        faults = _checks(page)
    assert not faults, f"{path}: {len(faults)} faults:\n" + "\n".join(faults[:40])


# --------------------------------------------------------------------------------------------
# The checks fail on tables that break them

_WORDS = ["transition", "exponentially", "reproduced", "separated", "agreement", "budget"]
_HEAD = "".join(f"<th>{w} column</th>" for w in _WORDS)
_ROWS = "".join(
    "<tr>" + (f'<th rowspan="2">group {g}</th>' if r == 0 else "")
    + "".join(f"<td>{w} value {g}{r}</td>" for w in _WORDS) + "</tr>"
    for g in range(2) for r in range(2))
_TABLE_PAGE = f"""<!DOCTYPE html><html><head><style>
  body {{ margin: 0; }} article {{ padding: 0 10px; }}
  .box {{ overflow-x: auto; }} td, th {{ padding: 4px 8px; }}
</style></head><body><article class="bd-article"><p>Text before.</p>
<div class="box"><table><thead><tr><th>group</th>{_HEAD}</tr></thead><tbody>{_ROWS}</tbody></table></div>
<div class="jupyter-widgets"><table id="widget"><tr><th>a widget's</th><th>table</th></tr>
<tr><td>1</td><td>2</td></tr></table></div>
</article></body></html>"""


def _table_page(browser, *, script: bool, css: str = ""):
    page = browser.new_page(viewport={"width": DESKTOP, "height": 800})
    page.set_content(_TABLE_PAGE)
    if script:
        page.add_style_tag(path=str(ASSETS / "dwtables.css"))
        page.add_script_tag(path=str(ASSETS / "dwtables.js"))
    if css:
        page.add_style_tag(content=css)
    return page


def test_table_checks_catch_a_broken_page(browser):
    """A seven-column table with a row header spanning two rows, at 390 px: left as it is, it is
    wider than its column, its box scrolls sideways (at 610 px too), its right-hand cells lie
    outside the column and no cell shows its header; with book/assets/dwtables.js and dwtables.css it passes every
    check and a widget's table is left a table; with words allowed to break anywhere, the
    broken words are found."""
    page = _table_page(browser, script=False)
    try:
        faults = _checks(page)
        assert any("wider than its column" in f for f in faults), faults
        assert any("scrolls sideways" in f for f in faults), faults
        assert any(f.startswith(f"at {MIDDLE[0]} px") and "scrolls sideways" in f for f in faults), faults
        assert any("runs outside the column" in f for f in faults), faults
        assert any("shows no header, not 'budget column'" in f for f in faults), faults
        assert not any("broken across lines" in f for f in faults), faults
    finally:
        page.close()

    page = _table_page(browser, script=True)
    try:
        assert _checks(page) == []
        assert page.evaluate("() => getComputedStyle(document.getElementById('widget')).display") == "table"
        # the second row of each group names its group too (a copy of the spanning row header),
        # on the first line of its block
        names = page.evaluate("() => [...document.querySelectorAll('.box tbody tr')].map(r => [...r.cells]"
                              ".filter(c => c.getClientRects().length)"
                              ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
                              ".map(c => c.textContent)[0])")
        assert names == ["group 0", "group 0", "group 1", "group 1"], names
    finally:
        page.close()

    page = _table_page(browser, script=True, css=".bd-article table td { word-break: break-all; }"
                       " .bd-article table td::before { width: 80% !important; }"
                       " .bd-article table td .dw-stack-value { display: flow-root !important; }")
    try:
        faults = _checks(page)
        assert faults and all("broken across lines" in f for f in faults), faults
    finally:
        page.close()

    # a value that is not a box of its own wraps under its header
    page = _table_page(browser, script=True, css=".bd-article table td::before { width: 70% !important; }"
                       " .bd-article table td .dw-stack-value { display: inline !important; }")
    try:
        faults = _checks(page)
        assert any("wraps under its header" in f for f in faults), faults
        # (a word too long for the strip beside the header may be broken there too)
        assert all("wraps under its header" in f or "broken across lines" in f for f in faults), faults
    finally:
        page.close()
