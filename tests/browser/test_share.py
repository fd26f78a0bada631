"""A saved comparison shared: the link opened in a logged-out browser draws the charts under
the CSP, "Copy as Markdown" puts the results table and the link on the clipboard, the page
reads at 375 px in dark mode; revoked, the same link answers 410 saying so."""

import pytest
from playwright.sync_api import expect

from benchmarks.models import ShareLink
from tests.benchmarks.factories import saved_comparison
from tests.browser.conftest import ARTIFACTS, REPORT_VIOLATIONS, screenshot
from tests.browser.test_comparisons import campaign, drawn  # noqa: F401 - the fixture
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def comparison(viewer, campaign):  # noqa: F811 - the fixture imported above
    return saved_comparison(viewer, campaign)


def visitor(browser, **options):
    """A page in a browser context of its own: no login, its own cookies."""
    context = browser.new_context(**options)
    page = context.new_page()
    page.set_default_timeout(20_000)
    found = []
    page.add_init_script(REPORT_VIOLATIONS)
    page.on("console", lambda m: m.type == "error" and found.append(f"{page.url}: {m.text}"))
    page.on("pageerror", lambda error: found.append(f"{page.url}: {error}"))
    return page, found


def test_a_comparison_is_shared_copied_and_revoked(
    browser, page, live_server, viewer, comparison, problems
):
    log_in(page, live_server, viewer)
    page.goto(live_server.url + comparison.get_absolute_url())
    drawn(page, 2)
    assert "Share it first to get a link." in page.locator("#comparison-markdown").input_value()
    page.select_option("#id_expires_in", label="after 7 days")
    page.get_by_role("button", name="Make a share link").click()
    expect(page.get_by_text("Shared: copy the link below.")).to_be_visible()
    url = page.locator("input.share-url").first.input_value()
    page.locator("#shares").screenshot(path=ARTIFACTS / "comparison-shares.png")
    link = ShareLink.objects.get()
    assert url == live_server.url + link.get_absolute_url()
    assert url in page.locator("#comparison-markdown").input_value()

    origin = {"permissions": ["clipboard-read", "clipboard-write"]}
    shared, found = visitor(browser, viewport={"width": 1280, "height": 900}, **origin)
    response = shared.goto(url)
    assert response.status == 200
    assert response.headers["x-robots-tag"] == "noindex, nofollow"
    drawn(shared, 2)
    expect(shared.get_by_role("cell", name="better: 20 % higher", exact=False)).to_be_visible()
    expect(shared.locator(".board-spread").first).to_contain_text("board 2")
    assert "bench-a" not in shared.content() and "Log out" not in shared.content()
    shared.get_by_role("button", name="Copy as Markdown").click()
    expect(shared.locator(".copy-status")).to_have_text("Copied.")
    copied = shared.evaluate("navigator.clipboard.readText()")
    assert "| Group | n | Mean ± 95 % CI |" in copied
    assert "| as the board is (baseline) | 6 |" in copied
    assert "| overclock-with-a-long-name v3 | 6 |" in copied
    assert copied.rstrip().endswith(f"Shared comparison: {url}")

    phone, phone_found = visitor(browser, viewport=PHONE, color_scheme="dark")
    phone.goto(url)
    drawn(phone, 2)
    fits_a_phone(phone)
    screenshot(phone, "share-phone-dark")
    phone.screenshot(path=ARTIFACTS / "share-phone-dark-top.png")  # the first screen
    phone.locator(".markdown-copy").screenshot(path=ARTIFACTS / "share-phone-dark-markdown.png")
    assert not problems + found + phone_found, "\n".join(problems + found + phone_found)

    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Revoked: the link answers")).to_be_visible()
    expect(page.get_by_role("cell", name="revoked", exact=False)).to_be_visible()
    response = shared.goto(url)
    assert response.status == 410
    expect(shared.get_by_text("This link was revoked on", exact=False)).to_be_visible()
    # the browser logs the 410 itself as an error; nothing else may be
    gone = "the server responded with a status of 410"
    assert [text for text in problems + found if gone not in text] == []
