"""plotly figures of a comparison, built here as plain dicts (plotly.js's JSON schema) and drawn
in the browser by static/js/comparison.js.

Plain dicts rather than plotly.graph_objects: the figures are small and fixed in shape, and
graph_objects' validation costs tens of milliseconds a page. Colours and fonts are left to the
page's script, which takes them from the stylesheet (light or dark); the traces' own colours
below read on both backgrounds.
"""

import html

from benchmarks import network_link
from benchmarks.comparisons import Overview, Result

BAR_COLOUR = "rgba(90, 140, 200, 0.55)"  # a mid blue: dark text and light text both read on it
POINT_COLOUR = "#d9480f"  # an orange that stands out from the bar on a light or dark page
CHANGE_COLOUR = "#2f9e44"
# A group of more trials than this shows this many, evenly spaced by rank: tens of thousands
# of points would make the page heavy and hide nothing the bar and the table do not say.
POINTS_SHOWN = 300
TITLE_CHARS = 34  # a title's line that fits a 375 px wide phone
# The canary's chart sits in a panel of the board's page, two paddings narrower: 26 fit there.
CANARY_TITLE_CHARS = 26
TICK_LINE = 16  # characters a line of a group's name under its bar, to fit 375 px
FOREST_LINE = 22  # of a forest plot's row label, beside the plot
TITLE_LINE_PX = 20
AXIS_TITLE_PX = 60  # the x axis's ticks and title
LEGEND_ROW_PX = 22
POINT_OFFSET = 0.3  # the points' column, to the right of their bar (bars are 0.5 wide)
LINE_RATE_COLOUR = "#c2255c"  # a raspberry red and a violet: apart from the bars, the points
CEILING_COLOUR = "#9c36b5"  # and each other, on a light or dark page
# One colour per group (or per process) that reads on a light and a dark page, in order.
PALETTE = ("#1c7ed6", "#d9480f", "#2f9e44", "#ae3ec9", "#f08c00", "#0c8599", "#e64980", "#5c940d")


def figures(result: Result, prefix: str = "") -> dict[str, dict]:
    """The figures of a comparison by name (each the id of its element: prefix tells apart
    several comparisons on one page): the means, the percent changes, and the result against
    the measured clock (when a run measured one)."""
    found = {f"{prefix}means-chart": means(result)}
    if result.comparisons:
        found[f"{prefix}changes-chart"] = changes(result)
    if result.clocked:
        found[f"{prefix}clock-chart"] = against_clock(result)
    return found


def means(result: Result) -> dict:
    """Each group's mean as a bar, its 95 % CI as the error bar, each trial a point beside."""
    positions = list(range(len(result.groups)))
    bars = {
        "type": "bar",
        "name": "mean",
        "x": positions,
        "width": 0.5,
        "y": [group.description.mean for group in result.groups],
        "marker": {"color": BAR_COLOUR},
        "error_y": {
            "type": "data",
            "symmetric": False,
            "thickness": 2,
            "width": 8,
            "array": [_above(group.description) for group in result.groups],
            "arrayminus": [_below(group.description) for group in result.groups],
        },
        **_hover("%{y:.4g}", result.unit, "mean"),
    }
    xs, ys = [], []
    for position, group in zip(positions, result.groups, strict=True):
        shown = _evenly_by_rank(group.values)
        spread = 0.12 / max(len(shown) - 1, 1)
        xs += [position + POINT_OFFSET + (i % 2) * spread for i in range(len(shown))]
        ys += shown
    points = {
        "type": "scatter",
        "mode": "markers",
        "name": "trial",
        "x": xs,
        "y": ys,
        "marker": {"color": POINT_COLOUR, "size": 6, "opacity": 0.8},
        **_hover("%{y:.4g}", result.unit, "trial"),
    }
    ticks = [
        f"{_broken(group.key, TICK_LINE)}<br>n={group.description.n}"
        + (f" ({len(group.values)} shown)" if group.sampled else "")
        for group in result.groups
    ]
    layout = _layout(
        f"{result.metric} by {result.group_by_label}",
        x={
            "tickvals": positions,
            "ticktext": ticks,
            "zeroline": False,
            "title": {"text": plain(result.group_by_label)},
        },
        y={"title": {"text": plain(f"{result.metric} [{result.unit}]")}, "rangemode": "tozero"},
    )
    if result.references is not None:
        layout["shapes"], layout["annotations"] = _reference_lines(result)
    return {"data": [bars, points], "layout": layout}


def _reference_lines(result: Result) -> tuple[list[dict], list[dict]]:
    """The link's line rate across the chart, labelled above it, and the TCP goodput ceiling
    labelled below it (the two are close: 100 and 94.1); a ceiling of each group's own MTU
    over its bar alone."""
    found = result.references
    shapes, labels = [], []

    def across(value, what, colour, above):
        shapes.append(_hline(value, colour, 0, 1, "paper"))
        labels.append(
            {
                "text": found.label(what, value),
                "x": 0,
                "xref": "paper",
                "xanchor": "left",
                "y": value,
                "yanchor": "bottom" if above else "top",
                "showarrow": False,
                "font": {"size": 11, "color": colour},
            }
        )

    if found.line_rate is not None:
        across(found.line_rate, network_link.LINE_RATE, LINE_RATE_COLOUR, above=True)
    if found.ceiling is not None:
        across(found.ceiling, network_link.CEILING, CEILING_COLOUR, above=False)
    for position, group in enumerate(result.groups):
        if (value := found.ceilings.get(group.key)) is not None:
            shapes.append(_hline(value, CEILING_COLOUR, position - 0.45, position + 0.45, "x"))
            labels.append(
                {
                    "text": f"ceiling {network_link.figure(value)}",
                    "x": position,
                    "y": value,
                    "yanchor": "top",
                    "showarrow": False,
                    "font": {"size": 10, "color": CEILING_COLOUR},
                }
            )
    return shapes, labels


def _hline(value: float, colour: str, x0: float, x1: float, xref: str) -> dict:
    return {
        "type": "line",
        "xref": xref,
        "x0": x0,
        "x1": x1,
        "yref": "y",
        "y0": value,
        "y1": value,
        "line": {"color": colour, "width": 2, "dash": "dash"},
    }


def against_clock(result: Result) -> dict:
    """Each counted trial's value against its run's median Arm clock under load, a colour
    per group (trials of runs that measured none are left out; n counts those drawn)."""
    traces, drawn = [], 0
    for index, group in enumerate(result.groups):
        # a group's trials come in order of value (comparisons._group): so do these
        clocked = [i for i, clock in enumerate(group.clocks) if clock is not None]
        drawn += len(clocked)
        shown = _evenly(clocked)
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": plain(f"{group.key} (n={len(clocked)})"),
                "x": [group.clocks[i] for i in shown],
                "y": [group.values[i] for i in shown],
                "marker": {"color": PALETTE[index % len(PALETTE)], "size": 7, "opacity": 0.75},
                **_hover("%{x:.0f} MHz: %{y:.4g}", result.unit, group.key),
            }
        )
    layout = _layout(
        f"{result.metric} against the measured Arm clock, n={drawn}",
        x={"title": {"text": "median Arm clock under load [MHz]"}},
        y={"title": {"text": plain(f"{result.metric} [{result.unit}]")}},
    )
    return {"data": traces, "layout": _with_legend(layout, len(traces))}


def _wrapped(title: str, width: int = TITLE_CHARS) -> list[str]:
    """A title (or a bit's words) in lines of at most width characters: plotly.js never
    wraps one, and on a phone a long title would run off the chart."""
    lines = [""]
    for word in title.split():
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}".strip()
    return lines


def plain(text: str) -> str:
    """text as words in a figure. plotly reads a subset of HTML in every text it draws (<a>,
    <b>, <br>...), so a name's markup (a campaign's, a board's, a unit) would become a link
    or a fake line: only the breaks this module adds between a name and its n are markup."""
    return html.escape(str(text), quote=False)


def _hover(figures: str, unit: str, extra: str) -> dict:
    """A trace's hover text: figures (plotly's "%{y:.4g}"...), then the unit, and extra in the
    hover's side box. The unit and extra are names (a custom benchmark's unit, a board's) and
    plotly would fill in any "%{...}" in the template itself: so they go in the trace's meta,
    whose values it puts in as they are."""
    return {
        "hovertemplate": f"{figures} %{{meta[0]}}<extra>%{{meta[1]}}</extra>",
        "meta": [plain(unit), plain(extra)],
    }


def _broken(label: str, width: int) -> str:
    """A name as words in lines of about width characters, for a tick or a row label."""
    return "<br>".join(_wrapped(plain(label), width))


def _with_legend(layout: dict, entries: int) -> dict:
    """A legend at the figure's foot, a row an entry (as a phone shows them) kept under the
    x axis's title by the bottom margin: beside the plot it would take half of a phone's
    width, and plotly.js keeps neither the title nor the x axis's title clear of it."""
    legend = {
        "orientation": "h",
        "x": 0,
        "xref": "container",
        "y": 0,
        "yref": "container",
        "yanchor": "bottom",
    }
    margin = layout["margin"] | {"b": AXIS_TITLE_PX + LEGEND_ROW_PX * entries}
    return layout | {"showlegend": True, "legend": legend, "margin": margin}


def changes(result: Result) -> dict:
    """Each group's percent change of the mean against the baseline, with its 95 % CI."""
    keys = [key for key in result.comparisons if result.comparisons[key].percent_change is not None]
    found = [result.comparisons[key] for key in keys]
    data = {
        "type": "scatter",
        "mode": "markers",
        "name": "change",
        "x": [
            f"{_broken(key, TICK_LINE)}<br>n={comparison.n_values}"
            for key, comparison in zip(keys, found, strict=True)
        ],
        "y": [comparison.percent_change for comparison in found],
        "marker": {"color": CHANGE_COLOUR, "size": 11, "symbol": "diamond"},
        "error_y": {
            "type": "data",
            "symmetric": False,
            "thickness": 2,
            "width": 8,
            "array": [_interval_arms(comparison)[1] for comparison in found],
            "arrayminus": [_interval_arms(comparison)[0] for comparison in found],
        },
        "hovertemplate": "%{y:+.3g} %<extra></extra>",
    }
    return {
        "data": [data],
        "layout": _layout(
            f"change against “{result.baseline}”",
            x={"type": "category", "title": {"text": plain(result.group_by_label)}},
            y={
                "title": {"text": "change of the mean [%]"},
                "zeroline": True,
                "zerolinewidth": 2,
                "ticksuffix": " %",
            },
        ),
    }


def _layout(title: str, x: dict, y: dict, width: int = TITLE_CHARS) -> dict:
    """title: words (plain() makes them so here), in lines of width characters at most; x and
    y: the axes, their texts plain."""
    lines = _wrapped(plain(title), width)
    return {
        "title": {"text": "<br>".join(lines), "x": 0, "xanchor": "left", "font": {"size": 15}},
        "xaxis": {"automargin": True, **x},
        "yaxis": {"automargin": True, **y},
        "showlegend": False,
        "autosize": True,
        "margin": {"l": 10, "r": 10, "t": 50 + TITLE_LINE_PX * (len(lines) - 1), "b": 10},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    }


def _above(description) -> float:
    return 0 if description.ci_high is None else description.ci_high - description.mean


def _below(description) -> float:
    return 0 if description.ci_low is None else description.mean - description.ci_low


def _interval_arms(comparison) -> tuple[float, float]:
    """How far the percent change's interval reaches below and above it (none: unbounded or
    too few trials, which the table says in words)."""
    if comparison.percent_ci is None:
        return 0, 0
    low, high = comparison.percent_ci
    return comparison.percent_change - low, high - comparison.percent_change


def _evenly_by_rank(values: list[float]) -> list[float]:
    return _evenly(sorted(values))


def _evenly(ordered: list) -> list:
    """At most POINTS_SHOWN of ordered, evenly spaced, the first and the last among them."""
    if len(ordered) <= POINTS_SHOWN:
        return ordered
    step = (len(ordered) - 1) / (POINTS_SHOWN - 1)
    return [ordered[round(i * step)] for i in range(POINTS_SHOWN)]


def telemetry(title: str, ends: dict[str, dict]) -> dict[str, dict]:
    """The figures of one run's telemetry over time, by name: Arm clock, temperature,
    throttled bits and CPU % per process, each end (board, peer) its own traces.

    ends: by end, {"name": who it was, **telemetry.timeline.timeline(samples)}; an end that
    recorded nothing draws nothing."""
    ends = {end: series for end, series in ends.items() if series["t"]}
    if not ends:
        return {}
    time_axis = {"title": {"text": "time from start [s]"}, "rangemode": "tozero"}
    figures = {}
    for name, key, what, unit in (
        ("telemetry-clock", "arm_mhz", "Arm clock", "MHz"),
        ("telemetry-temp", "temp_c", "temperature", "°C"),
    ):
        traces = [
            _over_time(f"{end} ({series['name']})", series["t"], series[key], end, unit)
            for end, series in ends.items()
        ]
        figures[name] = _timed(f"{what} of {title}", traces, time_axis, f"{what} [{unit}]")
    figures["telemetry-throttled"] = _throttled(title, ends, time_axis)
    traces = []
    for end, series in ends.items():
        for index, (process, pcts) in enumerate(series["procs"].items()):
            trace = _over_time(f"{process} ({end})", series["t"], pcts, end, "% of one core")
            trace["line"]["color"] = PALETTE[index % len(PALETTE)]
            traces.append(trace)
    figures["telemetry-cpu"] = _timed(
        f"CPU per process of {title}", traces, time_axis, "CPU [% of one core]"
    )
    return figures


def _over_time(name: str, t: list, values: list, end: str, unit: str) -> dict:
    """A line of one end's readings: the board's solid, the peer's dotted."""
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": plain(name),
        "x": t,
        "y": values,
        "line": {
            "dash": "solid" if end == "board" else "dot",
            "width": 2,
            "color": PALETTE[0] if end == "board" else PALETTE[1],
        },
        "marker": {"size": 4},
        "connectgaps": False,
        **_hover("%{x:.1f} s: %{y:.4g}", unit, name),
    }


def _throttled(title: str, ends: dict[str, dict], time_axis: dict) -> dict:
    """A marker at each reading for each bit set in it, on a row per bit (its words); the
    title says when no bit was ever set."""
    traces, readings = [], 0
    for index, (end, series) in enumerate(ends.items()):
        points = [
            (reading["t"], "<br>".join(_wrapped(bit["words"], 18)), reading["value"])
            for reading in series["throttled"]
            for bit in reading["bits"]
        ]
        readings += len(series["throttled"])
        if points:
            traces.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": plain(f"{end} ({series['name']})"),
                    "x": [t for t, _, _ in points],
                    "y": [words for _, words, _ in points],
                    "customdata": [value for _, _, value in points],
                    "marker": {"symbol": "square", "size": 8, "color": PALETTE[index]},
                    "hovertemplate": "%{x:.1f} s: %{y} (%{customdata})<extra></extra>",
                }
            )
    if not readings:
        words = "throttled bits: not read (no vcgencmd)"
    elif not traces:
        words = f"throttled bits: none set in {readings} readings"
    else:
        words = "throttled bits set"
    return _timed(f"{words}, {title}", traces, time_axis, "bit set", category=True)


def _timed(title: str, traces: list, x: dict, y_title: str, category=False) -> dict:
    y = {"title": {"text": y_title}}
    if category:
        y |= {"type": "category", "automargin": True}
    return {"data": traces, "layout": _with_legend(_layout(title, x=dict(x), y=y), len(traces))}


def forest(overview: Overview) -> dict:
    """Each row of an overview as its percent change against the baseline with the ratio's
    95 % CI, one line per benchmark metric (its unit and each side's n in the label)."""
    rows = [row for row in overview.rows if row.comparison.percent_change is not None]
    labels = [
        f"{_broken(f'{row.label} [{row.unit}]', FOREST_LINE)}<br>"
        f"n={row.comparison.n_baseline} vs {row.comparison.n_values}"
        for row in rows
    ]
    data = {
        "type": "scatter",
        "mode": "markers",
        "name": "change",
        "orientation": "h",
        "y": labels,
        "x": [row.comparison.percent_change for row in rows],
        "marker": {"color": CHANGE_COLOUR, "size": 10, "symbol": "diamond"},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "thickness": 2,
            "width": 6,
            "array": [_interval_arms(row.comparison)[1] for row in rows],
            "arrayminus": [_interval_arms(row.comparison)[0] for row in rows],
        },
        "hovertemplate": "%{x:+.3g} %<extra></extra>",
    }
    groups = ", ".join(sorted({row.group for row in rows}))
    layout = _layout(
        f"{groups or 'each group'} against “{overview.baseline}”",
        x={
            "title": {"text": "change [%]"},
            "zeroline": True,
            "zerolinewidth": 2,
            "ticksuffix": " %",
        },
        y={"type": "category", "autorange": "reversed"},
    )
    layout["height"] = 170 + 64 * len(rows)
    # A row's label of several lines reaches above the first row: room for it under the title.
    layout["margin"] = layout["margin"] | {"t": layout["margin"]["t"] + 40}
    return {"data": [data], "layout": layout}


def canary(series, drift=None, shown: int = POINTS_SHOWN) -> dict:
    """A board's canary series over time (benchmarks.canaries): each occasion's median, its
    runs' range as error bars, the latest `shown` occasions; with a drift, the board as it was
    (a dashed line to the change) and the change (a vertical line)."""
    points = series.points[-shown:]
    trace = {
        "type": "scatter",
        "mode": "lines+markers",
        "x": [point.at.isoformat() for point in points],
        "y": [point.value for point in points],
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": [point.high - point.value for point in points],
            "arrayminus": [point.value - point.low for point in points],
        },
        "marker": {"color": PALETTE[0], "size": 6},
        "line": {"color": PALETTE[0], "width": 1},
        **_hover("%{x}: %{y:.4g}", series.unit, "median of the occasion"),
    }
    shapes = []
    if drift is not None and points:
        since = drift.since.isoformat()
        shapes = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": since,
                "x1": since,
                "y0": 0,
                "y1": 1,
                "line": {"color": LINE_RATE_COLOUR, "width": 2},
            },
            {
                "type": "line",
                "xref": "x",
                "yref": "y",
                "x0": points[0].at.isoformat(),
                "x1": since,
                "y0": drift.reference_mean,
                "y1": drift.reference_mean,
                "line": {"color": CHANGE_COLOUR, "width": 2, "dash": "dash"},
            },
        ]
    counted = f"n={len(series.points)} occasions" + (
        f", the latest {len(points)} shown" if len(points) < len(series.points) else ""
    )
    layout = _layout(
        f"{series.label}, {counted}",
        x={"title": {"text": "when the canary ran"}, "type": "date"},
        y={"title": {"text": plain(f"{series.metric} [{series.unit}]")}},
        width=CANARY_TITLE_CHARS,
    )
    return {"data": [trace], "layout": {**layout, "shapes": shapes}}
