"""The classic questions in the browser: one fills the campaign builder; a finished campaign's
answer page says the answer in a sentence and draws each metric's charts, on a phone too; the
32/64-bit view at 375 px in dark mode."""

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from benchmarks import questions
from benchmarks.models import Campaign
from tests.benchmarks.answer_data import network_campaign
from tests.benchmarks.factories import lane_on, trials
from tests.browser.conftest import ARTIFACTS, screenshot
from tests.browser.test_comparisons import drawn
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_network_question_fills_the_builder(page, live_server, operator, problems):
    make_board("bench-pi3")
    log_in(page, live_server, operator)
    page.goto(live_server.url + reverse("benchmarks:campaign_new"))
    page.get_by_role("link", name=questions.NETWORK.sentence).click()
    expect(page.get_by_role("heading", name=questions.NETWORK.sentence)).to_be_visible()
    expect(page.locator("#id_name")).to_have_value(questions.NETWORK.sentence)
    expect(page.locator("input[name=use-iperf3-tcp]")).to_be_checked()
    expect(page.locator("input[name=use-scp]")).to_be_checked()
    expect(page.locator("#id_vary-iperf3-tcp-direction")).to_have_value("peer-to-board")
    expect(page.locator("#id_p-iperf3-tcp-duration")).to_have_value("5")
    expect(page.locator("#id_peer")).to_have_value("controller")
    page.get_by_label("bench-pi3").check()
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview .trials")).to_have_text("18 trials")
    assert not problems, "\n".join(problems)


def test_a_finished_question_s_answer_on_a_phone(page, live_server, viewer, problems):
    campaign = network_campaign()
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + campaign.get_absolute_url())
    page.get_by_role("link", name="The answer").click()
    expect(page.locator("#answer")).to_contain_text(
        "Yes, a little: the overclock made iperf3-tcp throughput (direction peer-to-board)"
    )
    expect(page.locator("#answer")).to_contain_text("showed no significant difference")
    drawn(page, 7)  # the forest of every metric, then each metric: its means and its change
    expect(page.locator("#section-0 .chart-plot").first).to_contain_text("throughput")
    screenshot(page, "question-answer-phone")
    page.screenshot(path=ARTIFACTS / "question-answer-phone-top.png")  # the sentence, readable
    page.locator("#section-0 .chart").first.screenshot(path=ARTIFACTS / "question-answer-chart.png")
    fits_a_phone(page)
    # The README's picture of an answer (docs/img/answer.png is this file, copied by hand).
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    drawn(page, 7)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=ARTIFACTS / "answer-desktop-top.png")
    assert not problems, "\n".join(problems)


def test_the_64_against_32_bit_view_on_a_phone_in_dark_mode(page, live_server, viewer, problems):
    campaign = Campaign.objects.create(name="32 and 64", spec={}, finished=timezone.now())
    for bits, values in ((32, [100.0, 101.0, 99.0]), (64, [110.0, 111.0, 109.0])):
        lane = lane_on(campaign, f"pi4-{bits}", userland=bits)
        trials(lane, values)
        trials(
            lane,
            [v / 50 for v in values],
            benchmark="intloop",
            metric="iterations_per_second",
            unit="iter/s",
        )
    page.emulate_media(color_scheme="dark")
    log_in(page, live_server, viewer)
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + reverse("benchmarks:comparisons"))
    page.get_by_role("link", name="64-bit against 32-bit").click()
    page.select_option("#id_campaigns", label=campaign.name)
    page.get_by_role("button", name="Compare").click()
    drawn(page, 1)
    expect(page.locator(".chart-plot")).to_contain_text("sha1sum throughput")
    expect(page.locator("table.overview")).to_contain_text("3 / 3")
    screenshot(page, "bitness-phone-dark")
    page.locator(".chart").screenshot(path=ARTIFACTS / "bitness-forest-phone-dark.png")
    fits_a_phone(page)
    assert not problems, "\n".join(problems)
