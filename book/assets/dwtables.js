/* Tables that a phone can read.
 *
 * Each table of the text (a pandas table in a cell's output, a list-table of the prose) is
 * prepared here so that book/assets/dwtables.css can show it as stacked blocks: one block a row,
 * each cell preceded by its column's header. No column then lies off-screen and no word is
 * broken to squeeze a column. A table is stacked (class dw-stacked) on a screen narrower than
 * about 600 px, and on a wider one when, laid out as a table, it is wider than the box it stands
 * in; it is measured again whenever the page's column or the table changes size. Other tables,
 * and every table on paper, stay ordinary tables (the stylesheet's rules apply to screens only).
 *
 * What this script does to a table with a header row (the rows of its thead, or a first row of
 * header cells only): it gives every cell of the other rows data-dw-label, the texts of the
 * header cells above its column (a pandas table's several header rows, its column groups and its
 * index names each contribute, joined by " · "), wraps the cell's contents in one box (see wrap),
 * and gives class dw-stack to the table. A row header that spans several rows (pandas' grouped
 * index) is copied, hidden on wide screens, into each row it spans, so that every block names
 * its row. Tables inside charts and ipywidgets are left alone, as are tables without a header
 * row. The table carries data-dw-stack="1" once prepared.
 */
(function () {
  "use strict";
  const SKIP = ".vega-embed, .dw-chart, .jupyter-widgets, .widget-html, .widget-box, .widget-output, "
    + "mjx-container, pre, .highlight";
  const SEP = " · ";
  const LONG = 40;  // a table with a cell longer than this many characters puts labels above values

  function text(el) {
    return (el.textContent || "").replace(/\s+/g, " ").trim();
  }

  /* The table's rows as a grid: grid[r][c] is the cell that covers row r, column c (a cell
     spanning rows or columns covers each of them). */
  function layout(rows) {
    const grid = rows.map(() => []);
    rows.forEach((row, r) => {
      let c = 0;
      [...row.cells].forEach(cell => {
        while (grid[r][c]) {
          c++;
        }
        const rs = Math.max(1, cell.rowSpan || 1), cs = Math.max(1, cell.colSpan || 1);
        for (let i = 0; i < rs && r + i < rows.length; i++) {
          for (let j = 0; j < cs; j++) {
            grid[r + i][c + j] = cell;
          }
        }
        c += cs;
      });
    });
    return grid;
  }

  /* A cell's contents in one box, div.dw-stack-value: on a narrow screen it stands beside the
     header, so that a value of several lines does not wrap under it; elsewhere the box is not
     drawn (display: contents) and the cell looks as before. */
  function wrap(cell) {
    if (cell.firstElementChild && cell.firstElementChild.classList.contains("dw-stack-value")) {
      return;
    }
    const value = document.createElement("div");
    value.className = "dw-stack-value";
    while (cell.firstChild) {
      value.appendChild(cell.firstChild);
    }
    cell.appendChild(value);
  }

  function headerRows(table) {
    const rows = [...table.rows].filter(r => r.closest("table") === table);
    const inHead = rows.filter(r => r.parentElement.tagName === "THEAD");
    if (inHead.length) {
      return [inHead, rows.filter(r => r.parentElement.tagName !== "THEAD")];
    }
    const first = rows[0];
    if (first && first.cells.length && [...first.cells].every(c => c.tagName === "TH")) {
      first.classList.add("dw-stack-head");
      return [[first], rows.slice(1)];
    }
    return [[], rows];
  }

  function prepare(table) {
    if (table.dataset.dwStack || table.closest(SKIP)) {
      return;
    }
    const [head, body] = headerRows(table);
    if (!head.length || !body.length) {
      return;
    }
    const rows = head.concat(body);
    const grid = layout(rows);
    const width = Math.max(...grid.map(r => r.length));
    const labels = [];
    for (let c = 0; c < width; c++) {
      const parts = [];
      head.forEach((_, r) => {
        const cell = grid[r][c];
        const t = cell ? text(cell) : "";
        if (t && parts[parts.length - 1] !== t) {
          parts.push(t);
        }
      });
      labels.push(parts.join(SEP));
    }
    let long = false;
    const copies = [];
    body.forEach((row, k) => {
      const r = head.length + k;
      for (let c = 0; c < width; c++) {
        const cell = grid[r][c];
        if (!cell || (c > 0 && grid[r][c - 1] === cell)) {
          continue;
        }
        if (cell.parentElement === row) {
          wrap(cell);
          const spanned = [];
          for (let j = c; j < width && grid[r][j] === cell; j++) {
            if (labels[j] && !spanned.includes(labels[j])) {
              spanned.push(labels[j]);
            }
          }
          cell.dataset.dwLabel = spanned.join(SEP);
          if (!text(cell) && !cell.querySelector("img, svg, mjx-container")) {
            cell.classList.add("dw-stack-empty");
          }
          long = long || text(cell).length > LONG;
        } else if (cell.tagName === "TH") {
          // a row header spanning from a row above: a copy names this row's block too
          copies.push([cell, c]);
        }
      }
      // The copies go last in the row, as plain cells, so that no selector of the ordinary
      // table (pandas' th:only-of-type, the theme's th ~ td borders) matches differently; the
      // stylesheet draws them first in the block (order: -1), in column order.
      copies.splice(0).forEach(([cell, c]) => {
        const copy = document.createElement("td");
        copy.className = "dw-stack-copy";
        copy.setAttribute("aria-hidden", "true");
        copy.dataset.dwLabel = labels[c];
        copy.append(...[...cell.childNodes].map(n => n.cloneNode(true)));
        row.appendChild(copy);
      });
    });
    table.classList.add("dw-stack");
    if (long) {
      table.classList.add("dw-stack-long");
    }
    table.dataset.dwStack = "1";
  }

  const PHONE = window.matchMedia("(max-width: 600px)");

  /* The width a table has to fit: that of the nearest box around it that has one (a box that
     scrolls sideways included: the table should not need it to). */
  function room(table) {
    for (let e = table.parentElement; e; e = e.parentElement) {
      if (e.clientWidth > 0) {
        return e.clientWidth;
      }
    }
    return window.innerWidth;
  }

  /* Stack the table on a phone, or where it is wider than its box when laid out as a table. */
  function fit(table) {
    table.classList.remove("dw-stacked");
    const wide = table.getBoundingClientRect().width > room(table) + 1;
    table.classList.toggle("dw-stacked", PHONE.matches || wide);
  }

  function prepareAll() {
    const article = document.querySelector("article.bd-article") || document.body;
    const prepared = [];
    article.querySelectorAll("table").forEach(t => {
      try {
        prepare(t);
        if (t.dataset.dwStack) {
          prepared.push(t);
        }
      } catch (err) {
        console.error(err);
      }
    });
    if (!prepared.length) {
      return;
    }
    let pending = false;
    const fitAll = () => {
      pending = false;
      prepared.forEach(fit);
    };
    fitAll();
    // measured again, once a frame at most, when the column or a table changes size (a narrower
    // window, a formula typeset inside a cell, a web font arriving)
    const later = () => {
      if (!pending) {
        pending = true;
        window.requestAnimationFrame(fitAll);
      }
    };
    if (window.ResizeObserver) {
      const observer = new ResizeObserver(later);
      observer.observe(article);
      prepared.forEach(t => observer.observe(t));
    }
    window.addEventListener("resize", later);
    window.addEventListener("load", later);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", prepareAll);
  } else {
    prepareAll();
  }
})();
