// A log tail box (the campaign page's lanes, a board's apt output): it is read from its newest
// line, at the bottom, and follows new output there; a reader who scrolled up stays put.
window.pifarmLogTail = (function () {
  "use strict";

  function atBottom(element) {
    // A pixel's slack: scroll positions are fractional on zoomed pages.
    return element.scrollHeight - element.scrollTop - element.clientHeight <= 1;
  }

  function toBottom(element) {
    element.scrollTop = element.scrollHeight;
  }

  function show(element, text) {
    const following = element.hidden || atBottom(element);
    element.textContent = text;
    element.hidden = !text;
    if (following) toBottom(element);
  }

  return { show: show, toBottom: toBottom };
})();
