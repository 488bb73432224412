// The demo seeding banner: polls the progress endpoint and updates its text and bar in place;
// once seeding is complete it offers a reload (the page may lack the data seeded since).
(function () {
  var banner = document.querySelector("[data-demo-seed]");
  if (!banner || !window.fetch) { return; }
  var message = banner.querySelector("[data-demo-seed-message]");
  var note = banner.querySelector("[data-demo-seed-note]");
  var bar = banner.querySelector("[data-demo-seed-bar]");
  var meter = banner.querySelector("[role=progressbar]");

  function show(data) {
    message.textContent = data.message;
    bar.dataset.progress = data.percent;
    bar.style.width = Math.max(0, Math.min(100, data.percent)) + "%";
    meter.setAttribute("aria-valuenow", data.percent);
    banner.classList.toggle("bg-info-subtle", data.state === "running");
    banner.classList.toggle("bg-warning-subtle", data.state === "failed" || data.state === "interrupted");
  }

  function done() {
    banner.classList.remove("bg-info-subtle", "bg-warning-subtle");
    banner.classList.add("bg-success-subtle");
    meter.remove();
    message.textContent = banner.dataset.ready;
    var link = document.createElement("a");
    link.href = window.location.href;
    link.textContent = banner.dataset.reload;
    note.replaceChildren(link);
  }

  function poll() {
    fetch(banner.dataset.url, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (data) {
        if (!data.state || data.state === "complete" || data.state === "none") { done(); return; }
        show(data);
        // A stopped seed is resumed by the next `make demo`: keep looking, less often.
        window.setTimeout(poll, data.state === "running" ? 2000 : 10000);
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
})();
