// The ipywidgets HTML manager (1.x) typesets widget labels through MathJax 2's
// `MathJax.Hub.Queue(["Typeset", MathJax.Hub, el])` whenever window.MathJax exists; the book
// ships MathJax 3, which has no Hub. Whatever object is stored in window.MathJax (the
// configuration first, then MathJax 3 itself), give it a Hub whose Queue calls MathJax 3's
// typesetPromise. Loaded before MathJax, so it sees every assignment.
(function () {
  var hub = {
    Queue: function (job) {
      var el = Array.isArray(job) ? job[2] : undefined;
      var mj = window.MathJax;
      if (mj && typeof mj.typesetPromise === "function") {
        mj.typesetPromise(el ? [el] : undefined).catch(function () {});
      }
    },
  };
  var current = window.MathJax;
  function withHub(value) {
    if (value && typeof value === "object" && !value.Hub) {
      try { Object.defineProperty(value, "Hub", { value: hub, enumerable: false, configurable: true }); }
      catch (e) { /* frozen object: leave it */ }
    }
    return value;
  }
  withHub(current);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
