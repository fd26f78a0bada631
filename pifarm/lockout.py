"""Login lockout: django-axes locks a user name at an address; here, the address a login comes
from, the login page as a locked-out login gets it, and a lock on an address as a whole once
it has failed too often under any names (a password guesser's flood: each failure costs a
password hash, about half a second of a core).

The address's failures are counted in Redis, which every web process shares; without Redis
the count is skipped and axes's lock still holds."""

import ipaddress
import logging

import django_rq
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.shortcuts import render
from django.urls import reverse
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


def login_refused(request, original_response, credentials, *, address_alone=False):
    """The login form again, with how long the lock lasts and who can lift it (HTTP 429)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    username = (credentials or {}).get("username", "")
    limit = settings.PIFARM_LOGIN_ADDRESS_LIMIT if address_alone else settings.AXES_FAILURE_LIMIT
    context = {
        "form": AuthenticationForm(request, initial={"username": username}),
        "next": request.POST.get("next", ""),
        "locked_out": {"failures": limit, "minutes": minutes, "address_alone": address_alone},
    }
    return render(request, "registration/login.html", context, status=429)


def refuse_locked_addresses(get_response):
    """Middleware: a login posted from an address locked as a whole is refused before any
    password is checked, on every login form (the site's and the admin's): that is what makes
    a flood cheap to refuse."""
    login_paths = {reverse("login"), reverse("admin:login")}

    def middleware(request):
        if (
            request.method == "POST"
            and request.path in login_paths
            and settings.AXES_ENABLED
            and _failures_from(client_address(request)) >= settings.PIFARM_LOGIN_ADDRESS_LIMIT
        ):
            return login_refused(request, None, request.POST, address_alone=True)
        return get_response(request)

    return middleware


def _key(address: str) -> str:
    return f"pifarm:login-failures:{address}"


def _failures_from(address: str) -> int:
    try:
        return int(django_rq.get_connection().get(_key(address)) or 0)
    except RedisError as exc:
        log.warning("login failures of %s not read (%s): axes's lock alone holds", address, exc)
        return 0


@receiver(user_login_failed)
def count_failure(sender, credentials, request=None, **kwargs):
    """One more failure from the request's address, for as long as axes's cool-off."""
    if request is None or not settings.AXES_ENABLED:
        return
    key = _key(client_address(request))
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    try:
        with django_rq.get_connection().pipeline() as pipe:
            pipe.incr(key).expire(key, seconds).execute()
    except RedisError as exc:
        log.warning("a failed login from %s not counted (%s)", key, exc)


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
