"""A person's API tokens: made (the token shown once), listed and revoked.

Any logged-in user may have tokens: a token acts with its owner's role, so it opens no more
than the pages do. Only the owner sees or revokes a token; another user's is a 404.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from benchmarks.api import tokens
from benchmarks.forms import ApiTokenForm
from benchmarks.models import ApiToken


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def token_list(request):
    form = ApiTokenForm(request.POST if request.method == "POST" else None)
    made = None
    if request.method == "POST" and form.is_valid():
        row, made = tokens.issue(request.user, **form.cleaned_data)
        form = ApiTokenForm()
    # The new token is shown in the answer to the POST itself, not after a redirect: held in
    # the session or a message for the next page, it would be stored on the server. The page
    # is never cached (pifarm.middleware), so the back button does not bring it back.
    context = {
        "form": form,
        "tokens": ApiToken.objects.filter(owner=request.user),
        "made": made,
        "made_row": row if made else None,
        "docs_url": reverse("api:docs"),
        "api_root": request.build_absolute_uri(reverse("api:board-list")),
    }
    return render(request, "benchmarks/tokens.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def token_revoke(request, code):
    token = get_object_or_404(ApiToken, code=code, owner=request.user)
    if tokens.revoke(token):
        messages.success(request, f"Revoked {token.name}: scripts using it are refused now.")
    else:
        messages.info(request, f"{token.name} was revoked already.")
    return redirect("benchmarks:tokens")
