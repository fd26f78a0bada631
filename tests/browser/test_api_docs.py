"""The API's docs page (Swagger UI) works offline under the Content-Security-Policy: every
file it loads comes from pifarm, the browser reports no violation, and "Try it out" reads the
API with the browser's session."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.benchmarks.factories import make_campaign
from tests.browser.conftest import screenshot
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_docs_page_runs_under_the_policy_from_pifarm_alone(page, live_server, viewer, problems):
    make_board("docs-pi")
    elsewhere = []
    page.on(
        "request",
        lambda request: request.url.startswith(live_server.url) or elsewhere.append(request.url),
    )
    log_in(page, live_server, viewer)
    response = page.goto(live_server.url + reverse("api:docs"))
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.get_by_role("heading", name="pifarm API")).to_be_visible()
    page.get_by_role("button", name="GET /api/v1/boards/", exact=False).first.click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_role("button", name="Execute").click()
    # The server's answer, not the documented example under it (which a slow answer left as
    # the first match until the wait ran out).
    live = page.locator(".live-responses-table .response-col_description .microlight").first
    expect(live).to_contain_text("docs-pi", timeout=20_000)
    screenshot(page, "api-docs")
    assert not elsewhere, elsewhere
    assert not problems, problems


def test_a_post_from_the_docs_page_carries_the_sessions_csrf_token(page, live_server, viewer):
    """A viewer's cancel is refused for the role it needs, not for a missing CSRF token."""
    campaign = make_campaign(make_board("docs-pi"))
    log_in(page, live_server, viewer)
    page.goto(live_server.url + reverse("api:docs"))
    page.get_by_role("button", name="POST /api/v1/campaigns/{code}/cancel/", exact=True).click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_placeholder("code").fill(str(campaign.code))
    page.get_by_role("button", name="Execute").click()
    answer = page.locator(".live-responses-table .response-col_description .microlight").first
    expect(answer).to_contain_text("This needs the operator role; yours is viewer", timeout=20_000)
