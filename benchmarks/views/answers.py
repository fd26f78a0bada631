"""The answer page of a campaign made from a question, and the 32/64-bit view of any campaigns.
Every role reads them, as it reads campaigns and comparisons."""

from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from benchmarks import answers, charts, comparisons
from benchmarks.forms_comparisons import SelectionForm
from benchmarks.models import Campaign
from devices.views.access import permission_required

RELOAD_S = 15  # a provisional answer reloads this often
BITNESS_BASELINE = "32-bit userland"


@permission_required("benchmarks.view_campaign")
@require_safe
def campaign_answer(request, code):
    campaign = get_object_or_404(Campaign, code=code)
    if answers.question_of(campaign) is None:
        raise Http404("This campaign was not made from a question: it has no answer page.")
    found = answers.answer(campaign, include_suspects=request.GET.get("include_suspects") == "on")
    forest = charts.forest(found.overview) if found.overview and found.overview.rows else None
    context = {
        "campaign": campaign,
        "answer": found,
        "forest": forest,
        "reload_s": RELOAD_S,
        "run_codes_max": answers.RUN_CODES_MAX,
    }
    return render(request, "benchmarks/answer.html", context)


@permission_required("benchmarks.view_run")
@require_safe
def bitness(request):
    # Chosen as the comparison builder's runs are: the newest campaigns listed, codes pasted.
    form = SelectionForm(request.GET or None)
    found = forest = None
    if form.is_valid():
        chosen = [campaign.pk for campaign in form.cleaned_data["campaigns"]]
        runs = comparisons.runs_selected(chosen, form.cleaned_data["runs"])
        found = comparisons.overview(runs, "userland", BITNESS_BASELINE)
        forest = charts.forest(found) if found.rows else None
    context = {"form": form, "overview": found, "forest": forest}
    return render(request, "benchmarks/bitness.html", context)
