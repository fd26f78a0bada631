"""The answer page's lines on limits, in the browser on a phone: what limited each group, the
"cannot tell" of two sides at the link's ceiling, and a benchmark left out for its suspects."""

import pytest
from playwright.sync_api import expect

from tests.benchmarks.answer_data import network_campaign
from tests.benchmarks.factories import as_a_simulated_pi3
from tests.browser.conftest import screenshot
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_answer_says_what_limited_it_on_a_phone(page, live_server, viewer, problems):
    campaign = network_campaign()  # the upload: no difference, both sides at the ceiling
    campaign.runs.update(environment={"link": {"device": "eth0", "mbit": 100, "mtu": 1500}})
    campaign.runs.filter(benchmark="scp").update(
        suspect=True, suspect_reasons=["swap in use grew by 12 MB"]
    )
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + campaign.get_absolute_url())
    page.get_by_role("link", name="The answer").click()
    answer = page.locator("#answer")
    expect(answer).to_contain_text(
        "iperf3-tcp throughput (direction board-to-peer): cannot tell, both at the link's ceiling"
    )
    expect(answer).to_contain_text(
        "scp: all 6 trials suspect (swap in use grew by 12 MB); not compared"
    )
    expect(
        page.locator("td.verdict", has_text="cannot tell: both at the link's ceiling")
    ).to_be_visible()
    limits = page.locator(".limits").first
    expect(limits).to_contain_text("What limited it")
    expect(limits).to_contain_text(
        "as the board is: at the link's ceiling (94.0 of 94.1 Mbit/s): a faster CPU cannot "
        "show here"
    )
    fits_a_phone(page)
    assert not problems, "\n".join(problems)


def test_an_answer_says_what_ran_and_what_the_simulation_can_show_on_a_phone(
    page, live_server, viewer, problems
):
    campaign = network_campaign()
    lane = campaign.lanes.get()
    lane.snapshot = lane.runs.first().snapshot
    as_a_simulated_pi3(lane)  # a Pi 3: the classic overclock's 900 MHz is under 1200
    campaign.lanes.update(left="put back as before the campaign: Stock (firmware defaults) v1")
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + campaign.get_absolute_url() + "answer/")
    expect(page.locator(".answer-warnings")).to_contain_text(
        "arm_freq 900 is below this board's default of 1200 MHz: an underclock"
    )
    expect(page.locator(".simulated-note").first).to_contain_text("What it does not: real thermals")
    ran = page.locator(".what-ran")
    expect(ran).to_contain_text(
        "pi3, as the board is: arm_freq 1200, governor ondemand; config.txt cccccccc"
    )
    expect(ran).to_contain_text(
        "pi3 afterwards: put back as before the campaign: Stock (firmware defaults) v1"
    )
    expect(ran).to_contain_text("Order:")
    expect(page.locator(".resolution").first).to_contain_text(
        "to see a change of 2 % at this noise needs about 2 trials per group"
    )
    screenshot(page, "answer-what-ran-phone")
    fits_a_phone(page)
    assert not problems, "\n".join(problems)
