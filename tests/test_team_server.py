"""The team set-up: PostgreSQL and a shared Redis, web and worker as separate processes.

Runs when a PostgreSQL and a Redis answer on localhost (PIFARM_TEST_POSTGRES_URL,
PIFARM_TEST_REDIS_URL); the embedded defaults are covered by the rest of the suite.
"""

import os

import pytest
import redis

from tests.postgres import POSTGRES_URL, answers, manage
from tests.processes import inherited_environment

REDIS_URL = os.environ.get("PIFARM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

pytestmark = [
    pytest.mark.pisim,
    pytest.mark.skipif(
        not (answers(POSTGRES_URL) and answers(REDIS_URL)),
        reason="no PostgreSQL and Redis on localhost to run the team set-up against",
    ),
]


@pytest.mark.slow
def test_a_worker_process_checks_a_board_through_postgres_and_redis(
    team_database, pisim_farm, tmp_path
):
    node = pisim_farm.nodes["pi4"]
    redis.Redis.from_url(REDIS_URL).flushdb()
    env = {
        **inherited_environment(),
        "PIFARM_DATA_DIR": str(tmp_path),
        "DATABASE_URL": team_database,
        "REDIS_URL": REDIS_URL,
    }
    manage(env, "migrate", "-v0")
    key = tmp_path / "key"
    key.write_text(node.private_key_pem)
    manage(
        env,
        "register_board",
        "team-pi",
        node.host,
        "--user",
        node.user,
        "--key-file",
        str(key),
        "--fingerprint",
        node.host_key_fingerprint,
        "--no-probe",
    )
    manage(env, "healthcheck")
    manage(env, "rqworker", "default", "--burst")
    status = manage(
        env,
        "shell",
        "-c",
        "from devices.models import Board; print(Board.objects.get(name='team-pi').status)",
    )
    assert status.strip().splitlines()[-1] == "online"
    assert not (tmp_path / "redis.sock").exists(), "the embedded Redis ran despite REDIS_URL"
    redis.Redis.from_url(REDIS_URL).flushdb()
