"""A login lasts a lab's working day, and its cookies travel only over HTTPS on a team server."""

import pytest
from django.urls import reverse

from tests.conftest import PASSWORD
from tests.processes import manage

pytestmark = pytest.mark.django_db

TWELVE_HOURS = 12 * 3600


def test_a_login_lasts_twelve_hours(client, user):
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert response.cookies["sessionid"]["max-age"] == TWELVE_HOURS
    assert client.session.get_expiry_age() == TWELVE_HOURS


def cookie_settings(tmp_path, **env):
    # diffsettings, not shell: a command that never uses the queue starts no embedded Redis.
    done = manage(tmp_path, "diffsettings", "--all", **env)
    assert done.returncode == 0, done.stderr
    lines = (line.removeprefix("### ") for line in done.stdout.splitlines())  # ###: a default
    values = dict(line.split(" = ", 1) for line in lines if " = " in line)
    return [
        values[name]
        for name in ("SESSION_COOKIE_AGE", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")
    ]


@pytest.mark.slow
def test_the_session_lifetime_and_secure_cookies_come_from_the_environment(tmp_path):
    assert cookie_settings(tmp_path) == [str(TWELVE_HOURS), "False", "False"]
    assert cookie_settings(tmp_path, PIFARM_SESSION_HOURS="8", PIFARM_HTTPS="1") == [
        str(8 * 3600),
        "True",
        "True",
    ]


@pytest.mark.slow
def test_a_session_lifetime_that_is_not_a_number_stops_start_up(tmp_path):
    done = manage(tmp_path, "check", PIFARM_SESSION_HOURS="a day")
    assert done.returncode != 0
    assert "PIFARM_SESSION_HOURS" in done.stderr
