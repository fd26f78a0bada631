from django import template

from benchmarks import canaries, charts, schedules
from benchmarks.models import Drift, Schedule
from benchmarks.views.canaries import CanaryForm

register = template.Library()


@register.inclusion_tag("benchmarks/_canary.html", takes_context=True)
def canary_panel(context):
    """The board page's canary: whether the board drifted (since when, by how much, what
    changed then), a chart of each series, and the schedule with its controls."""
    board = context["board"]
    schedule = Schedule.objects.filter(canary_of=board).first()
    drift = canaries.open_drift(board)
    open_by_series = {
        (found.benchmark, found.metric, found.preset_version_id): found
        for found in board.drifts.filter(cleared__isnull=True)
    }
    figures = {}
    # The series that drifted first: the reader comes for them.
    ordered = sorted(
        canaries.series(board),
        key=lambda one: (one.benchmark, one.metric, one.preset_version_id) not in open_by_series,
    )
    for index, one in enumerate(ordered):
        found = open_by_series.get((one.benchmark, one.metric, one.preset_version_id))
        figures[f"canary-chart-{index}"] = charts.canary(one, found)
    return {
        "board": board,
        "schedule": schedule,
        "timing": schedules.timing_words(schedule) if schedule else "",
        "runs": canaries.words(schedule) if schedule else "",
        "drift": drift,
        "drifts": list(open_by_series.values()),
        "figures": figures,
        "form": CanaryForm(),
        "perms": context.get("perms"),
        "csrf_token": context.get("csrf_token"),
    }


@register.simple_tag(takes_context=True)
def drifted_since(context, board):
    """When board's earliest open drift began, or None: the open drifts of all boards are read
    once a page (the dashboard's rows)."""
    if "drifted_since" not in context.render_context:
        since = {}
        open_drifts = Drift.objects.filter(cleared__isnull=True).values_list("board_id", "since")
        for board_id, moment in open_drifts:
            since[board_id] = min(moment, since.get(board_id, moment))
        context.render_context["drifted_since"] = since
    return context.render_context["drifted_since"].get(board.pk)
