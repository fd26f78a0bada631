"""The team set-up: PostgreSQL and a shared Redis, web and worker as separate processes.

Runs when a PostgreSQL and a Redis answer on localhost (PIFARM_TEST_POSTGRES_URL,
PIFARM_TEST_REDIS_URL); the embedded defaults are covered by the rest of the suite.
"""

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlparse

import psycopg
import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get(
    "PIFARM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("PIFARM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=1).close()
        return True
    except OSError:
        return False


pytestmark = [
    pytest.mark.pisim,
    pytest.mark.skipif(
        not (answers(POSTGRES_URL) and answers(REDIS_URL)),
        reason="no PostgreSQL and Redis on localhost to run the team set-up against",
    ),
]


@pytest.fixture
def team_database():
    name = f"pifarm_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield urlparse(POSTGRES_URL)._replace(path=f"/{name}").geturl()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def manage(env, *args, stdin=None):
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_worker_process_checks_a_board_through_postgres_and_redis(
    team_database, pisim_farm, tmp_path
):
    node = pisim_farm.nodes["pi4"]
    redis.Redis.from_url(REDIS_URL).flushdb()
    env = {
        **os.environ,
        "PIFARM_DATA_DIR": str(tmp_path),
        "DATABASE_URL": team_database,
        "REDIS_URL": REDIS_URL,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    manage(env, "migrate", "-v0")
    key = tmp_path / "key"
    key.write_text(node.private_key_pem)
    manage(
        env, "register_board", "team-pi", node.host, "--user", node.user,
        "--key-file", str(key), "--fingerprint", node.host_key_fingerprint, "--no-probe",
    )  # fmt: skip
    manage(env, "healthcheck")
    manage(env, "rqworker", "default", "--burst")
    status = manage(
        env, "shell", "-c",
        "from devices.models import Board; print(Board.objects.get(name='team-pi').status)",
    )  # fmt: skip
    assert status.strip().splitlines()[-1] == "online"
    assert not (tmp_path / "redis.sock").exists(), "the embedded Redis ran despite REDIS_URL"
    redis.Redis.from_url(REDIS_URL).flushdb()
