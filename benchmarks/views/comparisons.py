"""Comparisons: the builder (a GET form that shows the comparison as it is chosen), saving
one, a saved one's page and its CSV and JSON. Every role reads them, as it reads campaigns."""

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from benchmarks import charts, comparisons, exports
from benchmarks.forms_comparisons import ComparisonForm, SaveComparisonForm
from benchmarks.models import Comparison
from devices.views.access import permission_required

LISTED = 100
# In the telemetry URL the page gives its script, where the chosen run's code goes.
TEMPLATE_RUN = "00000000-0000-0000-0000-000000000000"


def _get_comparison(code) -> Comparison:
    return get_object_or_404(Comparison.objects.select_related("owner"), code=code)


def _computed(runs, choice: dict):
    """The result and its figures, or the reason there is none."""
    try:
        result = comparisons.compare(runs, **choice)
    except comparisons.ComparisonError as exc:
        return None, None, str(exc)
    return result, charts.figures(result), ""


def _shown(result) -> dict:
    """What the result's template needs besides the result: the runs one may look into."""
    return {"trial_choices": comparisons.trial_choices(result) if result else [],
            "any_run": TEMPLATE_RUN}  # fmt: skip


@permission_required("benchmarks.view_run")
@require_GET
def comparison_list(request):
    saved = Comparison.objects.select_related("owner")[:LISTED]
    return render(request, "benchmarks/comparisons.html", {"comparisons": saved})


@permission_required("benchmarks.view_run")
@require_GET
def comparison_new(request):
    form = ComparisonForm(request.GET or None)
    result = figures = None
    problem = ""
    if form.is_bound and form.is_valid():
        result, figures, problem = _computed(form.selected_runs, form.choice)
    context = {"form": form, "result": result, "figures": figures, "problem": problem,
               "save_form": SaveComparisonForm(), "query": request.GET.urlencode(),
               **_shown(result)}  # fmt: skip
    return render(request, "benchmarks/comparison_new.html", context)


@permission_required("benchmarks.view_run")
@require_POST
def comparison_save(request):
    form, save = ComparisonForm(request.POST), SaveComparisonForm(request.POST)
    if not (form.is_valid() and save.is_valid()):
        context = {"form": form, "save_form": save, "problem": "The comparison was not saved."}
        return render(request, "benchmarks/comparison_new.html", context, status=400)
    comparison = Comparison.objects.create(
        owner=request.user, name=save.cleaned_data["name"], **form.choice
    )
    comparison.campaigns.set(form.cleaned_data["campaigns"])
    comparison.runs.set(form.cleaned_data["runs"])
    return redirect(comparison)


@permission_required("benchmarks.view_run")
@require_GET
def comparison_detail(request, code):
    comparison = _get_comparison(code)
    result, figures, problem = _computed(exports.runs_of(comparison), exports.choice(comparison))
    context = {"comparison": comparison, "result": result, "figures": figures,
               "problem": problem, **_shown(result)}  # fmt: skip
    return render(request, "benchmarks/comparison.html", context)


@permission_required("benchmarks.view_run")
@require_GET
def comparison_export(request, code, kind):
    comparison = _get_comparison(code)
    result, _, problem = _computed(exports.runs_of(comparison), exports.choice(comparison))
    if result is None:
        return HttpResponse(problem, status=404, content_type="text/plain; charset=utf-8")
    name = exports.filename(comparison, kind)
    if kind == "json":
        response = JsonResponse(exports.as_json(comparison, result))
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        exports.write_csv(result, response)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
