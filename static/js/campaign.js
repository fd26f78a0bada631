// Follows a campaign while it runs: overall progress and ETA, each board's lane (state, step,
// log tail), and the rows of this page of results whose runs changed since the last poll.
(function () {
  "use strict";
  const box = document.querySelector(".campaign[data-status-url]");
  if (!box) return;
  const logTail = window.pifarmLogTail;
  box.querySelectorAll(".lane-log").forEach(logTail.toBottom);
  if (box.dataset.finished === "1") return;
  const POLL_MS = 2000;
  let since = box.dataset.since;

  function setText(root, selector, text) {
    const element = root.querySelector(selector);
    if (element) element.textContent = text || "";
  }

  function renderLane(lane) {
    const section = box.querySelector('.lane[data-board="' + CSS.escape(lane.board) + '"]');
    if (!section) return;
    const state = section.querySelector(".lane-state");
    state.textContent = lane.label;
    state.className = "status lane-state state-" + lane.state;
    setText(section, ".lane-step", lane.step);
    setText(section, ".lane-runs", lane.runs);
    setText(section, ".lane-eta", lane.eta);
    setText(section, ".lane-error", lane.error);
    logTail.show(section.querySelector(".lane-log"), lane.log_tail);
  }

  function renderCounts(counts) {
    const line = box.querySelector(".campaign-counts");
    line.replaceChildren();
    for (const [state, count] of Object.entries(counts)) {
      if (!count) continue;
      const item = document.createElement("span");
      item.className = "count";
      item.textContent = count + " " + state;
      line.appendChild(item);
    }
  }

  function replaceRow(run) {
    const row = document.getElementById("run-" + run.code);
    if (!row) return;
    // The row comes rendered (escaped) by the server's own template, the one the page used.
    const template = document.createElement("template");
    template.innerHTML = run.html.trim();
    row.replaceWith(template.content.firstElementChild);
  }

  function render(data) {
    const state = box.querySelector(".campaign-state");
    state.textContent = data.label;
    state.className = "campaign-state state-" + data.state;
    setText(box, ".campaign-runs", data.ended + " of " + data.total);
    setText(box, ".campaign-eta", data.finished ? "–" : data.eta);
    const bar = box.querySelector(".campaign-progress");
    bar.max = data.total;
    bar.value = data.ended;
    bar.textContent = data.percent + " %";
    renderCounts(data.counts);
    data.lanes.forEach(renderLane);
    data.runs.forEach(replaceRow);
  }

  async function poll() {
    let data;
    try {
      const url = box.dataset.statusUrl + "?page=" + encodeURIComponent(box.dataset.page) +
        "&since=" + encodeURIComponent(since);
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(response.status);
      data = await response.json();
    } catch (err) {
      setText(box, ".campaign-eta", "status unavailable, retrying…");
      setTimeout(poll, POLL_MS * 3);
      return;
    }
    since = data.since;
    const retrying = box.querySelector(".campaign-retrying");
    if (data.retrying) {
      // A retry job adds runs batch by batch: say how far it is; reload once it is done.
      retrying.hidden = false;
      retrying.textContent = "Retrying failed runs: " + data.retrying.done + " of " +
        data.retrying.total + " queued again…";
      setTimeout(poll, POLL_MS);
      return;
    }
    if (String(data.total) !== box.dataset.total || data.finished || !retrying.hidden) {
      // New rows (a retry, adaptive repetitions) or the end: the buttons change too.
      window.location.reload();
      return;
    }
    render(data);
    setTimeout(poll, POLL_MS);
  }
  setTimeout(poll, POLL_MS);
})();
