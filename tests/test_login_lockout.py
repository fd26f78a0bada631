"""Wrong passwords lock a user name out from one address (django-axes), with a message that
says for how long and who can lift it; an admin unlocks, and so does the cool-off."""

import ipaddress
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user
from django.db.models import F
from django.urls import reverse

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOCKED_OUT = "Too many failed logins"


@pytest.fixture
def login_throttling(settings, redis_queue):  # redis_queue: an empty Redis, for the counts
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def log_in(client, username, password, address="127.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def logged_in_as(client):
    user = get_user(client)
    return user.is_authenticated and user.get_username()


def lock_out(client, username="alice"):
    return [log_in(client, username, f"guess-{n}").status_code for n in range(25)]


def test_wrong_passwords_lock_the_user_out_even_with_the_right_password(
    client, user, login_throttling
):
    statuses = lock_out(client)
    assert statuses[:4] == [200] * 4, "the first failures show the form's own error"
    assert set(statuses[5:]) == {429}, "every attempt after the limit is refused"

    refused = log_in(client, "alice", PASSWORD)
    assert refused.status_code == 429
    body = refused.content.decode()
    assert LOCKED_OUT in body
    assert "for 15 minutes" in body
    assert "administrator" in body
    assert 'name="password"' in body, "the page is still the login form"
    assert not logged_in_as(client)


def test_the_attempts_kept_never_hold_the_password(client, user, login_throttling):
    lock_out(client)
    attempt = AccessAttempt.objects.get(username="alice")
    assert "guess-" not in attempt.post_data
    assert attempt.failures_since_start >= 5


def test_another_user_or_another_address_is_not_locked(
    client, user, django_user_model, login_throttling
):
    django_user_model.objects.create_user("bob", password=PASSWORD)
    lock_out(client)

    assert log_in(client, "bob", PASSWORD).status_code == 302
    assert logged_in_as(client) == "bob"
    client.logout()
    assert log_in(client, "alice", PASSWORD, address="127.0.0.2").status_code == 302
    assert logged_in_as(client) == "alice"


def test_the_lock_lifts_after_the_cool_off(client, user, login_throttling):
    lock_out(client)
    assert log_in(client, "alice", PASSWORD).status_code == 429

    # As if the last attempt had been 16 minutes ago.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=16))
    assert log_in(client, "alice", PASSWORD).status_code == 302
    assert logged_in_as(client) == "alice"


def test_an_admin_unlocks_a_user_in_the_admin(client, user, staff, login_throttling):
    lock_out(client)
    attempt = AccessAttempt.objects.get(username="alice")

    admin = client.__class__()
    admin.force_login(staff)
    changelist = reverse("admin:axes_accessattempt_changelist")
    page = admin.get(changelist)
    assert page.status_code == 200 and "alice" in page.content.decode()
    confirmed = admin.post(
        changelist, {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"}
    )
    assert confirmed.status_code == 302
    assert not AccessAttempt.objects.exists()

    assert log_in(client, "alice", PASSWORD).status_code == 302
    assert logged_in_as(client) == "alice"


def test_the_test_clients_own_logins_still_work(client, user):
    assert client.login(username="alice", password=PASSWORD)
    assert logged_in_as(client) == "alice"
    client.logout()
    client.force_login(user)
    assert logged_in_as(client) == "alice"


def through_proxy(client, username, password, forwarded, proxy="10.213.0.2"):
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR=forwarded,
    )


@pytest.fixture
def behind_a_proxy(settings, login_throttling):
    settings.PIFARM_TRUSTED_PROXIES = [ipaddress.ip_network("10.213.0.0/24")]


def test_behind_a_trusted_proxy_a_lock_holds_for_the_client_that_earned_it(
    client, user, behind_a_proxy
):
    for n in range(6):
        through_proxy(client, "alice", f"guess-{n}", "203.0.113.5")
    assert through_proxy(client, "alice", PASSWORD, "203.0.113.5").status_code == 429
    # alice at another desk, behind the same proxy: the lock is not hers there
    assert through_proxy(client, "alice", PASSWORD, "198.51.100.7").status_code == 302
    assert logged_in_as(client) == "alice"


def test_the_forwarded_address_is_the_last_one_no_trusted_proxy_wrote(client, user, behind_a_proxy):
    # The client wrote "198.51.100.7" itself; a second trusted proxy added 10.213.0.3.
    for n in range(6):
        through_proxy(client, "alice", f"guess-{n}", "198.51.100.7, 203.0.113.5, 10.213.0.3")
    assert AccessAttempt.objects.get().ip_address == "203.0.113.5"


def test_without_a_trusted_proxy_the_forwarded_header_is_ignored(client, user, login_throttling):
    for n in range(6):
        through_proxy(client, "alice", f"guess-{n}", f"203.0.113.{n}")  # a forger's header
    assert through_proxy(client, "alice", PASSWORD, "198.51.100.7").status_code == 429
    assert AccessAttempt.objects.get().ip_address == "10.213.0.2"


def test_an_address_that_failed_under_many_names_is_refused_before_any_password_is_checked(
    client, user, login_throttling, settings
):
    settings.PIFARM_LOGIN_ADDRESS_LIMIT = 12
    statuses = [log_in(client, f"guesser-{n}", "wrong").status_code for n in range(12)]
    assert statuses == [200] * 12  # each a name of its own: no per-user lock
    checked = AccessAttempt.objects.count()

    refused = log_in(client, "alice", PASSWORD)  # even the right password
    assert refused.status_code == 429
    words = " ".join(refused.content.decode().split())
    assert "Too many failed logins from your address (12, under any user names)" in words
    assert not logged_in_as(client)
    assert AccessAttempt.objects.count() == checked  # no password was checked for it
    admin_login = client.post(  # the admin's login form too (a review found it open)
        reverse("admin:login"), {"username": "alice", "password": PASSWORD}, REMOTE_ADDR="127.0.0.1"
    )
    assert admin_login.status_code == 429 and not logged_in_as(client)
    assert AccessAttempt.objects.count() == checked
    other_desk = log_in(client, "alice", PASSWORD, address="198.51.100.7")
    assert other_desk.status_code == 302 and logged_in_as(client) == "alice"
