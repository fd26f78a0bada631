"""Login lockout (django-axes): the address a login comes from, and the login page as it is
shown to a user name and address that are locked out."""

import ipaddress

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


def client_address(request) -> str:
    """The address axes counts a login's failures against (AXES_CLIENT_IP_CALLABLE).

    The connection's own address, unless it is one of PIFARM_TRUSTED_PROXIES: then the
    right-most address of X-Forwarded-For that is not itself a trusted proxy, the one the
    last proxy we trust saw connect. A client may write any X-Forwarded-For it likes, so the
    header is read only behind a proxy named there (otherwise every user behind it shared
    one address, and a lock on a user name held for all of them)."""
    remote = request.META.get("REMOTE_ADDR", "")
    if not _trusted(remote):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([part.strip() for part in forwarded.split(",") if part.strip()]):
        if not _is_address(hop):
            return remote  # a hop no proxy writes: the header cannot be read
        if not _trusted(hop):
            return hop
    return remote


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _trusted(address: str) -> bool:
    if not _is_address(address):
        return False
    found = ipaddress.ip_address(address)
    return any(found in network for network in settings.PIFARM_TRUSTED_PROXIES)
