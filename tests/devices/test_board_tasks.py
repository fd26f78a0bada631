"""Job plumbing with a real Redis and a real RQ worker: locks, crashes, queue failures."""

import time

import pytest
from django.urls import reverse
from django.utils import timezone
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from devices import board_tasks, presets, tasks
from devices.locks import BoardBusy, board_lock
from devices.models import Application, Board, BoardTask, Preset

from .factories import make_board

pytestmark = pytest.mark.django_db(transaction=True)


def test_one_board_is_driven_by_one_job_at_a_time(redis_queue):
    board = make_board()
    with board_lock(board.pk, ttl=10):
        with pytest.raises(BoardBusy):
            with board_lock(board.pk, ttl=10):
                pass
        with board_lock(make_board("other").pk, ttl=10):
            pass  # another board is free
    with board_lock(board.pk, ttl=10):
        pass  # released


def test_a_health_check_on_a_busy_board_leaves_it_alone(redis_queue, run_jobs):
    board = make_board(status="online")
    task = tasks.start(board, BoardTask.Kind.HEALTH)
    with board_lock(board.pk, ttl=30):
        run_jobs()
    task.refresh_from_db()
    board.refresh_from_db()
    assert task.state == "done"
    assert board.status == "online"


def test_a_job_that_crashes_still_ends_its_task(redis_queue, run_jobs, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(board_tasks, "parse_probe_output", explode)
    monkeypatch.setattr(board_tasks.remote, "session", explode)
    task = tasks.start(make_board(), BoardTask.Kind.PROBE)
    run_jobs()
    task.refresh_from_db()
    assert task.state == "failed"
    assert "failed unexpectedly (RuntimeError)" in task.reason


@pytest.fixture
def busy(fast):
    """The suite's short deadlines, and short waits for a busy board (SSH_CONNECT_TIMEOUT
    only shortens the old lock waits)."""
    fast.PIFARM_BUSY_RETRY = 0.2
    fast.PIFARM_BUSY_WAIT = 1
    fast.SSH_CONNECT_TIMEOUT = 1
    return fast


def run_until_finished(record, run_jobs, seconds=10):
    """Deliver each next try as it falls due (the workers' scheduler does this for real)."""
    deadline = time.monotonic() + seconds
    while not record.is_finished and time.monotonic() < deadline:
        run_jobs(with_scheduler=True)
        time.sleep(0.1)
        record.refresh_from_db()


def scheduled_args(queue) -> list[tuple]:
    registry = ScheduledJobRegistry(queue=queue)
    jobs_ = Job.fetch_many(registry.get_job_ids(), connection=queue.connection)
    return [job.args for job in jobs_]


@pytest.mark.timeout(60)
def test_a_probe_of_a_busy_board_gives_its_worker_back_and_says_it_waits(
    redis_queue, run_jobs, busy, logged_in
):
    busy.PIFARM_BUSY_RETRY = 30
    board = make_board()
    task = tasks.start(board, BoardTask.Kind.PROBE)
    with board_lock(board.pk, ttl=120):  # another job drives the board
        run_jobs()

    # The worker came back at once: the task waits, its next try scheduled 30 s on, and the
    # burst of jobs ended (a job that held its worker for the wait would have ended it).
    task.refresh_from_db()
    assert task.state == BoardTask.State.WAITING
    assert 20 < (task.next_try - timezone.now()).total_seconds() <= 30
    next_try = f"{timezone.localtime(task.next_try):%H:%M:%S}"
    words = f"waiting for bench-1: another job is driving it; next try at {next_try}"
    assert task.waiting_words == words
    assert scheduled_args(redis_queue) == [("probe", task.pk)]
    status = logged_in.get(reverse("devices:task_status", args=[task.code])).json()
    assert status["label"] == "waiting for the board"
    assert status["waiting"] == words and status["finished"] is False
    assert words in logged_in.get(board.get_absolute_url()).content.decode()


@pytest.mark.timeout(60)
def test_a_probe_that_waited_past_the_deadline_ends_with_the_reason(redis_queue, run_jobs, busy):
    board = make_board()
    task = tasks.start(board, BoardTask.Kind.PROBE)
    with board_lock(board.pk, ttl=120):
        run_until_finished(task, run_jobs)

    assert task.state == BoardTask.State.FAILED
    assert task.reason == (
        "bench-1 was busy with other work for more than 1 s, so it was not probed. Try again later."
    )
    assert (task.finished - task.waiting_since).total_seconds() >= 1


@pytest.mark.timeout(60)
def test_an_application_on_a_busy_board_waits_without_a_worker_then_gives_up(
    redis_queue, run_jobs, busy, logged_in
):
    board = make_board(status=Board.Status.ONLINE)
    version = presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": "1700"})
    application = presets.start_application(board, version, Application.Mode.TRIAL)
    with board_lock(board.pk, ttl=120):
        run_jobs()
        application.refresh_from_db()
        status_url = reverse("devices:application_status", args=[application.code])
        status = logged_in.get(status_url).json()
        run_until_finished(application, run_jobs)

    assert status["state"] == "waiting" and status["finished"] is False
    assert status["step"].startswith("waiting for bench-1: another job is driving it; next try")
    assert application.state == Application.State.FAILED
    assert application.reason == (
        "bench-1 was busy with other work for more than 1 s, so nothing was changed. "
        "Start the application again later."
    )
    board.refresh_from_db()
    assert board.status == Board.Status.ONLINE
