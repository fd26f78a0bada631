"""A person who mistypes their password too often sees, on the login page, for how long they
are locked out and who can unlock them."""

from datetime import timedelta

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_login_page_says_how_long_the_lockout_lasts(
    page, live_server, user, settings, problems
):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    page.goto(live_server.url + reverse("login"))
    for attempt in range(5):
        page.fill("#id_username", user.username)
        page.fill("#id_password", f"wrong-{attempt}")
        page.click("button[type=submit]")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")

    message = page.locator("#locked-out")
    expect(message).to_contain_text("Too many failed logins")
    expect(message).to_contain_text("for 15 minutes")
    expect(message).to_contain_text("administrator")
    expect(page.locator("#id_username")).to_have_value(user.username)
    screenshot(page, "login-locked-out")
    assert [p for p in problems if "Content Security Policy" in p] == []
