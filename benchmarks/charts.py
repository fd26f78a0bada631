"""plotly figures of a comparison, built here as plain dicts (plotly.js's JSON schema) and drawn
in the browser by static/js/comparison.js.

Plain dicts rather than plotly.graph_objects: the figures are small and fixed in shape, and
graph_objects' validation costs tens of milliseconds a page. Colours and fonts are left to the
page's script, which takes them from the stylesheet (light or dark); the traces' own colours
below read on both backgrounds.
"""

import html

from benchmarks.comparisons import Overview, Result

BAR_COLOUR = "rgba(90, 140, 200, 0.55)"  # a mid blue: dark text and light text both read on it
POINT_COLOUR = "#d9480f"  # an orange that stands out from the bar on a light or dark page
CHANGE_COLOUR = "#2f9e44"
# A group of more trials than this shows this many, evenly spaced by rank: tens of thousands
# of points would make the page heavy and hide nothing the bar and the table do not say.
POINTS_SHOWN = 300
TICK_LINE = 16  # characters a line of a group's name under its bar, to fit 375 px
FOREST_LINE = 22  # of a forest plot's row label, beside the plot
TITLE_LINE = 30  # of a title, at 375 px
POINT_OFFSET = 0.3  # the points' column, to the right of their bar (bars are 0.5 wide)


def figures(result: Result, prefix: str = "") -> dict[str, dict]:
    """The figures of a comparison by name (each the id of its element: prefix tells apart
    several comparisons on one page): the means and the percent changes."""
    found = {f"{prefix}means-chart": means(result)}
    if result.comparisons:
        found[f"{prefix}changes-chart"] = changes(result)
    return found


def means(result: Result) -> dict:
    """Each group's mean as a bar, its 95 % CI as the error bar, each trial a point beside."""
    positions = list(range(len(result.groups)))
    bars = {
        "type": "bar", "name": "mean", "x": positions, "width": 0.5,
        "y": [group.description.mean for group in result.groups],
        "marker": {"color": BAR_COLOUR},
        "error_y": {
            "type": "data", "symmetric": False, "thickness": 2, "width": 8,
            "array": [_above(group.description) for group in result.groups],
            "arrayminus": [_below(group.description) for group in result.groups],
        },
        "hovertemplate": "%{y:.4g} " + plain(result.unit) + "<extra>mean</extra>",
    }  # fmt: skip
    xs, ys = [], []
    for position, group in zip(positions, result.groups, strict=True):
        shown = _evenly_by_rank(group.values)
        spread = 0.12 / max(len(shown) - 1, 1)
        xs += [position + POINT_OFFSET + (i % 2) * spread for i in range(len(shown))]
        ys += shown
    points = {
        "type": "scatter", "mode": "markers", "name": "trial", "x": xs, "y": ys,
        "marker": {"color": POINT_COLOUR, "size": 6, "opacity": 0.8},
        "hovertemplate": "%{y:.4g} " + plain(result.unit) + "<extra>trial</extra>",
    }  # fmt: skip
    ticks = [f"{_wrapped(plain(group.key))}<br>n={group.description.n}" for group in result.groups]
    return {
        "data": [bars, points],
        "layout": _layout(
            plain(f"{result.metric} by {result.group_by_label}"),
            x={
                "tickvals": positions,
                "ticktext": ticks,
                "zeroline": False,
                "title": {"text": plain(result.group_by_label)},
            },
            y={"title": {"text": plain(f"{result.metric} [{result.unit}]")}, "rangemode": "tozero"},
        ),
    }


def changes(result: Result) -> dict:
    """Each group's percent change of the mean against the baseline, with its 95 % CI."""
    keys = [key for key in result.comparisons if result.comparisons[key].percent_change is not None]
    found = [result.comparisons[key] for key in keys]
    data = {
        "type": "scatter", "mode": "markers", "name": "change",
        "x": [f"{_wrapped(plain(key))}<br>n={comparison.n_values}"
              for key, comparison in zip(keys, found, strict=True)],
        "y": [comparison.percent_change for comparison in found],
        "marker": {"color": CHANGE_COLOUR, "size": 11, "symbol": "diamond"},
        "error_y": {
            "type": "data", "symmetric": False, "thickness": 2, "width": 8,
            "array": [_interval_arms(comparison)[1] for comparison in found],
            "arrayminus": [_interval_arms(comparison)[0] for comparison in found],
        },
        "hovertemplate": "%{y:+.3g} %<extra></extra>",
    }  # fmt: skip
    return {
        "data": [data],
        "layout": _layout(
            f"change against “{plain(result.baseline)}”",
            x={"type": "category", "title": {"text": plain(result.group_by_label)}},
            y={
                "title": {"text": "change of the mean [%]"},
                "zeroline": True,
                "zerolinewidth": 2,
                "ticksuffix": " %",
            },
        ),  # fmt: skip
    }


def plain(text: str) -> str:
    """text as words in a figure. plotly reads a subset of HTML in every text it draws (<a>,
    <b>, <br>...), so a name's markup (a campaign's, a board's, a unit) would become a link
    or a fake line: only the breaks this module adds between a name and its n are markup."""
    return html.escape(str(text), quote=False)


def _layout(title: str, x: dict, y: dict) -> dict:
    return {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "xaxis": {"automargin": True, **x},
        "yaxis": {"automargin": True, **y},
        "showlegend": False,
        "autosize": True,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    }


def _wrapped(label: str, width: int = TICK_LINE) -> str:
    """A label in lines of about width characters: plotly.js never wraps a tick label or a
    title, and drops a tick label too wide for its place (a preset's name on a phone)."""
    lines = [""]
    for word in label.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}".strip()
    return "<br>".join(lines)


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
    ordered = sorted(values)
    if len(ordered) <= POINTS_SHOWN:
        return ordered
    step = (len(ordered) - 1) / (POINTS_SHOWN - 1)
    return [ordered[round(i * step)] for i in range(POINTS_SHOWN)]


def forest(overview: Overview) -> dict:
    """Each row of an overview as its percent change against the baseline with the ratio's
    95 % CI, one line per benchmark metric (its unit and each side's n in the label)."""
    rows = [row for row in overview.rows if row.comparison.percent_change is not None]
    labels = [
        f"{_wrapped(plain(f'{row.label} [{row.unit}]'), FOREST_LINE)}<br>"
        f"n={row.comparison.n_baseline} vs {row.comparison.n_values}"
        for row in rows
    ]
    data = {
        "type": "scatter", "mode": "markers", "name": "change", "orientation": "h",
        "y": labels, "x": [row.comparison.percent_change for row in rows],
        "marker": {"color": CHANGE_COLOUR, "size": 10, "symbol": "diamond"},
        "error_x": {
            "type": "data", "symmetric": False, "thickness": 2, "width": 6,
            "array": [_interval_arms(row.comparison)[1] for row in rows],
            "arrayminus": [_interval_arms(row.comparison)[0] for row in rows],
        },
        "hovertemplate": "%{x:+.3g} %<extra></extra>",
    }  # fmt: skip
    groups = ", ".join(sorted({row.group for row in rows}))
    layout = _layout(
        _wrapped(plain(f"{groups or 'each group'} against “{overview.baseline}”"), TITLE_LINE),
        x={
            "title": {"text": "change [%]"},
            "zeroline": True,
            "zerolinewidth": 2,
            "ticksuffix": " %",
        },
        y={"type": "category", "autorange": "reversed"},
    )
    layout["height"] = 140 + 64 * len(rows)
    layout["margin"] = {**layout["margin"], "t": 80}  # a title of two lines
    return {"data": [data], "layout": layout}
