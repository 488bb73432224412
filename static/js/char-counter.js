// Shows "used / limit" under every text box that has a maxlength, so a long text is trimmed by
// its writer before the server refuses it.
(function () {
  function attach(box) {
    if (box.dataset.counter) return;
    box.dataset.counter = "1";
    var limit = parseInt(box.getAttribute("maxlength"), 10);
    if (!limit) return;
    var note = document.createElement("div");
    note.className = "form-text text-end char-counter";
    note.setAttribute("aria-live", "polite");
    box.insertAdjacentElement("afterend", note);
    function update() {
      note.textContent = box.value.length + " / " + limit + " characters";
    }
    box.addEventListener("input", update);
    update();
  }
  function scan(root) {
    root.querySelectorAll("textarea[maxlength], input[type=text][maxlength]").forEach(attach);
  }
  document.addEventListener("DOMContentLoaded", function () { scan(document); });
  document.addEventListener("htmx:afterSwap", function (event) { scan(event.target); });
})();
