"""A campaign's results as CSV, one row per run, streamed: tens of thousands of runs."""

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from benchmarks import results
from benchmarks.models import Campaign
from devices.views.access import permission_required


@permission_required("benchmarks.view_run")
@require_GET
def runs_csv(request, code):
    campaign = get_object_or_404(Campaign, code=code)
    response = StreamingHttpResponse(
        results.csv_lines(campaign), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{results.csv_filename(campaign)}"'
    return response
