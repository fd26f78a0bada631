"""Is the database ready for pifarm: reachable, with every migration applied?

manage.py turns a command's database error into these words when one of them is the cause, so a
fresh data directory gets "run `manage.py migrate` first", not a traceback (migrate's own errors
excepted: they are the cause); a command that would go on failing in a loop checks first.
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
    """Why the database cannot serve pifarm (unreachable, or not migrated), or None: also when
    the question itself fails, since the error that led here then says more."""
    try:
        connections[DEFAULT_DB_ALIAS].ensure_connection()
    except DatabaseError as exc:
        return f"the database could not be reached: {str(exc).strip()}"
    return _migrate_first()


def require_migrated() -> None:
    """CommandError before a command starts work on a database that lacks migrations. One
    that cannot be reached yet (a server still starting) is the command's to wait for."""
    if reason := _migrate_first():
        raise CommandError(reason)


def _migrate_first() -> str | None:
    try:
        missing = unapplied_migrations()
    except DatabaseError:
        return None
    if not missing:
        return None
    return (
        f"the database lacks {len(missing)} of pifarm's migrations (the first: {missing[0]}):"
        " run `manage.py migrate` first"
    )
