// The rater's screen: keyboard shortcuts for every choice and autosaved drafts.
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  const undoForm = document.getElementById("undo-form");
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT" && el.type === "text");

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(document.activeElement)) {
      if (event.key === "Escape") document.activeElement.blur();
      return;
    }
    const key = event.key.toLowerCase();
    if (key === "u" && undoForm) { event.preventDefault(); undoForm.requestSubmit(); }
    if (!form) return;
    if (key === "s") { event.preventDefault(); document.getElementById("skip-form").requestSubmit(); }
    else if (key === "c") { event.preventDefault(); document.getElementById("comment").focus(); }
    else if (key === "j" || key === "arrowdown") { event.preventDefault(); move(1); }
    else if (key === "k" || key === "arrowup") { event.preventDefault(); move(-1); }
    else if (key === "enter") { event.preventDefault(); form.requestSubmit(); }
    else if (/^[1-9]$/.test(key)) {
      const input = questions()[active]?.querySelector(`input[data-key="${key}"]`);
      if (input) {
        event.preventDefault();
        input.checked = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
        move(1);
      }
    }
  });

  if (!form) return;
  const questions = () => Array.from(form.querySelectorAll(".rating-question"));
  // Start at the first unanswered question (a restored draft may have answered some).
  let active = Math.max(0, questions().findIndex((q) => !q.querySelector("input:checked")));
  function highlight() {
    questions().forEach((q, i) => q.classList.toggle("rating-active", i === active));
  }
  function move(step) {
    const count = questions().length;
    active = Math.min(count - 1, Math.max(0, active + step));
    highlight();
  }
  questions().forEach((q, i) => q.addEventListener("click", () => { active = i; highlight(); }));
  highlight();

  // Drafts: saved shortly after each change, and every few seconds while something is unsaved.
  const status = document.getElementById("draft-status");
  let dirty = false, timer = null;
  const words = {
    saved: status.dataset.saved || "Draft saved",
    notSaved: status.dataset.notSaved || "Draft not saved",
    offline: status.dataset.offline || "Offline: draft kept in this page",
    saving: status.dataset.saving || "Saving…",
  };
  function save() {
    if (!dirty) return;
    dirty = false;
    const data = new FormData(form);
    fetch(form.dataset.draftUrl, {
      method: "POST",
      body: data,
      headers: { "X-CSRFToken": data.get("csrfmiddlewaretoken") },
      credentials: "same-origin",
    }).then((response) => {
      // The page gives these words in the reader's language (data-* of #draft-status).
      status.textContent = response.ok ? words.saved : words.notSaved;
      if (!response.ok) dirty = true;
    }).catch(() => { dirty = true; status.textContent = words.offline; });
  }
  function changed() {
    dirty = true;
    status.textContent = words.saving;
    clearTimeout(timer);
    timer = setTimeout(save, 600);
  }
  form.addEventListener("change", changed);
  form.addEventListener("input", changed);
  setInterval(save, 5000);
  form.addEventListener("submit", () => { dirty = false; clearTimeout(timer); });
})();

// Phones: the item and its questions as two panes with a switch, instead of one long page.
(function () {
  "use strict";
  const layout = document.querySelector("[data-rate-layout]");
  const switcher = document.querySelector("[data-pane-switch]");
  if (!layout || !switcher) return;
  const buttons = Array.from(switcher.querySelectorAll("[data-pane]"));
  function show(pane) {
    layout.dataset.show = pane;
    buttons.forEach((button) => {
      const on = button.dataset.pane === pane;
      button.classList.toggle("active", on);
      button.setAttribute("aria-pressed", String(on));
    });
    window.scrollTo({ top: 0 });
  }
  switcher.hidden = false;
  document.querySelectorAll("[data-pane-next]").forEach((button) => { button.hidden = false; });
  document.addEventListener("click", (event) => {
    const target = event.target.closest("[data-pane]");
    if (target) show(target.dataset.pane);
  });
  show("item");
})();
