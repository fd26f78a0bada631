"""System checks: a team deployment (`manage.py check --deploy`) and a database that stopped
part-way through a squashed schema history (`manage.py migrate` runs that one first)."""

import os

from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

# The last pifarm whose tree still holds the migrations that 0001_squashed_* replace.
BEFORE_THE_SQUASH = "77defea"


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


@register(Tags.database)
def no_migration_history_stopped_inside_a_squash(app_configs, databases=None, **kwargs):
    """Django can only take a squashed migration as all applied or none applied; a database
    with some of the replaced ones applied would fail half-way through `migrate` with a
    ValueError that names a model, not the cause."""
    errors = []
    for alias in databases or ():
        try:
            applied = MigrationRecorder(connections[alias]).applied_migrations()
        except DatabaseError:
            continue  # no database yet: migrate makes it
        loader = MigrationLoader(None, ignore_no_migrations=True)
        for key, migration in sorted(loader.disk_migrations.items()):
            done = [name for name in migration.replaces if name in applied]
            if done and len(done) < len(migration.replaces):
                errors.append(
                    Error(
                        f"Database {alias!r} applied {len(done)} of the "
                        f"{len(migration.replaces)} migrations that {key[0]}.{key[1]} "
                        f"replaces, the last being {done[-1][1]}: it stopped part-way "
                        "through the history this pifarm squashed.",
                        hint=f"Check out pifarm {BEFORE_THE_SQUASH} (the last before the "
                        "squash), run `manage.py migrate` there, then come back to this "
                        "version. docs/operations.md, Upgrading.",
                        id="pifarm.E001",
                    )
                )
    return errors
