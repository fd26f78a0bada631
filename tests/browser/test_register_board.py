"""A lab member registers a simulated Pi in a real browser and sees what it is."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.pisim, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, live_server, user):
    page.goto(live_server.url + reverse("devices:dashboard"))
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.get_by_role("heading", name="Boards")).to_be_visible()


@pytest.mark.worker
def test_register_confirm_and_see_facts(page, live_server, user, pisim_farm, worker_process):
    node = pisim_farm.nodes["pi3"]
    log_in(page, live_server, user)
    page.get_by_role("link", name="Add a board").first.click()
    page.fill("#id_name", "bench-pi3")
    page.fill("#id_host", node.host)
    page.fill("#id_port", str(node.port))
    page.fill("#id_username", node.user)
    page.fill("#id_private_key", node.private_key_pem)
    screenshot(page, "register-form")
    page.get_by_role("button", name="Fetch host key").click()

    # The fetch runs in the worker; the page follows it and then shows the fingerprint.
    fingerprint = page.locator("#fingerprint")
    expect(fingerprint).to_have_text(node.host_key_fingerprint)
    screenshot(page, "confirm-fingerprint")
    page.get_by_role("button", name="The fingerprint matches: pin it and probe").click()

    expect(page.get_by_role("heading", name="What the board is")).to_be_visible()
    expect(page.locator("#facts")).to_contain_text("Raspberry Pi 3 Model B Rev 1.2")
    expect(page.locator("#facts")).to_contain_text("/boot/config.txt")
    expect(page.locator(".task-state")).to_contain_text("done")
    screenshot(page, "board-facts")

    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(live_server.url + reverse("devices:dashboard"))
    expect(page.get_by_role("link", name="bench-pi3")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the dashboard scrolls sideways on a phone ({width}px)"
    screenshot(page, "dashboard-phone")
