"""Every kind of page fits a phone (375 px wide, dark mode): nothing scrolls sideways, also
with the longest values pifarm shows (a rolled-back application's checksums, a retired board)."""

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from benchmarks.models import Campaign, Run
from devices.models import Application, Board
from tests.benchmarks.factories import make_campaign, unusable_custom_benchmark
from tests.browser.conftest import screenshot
from tests.browser.test_content_security_policy import lab_with_one_of_everything, pifarm_pages
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 375, "height": 812}
SCROLLING_TABLES = """Array.from(document.querySelectorAll(".table-wrap"))
  .filter((box) => box.scrollWidth > box.clientWidth).map((box) => box.scrollWidth)"""
SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def rolled_back(board, version) -> Application:
    return Application.objects.create(
        board=board,
        version=version,
        state=Application.State.ROLLED_BACK,
        reason="arm_freq read back as 1500, not 1800: the old config.txt was restored.",
        verification={
            "arm_freq": {"wanted": "1800", "got": "1500", "ok": False},
            "after restore: config.txt sha256": {"wanted": SHA256, "got": SHA256, "ok": True},
        },
        backup_path="/boot/firmware/config.txt.pifarm-20261201-064510-3f9a1c.bak",
        finished=timezone.now(),
    )


def test_every_page_fits_a_phone_in_dark_mode(page, live_server, user, redis_queue):
    board, preset, application = lab_with_one_of_everything()
    long_one = rolled_back(make_board("bench-with-a-rather-long-name-01"), preset.latest)
    retired = make_board("retired-pi")
    Board.objects.filter(pk=retired.pk).update(retired=timezone.now())
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, user)
    page.set_viewport_size(PHONE)
    pages = [*pifarm_pages(board, preset, application), long_one.get_absolute_url()]
    for path in [*pages, retired.get_absolute_url()]:
        page.goto(live_server.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{path} scrolls sideways on a phone ({width} px)"
    screenshot(page, "application-rolled-back-phone-dark")


def fits_a_phone(page) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} scrolls sideways on a phone ({width} px)"
    # nor does a table in its own box, which would hide the cells beside a long value
    tables = page.evaluate(SCROLLING_TABLES)
    assert tables == [], f"{page.url}: a table scrolls sideways on a phone ({tables} px)"


def test_a_campaign_s_longest_name_wraps_on_a_phone(page, live_server, user):
    """A name of one unbroken word, as long as a campaign's may be."""
    longest = "sha1sum-" + "x" * (Campaign._meta.get_field("name").max_length - 8)
    campaign = make_campaign(make_board("bench-a"), name=longest, states=["done", "queued"])
    log_in(page, live_server, user)
    page.set_viewport_size(PHONE)
    pages = {"campaigns": reverse("benchmarks:campaigns"), "campaign": campaign.get_absolute_url()}
    for name, path in pages.items():
        page.goto(live_server.url + path)
        expect(page.get_by_text(longest).first).to_be_visible()
        fits_a_phone(page)
        screenshot(page, f"{name}-long-name-phone")
    page.get_by_role("button", name="Cancel the campaign").click()
    expect(page.locator(".message")).to_contain_text(longest)  # a message names it too
    fits_a_phone(page)


def test_a_campaign_with_runs_in_every_state_fits_a_phone(page, live_server, user):
    """Its runs cell lists six counts: they wrap within the card, and the cells beside them
    stay on screen; so do the counts on the campaign's own page."""
    every_state = [state for state, _ in Run.State.choices]
    campaign = make_campaign(make_board("bench-a"), states=every_state)
    log_in(page, live_server, user)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + reverse("benchmarks:campaigns"))
    for state in every_state:
        expect(page.locator(f".count.state-{state}")).to_be_visible()
    fits_a_phone(page)
    row = page.locator("tbody tr", has_text=campaign.name)
    for label in ["State", "Runs", "Created"]:
        cell = row.locator(f'td[data-label="{label}"]').bounding_box()
        assert cell["x"] >= 0 and cell["x"] + cell["width"] <= PHONE["width"], label
    screenshot(page, "campaigns-every-run-state-phone")
    page.goto(live_server.url + campaign.get_absolute_url())  # its counts above the runs
    expect(page.locator(".campaign-counts .count")).to_have_count(len(every_state))
    fits_a_phone(page)
    screenshot(page, "campaign-every-run-state-phone")


def test_the_builder_previews_with_a_custom_benchmark_it_cannot_use(
    page, live_server, user, problems
):
    """One custom benchmark saved with a default longer than a parameter holds: the browser
    posted that prefilled value, so every preview was refused. Now it is listed apart, with
    the reason, and the rest of the builder works."""
    unusable_custom_benchmark("longdef")
    board = make_board("bench-a")
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, user)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + reverse("benchmarks:campaign_new"))
    expect(page.locator("#unavailable-longdef")).to_contain_text(
        "p: the default is 300 characters long"
    )
    fits_a_phone(page)
    page.fill("#id_name", "sha1 beside a broken definition")
    page.get_by_label(board.name, exact=True).check()
    page.get_by_label("sha1sum of a sparse file").check()
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview .trials")).to_contain_text("trials")
    fits_a_phone(page)
    screenshot(page, "builder-unusable-custom-phone-dark")
    assert problems == [], "\n".join(problems)
