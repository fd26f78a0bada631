"""Start background work on a board: write the task row, enqueue its id after commit."""

from collections.abc import Callable, Sequence
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from devices import enqueue
from devices.models import Board, BoardTask

JOB_TIMEOUT_S = 300


def start(board: Board, kind: str, *, benchmarks: Sequence[str] = ()) -> BoardTask:
    """A new task, queued when the transaction commits; failed at once if it cannot be.

    While a task of that kind is unfinished on the board, that one is returned instead: a
    button pressed 300 times makes one probe, not 300 that each wait their turn.
    benchmarks: what a prepare task prepares the board for (names of built-in benchmarks).
    """
    with transaction.atomic():
        # The board's row lock makes concurrent requests take turns at this check.
        Board.objects.select_for_update().filter(pk=board.pk).exists()
        unfinished = board.tasks.filter(kind=kind, state__in=BoardTask.UNFINISHED).first()
        if unfinished is not None:
            return unfinished
        task = BoardTask.objects.create(board=board, kind=kind, benchmarks=list(benchmarks))
        queue_task(task)
    return task


def job_for(kind: str) -> tuple[Callable[[int], None], float]:
    """The job function of a task kind, and its RQ job timeout (s)."""
    from benchmarks import prepare  # both need the SSH stack: load them only when work starts
    from devices import jobs

    return {
        BoardTask.Kind.FETCH_HOST_KEY: (jobs.fetch_host_key, JOB_TIMEOUT_S),
        BoardTask.Kind.PROBE: (jobs.probe_board, JOB_TIMEOUT_S),
        BoardTask.Kind.HEALTH: (jobs.check_health, JOB_TIMEOUT_S),
        BoardTask.Kind.PREPARE: (prepare.prepare_board, prepare.job_timeout_s()),
    }[kind]


def queue_task(task: BoardTask, at: datetime | None = None) -> None:
    from devices import jobs

    job_function, job_timeout = job_for(task.kind)
    enqueue.on_board_queue(
        task,
        job_function,
        job_timeout=job_timeout,
        on_failure=jobs.task_crashed,
        unqueued=lambda reason: _unqueued(task, reason),
        at=at,
    )


def _unqueued(task: BoardTask, reason: str) -> None:
    BoardTask.objects.filter(pk=task.pk, state__in=BoardTask.UNFINISHED).update(
        state=BoardTask.State.FAILED, error=reason, finished=timezone.now()
    )
