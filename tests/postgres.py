"""A PostgreSQL of the machine's own, for the tests of what differs on a team's server.

Used when one answers on localhost (PIFARM_TEST_POSTGRES_URL); the embedded defaults (SQLite)
are covered by the rest of the suite. Each test gets a database of its own, dropped after.
"""

import os
import socket
import uuid
from pathlib import Path
from urllib.parse import urlparse

import psycopg
import pytest

from tests.processes import run_manage

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get(
    "PIFARM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)


def answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def team_database():
    """The URL of a new, empty database on the local PostgreSQL."""
    name = f"pifarm_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield urlparse(POSTGRES_URL)._replace(path=f"/{name}").geturl()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def manage(env: dict, *args, stdin=None) -> str:
    """manage.py run in a process of its own with env (a DATABASE_URL, say); its output."""
    done = run_manage(env, *args, stdin=stdin)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
