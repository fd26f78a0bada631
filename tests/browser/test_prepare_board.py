"""An operator probes a simulated Pi that lacks sysbench, sees that in the prepare form,
prepares the board for the sysbench benchmark and watches apt's progress on the board page
until the task says what it installed."""

import pytest
from playwright.sync_api import expect

from pisim import Faults
from tests.browser.conftest import screenshot
from tests.browser.test_register_board import log_in
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.worker
def test_prepare_a_board_and_follow_apt_live(
    page, live_server, operator, pisim_node_factory, worker_process, problems
):
    node = pisim_node_factory(name="bprep", faults=Faults(missing_tools=("sysbench",)))
    board = register_node(node, name="bench-prep")
    log_in(page, live_server, operator)
    page.goto(live_server.url + board.get_absolute_url())

    page.get_by_role("button", name="Re-probe").click()
    expect(page.locator("#facts")).to_contain_text("Benchmark tools", timeout=30_000)

    page.get_by_text("Prepare for benchmarks").click()
    choice = page.locator(".prepare-choices li").filter(has_text="sysbench-cpu")
    expect(choice).to_contain_text("missing: sysbench")
    screenshot(page, "board-prepare-form")
    choice.get_by_role("checkbox").check()
    page.get_by_role("button", name="Prepare bench-prep").click()

    task = page.locator(".task")
    expect(task.locator(".task-log")).to_contain_text("Setting up sysbench", timeout=60_000)
    expect(task.locator(".task-state")).to_contain_text("done", timeout=60_000)
    expect(task.locator(".task-reason")).to_have_text(
        "installed sysbench; every tool of sysbench-cpu is there now"
    )
    screenshot(page, "board-prepared")
    assert problems == []
