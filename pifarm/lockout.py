"""The login page, as django-axes shows it to a user name and address that are locked out."""

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.shortcuts import render


def login_refused(request, original_response, credentials):
    """The login form again, with how long the lock lasts and who can lift it (HTTP 429)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    username = (credentials or {}).get("username", "")
    context = {
        "form": AuthenticationForm(request, initial={"username": username}),
        "next": request.POST.get("next", ""),
        "locked_out": {"failures": settings.AXES_FAILURE_LIMIT, "minutes": minutes},
    }
    return render(request, "registration/login.html", context, status=429)
