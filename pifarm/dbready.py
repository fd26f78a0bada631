"""Is the database ready for pifarm: reachable, with every migration applied?

manage.py turns a command's database error into these words when one of them is the cause, so a
fresh data directory gets "run `manage.py migrate` first", not a traceback; commands that would
otherwise go on failing (a loop) check first.
"""

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor


def unapplied_migrations(alias: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The migrations not applied yet ("app.name"), in the order migrate would apply them."""
    executor = MigrationExecutor(connections[alias])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _backwards in plan]


def not_ready() -> str | None:
    """Why the database cannot serve pifarm (unreachable, or not migrated), or None."""
    try:
        missing = unapplied_migrations()
    except DatabaseError as exc:
        return f"the database could not be reached: {str(exc).strip()}"
    if missing:
        return (
            f"the database lacks {len(missing)} of pifarm's migrations (the first: {missing[0]}):"
            " run `manage.py migrate` first"
        )
    return None


def require_ready() -> None:
    """CommandError with the reason, before a command starts work the database must serve."""
    if reason := not_ready():
        raise CommandError(reason)
