"""Share links: made and revoked on a saved comparison's page, and the public page they open.

The public page (/s/<token>/) needs no login and shows the comparison read-only, redacted by
benchmarks.sharing. The token is in its URL, so every answer there asks not to be indexed,
cached or sent on as a Referer (benchmarks.middleware); a revoked or expired link is a 410
that says so.
"""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from benchmarks import charts, exports, sharing
from benchmarks.forms_comparisons import ShareForm
from benchmarks.models import ShareLink
from benchmarks.views.comparisons import _compared, _get_comparison, comparison_page
from devices import roles
from devices.views.access import permission_required


@permission_required("benchmarks.view_run")
@require_POST
def share_create(request, code):
    comparison = _get_comparison(code)
    _may_share_or_403(request.user, comparison)
    form = ShareForm(request.POST)
    if not form.is_valid():
        return comparison_page(request, comparison, share_form=form, status=400)
    show_board_names = form.cleaned_data["show_board_names"]
    _, made = sharing.create_once(comparison, request.user, form.expires, show_board_names)
    if made:
        messages.success(request, "Shared: copy the link below.")
    else:  # the same form posted twice
        messages.info(request, "That link was made a moment ago: copy it below.")
    return redirect(f"{comparison.get_absolute_url()}#shares")


@permission_required("benchmarks.view_run")
@require_POST
def share_revoke(request, code, link):
    comparison = _get_comparison(code)
    _may_share_or_403(request.user, comparison)
    found = get_object_or_404(ShareLink, pk=link, comparison=comparison)
    if sharing.revoke(found):
        messages.success(request, "Revoked: the link answers that it was revoked from now on.")
    else:
        messages.info(request, "That link was revoked already.")
    return redirect(f"{comparison.get_absolute_url()}#shares")


@require_safe
def share_page(request, token):
    link, gone = _link(request, token)
    if link is None:
        return gone
    result, figures, problem, name = _shared(link)
    page = request.build_absolute_uri(link.get_absolute_url())
    context = {
        "link": link,
        "name": name,
        "result": result,
        "figures": figures,
        "problem": problem,
        "markdown": exports.as_markdown(result, page) if result else "",
        "created": link.comparison.created,
    }
    return render(request, "benchmarks/share.html", context)


@require_safe
def share_export(request, token, kind):
    link, gone = _link(request, token)
    if link is None:
        return gone
    result, _, problem, name = _shared(link, with_figures=False)
    if result is None:
        return HttpResponse(problem, status=404, content_type="text/plain")
    page = request.build_absolute_uri(link.get_absolute_url())
    return exports.response(link.comparison, result, kind, name=name, link=page)


def _link(request, token: str) -> tuple[ShareLink | None, HttpResponse | None]:
    """The live link of token, or the page that says why there is none (410 or 404)."""
    try:
        return sharing.live_link(token), None
    except ShareLink.DoesNotExist:
        words, status = "There is no shared comparison at this address.", 404
    except sharing.Gone as exc:
        words, status = str(exc), 410
    return None, render(request, "benchmarks/share_gone.html", {"words": words}, status=status)


def _shared(link: ShareLink, with_figures: bool = True):
    """The comparison's result as the link shows it, its figures (for the page), or the
    reason there is none; and its name as shown."""
    comparison = link.comparison
    result, problem = _compared(exports.runs_of(comparison), exports.choice(comparison))
    result, name = sharing.shown(link, result)
    figures = charts.figures(result) if result and with_figures else None
    return result, figures, problem, name


def _may_share_or_403(user, comparison) -> None:
    if not sharing.may_share(user, comparison):
        raise roles.RoleRequired(sharing.SHARE_PERMISSION)
