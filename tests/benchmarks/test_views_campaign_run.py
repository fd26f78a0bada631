"""A campaign built with the builder runs on a simulated Pi, and its page and CSV show what
the engine measured."""

import csv
import io

import pytest
from django.urls import reverse

from benchmarks.models import Campaign, Run
from benchmarks.templatetags.campaign_tags import number
from tests.benchmarks.test_views_builder import NEW, form_data, previewed
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def test_a_built_campaign_runs_and_its_page_shows_the_values(
    client, operator, pisim_farm, run_jobs
):
    board = register_node(pisim_farm.nodes["pi4"])
    client.force_login(operator)
    data = form_data([board], repetitions="2", quiet_cpu_below_pct="90", quiet_load_below="50")
    client.post(NEW, previewed(client, data))
    run_jobs()
    campaign = Campaign.objects.get()
    runs = list(campaign.runs.order_by("sequence"))
    assert [run.state for run in runs] == [Run.State.DONE] * 2, [run.reason for run in runs]

    page = client.get(campaign.get_absolute_url()).content.decode()
    status = client.get(reverse("benchmarks:campaign_status", args=[campaign.code])).json()
    assert (status["ended"], status["total"], status["finished"]) == (2, 2, True)
    for run in runs:
        row = page[page.index(f'id="run-{run.code}"') :]
        row = row[: row.index("</tr>")]
        throughput = run.measurements.get(metric="throughput")
        assert f"{number(throughput.value)}</strong> MB/s" in row
        assert f"{run.snapshot.userland_bits}-bit userland" in row

    sheet = client.get(reverse("benchmarks:runs_csv", args=[campaign.code])).getvalue().decode()
    rows = list(csv.DictReader(io.StringIO(sheet)))
    assert sorted(float(row["throughput [MB/s]"]) for row in rows) == sorted(
        run.measurements.get(metric="throughput").value for run in runs
    )
