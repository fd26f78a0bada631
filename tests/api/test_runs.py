"""/api/v1/runs/: runs with their values and conditions, filtered and paged; the detail
adds the environment."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.models import Run
from devices.models import FactSnapshot
from tests.api.support import Api, every_page
from tests.benchmarks.factories import add_run, add_runs, make_campaign, measure
from tests.devices.factories import make_board
from tests.devices.test_views_presets import make_preset

pytestmark = pytest.mark.django_db
RUNS = reverse("api:run-list")


@pytest.fixture
def two_campaigns():
    """bench-a: a done run (values, snapshot) and a suspect failed one; bench-b: an openssl run
    in another campaign."""
    bench_a, bench_b = make_board("bench-a"), make_board("bench-b", host="10.213.9.11")
    first = make_campaign(bench_a, name="first", states=["done", "failed"])
    done, failed = first.runs.order_by("sequence")
    snapshot = FactSnapshot.objects.create(
        board=bench_a, kernel_bits=64, userland_bits=32, os_name="Raspberry Pi OS", facts={}
    )
    Run.objects.filter(pk=done.pk).update(
        snapshot=snapshot,
        details={"tool_version": "sha1sum (GNU coreutils) 9.1"},
        preset_version=make_preset(name="mild").latest,
        measure_s=1.25,
        environment={"quiet": {"reached": True, "waited_s": 0.5}},
    )
    Run.objects.filter(pk=failed.pk).update(
        suspect=True, suspect_reasons=["the board throttled"], reason="timed out"
    )
    measure(done, throughput=(412.5, "MB/s"), seconds=(0.04, "s"))
    second = make_campaign(bench_b, name="second", states=[])
    add_run(second.lanes.get(), benchmark="openssl-speed", params={"algorithm": "sha256"})
    return first, second


def codes(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [run["code"] for run in response.json()["results"]]


def test_a_run_shows_its_values_preset_and_conditions(client, viewer, two_campaigns):
    first, _ = two_campaigns
    done = first.runs.get(state=Run.State.DONE)
    row = Api(client, viewer).get(RUNS, campaign=first.code).json()["results"][0]
    assert row["code"] == str(done.code) and row["campaign"] == str(first.code)
    assert (row["board"], row["benchmark"], row["params"]) == (
        "bench-a",
        "sha1sum",
        {"size": "16M"},
    )
    assert row["preset"] == "mild v1"
    assert row["preset_version"] == {"preset": str(done.preset_version.preset.code), "number": 1}
    assert (row["kernel_bits"], row["userland_bits"], row["os"]) == (64, 32, "Raspberry Pi OS")
    assert row["tool_version"] == "sha1sum (GNU coreutils) 9.1" and row["measure_s"] == 1.25
    assert row["values"] == {
        "seconds": {"value": 0.04, "unit": "s", "higher_is_better": True},
        "throughput": {"value": 412.5, "unit": "MB/s", "higher_is_better": True},
    }
    assert "environment" not in row and "raw_output" not in row and "telemetry" not in row


def test_a_runs_detail_adds_its_environment(client, viewer, two_campaigns):
    done = two_campaigns[0].runs.get(state=Run.State.DONE)
    body = Api(client, viewer).get(reverse("api:run-detail", args=[done.code])).json()
    assert body["environment"] == {"quiet": {"reached": True, "waited_s": 0.5}}
    assert body["details"] == {"tool_version": "sha1sum (GNU coreutils) 9.1"}
    assert body["raw_truncated"] is False


def test_runs_filter_by_campaign_board_benchmark_state_and_suspect(client, viewer, two_campaigns):
    first, second = two_campaigns
    api = Api(client, viewer)
    done, failed = first.runs.order_by("sequence")
    [openssl] = second.runs.all()
    assert codes(api.get(RUNS, campaign=second.code)) == [str(openssl.code)]
    assert codes(api.get(RUNS, board="bench-b")) == [str(openssl.code)]
    assert codes(api.get(RUNS, board=str(openssl.board.code))) == [str(openssl.code)]
    assert codes(api.get(RUNS, benchmark="sha1sum")) == [str(done.code), str(failed.code)]
    assert codes(api.get(RUNS, state="failed")) == [str(failed.code)]
    assert codes(api.get(RUNS, suspect="true")) == [str(failed.code)]
    assert codes(api.get(RUNS, suspect="false", board="bench-a")) == [str(done.code)]
    assert codes(api.get(RUNS, board="nobody")) == []


@pytest.mark.parametrize(
    "params, words",
    [
        ({"campaign": "first"}, {"campaign": "'first' is not a code (a UUID)."}),
        ({"state": "lost"}, {"state": "one of queued, running, done, failed, cancelled, skipped."}),
        ({"suspect": "yes"}, {"suspect": "true or false."}),
    ],
)
def test_a_filter_that_cannot_match_is_a_400(client, viewer, two_campaigns, params, words):
    response = Api(client, viewer).get(RUNS, **params)
    assert response.status_code == 400 and response.json() == words


def test_runs_come_in_pages_of_at_most_1000(client, viewer, two_campaigns):
    first, _ = two_campaigns
    add_runs(first.lanes.get(), 1200)
    api = Api(client, viewer)
    page = api.get(RUNS, campaign=first.code).json()
    assert page["count"] == 1202 and len(page["results"]) == 100 and "page=2" in page["next"]
    assert len(api.get(RUNS, campaign=first.code, page_size=5000).json()["results"]) == 1000
    assert len(every_page(api, RUNS, campaign=first.code, page_size=500)) == 1202
    assert api.get(RUNS, page=99).status_code == 404


def test_runs_need_the_viewer_role(client, django_user_model, two_campaigns):
    nobody = django_user_model.objects.create_user("nobody")
    assert Api(client, nobody).get(RUNS).status_code == 403


def test_the_list_reads_a_fixed_number_of_queries(client, viewer, two_campaigns):
    first, _ = two_campaigns
    lane = first.lanes.get()
    api = Api(client, viewer)
    api.get(RUNS)

    def queries_for_runs(count):
        for run in add_runs(lane, count - first.runs.count()):
            measure(run, throughput=(400.0, "MB/s"))
        with CaptureQueriesContext(connection) as captured:
            assert len(api.get(RUNS, campaign=first.code).json()["results"]) == count
        return len(captured)

    assert queries_for_runs(5) == queries_for_runs(90)
