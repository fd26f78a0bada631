"""API tokens: made (the token is returned once, only its digest kept), found, revoked."""

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from benchmarks.models import ApiToken

# last_used is written at most this often: a script polling every second must not turn each
# of its reads into a write.
LAST_USED_EVERY = timedelta(minutes=1)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(owner, name: str, sees_addresses: bool = False) -> tuple[ApiToken, str]:
    """A new token for owner: its row, and the token itself (shown once, never stored)."""
    token = secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        owner=owner, name=name, digest=digest(token), sees_addresses=sees_addresses
    )
    return row, token


def revoke(token: ApiToken) -> bool:
    """False when it was revoked already."""
    still_valid = ApiToken.objects.filter(pk=token.pk, revoked__isnull=True)
    return bool(still_valid.update(revoked=timezone.now()))


def note_use(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used is None or now - token.last_used >= LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now
