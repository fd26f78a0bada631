// Follows an application of a preset: state, current step, outcome and checks, live.
(function () {
  "use strict";
  const box = document.querySelector(".application[data-status-url]");
  if (!box) return;
  const POLL_MS = 1000;

  function renderChecks(verification) {
    const table = box.querySelector("table.verification");
    const body = table.querySelector("tbody");
    body.replaceChildren();
    for (const [name, check] of Object.entries(verification)) {
      const row = document.createElement("tr");
      for (const text of [name, check.wanted, check.got, check.ok ? "✓" : "✗"]) {
        const cell = document.createElement("td");
        cell.textContent = text === undefined || text === null ? "" : String(text);
        row.appendChild(cell);
      }
      body.appendChild(row);
    }
    table.hidden = Object.keys(verification).length === 0;
  }

  async function poll() {
    let data;
    try {
      data = await (await fetch(box.dataset.statusUrl, { headers: { Accept: "application/json" } })).json();
    } catch (err) {
      setTimeout(poll, POLL_MS * 3);
      return;
    }
    const state = box.querySelector(".app-state");
    state.textContent = data.label;
    state.className = "app-state state-" + data.state;
    box.querySelector(".app-step").textContent = data.finished ? "" : data.step;
    box.querySelector(".app-outcome").textContent = data.outcome;
    renderChecks(data.verification || {});
    if (!data.finished) {
      setTimeout(poll, POLL_MS);
    } else if (!startedFinished) {
      window.location.reload(); // the backup path, method and times are final now
    }
  }
  const startedFinished = box.dataset.finished === "1";
  if (!startedFinished) poll();
})();
