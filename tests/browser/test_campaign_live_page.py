"""A running campaign's page (and a board preparing) as its status changes, without a farm:
the rows are made here and the page's own script polls the live server."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from benchmarks.models import Lane, Run
from benchmarks.views.campaigns import RUNS_PER_PAGE
from devices.models import BoardTask
from tests.benchmarks.factories import add_runs, installing_sysbench, make_campaign
from tests.browser.conftest import screenshot
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


POLL_WAIT_MS = 20_000


def output(first: int, last: int) -> str:
    return "".join(f"bytes={line} elapsed={line / 10:.1f}s\n" for line in range(first, last + 1))


def distance_from_bottom(log) -> float:
    return log.evaluate("(box) => box.scrollHeight - box.scrollTop - box.clientHeight")


def test_the_log_tail_stays_at_its_newest_line_unless_scrolled_up(
    page, live_server, user, problems
):
    campaign = make_campaign(make_board("bench-a"), states=["running", "queued"])
    lanes = Lane.objects.filter(campaign=campaign)
    lanes.update(state=Lane.State.RUNNING, step="measuring: sha1sum", log_tail=output(1, 60))
    log_in(page, live_server, user)
    page.goto(live_server.url + campaign.get_absolute_url())
    log = page.locator(".lane-log")
    expect(log).to_contain_text("bytes=60 ")
    assert log.evaluate("(box) => box.scrollHeight > box.clientHeight")  # it does scroll
    assert distance_from_bottom(log) <= 1  # the newest line shows from the start

    lanes.update(log_tail=output(20, 90))
    # The page polls every 2 s (6 s after a failed poll); a loaded machine answers late.
    expect(log).to_contain_text("bytes=90 ", timeout=POLL_WAIT_MS)
    assert distance_from_bottom(log) <= 1

    reading = log.evaluate("(box) => { box.scrollTop = 40; return box.scrollTop; }")
    lanes.update(log_tail=output(40, 120))  # the reader went up to an earlier line: stays there
    expect(log).to_contain_text("bytes=120 ", timeout=POLL_WAIT_MS)
    assert log.evaluate("(box) => box.scrollTop") == reading
    assert problems == [], "\n".join(problems)


def test_a_boards_apt_output_follows_its_newest_line_unless_scrolled_up(
    page, live_server, user, problems
):
    board = make_board("bench-a")
    task = installing_sysbench(board, output(1, 60))
    log_in(page, live_server, user)
    page.goto(live_server.url + board.get_absolute_url())
    log = page.locator(".task-log")
    expect(log).to_contain_text("bytes=60 ")
    assert distance_from_bottom(log) <= 1

    reading = log.evaluate("(box) => { box.scrollTop = 40; return box.scrollTop; }")
    BoardTask.objects.filter(pk=task.pk).update(log_tail=output(40, 120))
    expect(log).to_contain_text("bytes=120 ", timeout=POLL_WAIT_MS)
    assert log.evaluate("(box) => box.scrollTop") == reading  # the reader stays where they are

    log.evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
    BoardTask.objects.filter(pk=task.pk).update(log_tail=output(60, 140))
    expect(log).to_contain_text("bytes=140 ")
    assert distance_from_bottom(log) <= 1  # back at the bottom: it follows again
    assert problems == [], "\n".join(problems)


def test_a_later_page_of_results_follows_its_own_runs(page, live_server, user, problems):
    campaign = make_campaign(make_board("bench-a"), states=[])
    add_runs(campaign.lanes.get(), RUNS_PER_PAGE + 2)
    first_on_page_2 = campaign.runs.order_by("sequence")[RUNS_PER_PAGE]
    log_in(page, live_server, user)
    page.goto(live_server.url + campaign.get_absolute_url())
    page.get_by_role("link", name="Next ›").first.click()
    expect(page.locator(".pager-where").first).to_contain_text("Page 2 of 2")
    row = page.locator(f"#run-{first_on_page_2.code}")
    expect(row).to_contain_text("queued")

    Run.objects.filter(pk=first_on_page_2.pk).update(
        state=Run.State.RUNNING, step="measuring: sha1sum", started=timezone.now()
    )
    expect(row).to_contain_text("measuring: sha1sum")  # updated in place, by the poll
    screenshot(page, "campaign-page-2")
    page.set_viewport_size(PHONE)
    fits_a_phone(page)  # the pager too
    screenshot(page, "campaign-page-2-phone")
    assert problems == [], "\n".join(problems)
