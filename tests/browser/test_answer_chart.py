"""The answer page's "at a glance" chart grows with its rows and stays inside its box: at 8,
20 and 40 rows, on a phone and on a desktop screen, the plot ends above its caption and the
table after it."""

import pytest
from django.urls import reverse

from devices import presets
from tests.benchmarks.answer_data import STOCK, question_campaign
from tests.benchmarks.factories import lane_on, trials
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_phone_layout import PHONE
from tests.browser.test_register_board import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DESKTOP = {"width": 1280, "height": 900}
# Where the plot, the figure's caption and the table after it are, in page pixels.
BOXES = """() => {
  const plot = document.querySelector('[data-figure="forest-chart"]');
  const svg = plot.querySelector("svg.main-svg");
  const caption = plot.closest("figure").querySelector("figcaption");
  const table = document.querySelector("table.overview");
  const box = (element) => {
    const found = element.getBoundingClientRect();
    return {top: found.top + window.scrollY, bottom: found.bottom + window.scrollY};
  };
  return {plot: box(plot), svg: box(svg), caption: box(caption), table: box(table)};
}"""


def network_question_of(rows: int):
    """A network question whose download ran with `rows` durations: a row each."""
    campaign = question_campaign("network")
    lane = lane_on(campaign, "pi3", model="Raspberry Pi 3 Model B Rev 1.2")
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    for seconds in range(10, 10 + rows):
        params = {"direction": "peer-to-board", "duration": seconds}
        for version, values in ((None, STOCK), (classic, [v * 1.03 for v in STOCK])):
            trials(
                lane,
                values,
                benchmark="iperf3-tcp",
                unit="Mbit/s",
                params=params,
                preset_version=version,
            )
    return campaign


@pytest.mark.parametrize("rows", [8, 20, 40])
def test_the_chart_at_a_glance_stays_in_its_box(page, live_server, viewer, problems, rows):
    campaign = network_question_of(rows)
    log_in(page, live_server, viewer)
    for name, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        page.set_viewport_size(viewport)
        page.goto(live_server.url + reverse("benchmarks:answer", args=[campaign.code]))
        page.wait_for_selector('[data-figure="forest-chart"] svg.main-svg')
        assert page.locator("table.overview tbody tr").count() == rows
        boxes = page.evaluate(BOXES)
        assert boxes["svg"]["bottom"] <= boxes["plot"]["bottom"] + 1, (name, boxes)
        assert boxes["plot"]["bottom"] <= boxes["caption"]["top"] + 1, (name, boxes)
        assert boxes["caption"]["bottom"] <= boxes["table"]["top"] + 1, (name, boxes)
        # The page, not the figure's element: an element's screenshot first waits for it to
        # hold still over two frames, which a loaded CI machine took over 20 s to see.
        page.screenshot(
            path=str(ARTIFACTS / f"answer-chart-{rows}-rows-{name}.png"), full_page=True
        )
    assert not problems, "\n".join(problems)
