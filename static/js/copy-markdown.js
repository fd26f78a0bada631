// "Copy as Markdown": copies the text of the textarea a button names (data-copy) to the
// clipboard; where the clipboard API is refused (plain HTTP, no permission), it selects the
// text instead, so that Ctrl-C copies it.
(function () {
  "use strict";

  function say(button, words) {
    var status = button.parentElement.querySelector(".copy-status");
    if (status) status.textContent = words;
  }

  function selectText(button, text) {
    text.focus();
    text.select();
    say(button, "Selected: press Ctrl-C (or ⌘-C) to copy.");
  }

  document.querySelectorAll("button.js-copy[data-copy]").forEach(function (button) {
    var text = document.getElementById(button.dataset.copy);
    if (!text) return;
    button.addEventListener("click", function () {
      if (!navigator.clipboard || !window.isSecureContext) {
        selectText(button, text);
        return;
      }
      navigator.clipboard.writeText(text.value).then(
        function () { say(button, "Copied."); },
        function () { selectText(button, text); }
      );
    });
  });
})();
