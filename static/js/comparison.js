// A comparison's charts: each figure comes from the server as JSON (a json_script block next to
// its element); this draws it with plotly.js in the page's colours, and draws it again when
// the reader's colour scheme changes.
(function () {
  "use strict";
  var dark = window.matchMedia("(prefers-color-scheme: dark)");

  function colours() {
    var style = getComputedStyle(document.documentElement);
    return {
      text: style.getPropertyValue("--fg").trim(),
      grid: style.getPropertyValue("--line").trim(),
      muted: style.getPropertyValue("--muted").trim(),
    };
  }

  function themed(layout) {
    var c = colours();
    var axis = { gridcolor: c.grid, linecolor: c.muted, zerolinecolor: c.muted, color: c.text };
    var result = Object.assign({}, layout, {
      font: { color: c.text, family: "system-ui, sans-serif", size: 13 },
    });
    result.xaxis = Object.assign({}, layout.xaxis, axis);
    result.yaxis = Object.assign({}, layout.yaxis, axis);
    return result;
  }

  // Error bars in the text's colour: plotly's default dark grey vanishes on a dark page.
  function withErrorBarColour(data) {
    var text = colours().text;
    return data.map(function (trace) {
      var coloured = Object.assign({}, trace);
      ["error_x", "error_y"].forEach(function (bars) {
        if (trace[bars]) coloured[bars] = Object.assign({}, trace[bars], { color: text });
      });
      return coloured;
    });
  }

  function draw() {
    document.querySelectorAll(".chart-plot[data-figure]").forEach(function (element) {
      var figure = JSON.parse(document.getElementById(element.dataset.figure).textContent);
      window.Plotly.react(element, withErrorBarColour(figure.data), themed(figure.layout), {
        responsive: true,
        displaylogo: false,
        modeBarButtonsToRemove: ["select2d", "lasso2d"],
      });
    });
  }

  draw();
  dark.addEventListener("change", draw);
})();
