"""Schedules: the list, a schedule's page with its latest starts, pause and resume. A schedule
is made from a spec with a "schedule" (`manage.py campaign start`, benchmarks.schedules)."""

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from benchmarks import schedules
from benchmarks.models import Schedule, ScheduledStart
from devices.views.access import permission_required

STARTS_PER_PAGE = 50


def _get_schedule(code) -> Schedule:
    return get_object_or_404(Schedule.objects.select_related("created_by"), code=code)


@permission_required("benchmarks.view_schedule")
@require_safe
def schedule_list(request):
    latest = Prefetch(
        "starts", ScheduledStart.objects.select_related("campaign")[:1], to_attr="latest"
    )
    rows = [
        (schedule, schedules.timing_words(schedule), next(iter(schedule.latest), None))
        for schedule in Schedule.objects.prefetch_related(latest)
    ]
    return render(request, "benchmarks/schedules.html", {"rows": rows})


@permission_required("benchmarks.view_schedule")
@require_safe
def schedule_detail(request, code):
    schedule = _get_schedule(code)
    starts = schedule.starts.select_related("campaign")
    page = Paginator(starts, STARTS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "schedule": schedule,
        "timing": schedules.timing_words(schedule),
        "page": page,
        "spec": json.dumps(schedule.spec, indent=2, ensure_ascii=False),
    }
    return render(request, "benchmarks/schedule.html", context)


# What each control does, says when it did, and says when there was nothing to do.
CONTROLS = {
    "pause": (
        schedules.pause,
        "Paused {}: it starts nothing until resumed.",
        "{} was paused already.",
    ),
    "resume": (schedules.resume, "Resumed {}.", "{} was not paused."),
}


@permission_required("benchmarks.run_campaign")
@require_POST
def schedule_control(request, code, control):
    """Pause or resume (control, from the URL) a schedule, from its page."""
    schedule = _get_schedule(code)
    act, done, nothing = CONTROLS[control]
    if act(schedule):
        messages.success(request, done.format(schedule.name))
    else:
        messages.info(request, nothing.format(schedule.name))
    return redirect(schedule)
