"""benchmarks.charts: the figures' text is the users' and the boards' words, shown as words."""

import json

import pytest

from benchmarks import charts, comparisons
from benchmarks.models import Campaign
from tests.benchmarks.factories import lane_on, trials

pytestmark = pytest.mark.django_db
HOSTILE = '<a href="https://example.invalid/">x</a><br>n=999 <b>FAST</b> & co'


def test_markup_in_names_and_units_is_escaped_but_the_charts_own_breaks_stay():
    plain = Campaign.objects.create(name="plain", spec={})
    hostile = Campaign.objects.create(name=HOSTILE, spec={})
    trials(lane_on(plain, "bench-a"), [100.0, 102.0, 98.0], unit="<b>MB/s</b>")
    trials(lane_on(hostile, "bench-b"), [120.0, 123.0, 117.0], unit="<b>MB/s</b>")
    runs = comparisons.runs_selected([plain.pk, hostile.pk])
    result = comparisons.compare(runs, "sha1sum", "throughput", "campaign", baseline=HOSTILE)
    found = json.dumps(charts.figures(result))
    assert "<a" not in found and "<b>" not in found and HOSTILE not in found
    # (a long name is wrapped at its spaces, with the module's own breaks)
    escaped = 'href=\\"https://example.invalid/\\"&gt;x&lt;/a&gt;&lt;br&gt;n=999'
    assert (
        "&lt;a" in found
        and escaped in found
        and "&amp; co" in found
        and "&lt;b&gt;MB/s&lt;/b&gt;" in found
    )
    ticks = charts.means(result)["layout"]["xaxis"]["ticktext"]
    assert "plain<br>n=3" in ticks
    assert charts.changes(result)["data"][0]["x"] == ["plain<br>n=3"]
