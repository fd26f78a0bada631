"""The benchmark catalog: what each benchmark measures, takes and needs."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from benchmarks.forms import allowed_values, every_benchmark
from devices.views.access import permission_required


@permission_required("benchmarks.view_custombenchmark")
@require_safe
def catalog(request):
    entries = [
        (benchmark, [(param, allowed_values(param)) for param in benchmark.params])
        for benchmark in every_benchmark()
    ]
    return render(request, "benchmarks/catalog.html", {"entries": entries})
