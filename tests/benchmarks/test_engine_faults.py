"""Campaigns survive what kills their work: a worker killed with SIGKILL, sshd killed under a
measurement, Redis emptied under a campaign, two campaigns on one board. Real `manage.py
rqworker` processes, real Redis, real sshd on simulated Pis."""

import time
from datetime import timedelta

import django_rq
import pytest
from django.db.models import F
from django.utils import timezone
from rq.job import Job

from benchmarks import campaigns
from benchmarks.models import Campaign, Lane, Run
from devices.locks import is_locked
from devices.work import JOB_GRACE
from pifarm.management.commands.healthcheck import fail_stale_tasks
from tests.benchmarks import factories
from tests.devices.simfarm import register_node
from tests.workers import board_lock_expired, wait_until, worker_key_expired

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def sleeper(db):
    return factories.sleeper()


def sleeping(board, *seconds: str, name="faults", repetitions=1) -> Campaign:
    return campaigns.start(
        {
            "name": name,
            "boards": [board.name],
            "quiet": False,
            "repetitions": repetitions,
            "benchmarks": [{"name": "sleeper", "params": {"seconds": s}} for s in seconds],
        }
    )


def measuring(run: Run) -> bool:
    return Run.objects.get(pk=run.pk).step.startswith("measuring")


def processes(node) -> str:
    return node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()


def as_if_long_dead(lane: Lane) -> None:
    """What time does for a dead lane job: its heartbeat goes stale, the campaign is past
    the grace the sweep gives new work."""
    Lane.objects.filter(pk=lane.pk).update(
        heartbeat=timezone.now() - timedelta(seconds=2 * Lane.HEARTBEAT_STALE_S)
    )
    Campaign.objects.filter(pk=lane.campaign_id).update(created=F("created") - 2 * JOB_GRACE)


def job_of(lane: Lane):
    lane.refresh_from_db()
    return Job.fetch(lane.job_id, connection=django_rq.get_connection("default"))


@pytest.mark.worker
def test_a_worker_killed_mid_run_fails_that_run_frees_the_board_and_the_campaign_goes_on(
    pisim_farm, start_worker, sleeper
):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    campaign = sleeping(board, "120", "0.1")
    first, second = campaign.runs.order_by("sequence")
    lane = campaign.lanes.get()
    worker = start_worker()
    wait_until(lambda: "sleep 120" in processes(node), "the first run to measure")
    job = job_of(lane)
    worker.kill()
    assert "sleep 120" in processes(node)  # detached: it outlives the job, for now

    as_if_long_dead(lane)
    worker_key_expired(job)
    board_lock_expired(job, board.pk)
    fail_stale_tasks()  # the health-check round's sweep

    first.refresh_from_db()
    assert first.state == Run.State.FAILED
    assert first.reason.startswith("stopped while measuring: sleeps, then says how long")
    assert f"its worker {job.worker_name} stopped" in first.reason
    start_worker()
    wait_until(lambda: Run.objects.get(pk=second.pk).state == Run.State.DONE, "the next run")
    assert "sleep 120" not in processes(node)  # the next run cleaned up after the dead one
    first.refresh_from_db()
    assert first.environment["cleanup_pending"] is False
    wait_until(lambda: Campaign.objects.get(pk=campaign.pk).state == "finished", "the end")
    assert not is_locked(board.pk)


@pytest.mark.worker
def test_sshd_killed_under_a_measurement_fails_that_run_and_the_next_one_runs(
    pisim_farm, start_worker, sleeper, settings
):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    campaign = sleeping(board, "60", "0.1")
    first, second = campaign.runs.order_by("sequence")
    start_worker(PIFARM_SSH_CONNECT_TIMEOUT="3")
    wait_until(lambda: measuring(first), "the first run to measure")
    time.sleep(0.5)
    node.kill_sshd()  # every session dies; sshd is back a second later
    wait_until(lambda: Run.objects.get(pk=second.pk).state in Run.ENDED, "the next run", 60)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.state == Run.State.FAILED
    assert first.reason.startswith("lost the connection to sim-pi4")
    assert second.state == Run.State.DONE, second.reason
    assert "sleep 60" not in processes(node)


@pytest.mark.worker
def test_redis_emptied_under_a_campaign_loses_no_run_and_runs_none_twice(
    pisim_farm, start_worker, sleeper, redis_queue
):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    campaign = sleeping(board, "3", repetitions=3)
    runs = list(campaign.runs.order_by("sequence"))
    lane = campaign.lanes.get()
    start_worker()
    wait_until(lambda: measuring(runs[0]), "the first run to measure")
    redis_queue.connection.flushdb()  # a Redis restart without persistence: every key gone
    # The run under way finishes (its job still runs), queues the next one on the empty Redis;
    # should that be lost too, the health-check round queues the lane again.
    deadline = time.monotonic() + 90
    while Run.objects.filter(campaign=campaign, state__in=Run.UNFINISHED).exists():
        assert time.monotonic() < deadline, list(campaign.runs.values_list("state", "reason"))
        Campaign.objects.filter(pk=campaign.pk).update(created=F("created") - 2 * JOB_GRACE)
        fail_stale_tasks()
        time.sleep(1)
    states = [run.state for run in campaign.runs.order_by("sequence")]
    assert states == [Run.State.DONE] * 3, list(campaign.runs.values_list("reason", flat=True))
    assert campaign.runs.count() == 3  # none added, none run twice
    wait_until(lambda: Lane.objects.get(pk=lane.pk).state == Lane.State.DONE, "the lane's end")


def test_a_lane_whose_queued_job_vanished_is_queued_again(pisim_farm, run_jobs, sleeper):
    board = register_node(pisim_farm.nodes["pi4"])
    campaign = sleeping(board, "0.1")
    django_rq.get_connection("default").flushdb()
    lane = campaign.lanes.get()
    Campaign.objects.filter(pk=campaign.pk).update(created=F("created") - 2 * JOB_GRACE)
    assert fail_stale_tasks() == 1
    run_jobs()
    assert campaign.runs.get().state == Run.State.DONE
    lane.refresh_from_db()
    assert lane.state == Lane.State.DONE


@pytest.mark.worker
def test_two_campaigns_on_one_board_never_overlap(pisim_farm, start_worker, sleeper):
    board = register_node(pisim_farm.nodes["pi4"])
    one = sleeping(board, "0.5", name="one", repetitions=3)
    two = sleeping(board, "0.5", name="two", repetitions=3)
    start_worker(scheduler=True, PIFARM_BUSY_RETRY="1")
    start_worker(scheduler=True, PIFARM_BUSY_RETRY="1")
    both = Run.objects.filter(campaign__in=[one, two])
    wait_until(lambda: not both.filter(state__in=Run.UNFINISHED).exists(), "both campaigns", 120)
    windows = sorted((run.started, run.finished, run.state) for run in both)
    assert [state for _, _, state in windows] == [Run.State.DONE] * 6
    for (_, end, _), (start, _, _) in zip(windows, windows[1:], strict=False):
        assert end <= start, windows


@pytest.mark.worker
def test_a_worker_asked_to_stop_ends_its_lane_after_the_run_under_way(
    pisim_farm, start_worker, sleeper
):
    """SIGTERM (a deploy, the demo's Ctrl-C): RQ lets the job end, and a lane that went on from
    run to run would hold the stop for up to CHAIN_S. It ends after the run under way, done,
    and hands the others to the next worker."""
    board = register_node(pisim_farm.nodes["pi4"])
    campaign = sleeping(board, "3", repetitions=4)
    first, *others = campaign.runs.order_by("sequence")
    worker = start_worker()
    wait_until(lambda: measuring(first), "the first run to measure")
    worker.process.terminate()  # the worker alone: its work horse is told through Redis
    worker.process.wait(timeout=30)
    first.refresh_from_db()
    assert first.state == Run.State.DONE, first.reason
    assert [Run.objects.get(pk=run.pk).state for run in others] == [Run.State.QUEUED] * 3
    assert not is_locked(board.pk)
    start_worker()
    wait_until(lambda: Campaign.objects.get(pk=campaign.pk).state == "finished", "the end", 60)
    assert set(campaign.runs.values_list("state", flat=True)) == {Run.State.DONE}
