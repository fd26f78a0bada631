"""Comparisons: the builder (a GET form that shows the comparison as it is chosen), saving
one, a saved one's page and its CSV and JSON. Every role reads them, as it reads campaigns."""

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from benchmarks import charts, comparisons, double_posts, exports, sharing
from benchmarks.forms_comparisons import ComparisonForm, SaveComparisonForm, ShareForm
from benchmarks.models import Comparison
from devices.views.access import permission_required

COMPARISONS_PER_PAGE = 100
# In the telemetry URL the page gives its script, where the chosen run's code goes.
TEMPLATE_RUN = "00000000-0000-0000-0000-000000000000"


def _get_comparison(code) -> Comparison:
    return get_object_or_404(Comparison.objects.select_related("owner"), code=code)


def _compared(runs, choice: dict):
    """The result, or the reason there is none (the exports need no figures)."""
    try:
        return comparisons.compare(runs, **choice), ""
    except comparisons.ComparisonError as exc:
        return None, str(exc)


def _computed(runs, choice: dict):
    """The result and its figures, or the reason there is none."""
    result, problem = _compared(runs, choice)
    return result, charts.figures(result) if result else None, problem


def _shown(result) -> dict:
    """What the result's template needs besides the result: the runs one may look into."""
    return {
        "trial_choices": comparisons.trial_choices(result) if result else [],
        "any_run": TEMPLATE_RUN,
    }


@permission_required("benchmarks.view_run")
@require_safe
def comparison_list(request):
    # Newest first, and in one order when saved in the same instant (a page is a slice).
    saved = Comparison.objects.select_related("owner").order_by("-created", "-pk")
    page = Paginator(saved, COMPARISONS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"comparisons": page.object_list, "page": page}
    return render(request, "benchmarks/comparisons.html", context)


@permission_required("benchmarks.view_run")
@require_safe
def comparison_new(request):
    form = ComparisonForm(request.GET or None)
    result = figures = None
    problem = ""
    if form.is_bound and form.is_valid():
        result, figures, problem = _computed(form.selected_runs, form.choice)
    context = {
        "form": form,
        "result": result,
        "figures": figures,
        "problem": problem,
        "save_form": SaveComparisonForm(),
        "query": request.GET.urlencode(),
        **_shown(result),
    }
    return render(request, "benchmarks/comparison_new.html", context)


@permission_required("benchmarks.view_run")
@require_POST
def comparison_save(request):
    form, save = ComparisonForm(request.POST), SaveComparisonForm(request.POST)
    if not (form.is_valid() and save.is_valid()):
        # The comparison again, with the save form's errors beside the name (a name refused).
        result, figures, problem = (
            _computed(form.selected_runs, form.choice) if form.is_valid() else (None, None, "")
        )
        context = {
            "form": form,
            "save_form": save,
            "result": result,
            "figures": figures,
            "problem": problem or "The comparison was not saved.",
        }
        return render(request, "benchmarks/comparison_new.html", context, status=400)
    # The baseline the result used: a posted one that is not a group (typed by hand, or left
    # from another grouping) falls back to the first group, which the saved page would show
    # under a name it ignores. No result (no values yet): no group to name, so none.
    result, _ = _compared(form.selected_runs, form.choice)
    choice = form.choice | {"baseline": result.baseline if result else ""}
    # The same save posted twice (a double click) keeps one comparison: the first one.
    name, chosen = save.cleaned_data["name"], _chosen(form.cleaned_data)
    comparison, _ = double_posts.made_once(
        request.user,
        Comparison.objects.filter(owner=request.user, name=name, **choice),
        lambda found: (
            _chosen({"campaigns": found.campaigns.all(), "runs": found.runs.all()}) == chosen
        ),
        lambda: _saved(request.user, name, choice, form),
    )
    return redirect(comparison)


def _saved(user, name: str, choice: dict, form: ComparisonForm) -> Comparison:
    comparison = Comparison.objects.create(owner=user, name=name, **choice)
    comparison.campaigns.set(form.cleaned_data["campaigns"])
    comparison.runs.set(form.cleaned_data["runs"])
    return comparison


def _chosen(selection: dict) -> tuple[set, set]:
    """The ids of a selection's campaigns and runs (objects or ids)."""
    return tuple(
        {getattr(item, "pk", item) for item in selection[key]} for key in ("campaigns", "runs")
    )


@permission_required("benchmarks.view_run")
@require_safe
def comparison_detail(request, code):
    return comparison_page(request, _get_comparison(code))


def comparison_page(request, comparison: Comparison, share_form=None, status=200):
    """The saved comparison's page; with its share links and form for those who may share."""
    result, figures, problem = _computed(exports.runs_of(comparison), exports.choice(comparison))
    may_share = sharing.may_share(request.user, comparison)
    context = {
        "comparison": comparison,
        "result": result,
        "figures": figures,
        "problem": problem,
        "may_share": may_share,
        "share_form": share_form or ShareForm(),
        "shares": list(comparison.shares.all()),
        "markdown": _markdown(request, comparison, result, may_share) if result else "",
        **_shown(result),
    }
    return render(request, "benchmarks/comparison.html", context, status=status)


@permission_required("benchmarks.view_run")
@require_safe
def comparison_export(request, code, kind):
    comparison = _get_comparison(code)
    result, problem = _compared(exports.runs_of(comparison), exports.choice(comparison))
    if result is None:
        return HttpResponse(problem, status=404, content_type="text/plain; charset=utf-8")
    if kind == "md":
        may_share = sharing.may_share(request.user, comparison)
        return exports.markdown_response(_markdown(request, comparison, result, may_share))
    return exports.response(comparison, result, kind)


def _markdown(request, comparison: Comparison, result, may_share: bool) -> str:
    """The results as Markdown. With its newest live share link (for those who may share)
    exactly that link's page's Markdown, hidden as it hides: the text with a public link is
    meant to be pasted in public. Otherwise the team's own, nothing hidden and no link."""
    newest = sharing.newest_live(comparison) if may_share else None
    if newest is None:
        return exports.as_markdown(result, may_share=may_share)
    shown, _ = sharing.shown(newest, result)
    return exports.as_markdown(shown, request.build_absolute_uri(newest.get_absolute_url()))
