"""A comparison built in the browser: campaigns chosen, charts drawn by plotly.js from pifarm's
own static files under the CSP, saved; at 375 px with nothing scrolling sideways, in dark mode."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmarks.models import Campaign
from tests.benchmarks.factories import lane_on, overclock, trials
from tests.browser.conftest import ARTIFACTS, screenshot
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def campaign():
    """Two boards of one model, as the board is and overclocked, one suspect trial."""
    campaign = Campaign.objects.create(name="overclock on two Pi 4s", spec={})
    fast = overclock("overclock-with-a-long-name", 3)
    for name, offset in (("bench-a", 0.0), ("bench-b", 4.0)):
        lane = lane_on(campaign, name)
        trials(lane, [100.0 + offset, 102.0 + offset, 98.0 + offset])
        trials(lane, [120.0 + offset, 123.0 + offset, 117.0 + offset], preset_version=fast)
        trials(lane, [60.0], suspect=True)
    return campaign


def drawn(page, count: int) -> None:
    charts = page.locator(".chart-plot.js-plotly-plot")
    expect(charts).to_have_count(count)
    for index in range(count):
        expect(charts.nth(index).locator(".main-svg").first).to_be_visible()


def test_a_comparison_is_built_drawn_and_saved(page, live_server, viewer, campaign, problems):
    log_in(page, live_server, viewer)
    page.get_by_role("link", name="Comparisons").click()
    page.get_by_role("link", name="New comparison").click()
    page.select_option("#id_campaigns", label=campaign.name)
    page.get_by_role("button", name="Next: choose the metric").click()
    page.get_by_role("button", name="Compare").click()
    drawn(page, 2)
    expect(page.locator(".chart-plot").first).to_contain_text("throughput by preset version")
    expect(page.get_by_role("cell", name="better: 20 % higher", exact=False)).to_be_visible()
    expect(page.locator(".board-spread").first).to_contain_text("bench-b")
    screenshot(page, "comparison-built")
    page.fill("#id_name", "overclock against stock")
    page.get_by_role("button", name="Save this comparison").click()
    expect(page.get_by_role("heading", name="overclock against stock")).to_be_visible()
    drawn(page, 2)
    assert not problems, "\n".join(problems)


def test_a_comparison_reads_on_a_phone_in_dark_mode(page, live_server, viewer, campaign, problems):
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    query = f"?campaigns={campaign.code}&group_by=board&include_suspects=on"
    page.goto(live_server.url + reverse("benchmarks:comparison_new") + query)
    drawn(page, 2)
    screenshot(page, "comparison-phone-dark")
    for index, part in enumerate(page.locator(".chart, .comparison-result .table-wrap").all()):
        part.screenshot(path=ARTIFACTS / f"comparison-phone-dark-part{index + 1}.png")
    fits_a_phone(page)
    # the axis labels take the page's light text, not plotly's default dark grey
    colour = page.locator(".chart-plot .xtick text").first.evaluate(
        "(text) => getComputedStyle(text).fill"
    )
    assert colour == "rgb(230, 230, 227)", colour
    assert not problems, "\n".join(problems)
