"""A bad value in the environment stops start-up with a message naming the variable."""

import secrets

import pytest
import redis
from cryptography.fernet import Fernet

from tests.processes import manage


def manage_check(tmp_path, **env):
    return manage(tmp_path, "check", **env)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DATABASE_URL", "mysql-ish://nope"),
        ("DATABASE_URL", "mysql://root@127.0.0.1/test"),
        ("REDIS_URL", "http://127.0.0.1:6379"),
        ("PIFARM_DEBUG", "perhaps"),
        ("PIFARM_SSH_CONNECT_TIMEOUT", "ten"),
        ("PIFARM_HEALTH_CHECK_INTERVAL", "1"),
        ("PIFARM_LOGIN_FAILURE_LIMIT", "0"),
        ("PIFARM_LOGIN_COOLOFF_MINUTES", "soon"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(tmp_path, variable, value):
    done = manage_check(tmp_path, **{variable: value})
    assert done.returncode != 0
    assert variable in done.stderr


@pytest.mark.slow
def test_defaults_start_with_sqlite_and_an_embedded_redis(tmp_path):
    done = manage(
        tmp_path, "shell", "-c", "import django_rq; print(django_rq.get_connection().ping())"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True"
    embedded = redis.Redis(unix_socket_path=str(tmp_path / "redis.sock"))
    try:
        assert embedded.ping()
    finally:
        embedded.shutdown(nosave=True)
    assert (tmp_path / "credential_key").stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_the_deployment_checklist_passes_with_production_settings(tmp_path):
    production = {
        "PIFARM_HTTPS": "1",
        "PIFARM_SECRET_KEY": secrets.token_urlsafe(50),
        "PIFARM_CREDENTIAL_KEY": Fernet.generate_key().decode(),
    }
    done = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **production)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_deployment_checklist_warns_about_a_generated_credential_key(tmp_path):
    done = manage(tmp_path, "check", "--deploy", PIFARM_HTTPS="1")
    assert "pifarm.W001" in done.stderr + done.stdout


@pytest.mark.slow
def test_the_deployment_checklist_warns_about_a_generated_secret_key(tmp_path):
    done = manage(
        tmp_path,
        "check",
        "--deploy",
        PIFARM_HTTPS="1",
        PIFARM_CREDENTIAL_KEY=Fernet.generate_key().decode(),
    )
    assert "pifarm.W002" in done.stderr + done.stdout
    assert "PIFARM_SECRET_KEY" in done.stderr + done.stdout


@pytest.mark.slow
def test_commands_that_need_no_queue_leave_no_redis_running(tmp_path):
    config = tmp_path / "config.txt"
    config.write_text("arm_freq=900\n")
    done = manage(tmp_path, "configtxt", "validate", str(config), "--board", "pi3")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "redis.sock").exists()
