"""/api/v1/measurements/: every value measured, filtered and paged."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.models import Measurement, Run
from devices.models import Preset, PresetVersion
from tests.api.support import Api
from tests.benchmarks.factories import add_run, add_runs, make_campaign, measure
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
MEASUREMENTS = reverse("api:measurement-list")


@pytest.fixture
def measured():
    """Two campaigns on two boards: sha1sum throughput and seconds, and an openssl figure."""
    first = make_campaign(make_board("bench-a"), name="first", states=["done"])
    run = first.runs.get()
    measure(run, throughput=(412.5, "MB/s"), seconds=(0.04, "s"))
    second = make_campaign(make_board("bench-b", host="10.213.9.11"), name="second", states=[])
    openssl = add_run(second.lanes.get(), benchmark="openssl-speed", state="done")
    measure(openssl, sha256=(1234.0, "MB/s"))
    return run, openssl


def rows(response) -> list[tuple]:
    assert response.status_code == 200, response.content
    return [(row["board"], row["metric"], row["value"]) for row in response.json()["results"]]


def test_a_measurement_names_its_run_campaign_board_and_benchmark(client, viewer, measured):
    run, _ = measured
    first = Api(client, viewer).get(MEASUREMENTS).json()["results"][0]
    assert first == {
        "run": str(run.code),
        "campaign": str(run.campaign.code),
        "board": "bench-a",
        "benchmark": "sha1sum",
        "preset": "as the board is",
        "params": {"size": "16M"},
        "suspect": False,
        "metric": "seconds",
        "value": 0.04,
        "unit": "s",
        "higher_is_better": True,
    }


def test_a_measurement_names_the_preset_its_run_ran_and_whether_it_is_suspect(
    client, viewer, measured
):
    """A script needs them to compare as the pages do: they were missing."""
    run, _ = measured
    preset = Preset.objects.create(name="fast")
    version = PresetVersion.objects.create(preset=preset, number=2, options={"arm_freq": "2000"})
    Run.objects.filter(pk=run.pk).update(preset_version=version, suspect=True)
    found = Api(client, viewer).get(MEASUREMENTS, run=str(run.code)).json()["results"]
    assert {(row["preset"], row["suspect"]) for row in found} == {("fast v2", True)}


def test_measurements_filter_by_campaign_run_metric_benchmark_and_board(client, viewer, measured):
    run, openssl = measured
    api = Api(client, viewer)
    sha1 = [("bench-a", "seconds", 0.04), ("bench-a", "throughput", 412.5)]
    assert rows(api.get(MEASUREMENTS, campaign=run.campaign.code)) == sha1
    assert rows(api.get(MEASUREMENTS, run=run.code)) == sha1
    assert rows(api.get(MEASUREMENTS, metric="throughput")) == [sha1[1]]
    assert rows(api.get(MEASUREMENTS, benchmark="openssl-speed")) == [("bench-b", "sha256", 1234)]
    assert rows(api.get(MEASUREMENTS, board="bench-b")) == [("bench-b", "sha256", 1234)]
    assert rows(api.get(MEASUREMENTS, board=str(run.board.code), metric="seconds")) == [sha1[0]]
    response = api.get(MEASUREMENTS, run="nope")
    assert response.status_code == 400 and response.json() == {
        "run": "'nope' is not a code (a UUID)."
    }


def test_measurements_come_in_pages_of_at_most_1000(client, viewer, measured):
    run, _ = measured
    for extra in add_runs(run.lane, 1100):
        measure(extra, throughput=(400.0, "MB/s"))
    api = Api(client, viewer)
    page = api.get(MEASUREMENTS, page_size=5000).json()
    assert page["count"] == 1103 and len(page["results"]) == 1000
    assert len(api.get(MEASUREMENTS, page=2, page_size=1000).json()["results"]) == 103
    assert api.get(MEASUREMENTS).json()["count"] == Measurement.objects.count()


def test_measurements_need_the_viewer_role(client, django_user_model, measured):
    nobody = django_user_model.objects.create_user("nobody")
    assert Api(client, nobody).get(MEASUREMENTS).status_code == 403


def test_there_is_no_measurement_detail(client, viewer, measured):
    assert Api(client, viewer).get(f"{MEASUREMENTS}1/").status_code == 404


def test_the_list_reads_a_fixed_number_of_queries(client, viewer, measured):
    run, _ = measured
    api = Api(client, viewer)
    api.get(MEASUREMENTS)

    def queries_for_runs(count):
        for extra in add_runs(run.lane, count):
            measure(extra, throughput=(400.0, "MB/s"))
        with CaptureQueriesContext(connection) as captured:
            api.get(MEASUREMENTS, campaign=run.campaign.code)
        return len(captured)

    assert queries_for_runs(5) == queries_for_runs(90)
