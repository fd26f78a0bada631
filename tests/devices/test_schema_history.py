"""The squashed schema history: the two migrations make the schema the models describe, with the
role groups; a database part-way through the old history is refused by name before migrate
touches it (devices/checks.py)."""

import sqlite3

import pytest
from django.core.management import call_command
from django.db.migrations.recorder import MigrationRecorder

from devices.checks import no_migration_history_stopped_inside_a_squash
from pifarm import embedded_redis
from tests.processes import manage

DEVICES_SQUASH = "0001_squashed_0012_board_work"


@pytest.mark.django_db
def test_the_migrations_make_the_schema_the_models_describe():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db
def test_a_database_that_applied_the_whole_old_history_passes():
    # Applying a squash records every migration it replaces too: the test database is
    # a database that had run all of them.
    assert MigrationRecorder.Migration.objects.filter(app="devices", name="0012_board_work")
    assert no_migration_history_stopped_inside_a_squash(None, databases=["default"]) == []


@pytest.mark.django_db
def test_a_database_that_stopped_part_way_is_refused_with_where_it_stopped():
    later = ("0010_roles_campaigns", "0011_task_prepare", "0012_board_work")
    MigrationRecorder.Migration.objects.filter(app="devices", name__in=later).delete()

    errors = no_migration_history_stopped_inside_a_squash(None, databases=["default"])

    assert [error.id for error in errors] == ["pifarm.E001"]
    assert "9 of the 12 migrations" in errors[0].msg
    assert "0009_job_ids" in errors[0].msg
    assert "docs/operations.md" in errors[0].hint


def _history_and_schema(database) -> tuple[list, list]:
    with sqlite3.connect(database) as db:
        history = db.execute("SELECT app, name FROM django_migrations ORDER BY id").fetchall()
        schema = db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    return history, schema


@pytest.mark.slow
def test_migrate_on_a_part_way_database_stops_before_touching_it(tmp_path):
    try:
        assert manage(tmp_path, "migrate", "-v0").returncode == 0
        database = tmp_path / "pifarm.sqlite3"
        with sqlite3.connect(database) as db:
            db.execute(
                "DELETE FROM django_migrations WHERE app = 'devices' AND name LIKE '001%'"
                " AND name != ?",
                (DEVICES_SQUASH,),
            )
        before = _history_and_schema(database)

        done = manage(tmp_path, "migrate")

        assert done.returncode != 0
        assert "pifarm.E001" in done.stderr
        assert "Traceback" not in done.stderr
        assert _history_and_schema(database) == before
    finally:
        embedded_redis.stop(tmp_path)
