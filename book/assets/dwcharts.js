/* The book's charts fit their column, in the book's own font.
 *
 * A chart's Vega-Lite spec has fixed sizes: the sizes JupyterLab draws it at too (Vega-Lite's
 * width "container" does not work there: JupyterLab 4's vega-embed 6 draws the chart in an
 * inline-block with no width of its own, and the chart collapses). In the book, each chart is
 * drawn at its spec's sizes where its column allows. Where the column is narrower (a phone),
 * the chart is drawn again, narrower: a wrapped facet or concatenation (one with `columns`)
 * first puts fewer views side by side, then each view's width shrinks by the overflow (down to
 * MIN_WIDTH), divided by how much the drawing narrowed per pixel taken from its views the time
 * before (a title wider than its view narrows the drawing by only half that). The chart is
 * fitted again when its column's width changes; bound sliders keep their values. When a chart
 * is settled, its container carries data-dw-fit (the tests wait for it).
 *
 * Text: a chart is set in its container's font, the page's (book/assets/dwbook.css names the
 * fonts the book ships), given to Vega as its config's font. Vega measures its text on a canvas
 * when it lays a chart out, so the font's faces are loaded first, for every character of the
 * spec: measured in a fallback font, a chart would be laid out for the fonts the reader's
 * machine happens to have. The container then carries data-dw-font, the families loaded.
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
  const TRIES = 6;        // redraws at most per fitting (text that cannot shrink may stay wide)
  const MIN_RATE = 0.25;  // the drawing is taken to narrow by at least this per px taken from its views
  const FACES = ["normal 400", "normal 700", "italic 400", "italic 700"];  // style and weight of chart text

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

  // A narrower spec, or null when nothing is left to narrow: the drawing is `width` px wide,
  // `over` px too wide, and narrows by `rate` px per px taken from its views' widths.
  function narrower(spec, over, width, rate) {
    const next = copy(spec);
    if (typeof next.columns === "number" && next.columns > 1) {
      next.columns = Math.max(1, Math.min(next.columns - 1, Math.floor(next.columns * (width - over) / width)));
      return next;
    }
    const {list, across} = views(next);
    const cut = Math.ceil(over / rate / across);
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

  // Load the faces of the container's font that the spec's text needs (its characters pick the
  // font files through their unicode ranges); resolves to the families loaded.
  function loadFont(el, spec) {
    const family = getComputedStyle(el).fontFamily;
    const text = [...new Set(JSON.stringify(spec))].join("");
    return Promise.all(FACES.map(face => document.fonts.load(`${face} 11px ${family}`, text)))
      .then(loaded => [...new Set(loaded.flat().map(f => f.family.replace(/^["']|["']$/g, "")))])
      .catch(err => {
        console.error(`dwcharts: the book's font (${family}) did not load: ${err}`);
        return [];
      });
  }

  async function fit(el, spec, options) {
    const width = room(el);
    let current = spec;
    let result = await embed(el, current, options);
    let rate = 1;      // how much the drawing narrowed per px taken from its views, last time
    let taken = 0;     // px asked of the views' widths by the last redraw (0: none, or columns)
    let before = 0;    // the drawing's width before it
    // A hidden chart (a collapsed cell) has no room to measure: it is fitted when it shows.
    for (let i = 0; i < TRIES && width > 0; i++) {
      const now = drawn(el);
      if (taken > 0 && before > now) {
        rate = Math.min(1, Math.max(MIN_RATE, (before - now) / taken));
      }
      const over = now - width;
      const next = over > 0.5 ? narrower(current, over, now, rate) : null;
      if (!next) {
        break;
      }
      taken = next.columns !== current.columns ? 0 : over / rate;
      before = now;
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
    return loadFont(el, spec).then(families => {
      el.dataset.dwFont = families.join(", ");
      const family = getComputedStyle(el).fontFamily;
      const config = Object.assign({font: family}, options && options.config);
      return fitted(el, spec, Object.assign({}, options, {config}));
    });
  }, embed);
})();
