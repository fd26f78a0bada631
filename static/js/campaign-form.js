// The campaign builder: shows a benchmark's parameters only while it is included, and the
// repetition, quiet and schedule settings that apply. Without it every field shows, which
// also works.
(function () {
  "use strict";
  const form = document.querySelector("form.campaign-form");
  if (!form) return;

  function follow(control, targets, shown) {
    // A section holding an error stays in view, so the error can be read and fixed.
    const update = () => targets.forEach((target) => {
      target.hidden = !shown() && !target.querySelector(".has-error");
    });
    control.addEventListener("change", update);
    update();
  }

  form.querySelectorAll(".params[data-for]").forEach((params) => {
    const box = document.getElementById(params.dataset.for);
    if (box) follow(box, [params], () => box.checked);
  });

  const fixed = form.querySelectorAll(".repetitions-fixed");
  const adaptive = form.querySelectorAll(".repetitions-adaptive");
  const isAdaptive = () => form.querySelector("input[name=repetition_mode]:checked")?.value === "adaptive";
  form.querySelectorAll("input[name=repetition_mode]").forEach((radio) => {
    follow(radio, [...adaptive], isAdaptive);
    follow(radio, [...fixed], () => !isAdaptive());
  });

  const repeat = () => form.querySelector("input[name=repeat]:checked")?.value || "";
  form.querySelectorAll("input[name=repeat]").forEach((radio) => {
    follow(radio, [...form.querySelectorAll(".repeat-every")], () => repeat() === "every");
    follow(radio, [...form.querySelectorAll(".repeat-cron")], () => repeat() === "cron");
  });

  const quiet = form.querySelector("input[name=quiet]");
  if (quiet) follow(quiet, [...form.querySelectorAll(".quiet-settings")], () => quiet.checked);
})();
