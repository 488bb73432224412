// Progress bars carry their percentage in data-progress; the width is set here because the
// Content-Security-Policy refuses style attributes in the markup.
(function () {
  function apply(root) {
    root.querySelectorAll("[data-progress]").forEach(function (bar) {
      var percent = Math.max(0, Math.min(100, parseFloat(bar.dataset.progress) || 0));
      bar.style.width = percent + "%";
    });
  }
  document.addEventListener("DOMContentLoaded", function () { apply(document); });
  document.addEventListener("htmx:afterSwap", function (event) { apply(event.target); });
})();
