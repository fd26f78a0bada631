"""The answer page's lines on limits, in the browser on a phone: what limited each group, the
"cannot tell" of two sides at the link's ceiling, and a benchmark left out for its suspects."""

import pytest
from playwright.sync_api import expect

from tests.benchmarks.answer_data import network_campaign
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
