// Follows queued health checks and probes: updates each board's status and last-seen cells.
(function () {
  "use strict";
  const url = document.currentScript.dataset.statusUrl;
  const POLL_MS = 2000;

  function ago(iso) {
    if (!iso) return "never";
    const seconds = (Date.now() - Date.parse(iso)) / 1000;
    if (seconds < 60) return "just now";
    const minutes = Math.round(seconds / 60);
    return minutes < 120 ? minutes + " minutes ago" : Math.round(minutes / 60) + " hours ago";
  }

  function show(board) {
    const cell = document.querySelector('[data-board="' + board.code + '"]');
    if (!cell || cell.querySelector("a.status")) return; // awaiting key confirmation
    const badge = cell.querySelector(".status");
    badge.textContent = board.label;
    badge.className = "status status-" + board.status;
    badge.title = board.reason;
    let reason = cell.querySelector(".reason");
    if (board.reason && !reason) {
      reason = document.createElement("small");
      reason.className = "reason";
      cell.appendChild(reason);
    }
    if (reason) reason.textContent = board.reason;
    const seen = document.querySelector('[data-last-seen="' + board.code + '"]');
    if (seen) seen.textContent = ago(board.last_seen);
  }

  async function poll() {
    try {
      const data = await (await fetch(url, { headers: { Accept: "application/json" } })).json();
      data.boards.forEach(show);
      if (data.pending) setTimeout(poll, POLL_MS);
    } catch (err) {
      setTimeout(poll, POLL_MS * 3);
    }
  }
  poll();
})();
