"""Boards watched over time, in a real browser: a drifted board's page with its canary chart
(on a phone and a desktop screen), clearing the drift, and a schedule's Pause and Resume."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmarks import canaries, schedules
from benchmarks.models import Schedule
from tests.benchmarks.test_canaries import history
from tests.browser.conftest import screenshot
from tests.browser.test_phone_layout import PHONE
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# The plot's own lines (the change and the board as it was), its title's edge against the
# plot's, and the page's width against the screen's: a chart wider than a phone would scroll
# the whole page sideways.
CHART = """() => {
  const plot = document.querySelector('[data-figure="canary-chart-0"]');
  return {
    shapes: plot.querySelectorAll(".shapelayer path").length,
    points: plot.querySelectorAll(".scatterlayer .point").length,
    titleRight: plot.querySelector(".gtitle").getBoundingClientRect().right,
    plotRight: plot.getBoundingClientRect().right,
    pageWidth: document.documentElement.scrollWidth,
    screenWidth: window.innerWidth,
  };
}"""


def test_a_drifted_board_shows_since_when_with_its_chart_and_an_operator_clears_it(
    page, live_server, operator, problems, redis_queue
):
    board = make_board("bench-d", queue="nobody-serves-this")
    canary = canaries.set_up(board, every="1h")
    history(canary, [100.0] * 30 + [88.0] * 6)
    [drift] = canaries.judge(board)
    log_in(page, live_server, operator)
    for name, viewport in (("phone", PHONE), ("desktop", {"width": 1280, "height": 900})):
        page.set_viewport_size(viewport)
        page.goto(live_server.url + board.get_absolute_url())
        page.wait_for_selector('[data-figure="canary-chart-0"] svg.main-svg')
        expect(page.locator(".drift")).to_contain_text("Drifted since")
        expect(page.locator(".drift")).to_contain_text("Nothing pifarm records changed then")
        found = page.evaluate(CHART)
        assert found["shapes"] == 2, found  # the change and the board as it was
        assert found["points"] == 36, found
        assert found["pageWidth"] <= found["screenWidth"], (name, found)
        assert found["titleRight"] <= found["plotRight"], (name, found)  # plotly never wraps
        screenshot(page, f"drifted-board-{name}")
    page.get_by_role("button", name="It is what it is now").first.click()
    expect(page.locator(".messages, .message").first).to_contain_text("is taken as it is now")
    expect(page.locator(".drift")).to_have_count(0)
    drift.refresh_from_db()
    assert drift.cleared is not None
    assert problems == []


def test_an_operator_pauses_and_resumes_a_schedule(
    page, live_server, operator, problems, redis_queue
):
    board = make_board("bench-s", queue="nobody-serves-this")
    schedule = schedules.create(
        {
            "name": "nightly sha1",
            "boards": [board.name],
            "benchmarks": ["sha1sum"],
            # Long, with nowhere to break but its commas: it must wrap on a phone.
            "schedule": {"cron": f"{','.join(map(str, range(37)))} 3 * * *"},
        }
    )
    log_in(page, live_server, operator)
    page.goto(live_server.url + reverse("benchmarks:campaigns"))
    page.get_by_role("link", name="Schedules").click()
    expect(page.locator("#schedules")).to_contain_text("cron “0,1,2,3,")
    page.get_by_role("link", name="nightly sha1").click()
    expect(page.locator(".schedule-next")).to_be_visible()
    page.get_by_role("button", name="Pause").click()
    expect(page.locator(".schedule-state")).to_contain_text("Paused")
    schedule.refresh_from_db()
    assert schedule.paused and schedule.next_at is None
    page.set_viewport_size(PHONE)
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    screenshot(page, "schedule-paused-phone")
    page.get_by_role("button", name="Resume").click()
    expect(page.locator(".schedule-next")).to_be_visible()
    schedule.refresh_from_db()
    assert not schedule.paused and schedule.next_at is not None
    assert problems == []


def test_an_operator_makes_a_schedule_in_the_builder(
    page, live_server, operator, problems, redis_queue
):
    board = make_board("bench-w", queue="nobody-serves-this")
    log_in(page, live_server, operator)
    page.goto(live_server.url + reverse("benchmarks:campaign_new"))
    page.fill("#id_name", "nightly sha1")
    page.get_by_label(board.name).check()
    page.get_by_label("sha1sum of a sparse file").check()
    every, cron = page.locator("#id_repeat_every"), page.locator("#id_repeat_cron")
    expect(every).to_be_hidden()  # "once, now" is the default: no timing to give
    page.get_by_label("again and again, at an interval").check()
    expect(every).to_be_visible()
    expect(cron).to_be_hidden()
    every.fill("6h")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator(".schedule-preview")).to_contain_text("every 6 h: the first ones at")
    page.set_viewport_size(PHONE)
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    screenshot(page, "builder-schedule-preview-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Make the schedule").click()
    expect(page.locator(".schedule-next")).to_be_visible()
    expect(page.locator(".messages, .message").first).to_contain_text(
        "Scheduled nightly sha1: every 6 h."
    )
    schedule = Schedule.objects.get()
    assert (schedule.every_s, schedule.created_by) == (6 * 3600, operator)
    assert problems == []
