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


def test_template_syntax_in_names_and_units_stays_out_of_plotly_s_hover_templates():
    """plotly fills in every "%{...}" of a hovertemplate: a name or unit holding one would
    show another figure in its place. They go in the trace's meta, which is put in as is."""
    templated = Campaign.objects.create(name="%{y:.9f} fast %{x}", spec={})
    other = Campaign.objects.create(name="other", spec={})
    trials(lane_on(templated, "bench-a"), [100.0, 102.0, 98.0], unit="MB/s %{y}", clock_mhz=1500)
    trials(lane_on(other, "bench-b"), [120.0, 123.0, 117.0], unit="MB/s %{y}", clock_mhz=1800)
    runs = comparisons.runs_selected([templated.pk, other.pk])
    result = comparisons.compare(runs, "sha1sum", "throughput", "campaign")
    traces = [trace for figure in charts.figures(result).values() for trace in figure["data"]]
    templates = [trace["hovertemplate"] for trace in traces if "hovertemplate" in trace]
    assert templates and not any("fast" in text or "MB/s" in text for text in templates)
    metas = [trace["meta"] for trace in traces if "meta" in trace]
    assert ["MB/s %{y}", "%{y:.9f} fast %{x}"] in metas  # the clock scatter's group
