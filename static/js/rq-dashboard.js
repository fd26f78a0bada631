// The RQ dashboard's "select all" box. django-rq wires it with an inline script, which the
// Content-Security-Policy blocks and which calls a jQuery plugin Django 5 no longer ships;
// Django's own actions.js expects a selection counter these pages do not have.
(function () {
  "use strict";
  const toggle = document.getElementById("action-toggle");
  if (!toggle) return;
  toggle.addEventListener("change", () => {
    document.querySelectorAll("input.action-select").forEach((box) => {
      box.checked = toggle.checked;
    });
  });
})();
