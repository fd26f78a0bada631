// What django-rq wires with inline scripts and onclick attributes, which the
// Content-Security-Policy blocks: the job lists' "select all" box (its script also calls a
// jQuery plugin Django 5 no longer ships, and Django's own actions.js expects a selection
// counter these pages do not have), and the job page's result rows, each a link as a whole.
(function () {
  "use strict";
  const toggle = document.getElementById("action-toggle");
  if (toggle) {
    toggle.addEventListener("change", () => {
      document.querySelectorAll("input.action-select").forEach((box) => {
        box.checked = toggle.checked;
      });
    });
  }
  document.querySelectorAll("tr.rq-clickable").forEach((row) => {
    const link = row.querySelector("a[href]");
    if (!link) return;
    row.addEventListener("click", (event) => {
      if (!event.target.closest("a")) window.location.assign(link.href);
    });
  });
})();
