"""A lab member builds a small campaign on two simulated Pis, previews its figures, starts
it, watches it progress, cancels one queued run and reads the results, on a desktop and on a
phone, with no console error or policy violation."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmarks.models import Campaign, Run
from tests.browser.conftest import screenshot
from tests.browser.test_register_board import log_in
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 375, "height": 812}
REPETITIONS = 3


def fits_a_phone(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} scrolls sideways on a phone ({width} px)"


def build(page, live_server, boards) -> None:
    page.goto(live_server.url + reverse("benchmarks:campaign_new"))
    page.fill("#id_name", "sha1 on two Pis")
    for board in boards:
        page.get_by_label(board.name).check()
    page.get_by_label("sha1sum of a sparse file").check()
    page.fill("#id_p-sha1sum-size", "16M")
    page.fill("#id_repetitions", str(REPETITIONS))
    # simulated boards share the host's CPUs: a generous idea of quiet, and a short wait
    page.fill("#id_quiet_load_below", "50")
    page.fill("#id_quiet_cpu_below_pct", "90")
    page.fill("#id_quiet_deadline_s", "5")


@pytest.mark.worker
def test_build_preview_start_follow_cancel_and_read_a_campaign(
    page, live_server, user, pisim_farm, worker_process, problems
):
    nodes = [pisim_farm.nodes["pi3"], pisim_farm.nodes["pi4"]]
    boards = [register_node(node, name=f"bench-{node.name}") for node in nodes]
    total = len(boards) * REPETITIONS
    log_in(page, live_server, user)
    page.get_by_role("link", name="Campaigns").first.click()
    page.get_by_role("link", name="New campaign").click()
    build(page, live_server, boards)
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview .trials")).to_have_text(f"{total} trials")
    expect(page.locator("#preview .estimate")).to_contain_text("about")
    assert Campaign.objects.count() == 0
    screenshot(page, "campaign-preview")
    page.set_viewport_size(PHONE)
    fits_a_phone(page)
    screenshot(page, "campaign-preview-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("button", name="Start the campaign").click()
    expect(page.get_by_role("heading", name="sha1 on two Pis")).to_be_visible()
    campaign = Campaign.objects.get()
    page.evaluate("window.stillThisPage = true")  # gone if the page were loaded again
    # The page follows the campaign by itself: the count and the rows change in place.
    expect(page.locator(".campaign-runs")).not_to_have_text(f"0 of {total}", timeout=120_000)
    expect(page.locator("table.runs .state-done").first).to_be_visible()
    assert page.evaluate("window.stillThisPage === true")
    screenshot(page, "campaign-running")

    last = campaign.runs.filter(state=Run.State.QUEUED).order_by("-sequence").first()
    assert last is not None, "every run started before one could be cancelled"
    page.locator(f"#run-{last.code}").get_by_role("button", name="Cancel").click()
    expect(page.locator(".message")).to_contain_text("Cancelled")

    expect(page.locator(".campaign-state")).to_have_text("finished", timeout=180_000)
    cancelled = page.locator(f"#run-{last.code}")
    expect(cancelled).to_contain_text("cancelled by alice before it started")
    done = page.locator("table.runs tbody tr", has=page.locator(".state-done"))
    expect(done).to_have_count(total - 1)
    expect(done.first).to_contain_text(re.compile(r"throughput [\d.,]+ MB/s"))
    screenshot(page, "campaign-finished")

    page.set_viewport_size(PHONE)
    page.emulate_media(color_scheme="dark")
    fits_a_phone(page)
    screenshot(page, "campaign-finished-phone-dark")
    page.goto(live_server.url + reverse("benchmarks:catalog"))
    fits_a_phone(page)
    screenshot(page, "benchmark-catalog-phone")
    page.goto(live_server.url + reverse("benchmarks:campaigns"))
    fits_a_phone(page)
    screenshot(page, "campaigns-phone")
    assert problems == [], "\n".join(problems)
