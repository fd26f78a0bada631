"""System checks for a team deployment (`manage.py check --deploy`)."""

import os

from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def credential_key_from_the_environment(app_configs, **kwargs):
    """A key generated next to the database protects nothing once both are copied together."""
    if os.environ.get("PIFARM_CREDENTIAL_KEY") or os.environ.get("PIFARM_CREDENTIAL_KEY_FILE"):
        return []
    return [
        Warning(
            "PIFARM_CREDENTIAL_KEY is not set: board credentials are encrypted with a key "
            "generated into the data directory, next to the database.",
            hint="Set PIFARM_CREDENTIAL_KEY (or PIFARM_CREDENTIAL_KEY_FILE) from a secret store.",
            id="pifarm.W001",
        )
    ]


@register(Tags.security, deploy=True)
def secret_key_from_the_environment(app_configs, **kwargs):
    """Sessions are signed with it: whoever copies the data directory can forge a login."""
    if os.environ.get("PIFARM_SECRET_KEY") or os.environ.get("PIFARM_SECRET_KEY_FILE"):
        return []
    return [
        Warning(
            "PIFARM_SECRET_KEY is not set: sessions are signed with a key generated into the "
            "data directory, next to the database.",
            hint="Set PIFARM_SECRET_KEY (or PIFARM_SECRET_KEY_FILE) from a secret store.",
            id="pifarm.W002",
        )
    ]
