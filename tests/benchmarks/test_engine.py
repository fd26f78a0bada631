"""Campaigns run end to end: real RQ worker, real Redis, real sshd on simulated Pis."""

import hashlib

import pytest

from benchmarks import campaigns, results
from benchmarks.models import Campaign, Lane, Run, Tally
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def spec(board, **extra):
    return {
        "name": "engine test",
        "boards": [board.name],
        "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
        "repetitions": 2,
        "quiet": {"deadline_s": 5, "cpu_below_pct": 90, "load_below": 50},
        "min_trial_s": 0,  # its trials as given: short, and suspect for it
        **extra,
    }


def test_a_campaign_runs_every_repetition_and_keeps_what_it_measured(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi4"])
    campaign = campaigns.start(spec(board))
    run_jobs()
    campaign.refresh_from_db()
    runs = list(campaign.runs.order_by("sequence"))
    assert [run.state for run in runs] == [Run.State.DONE] * 2, [run.reason for run in runs]
    assert campaign.state == Campaign.State.FINISHED
    assert campaign.lanes.get().state == Lane.State.DONE
    for run in runs:
        values = {m.metric: m.value for m in run.measurements.all()}
        assert values["throughput"] > 0 and values["seconds"] > 0
        assert run.details["sha1"] == hashlib.sha1(bytes(16 * 1024**2)).hexdigest()  # noqa: S324
        assert run.snapshot is not None
        assert run.telemetry, run.environment
        # the clock a comparison reads, in its column
        assert run.clock_mhz == results.clock_under_load(run.environment["telemetry"])
        quiet = run.environment["quiet"]  # recorded, quiet or not (helpers load this host)
        assert quiet["words"].startswith(("quiet after", "not quiet within 5 s"))
    # Each run summed up into its campaign's tallies as it was recorded: a metric's tally
    # counts both runs, and holds both values among its trials kept for the charts.
    assert all(run.tallied is not None for run in runs)
    tallies = Tally.objects.filter(campaign=campaign, metric="throughput")  # one, or one each
    assert sum(tally.n for tally in tallies) == 2  # if one run was suspect and one was not
    assert {(tally.board_id, tally.benchmark) for tally in tallies} == {(board.pk, "sha1sum")}
    kept = sorted(value for tally in tallies for value, _, _ in tally.drawn)
    assert kept == sorted(run.measurements.get(metric="throughput").value for run in runs)
