"""After each run: a campaign of fixed repetitions does not pay for the statistics (scipy, about
a second to import) in every job's work horse; a cancelled campaign gets no further trial."""

import subprocess
import sys

import pytest

from benchmarks import adaptive, campaigns, catalog, specs
from benchmarks.models import Run
from tests.benchmarks.factories import add_run, make_campaign, measure
from tests.devices.factories import make_board


@pytest.mark.slow
def test_the_engine_of_a_fixed_campaign_loads_no_scipy():
    """What a work horse imports to run and record a run, in a fresh process."""
    script = (
        "import sys, django; django.setup(); "
        "import benchmarks.lanes, benchmarks.adaptive; "
        "print('scipy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False", done.stderr


@pytest.fixture
def adaptive_lane(db):
    """An adaptive campaign whose two trials so far disagree: it wants another."""
    campaign = make_campaign(make_board(), name="adaptive", states=())
    campaign.spec = {**campaign.spec, "repetitions": {"min": 2, "max": 40, "target_pct": 0.001}}
    campaign.save()
    lane = campaign.lanes.get()
    for value in (100.0, 140.0):
        measure(add_run(lane, state=Run.State.DONE), throughput=(value, "MB/s"))
    return lane


def test_an_adaptive_group_whose_interval_is_wide_gets_another_trial(adaptive_lane):
    last = adaptive_lane.runs.order_by("sequence").last()
    adaptive.after_run(last, catalog.lookup("sha1sum"), suspect=False)
    assert adaptive_lane.runs.filter(state=Run.State.QUEUED).count() == 1


def test_a_campaign_cancelled_just_after_a_run_ended_gets_no_further_trial(adaptive_lane):
    """The gap the cancel can fall in: the run is done, the next trial not yet added."""
    last = adaptive_lane.runs.order_by("sequence").last()
    cancelled = campaigns.cancel(adaptive_lane.campaign)
    assert cancelled == campaigns.Cancelled(0, 0)  # nothing was queued or running
    adaptive.after_run(last, catalog.lookup("sha1sum"), suspect=False)
    assert not adaptive_lane.runs.filter(state__in=Run.UNFINISHED).exists()
    assert adaptive_lane.runs.count() == 2


def test_a_suspect_run_of_a_cancelled_campaign_is_not_run_again(adaptive_lane):
    campaign = adaptive_lane.campaign
    campaign.spec = {**campaign.spec, "repetitions": 2, "rerun_suspect": True}
    campaign.save()
    last = adaptive_lane.runs.order_by("sequence").last()
    campaigns.cancel(campaign)
    adaptive.after_run(last, catalog.lookup("sha1sum"), suspect=True)
    assert adaptive_lane.runs.count() == 2


def lane_of(db, values, **repetitions):
    campaign = make_campaign(make_board(), name="resolving", states=())
    campaign.spec = {**campaign.spec, "repetitions": {"min": 2, "max": 40, **repetitions}}
    campaign.save()
    lane = campaign.lanes.get()
    for value in values:
        measure(add_run(lane, state=Run.State.DONE), throughput=(value, "MB/s"))
    return lane


@pytest.mark.parametrize(
    ("values", "more"),
    [
        # relative SD 0.4 %: 2 % needs 2 per group (trials_needed), and 4 are here
        ((100.0, 100.5, 99.5, 100.0), 0),
        # relative SD 4.1 %: 2 % needs about 68 per group; 4 are far from it
        ((100.0, 105.0, 95.0, 100.0), 1),
    ],
)
def test_resolve_pct_adds_trials_until_a_change_of_that_size_can_be_seen(db, values, more):
    lane = lane_of(db, values, resolve_pct=2)
    assert "target_pct" not in lane.campaign.spec["repetitions"]
    adaptive.after_run(
        lane.runs.order_by("sequence").last(), catalog.lookup("sha1sum"), suspect=False
    )
    assert lane.runs.filter(state=Run.State.QUEUED).count() == more


def test_a_spec_with_resolve_pct_keeps_it_and_needs_no_ci_target(db):
    board = make_board()
    board.host_key = (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEVsAsmHAC2PZUVRWx3OKy0Q8Q6v7mGm2Vf3Yw1f1HgX"
    )
    board.save()
    spec = {
        "name": "x",
        "boards": [board.name],
        "benchmarks": ["intloop"],
        "repetitions": {"min": 3, "max": 20, "resolve_pct": 2},
    }
    checked = specs.check(spec)
    assert checked.repetitions.adaptive and checked.repetitions.target_pct is None
    assert checked.spec["repetitions"] == {
        "min": 3,
        "max": 20,
        "target_pct": None,
        "budget_s": None,
        "resolve_pct": 2.0,
    }
    with pytest.raises(specs.SpecError, match="resolve_pct is the change"):
        specs.check({**spec, "repetitions": {"resolve_pct": 0}})
