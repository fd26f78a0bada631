"""`Authorization: Bearer <token>`: the request acts as the token's owner."""

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from benchmarks.api import tokens
from benchmarks.models import ApiToken

KEYWORD = "Bearer"


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """First in the list, so that a request without credentials gets a 401 naming Bearer."""

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None  # not ours: the session may still authenticate the request
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                f"Send the token as “Authorization: {KEYWORD} <token>”, with one space."
            )
        try:
            text = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("This is not a pifarm token.") from None
        token = ApiToken.objects.select_related("owner").filter(digest=tokens.digest(text)).first()
        where = reverse("benchmarks:tokens")
        if token is None:
            raise exceptions.AuthenticationFailed(
                f"This token is not known (mistyped, or its user was deleted). Make one at {where}."
            )
        if token.revoked:
            when = timezone.localtime(token.revoked).strftime("%Y-%m-%d %H:%M")
            raise exceptions.AuthenticationFailed(
                f"This token ({token.name}) was revoked on {when}. Make a new one at {where}."
            )
        if not token.owner.is_active:
            raise exceptions.AuthenticationFailed(
                f"The user of this token, {token.owner}, is deactivated."
            )
        tokens.note_use(token)
        return token.owner, token

    def authenticate_header(self, request):
        return f'{KEYWORD} realm="pifarm"'


def sees_addresses(request) -> bool:
    """Only a token made to see them shows boards' addresses; a browser session does not."""
    return isinstance(request.auth, ApiToken) and request.auth.sees_addresses


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema (and so the docs page's Authorize button) describes the token."""

    target_class = BearerTokenAuthentication
    name = "token"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A token made on the API tokens page.",
        }
