"""/api/v1/campaigns/: the list with runs counted, a campaign's progress, a spec started (by
operators, refused as the builder refuses it) and a campaign cancelled."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks import campaigns, specs
from benchmarks.models import Campaign, Run
from devices import presets
from devices.models import Preset
from tests.api.support import Api
from tests.benchmarks.factories import add_runs, make_campaign
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
CAMPAIGNS = reverse("api:campaign-list")
SPEC = {
    "name": "sha1 from a script",
    "boards": ["bench-a"],
    "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
    "repetitions": 2,
    "seed": 7,
}


@pytest.fixture
def board():
    return make_board("bench-a")


def detail(campaign) -> str:
    return reverse("api:campaign-detail", args=[campaign.code])


def cancel(campaign) -> str:
    return reverse("api:campaign-cancel", args=[campaign.code])


def test_the_list_counts_each_campaigns_runs_by_state(client, viewer, board):
    make_campaign(board, name="older", states=["done", "done", "failed"])
    make_campaign(board, name="newer", states=["queued"])
    api = Api(client, viewer)
    newer, older = api.get(CAMPAIGNS).json()["results"]
    assert set(older) == {
        "code",
        "name",
        "state",
        "spec",
        "created_by",
        "created",
        "finished",
        "estimated_s",
        "run_counts",
    }
    assert (newer["name"], older["name"]) == ("newer", "older")
    assert older["run_counts"] == {
        "queued": 0,
        "running": 0,
        "done": 2,
        "failed": 1,
        "cancelled": 0,
        "skipped": 0,
    }
    assert older["spec"]["boards"] == ["bench-a"]


def test_the_list_filters_by_state(client, viewer, board):
    make_campaign(board, name="going")
    make_campaign(board, name="over", state=Campaign.State.FINISHED)
    api = Api(client, viewer)
    assert [c["name"] for c in api.get(CAMPAIGNS, state="finished").json()["results"]] == ["over"]
    response = api.get(CAMPAIGNS, state="paused")
    assert response.status_code == 400
    assert response.json() == {"state": "one of running, finished, cancelled."}


def test_a_campaign_shows_its_progress_lane_by_lane(client, viewer, board):
    campaign = make_campaign(board, states=["done", "running", "queued"])
    campaign.lanes.update(state="running", step="measuring sha1sum", log_tail="16M hashed")
    body = Api(client, viewer).get(detail(campaign)).json()
    progress = body["progress"]
    assert (progress["total"], progress["ended"], progress["percent"]) == (3, 1, 33)
    assert progress["counts"]["running"] == 1
    [lane] = progress["lanes"]
    assert lane["board"] == "bench-a" and lane["board_code"] == str(board.code)
    assert (lane["state"], lane["step"], lane["log_tail"]) == (
        "running",
        "measuring sha1sum",
        "16M hashed",
    )
    assert (lane["runs_total"], lane["runs_ended"], lane["peer"]) == (3, 1, "")


def test_an_operator_starts_a_campaign_from_a_spec(
    client, operator, board, redis_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = Api(client, operator).post(CAMPAIGNS, SPEC)
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get()
    body = response.json()
    assert body["code"] == str(campaign.code) and body["name"] == "sha1 from a script"
    assert response["Location"].endswith(detail(campaign))
    assert campaign.created_by == operator and campaign.runs.count() == 2
    assert body["progress"]["total"] == 2 and body["spec"]["seed"] == 7
    assert redis_queue.count == 1  # the lane's job, queued after the commit


def test_the_same_seeded_spec_posted_again_answers_the_first_campaign(
    client, operator, board, redis_queue, django_capture_on_commit_callbacks
):
    api = Api(client, operator)
    with django_capture_on_commit_callbacks(execute=True):
        first = api.post(CAMPAIGNS, SPEC)
        again = api.post(CAMPAIGNS, SPEC)
        other = api.post(CAMPAIGNS, {**SPEC, "seed": 8})
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["code"] == first.json()["code"] != other.json()["code"]
    assert again["Location"] == first["Location"]
    assert Campaign.objects.count() == 2 and redis_queue.count == 2


@pytest.mark.parametrize(
    "spec",
    [
        {**SPEC, "boards": ["no-such-board"]},
        {**SPEC, "repetitions": 0},
        {**SPEC, "colour": "red"},
        {**SPEC, "boards": [f"bench-{i}" for i in range(150_000)]},
        {**SPEC, "benchmarks": [{"name": "sha1sum", "params": {"size": "lots"}}]},
        {**SPEC, "question": ["network"]},
        {**SPEC, "question": {"network": True}},
        ["not", "an", "object"],
        # each of these was a 500 with an HTML page
        {**SPEC, "quiet": {"load_below": 10**400}},
        {**SPEC, "repetitions": {"min": 2, "max": 3, "target_pct": 10**400}},
        {**SPEC, "repetitions": {"min": 2, "max": 3, "budget_s": 10**400}},
        {**SPEC, "presets": ["Stock@²"]},
        {**SPEC, "presets": ["Stock@" + "9" * 5000]},
        # a review's: a lone surrogate reached the database (500), a string taken for true
        {**SPEC, "name": "\ud800"},
        {**SPEC, "boards": ["\ud800"]},
        {**SPEC, "rerun_suspect": "no"},
    ],
)
def test_a_refused_spec_is_a_400_with_the_builders_words(client, operator, board, spec):
    presets.new_version(Preset.objects.create(name="Stock"), options={})
    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec)
    response = Api(client, operator).post(CAMPAIGNS, spec)
    assert response.status_code == 400
    assert response.json() == {"detail": str(refused.value), "field": refused.value.field}
    assert not Campaign.objects.exists()


def test_a_body_that_is_not_json_is_a_400(client, operator, board):
    api = Api(client, operator)
    response = client.post(CAMPAIGNS, "{name:", content_type="application/json", **api.headers())
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]


def test_a_viewer_may_neither_start_nor_cancel(client, viewer, board):
    campaign = make_campaign(board, states=["queued"])
    api = Api(client, viewer)
    for response in (api.post(CAMPAIGNS, SPEC), api.post(cancel(campaign))):
        assert response.status_code == 403
        assert response.json()["detail"].startswith("This needs the operator role; yours is viewer")
    assert Campaign.objects.count() == 1
    assert campaign.runs.get().state == Run.State.QUEUED


def test_an_operator_cancels_a_campaign_and_a_second_cancel_says_it_ended(client, operator, board):
    campaign = make_campaign(board, name="to stop", states=["done", "queued", "queued"])
    api = Api(client, operator)
    response = api.post(cancel(campaign))
    assert response.status_code == 200
    assert response.json() == {
        "detail": "Cancelled to stop: 2 queued runs dropped.",
        "dropped": 2,
        "asked_to_stop": 0,
        "stopped": 2,
    }
    assert campaign.runs.filter(state=Run.State.CANCELLED).count() == 2
    again = api.post(cancel(campaign))
    assert again.status_code == 409
    assert again.json() == {
        "detail": campaigns.why_not_cancelled(campaign),
        "dropped": 0,
        "asked_to_stop": 0,
        "stopped": 0,
    }
    assert "already cancelled and has ended" in again.json()["detail"]


def test_cancel_takes_post_only(client, operator, board):
    campaign = make_campaign(board)
    assert Api(client, operator).get(cancel(campaign)).status_code == 405


def test_the_list_reads_a_fixed_number_of_queries(client, viewer, board):
    api = Api(client, viewer)
    api.get(CAMPAIGNS)  # its first use records last_used: once a minute

    def queries_for_campaigns(count):
        for i in range(Campaign.objects.count(), count):
            add_runs(make_campaign(board, name=f"c{i}").lanes.get(), 20)
        with CaptureQueriesContext(connection) as captured:
            assert api.get(CAMPAIGNS).json()["count"] == count
        return len(captured)

    assert queries_for_campaigns(1) == queries_for_campaigns(10)


def test_a_campaigns_detail_reads_a_fixed_number_of_queries(client, viewer, board):
    campaign = make_campaign(board)
    api = Api(client, viewer)
    api.get(detail(campaign))

    def queries_for_runs(count):
        add_runs(campaign.lanes.get(), count - campaign.runs.count())
        with CaptureQueriesContext(connection) as captured:
            assert api.get(detail(campaign)).json()["progress"]["total"] == count
        return len(captured)

    assert queries_for_runs(10) == queries_for_runs(500)


def test_a_body_over_the_upload_limit_is_refused_unread(client, operator, board, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 65_536
    spec = {**SPEC, "name": "x" * 70_000}
    response = Api(client, operator).post(CAMPAIGNS, spec)
    assert response.status_code == 400
    assert response.json() == {
        "detail": "The request body is over 65,536 bytes (PIFARM_UPLOAD_MAX_BYTES)."
    }


def test_a_number_of_5000_digits_is_refused_in_words(client, operator, board):
    api = Api(client, operator)
    body = '{"name": "x", "boards": ["bench-a"], "seed": ' + "9" * 5000 + "}"
    response = client.post(CAMPAIGNS, body, content_type="application/json", **api.headers())
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - a number has more than 4,300 digits."}
