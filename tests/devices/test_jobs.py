"""Job plumbing with a real Redis and a real RQ worker: locks, crashes, queue failures."""

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from devices import jobs, tasks
from devices.locks import BoardBusy, board_lock
from devices.models import BoardTask

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

    monkeypatch.setattr(jobs, "parse_probe_output", explode)
    monkeypatch.setattr(jobs.remote, "session", explode)
    task = tasks.start(make_board(), BoardTask.Kind.PROBE)
    run_jobs()
    task.refresh_from_db()
    assert task.state == "failed"
    assert "failed unexpectedly (RuntimeError)" in task.error


def test_an_unreachable_queue_fails_the_task_with_the_reason(redis_queue, monkeypatch):
    def refuse(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(redis_queue.__class__, "enqueue", refuse)
    task = tasks.start(make_board(), BoardTask.Kind.PROBE)
    task.refresh_from_db()
    assert task.state == "failed"
    assert "could not reach the job queue" in task.error
