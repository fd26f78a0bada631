"""A campaign's results as CSV, one row per run, streamed: tens of thousands of runs; and one
run's telemetry over time, as JSON for the comparison page's chart of it."""

from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_safe

from benchmarks import charts, results
from benchmarks.models import Campaign, Run
from benchmarks.telemetry.timeline import UNITS, timeline
from devices.views.access import permission_required


@permission_required("benchmarks.view_run")
@require_safe
def runs_csv(request, code):
    campaign = get_object_or_404(Campaign, code=code)
    # A HEAD gets the headers alone: a server iterates a streamed body to its end even when it
    # sends none of it, and 20,000 runs take seconds to write.
    lines = () if request.method == "HEAD" else results.csv_lines(campaign)
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{results.csv_filename(campaign)}"'
    return response


@permission_required("benchmarks.view_run")
@require_safe
def run_telemetry(request, code):
    """Every role reads every run (as campaigns); one run's samples only, fetched when a
    reader picks it, never the telemetry of a whole comparison."""
    run = get_object_or_404(Run.objects.select_related("board"), code=code)
    return JsonResponse(_telemetry_of(run), json_dumps_params={"ensure_ascii": False})


def _no_telemetry(run: Run) -> str:
    if run.telemetry_removed is not None:
        when = timezone.localtime(run.telemetry_removed)
        return (
            f"This run's telemetry was removed on {when:%Y-%m-%d} by the retention "
            "(PIFARM_TELEMETRY_DAYS); its measurements are kept."
        )
    return "This run recorded no telemetry."


def _telemetry_of(run: Run) -> dict:
    """Each end's series over time, their units, and the figures drawn from them."""
    title = f"{run.benchmark} run {run.repetition} on {run.board.name}"
    ends = {"board": {"name": run.board.name, **timeline(run.telemetry)}}
    if run.peer:
        ends["peer"] = {"name": run.peer, **timeline(run.peer_telemetry)}
    figures = charts.telemetry(title, ends)
    return {
        "run": str(run.code),
        "title": title,
        "preset": run.preset_label,
        "units": UNITS,
        "ends": ends,
        "figures": figures,
        "note": "" if figures else _no_telemetry(run),
    }
