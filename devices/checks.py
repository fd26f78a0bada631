"""System checks for a team deployment (`manage.py check --deploy`)."""

import os

from django.core.checks import Tags, Warning, register


def _generated_key_warning(variable: str, what: str, check_id: str) -> list[Warning]:
    """A key generated next to the database protects nothing once both are copied together."""
    if os.environ.get(variable) or os.environ.get(f"{variable}_FILE"):
        return []
    return [
        Warning(
            f"{variable} is not set: {what} with a key generated into the data directory, "
            "next to the database.",
            hint=f"Set {variable} (or {variable}_FILE) from a secret store.",
            id=check_id,
        )
    ]


@register(Tags.security, deploy=True)
def credential_key_from_the_environment(app_configs, **kwargs):
    return _generated_key_warning(
        "PIFARM_CREDENTIAL_KEY", "board credentials are encrypted", "pifarm.W001"
    )


@register(Tags.security, deploy=True)
def secret_key_from_the_environment(app_configs, **kwargs):
    """Sessions are signed with it: whoever copies the data directory can forge a login."""
    return _generated_key_warning("PIFARM_SECRET_KEY", "sessions are signed", "pifarm.W002")
