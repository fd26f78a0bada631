from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from devices.management.commands.healthcheck import fail_stale_tasks
from devices.models import Board, BoardTask

from .factories import make_board

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)
def test_it_queues_one_check_per_board_and_never_piles_up(redis_queue):
    make_board("a")
    make_board("b", status=Board.Status.MAINTENANCE)
    make_board("c", host_key="")  # not confirmed yet: nothing to check
    call_command("healthcheck")
    call_command("healthcheck")  # the first checks have not run: no second round
    tasks = BoardTask.objects.filter(kind=BoardTask.Kind.HEALTH)
    assert [task.board.name for task in tasks] == ["a"]
    assert len(redis_queue.jobs) == 1


def test_tasks_whose_worker_vanished_end_as_failed():
    board = make_board()
    long_ago = timezone.now() - timedelta(hours=2)
    lost = BoardTask.objects.create(board=board, kind="probe", state="running", started=long_ago)
    waiting = BoardTask.objects.create(board=board, kind="probe", state="queued")
    BoardTask.objects.filter(pk=waiting.pk).update(created=long_ago)
    fresh = BoardTask.objects.create(
        board=board, kind="probe", state="running", started=timezone.now()
    )
    assert fail_stale_tasks() == 2
    lost.refresh_from_db()
    waiting.refresh_from_db()
    fresh.refresh_from_db()
    assert lost.state == "failed" and "stopped before it finished" in lost.error
    assert waiting.state == "failed" and "is a worker running" in waiting.error
    assert fresh.state == "running"


def test_a_late_result_does_not_overwrite_a_failed_task():
    from devices import jobs

    board = make_board()
    task = BoardTask.objects.create(board=board, kind="probe", state="failed", error="stale")
    jobs._finish(task)
    task.refresh_from_db()
    assert task.state == "failed"
