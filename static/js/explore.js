// Explore: show a segment's figure beside the wheel on hover/focus, and apply a control as soon
// as it changes. The page works without this file (links drill down, the form has a button).
(function () {
  "use strict";
  var detail = document.querySelector("[data-testid=wheel-detail]");
  document.querySelectorAll(".ib-seg").forEach(function (seg) {
    var show = function () {
      if (detail) { detail.textContent = seg.getAttribute("data-title"); }
      document.querySelectorAll('.ib-seg[data-key="' + seg.getAttribute("data-key") + '"]')
        .forEach(function (twin) { twin.classList.add("ib-hover"); });
    };
    var hide = function () {
      document.querySelectorAll(".ib-seg.ib-hover").forEach(function (s) { s.classList.remove("ib-hover"); });
    };
    seg.addEventListener("mouseenter", show);
    seg.addEventListener("focus", show);
    seg.addEventListener("mouseleave", hide);
    seg.addEventListener("blur", hide);
  });
  var form = document.querySelector("[data-testid=explore-controls]");
  if (form) {
    form.querySelectorAll("select").forEach(function (select) {
      select.addEventListener("change", function () { form.submit(); });
    });
  }
})();
