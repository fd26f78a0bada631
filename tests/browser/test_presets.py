"""A lab member writes a preset, fixes a validation error, edits it, compares the versions
and applies it to a simulated Pi, watching the application complete."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from devices.configtxt import apply_block
from tests.browser.conftest import screenshot
from tests.browser.test_register_board import log_in
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.worker
def test_write_fix_edit_diff_and_apply_a_preset(
    page, live_server, user, pisim_node_factory, worker_process
):
    node = pisim_node_factory(name="bpi4", profile="pi4b-bookworm")
    register_node(node, name="bench-pi4")
    log_in(page, live_server, user)

    page.goto(live_server.url + reverse("devices:preset_new"))
    page.fill("#id_name", "mild overclock")
    page.check("input[name=families][value=pi4_r14]")
    page.fill("#id_options", "arm_freq=1600\nover_voltage = [-2,2]\n")
    page.select_option("#id_governor", "performance")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#findings")).to_contain_text("line 2: error")
    screenshot(page, "preset-error")

    page.fill("#id_options", "arm_freq=1600\n")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="mild overclock")).to_be_visible()

    page.get_by_role("link", name="Edit (new version)").click()
    page.fill("#id_options", "arm_freq=1700\n")
    page.fill("#id_note", "a little faster")
    page.get_by_role("button", name="Save").click()
    diff = page.locator("table.diff")
    expect(diff).to_contain_text("arm_freq=1600")
    expect(diff).to_contain_text("arm_freq=1700")
    screenshot(page, "preset-diff")

    page.get_by_role("link", name="Apply…").first.click()  # newest version first
    expect(page.get_by_role("heading", name="Apply mild overclock v2")).to_be_visible()
    page.get_by_label("bench-pi4").check()
    page.get_by_role("button", name="Apply").click()

    state = page.locator(".app-state")
    expect(state).to_have_text("applied and verified", timeout=120_000)
    expect(page.locator("table.verification")).to_contain_text("arm_freq")
    screenshot(page, "application-verified")

    page.get_by_role("link", name="← bench-pi4").click()
    expect(page.locator("#board-live")).to_contain_text("mild overclock v2")
    # the probe queued after the application shows the new managed block in config.txt
    for _ in range(30):
        if "arm_freq=1700" in (page.locator("#facts").text_content() or ""):
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(page.locator("pre.config")).to_contain_text("arm_freq=1700")
    page.set_viewport_size({"width": 375, "height": 812})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the board page scrolls sideways on a phone ({width}px)"
    screenshot(page, "board-runs-preset-phone")


@pytest.mark.worker
def test_an_operator_restores_stock_on_an_overclocked_board(
    page, live_server, operator, pisim_node_factory, worker_process
):
    node = pisim_node_factory(name="bstock", profile="pi4b-bookworm")
    config = "/boot/firmware/config.txt"
    node.write_file(config, apply_block(node.read_file(config), "arm_freq=1700\n", "fast v1"))
    node.write_file("/etc/default/cpu_governor", "CPU_DEFAULT_GOVERNOR=performance\n")
    board = register_node(node, name="bench-stock")
    log_in(page, live_server, operator)
    page.goto(live_server.url + board.get_absolute_url())
    page.get_by_role("button", name="Re-probe").click()
    stock = page.locator("#stock-words")
    expect(stock).to_contain_text(
        "bench-stock is not at stock: pifarm's block sets arm_freq=1700", timeout=30_000
    )

    page.get_by_text("Restore stock", exact=True).click()
    page.get_by_role("button", name="Restore stock on bench-stock").click()
    expect(page.locator("h1")).to_have_text("Stock (firmware defaults) v1 on bench-stock")
    expect(page.locator(".app-state")).to_have_text("applied and verified", timeout=120_000)
    screenshot(page, "stock-restored")

    page.get_by_role("link", name="← bench-stock").click()
    for _ in range(30):  # the probe queued after the application
        if "is at stock" in (stock.text_content() or ""):
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(stock).to_contain_text("bench-stock is at stock: no overclock lines in config.txt")
    assert b"pifarm managed block" not in node.read_file(config)
