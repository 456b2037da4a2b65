/* The book's charts fit their column.
 *
 * A chart's Vega-Lite spec has fixed sizes: the sizes JupyterLab draws it at too (Vega-Lite's
 * width "container" does not work there: JupyterLab 4's vega-embed 6 draws the chart in an
 * inline-block with no width of its own, and the chart collapses). In the book, each chart is
 * drawn at its spec's sizes where its column allows. Where the column is narrower (a phone),
 * the chart is drawn again, narrower: a wrapped facet or concatenation (one with `columns`)
 * first puts fewer views side by side, then each view's width shrinks by the overflow (down to
 * MIN_WIDTH). The chart is fitted again when its column's width changes; bound sliders keep
 * their values. When a chart is settled, its container carries data-dw-fit (the tests wait for
 * it).
 *
 * Loaded after vega-embed.min.js, this wraps the page's vegaEmbed, which the script beside
 * each chart calls (dwlib.viz.render.chart_html); nothing else changes.
 */
(function () {
  "use strict";
  const embed = window.vegaEmbed;
  if (typeof embed !== "function") {
    return;  // the chart scripts report the missing vegaEmbed themselves
  }
  const MIN_WIDTH = 120;  // px: no view is narrowed below this
  const TRIES = 4;        // redraws at most per fitting (text that cannot shrink may stay wide)

  function copy(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function room(el) {  // the width the chart may take: its container's content box
    const style = getComputedStyle(el);
    return el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }

  function drawn(el) {  // the drawn chart's width (the bindings below it wrap by themselves)
    const marks = el.querySelector("svg.marks, canvas.marks");
    return marks ? marks.getBoundingClientRect().width : 0;
  }

  // The views whose widths set the chart's width, and how many of them stand side by side.
  function views(spec) {
    if (Array.isArray(spec.hconcat)) {
      return {list: spec.hconcat, across: spec.hconcat.length};
    }
    if (Array.isArray(spec.vconcat)) {
      return {list: spec.vconcat, across: 1};
    }
    if (Array.isArray(spec.concat)) {
      return {list: spec.concat, across: Math.min(spec.columns || spec.concat.length, spec.concat.length)};
    }
    if (spec.spec && (spec.facet || spec.repeat)) {
      return {list: [spec.spec], across: spec.columns || 1};
    }
    return {list: [spec], across: 1};
  }

  // A narrower spec, or null when nothing is left to narrow.
  function narrower(spec, over, width) {
    const next = copy(spec);
    if (typeof next.columns === "number" && next.columns > 1) {
      next.columns = Math.max(1, Math.min(next.columns - 1, Math.floor(next.columns * (width - over) / width)));
      return next;
    }
    const {list, across} = views(next);
    const cut = Math.ceil(over / across);
    let changed = false;
    for (const view of list) {
      if (typeof view.width === "number" && view.width > MIN_WIDTH) {
        view.width = Math.max(MIN_WIDTH, view.width - cut);
        changed = true;
      }
    }
    if (typeof next.width === "number" && list[0] !== next && next.width > MIN_WIDTH) {
      next.width = Math.max(MIN_WIDTH, next.width - cut);  // a width shared by concatenated views
      changed = true;
    }
    return changed ? next : null;
  }

  // The spec with its bound parameters set to the values the reader has chosen.
  function keepSliders(spec, view) {
    const next = copy(spec);
    for (const param of next.params || []) {
      if (param.bind && param.name && !param.select) {
        try {
          param.value = view.signal(param.name);
        } catch (err) {
          // a parameter Vega does not know by that name keeps its initial value
        }
      }
    }
    return next;
  }

  async function fit(el, spec, options) {
    const width = room(el);
    let current = spec;
    let result = await embed(el, current, options);
    // A hidden chart (a collapsed cell) has no room to measure: it is fitted when it shows.
    for (let i = 0; i < TRIES && width > 0; i++) {
      const over = drawn(el) - width;
      const next = over > 0.5 ? narrower(current, over, drawn(el)) : null;
      if (!next) {
        break;
      }
      result.finalize();
      current = next;
      result = await embed(el, current, options);
    }
    el.dataset.dwFit = String(Math.round(width));
    return result;
  }

  function fitted(el, spec, options) {
    let result = null;
    let busy = Promise.resolve();
    let timer = null;
    const first = fit(el, spec, options).then(r => (result = r));
    busy = first;
    if (typeof ResizeObserver === "function") {
      let seen = null;
      new ResizeObserver(() => {
        const width = Math.round(room(el));
        if (seen === null) {
          seen = width;  // the observer's first call: the width the chart was fitted to
          return;
        }
        if (width === seen) {
          return;  // a change of height (the chart itself redrawn), not of the column
        }
        seen = width;
        clearTimeout(timer);
        timer = setTimeout(() => {
          busy = busy.then(() => {
            const from = result ? keepSliders(spec, result.view) : spec;
            if (result) {
              result.finalize();
            }
            delete el.dataset.dwFit;
            return fit(el, from, options).then(r => (result = r));
          }).catch(err => console.error(err));
        }, 150);
      }).observe(el);
    }
    return first;
  }

  window.vegaEmbed = Object.assign(function (el, spec, options) {
    return fitted(el, spec, options);
  }, embed);
})();
