"""The API tokens page on a phone in dark mode: a token made, shown once, used, revoked."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_token_is_made_shown_once_and_revoked_on_a_phone(page, live_server, viewer, problems):
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    page.get_by_role("link", name="API tokens").click()
    page.fill("#id_name", "a script with a long name that wraps on a phone screen")
    page.get_by_role("button", name="Make the token").click()
    token = page.locator("#new-token").inner_text().strip()
    assert len(token) >= 43
    fits_a_phone(page)
    screenshot(page, "api-token-made-phone-dark")
    response = page.request.get(
        live_server.url + reverse("api:board-list"), headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status == 200
    page.goto(live_server.url + reverse("benchmarks:tokens"))
    assert token not in page.content()
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status").first).to_contain_text("Revoked a script with")
    fits_a_phone(page)
    response = page.request.get(
        live_server.url + reverse("api:board-list"), headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status == 401
    assert not problems, problems
