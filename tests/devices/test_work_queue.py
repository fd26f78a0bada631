"""Queueing board work: a job that cannot be queued ends its record at once, saying why."""

import pytest

from benchmarks import campaigns
from benchmarks.models import Lane, Run
from devices import presets, tasks
from devices.models import Application, Board, BoardTask, Preset

from .factories import make_board

pytestmark = pytest.mark.django_db(transaction=True)

# A Unix socket nobody listens on: Redis is down.
REDIS_DOWN = {"default": {"URL": "unix:///nonexistent/pifarm-test-redis.sock"}}


def board_on_queue(queue: str) -> Board:
    """A board whose queue was saved before PIFARM_QUEUES changed (no form checks it now)."""
    board = make_board()
    Board.objects.filter(pk=board.pk).update(queue=queue)
    board.refresh_from_db()
    return board


def make_version():
    preset = Preset.objects.create(name="overclock")
    return presets.new_version(preset, options={"arm_freq": "1700"})


def test_a_task_on_a_queue_no_worker_serves_fails_at_once_with_the_reason(redis_queue):
    task = tasks.start(board_on_queue("bench-gone"), BoardTask.Kind.PROBE)

    task.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert task.reason.startswith("no worker serves the queue 'bench-gone'")
    assert "the queues are: default" in task.reason
    assert task.finished is not None
    assert len(redis_queue.jobs) == 0


def test_an_application_on_a_queue_no_worker_serves_fails_at_once(redis_queue):
    application = presets.start_application(board_on_queue("bench-gone"), make_version(), "trial")

    application.refresh_from_db()
    assert application.state == Application.State.FAILED
    assert application.reason.startswith("Nothing was changed: no worker serves the queue")
    assert application.finished is not None


def test_an_application_queued_while_redis_is_down_fails_with_the_reason(redis_queue, settings):
    board, version = make_board(), make_version()
    settings.RQ_QUEUES = REDIS_DOWN

    application = presets.start_application(board, version, "trial")

    application.refresh_from_db()
    assert application.state == Application.State.FAILED
    assert "could not reach the job queue (Redis)" in application.reason
    assert application.reason.startswith("Nothing was changed")


def test_a_task_queued_while_redis_is_down_fails_with_the_reason(redis_queue, settings):
    board = make_board()
    settings.RQ_QUEUES = REDIS_DOWN

    task = tasks.start(board, BoardTask.Kind.HEALTH)

    task.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert "could not reach the job queue (Redis)" in task.reason


@pytest.mark.django_db(transaction=False)
def test_each_record_keeps_the_id_of_the_job_that_carries_it(
    redis_queue, django_capture_on_commit_callbacks
):
    """Inside a request's transaction too: the job is queued once it commits."""
    with django_capture_on_commit_callbacks(execute=True):
        task = tasks.start(make_board(), BoardTask.Kind.PROBE)
        application = presets.start_application(make_board("b"), make_version(), "trial")
    task.refresh_from_db()
    application.refresh_from_db()
    jobs = {job.args: job.id for job in redis_queue.jobs}
    assert task.job_id == jobs["probe", task.pk]
    assert application.job_id == jobs["apply", application.pk]


def lane_spec(board: Board) -> dict:
    return {
        "name": "queued",
        "boards": [board.name],
        "repetitions": 1,
        "benchmarks": [{"name": "sha1sum"}],
        "quiet": False,
    }


def test_a_lane_redis_could_not_take_stays_queued_for_the_sweep(redis_queue, settings):
    """Nothing of a campaign is lost to a Redis hiccup: its lanes wait, their runs too."""
    board = make_board()
    settings.RQ_QUEUES = REDIS_DOWN

    campaign = campaigns.start(lane_spec(board))

    lane = campaign.lanes.get()
    assert lane.state == Lane.State.QUEUED
    assert lane.step.startswith("not queued yet (could not reach the job queue (Redis)")
    assert lane.step.endswith("; will retry")
    assert [run.state for run in campaign.runs.all()] == [Run.State.QUEUED]


def test_a_lane_on_a_queue_no_worker_serves_ends_and_skips_its_runs(redis_queue):
    campaign = campaigns.start(lane_spec(board_on_queue("bench-gone")))

    lane = campaign.lanes.get()
    assert lane.state == Lane.State.FAILED
    assert lane.reason.startswith("no worker serves the queue 'bench-gone'")
    (run,) = campaign.runs.all()
    assert (run.state, run.reason) == (Run.State.SKIPPED, f"not run: {lane.reason}")
    campaign.refresh_from_db()
    assert campaign.finished is not None
