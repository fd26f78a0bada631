"""Start background work on a board: write the task row, enqueue its id after commit."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from devices import enqueue
from devices.models import Board, BoardTask

JOB_TIMEOUT_S = 300


def start(board: Board, kind: str) -> BoardTask:
    """A new task, queued when the transaction commits; failed at once if it cannot be.

    While a task of that kind is unfinished on the board, that one is returned instead: a
    button pressed 300 times makes one probe, not 300 that each wait their turn.
    """
    with transaction.atomic():
        # The board's row lock makes concurrent requests take turns at this check.
        Board.objects.select_for_update().filter(pk=board.pk).exists()
        unfinished = board.tasks.filter(kind=kind, state__in=BoardTask.UNFINISHED).first()
        if unfinished is not None:
            return unfinished
        task = BoardTask.objects.create(board=board, kind=kind)
        queue_task(task)
    return task


def queue_task(task: BoardTask, at: datetime | None = None) -> None:
    from devices import jobs  # jobs needs the SSH stack: load it only when work starts

    job_function = {
        BoardTask.Kind.FETCH_HOST_KEY: jobs.fetch_host_key,
        BoardTask.Kind.PROBE: jobs.probe_board,
        BoardTask.Kind.HEALTH: jobs.check_health,
    }[task.kind]
    enqueue.on_board_queue(
        task,
        job_function,
        job_timeout=JOB_TIMEOUT_S,
        on_failure=jobs.task_crashed,
        unqueued=lambda reason: _unqueued(task, reason),
        at=at,
    )


def _unqueued(task: BoardTask, reason: str) -> None:
    BoardTask.objects.filter(pk=task.pk, state__in=BoardTask.UNFINISHED).update(
        state=BoardTask.State.FAILED, error=reason, finished=timezone.now()
    )
