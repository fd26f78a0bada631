// A comparison's charts: each figure comes from the server as JSON (a json_script block next to
// its element); this draws it with plotly.js in the page's colours, and draws it again when
// the reader's colour scheme changes. The chosen run's telemetry comes as JSON from its own
// URL (data-url of the run's select, its code in place of data-any-run), figures built there.
(function () {
  "use strict";
  var dark = window.matchMedia("(prefers-color-scheme: dark)");
  var telemetry = {}; // the chosen run's figures, by name, drawn again with the page's

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

  function plot(element, figure) {
    // A chart that sets its own height (one line a row, as the overview's) gets a box that
    // tall; the stylesheet's fixed height would let it run over what follows.
    if (figure.layout.height) element.style.height = figure.layout.height + "px";
    window.Plotly.react(element, withErrorBarColour(figure.data), themed(figure.layout), {
      responsive: true,
      displaylogo: false,
      modeBarButtonsToRemove: ["select2d", "lasso2d"],
    });
  }

  function drawTelemetry() {
    var box = document.getElementById("telemetry-charts");
    if (!box) return;
    Object.keys(telemetry).forEach(function (name) {
      var element = document.getElementById(name);
      if (!element) {
        var figure = document.createElement("figure");
        figure.className = "chart card";
        element = document.createElement("div");
        element.id = name;
        element.className = "chart-plot";
        element.setAttribute("role", "img");
        element.setAttribute("aria-label", telemetry[name].layout.title.text.split("<br>").join(" "));
        figure.appendChild(element);
        box.appendChild(figure);
      }
      plot(element, telemetry[name]);
    });
  }

  function draw() {
    document.querySelectorAll(".chart-plot[data-figure]").forEach(function (element) {
      plot(element, JSON.parse(document.getElementById(element.dataset.figure).textContent));
    });
    drawTelemetry();
  }

  function chooseRun(select) {
    var note = document.getElementById("telemetry-note");
    var box = document.getElementById("telemetry-charts");
    telemetry = {};
    box.querySelectorAll(".chart-plot").forEach(function (element) { window.Plotly.purge(element); });
    box.textContent = "";
    note.textContent = "";
    if (!select.value) return;
    note.textContent = "Loading the run's telemetry…";
    var url = select.dataset.url.replace(select.dataset.anyRun, select.value);
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("the server answered " + response.status);
        return response.json();
      })
      .then(function (found) {
        if (select.value !== found.run) return; // another run was chosen meanwhile
        note.textContent = found.note || found.title + ", preset " + found.preset + ".";
        telemetry = found.figures;
        drawTelemetry();
      })
      .catch(function (error) {
        note.textContent = "The run's telemetry could not be read: " + error.message + ".";
      });
  }

  var select = document.getElementById("telemetry-run");
  if (select) {
    select.addEventListener("change", function () { chooseRun(select); });
  }
  draw();
  dark.addEventListener("change", draw);
})();
