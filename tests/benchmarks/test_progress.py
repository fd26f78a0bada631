"""A campaign's ETA while work is left: never "0 s", also when a run takes longer than its
lane's runs did so far."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks import progress
from benchmarks.models import Run
from tests.api.support import Api
from tests.benchmarks.factories import add_run, make_campaign
from tests.devices.factories import make_board


@pytest.fixture
def lane(db):
    """A lane whose two finished runs took 10 s each."""
    campaign = make_campaign(make_board(), states=[], estimated_s=40)
    lane = campaign.lanes.get()
    end = timezone.now() - timedelta(minutes=5)
    for _ in range(2):
        add_run(lane, state=Run.State.DONE, started=end - timedelta(seconds=10), finished=end)
    return lane


def running_for(lane, seconds: float) -> Run:
    return add_run(
        lane, state=Run.State.RUNNING, started=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_run_past_its_expected_length_leaves_the_queued_runs_their_time(lane):
    running_for(lane, 100)
    for _ in range(3):
        add_run(lane)
    assert progress.of(lane.campaign).eta_s == pytest.approx(3 * 10, abs=1)


def test_a_running_run_is_partly_done_already(lane):
    running_for(lane, 4)
    add_run(lane)
    assert progress.of(lane.campaign).eta_s == pytest.approx(6 + 10, abs=1)


def test_a_last_run_past_its_expected_length_is_finishing_not_zero(client, viewer, lane):
    running_for(lane, 100)
    found = progress.of(lane.campaign)
    assert progress.duration_words(found.eta_s) == "finishing"
    assert progress.duration_words(found.lanes[0].eta_s) == "finishing"
    client.force_login(viewer)
    status = client.get(reverse("benchmarks:campaign_status", args=[lane.campaign.code])).json()
    assert status["eta"] == "finishing" and status["lanes"][0]["eta"] == "finishing"
    page = client.get(lane.campaign.get_absolute_url()).content.decode()
    assert '<span class="campaign-eta">finishing</span>' in page
    assert ">0 s<" not in page


def test_the_api_says_finishing_and_gives_no_eta_of_0_s(client, viewer, lane):
    """A script read "eta_s": 0 as "done now" while the last run was still finishing."""
    running_for(lane, 100)
    detail = Api(client, viewer).get(reverse("api:campaign-detail", args=[lane.campaign.code]))
    found = detail.json()["progress"]
    assert (found["eta_s"], found["finishing"]) == (None, True)
    assert (found["lanes"][0]["eta_s"], found["lanes"][0]["finishing"]) == (None, True)
    add_run(lane)  # a queued run: time is left that can be told
    found = Api(client, viewer).get(reverse("api:campaign-detail", args=[lane.campaign.code]))
    assert found.json()["progress"]["eta_s"] == pytest.approx(10, abs=1)
    assert found.json()["progress"]["finishing"] is False
