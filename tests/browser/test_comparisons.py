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


# A run's telemetry as the engine stores it (Sample.to_dict()): the board warms up, is capped
# for a second (throttled bits), and iperf3 and sshd use its CPU; the controller as the peer.
BOARD_SAMPLES = [
    {"t": float(t), "arm_mhz": 1500 if t else 600, "temp_c": 45.0 + t,
     "throttled": 0x20002 if t == 3 else 0x20000 if t > 3 else 0, "cpus": 4,
     **({"cpu_busy_pct": 30.0 + t, "procs": {"iperf3": 60.0 + t, "sshd": 3.0}} if t else {})}
    for t in range(7)
]  # fmt: skip
PEER_SAMPLES = [
    {"t": float(t) + 0.1, "temp_c": 40.0, "cpus": 2,
     **({"cpu_busy_pct": 20.0, "procs": {"iperf3": 35.0}} if t else {})}
    for t in range(7)
]  # fmt: skip


@pytest.fixture
def network():
    """iperf3 on a 100 Mbit/s link, as the board is and overclocked, each run with its clock
    and telemetry on both ends."""
    campaign = Campaign.objects.create(name="overclock on a 100 Mbit/s Pi", spec={})
    lane = lane_on(campaign, "bench-net")
    fields = {
        "benchmark": "iperf3-tcp",
        "unit": "Mbit/s",
        "peer": "controller",
        "environment": {"link": {"device": "eth0", "mbit": 100, "mtu": 1500}},
        "telemetry": BOARD_SAMPLES,
        "peer_telemetry": PEER_SAMPLES,
    }
    trials(lane, [88.0, 89.5, 90.1], clock_mhz=1500.0, **fields)
    trials(lane, [92.0, 93.1, 93.4], clock_mhz=1800.0, preset_version=overclock(), **fields)
    return campaign


def test_a_network_comparison_draws_its_references_the_clock_and_a_runs_telemetry(
    page, live_server, viewer, network, problems
):
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    query = f"?campaigns={network.code}&metric=iperf3-tcp:throughput&group_by=preset"
    page.goto(live_server.url + reverse("benchmarks:comparison_new") + query)
    drawn(page, 3)  # the means, the changes, the result against the clock
    means = page.locator(".chart-plot[data-figure='means-chart']")
    expect(means).to_contain_text("line rate 100 Mbit/s")
    expect(means).to_contain_text("TCP goodput ceiling 94.1 Mbit/s")
    expect(page.locator(".chart-plot[data-figure='clock-chart']")).to_contain_text("fast v2 (n=3)")
    page.select_option("#telemetry-run", index=1)
    expect(page.locator("#telemetry-note")).to_contain_text("iperf3-tcp run")
    drawn(page, 7)
    throttled = page.locator("#telemetry-throttled")
    expect(throttled).to_contain_text("capped now")  # "Arm frequency<br>capped now"
    expect(page.locator("#telemetry-cpu")).to_contain_text("iperf3 (peer)")
    fits_a_phone(page)
    screenshot(page, "comparison-network-phone-dark")
    for name in ("means-chart", "clock-chart"):
        page.locator(f".chart-plot[data-figure='{name}']").screenshot(
            path=ARTIFACTS / f"comparison-network-{name}.png"
        )
    for name in ("telemetry-clock", "telemetry-temp", "telemetry-throttled", "telemetry-cpu"):
        page.locator(f"#{name}").screenshot(path=ARTIFACTS / f"comparison-network-{name}.png")
    assert not problems, "\n".join(problems)
