// Polls a background task until it finishes, updating its state in place (and a prepare
// task's step and apt output); then swaps in the refreshed block (data-refresh-url)
// or reloads the page (data-reload).
(function () {
  "use strict";
  const POLL_MS = 1000;
  const logTail = window.pifarmLogTail;  // apt's output is a tail: its last lines are the news

  function watch(box) {
    const stateEl = box.querySelector(".task-state");
    const reasonEl = box.querySelector(".task-reason");
    const waitingEl = box.querySelector(".task-waiting");
    const stepEl = box.querySelector(".task-step");
    const logEl = box.querySelector(".task-log");
    async function poll() {
      let data;
      try {
        const response = await fetch(box.dataset.taskUrl, { headers: { Accept: "application/json" } });
        if (!response.ok) throw new Error(response.status);
        data = await response.json();
      } catch (err) {
        stateEl.textContent = "status unavailable, retrying…";
        setTimeout(poll, POLL_MS * 3);
        return;
      }
      stateEl.textContent = data.label + (data.duration_s ? " in " + data.duration_s.toFixed(1) + " s" : "");
      stateEl.className = "task-state state-" + data.state;
      reasonEl.textContent = data.reason;
      reasonEl.className = "task-reason reason-" + data.state;
      waitingEl.textContent = data.waiting;
      if (stepEl) stepEl.textContent = data.step;
      if (logEl) logTail.show(logEl, data.log_tail);
      if (!data.finished) {
        setTimeout(poll, POLL_MS);
      } else if (box.dataset.reload) {
        window.location.reload();
      } else if (box.dataset.refreshUrl) {
        const html = await (await fetch(box.dataset.refreshUrl)).text();
        document.getElementById(box.dataset.refreshTarget).innerHTML = html;
      }
    }
    if (logEl) logTail.toBottom(logEl);
    const state = stateEl.className.match(/state-(\w+)/)[1];
    if (state === "queued" || state === "running" || state === "waiting") poll();
  }

  document.querySelectorAll(".task[data-task-url]").forEach(watch);
})();
