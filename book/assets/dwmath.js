/* Display formulas that hold on a narrow screen.
 *
 * A display formula wider than its column (a phone's) is first drawn smaller, down to MIN_SCALE
 * of its size, so that most fit whole; one that is still wider scrolls sideways inside its own
 * box, from its start (book/assets/dwbook.css lets MathJax's box shrink to the column and keeps
 * the formula's left edge in view). Run once MathJax has typeset the page, and again when the
 * column's width changes. Each formula's container carries data-dw-scale once fitted (the
 * tests wait for it).
 */
(function () {
  "use strict";
  const MIN_SCALE = 0.7;  // a formula is never drawn smaller than this fraction of its size
  const TRIES = 3;        // labels and spacing scale with the font, so one step nearly always fits

  function fitOne(c) {
    if (c.dataset.dwBase === undefined) {
      c.dataset.dwBase = String(parseFloat(c.style.fontSize) || 100);  // MathJax's own size, in %
    }
    const base = parseFloat(c.dataset.dwBase);
    let scale = 1;
    c.style.fontSize = `${base}%`;
    for (let i = 0; i < TRIES; i++) {
      const room = c.clientWidth, need = c.scrollWidth;
      if (!room || need <= room + 0.5) {
        break;  // fits (or is hidden: fitted when it shows)
      }
      const next = Math.max(MIN_SCALE, scale * room / need);
      if (next >= scale - 0.001) {
        break;
      }
      scale = next;
      c.style.fontSize = `${base * scale}%`;
    }
    c.dataset.dwScale = scale.toFixed(3);
  }

  function fitAll() {
    document.querySelectorAll('mjx-container[display="true"]').forEach(fitOne);
  }

  function whenTypeset() {
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(() => {
        fitAll();
        const article = document.querySelector("article.bd-article") || document.body;
        if (typeof ResizeObserver === "function") {
          let seen = article.clientWidth, timer = null;
          new ResizeObserver(() => {
            if (article.clientWidth === seen) {
              return;
            }
            seen = article.clientWidth;
            clearTimeout(timer);
            timer = setTimeout(fitAll, 100);
          }).observe(article);
        }
      }).catch(err => console.error(err));
      return;
    }
    setTimeout(whenTypeset, 50);  // MathJax (loaded deferred) has not started yet
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", whenTypeset);
  } else {
    whenTypeset();
  }
})();
