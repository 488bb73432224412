// The run form: "select all in subarea" boxes, a filter over metric names, a count of ticked ones.
(function () {
  "use strict";
  const root = document.querySelector("[data-testid=metric-groups]");
  if (!root) return;
  const options = (group) => Array.from(group.querySelectorAll("[data-metric-option] input"));
  const counter = root.querySelector("[data-selected-count]");

  function refresh() {
    root.querySelectorAll("[data-metric-group]").forEach((group) => {
      const boxes = options(group);
      const ticked = boxes.filter((box) => box.checked).length;
      const all = group.querySelector("[data-select-all]");
      all.checked = ticked === boxes.length && ticked > 0;
      all.indeterminate = ticked > 0 && ticked < boxes.length;
      if (ticked > 0) group.open = true;
    });
    const total = root.querySelectorAll("[data-metric-option] input:checked").length;
    counter.textContent = total ? `${total} selected` : "None selected: the whole release runs";
  }

  root.addEventListener("change", (event) => {
    if (event.target.matches("[data-select-all]")) {
      const group = event.target.closest("[data-metric-group]");
      options(group)
        .filter((box) => !box.closest("[data-metric-option]").hidden)
        .forEach((box) => { box.checked = event.target.checked; });
    }
    refresh();
  });

  // Mark the metrics the chosen release does not hold: ticked with it, they are refused.
  const release = document.querySelector("select[name=release]");
  function markOutside() {
    const chosen = release ? release.value : "";
    root.querySelectorAll("[data-metric-option]").forEach((option) => {
      const held = option.querySelector("[data-release-list]").dataset.releaseList.split(" ");
      option.querySelector("[data-outside-release]").hidden = !chosen || held.includes(chosen);
    });
  }
  if (release) release.addEventListener("change", markOutside);

  root.querySelector("[data-metric-filter]").addEventListener("input", (event) => {
    const needle = event.target.value.trim().toLowerCase();
    root.querySelectorAll("[data-metric-group]").forEach((group) => {
      let shown = 0;
      group.querySelectorAll("[data-metric-option]").forEach((option) => {
        option.hidden = needle !== "" && !option.textContent.toLowerCase().includes(needle);
        if (!option.hidden) shown += 1;
      });
      group.hidden = shown === 0;
      if (needle && shown) group.open = true;
    });
  });
  refresh();
  markOutside();
})();
