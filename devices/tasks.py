"""Start a task on a board: write its row; its job is queued after commit (devices.work)."""

from collections.abc import Sequence

from django.db import transaction

from devices import work
from devices.models import Board, BoardTask


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
        work.queue(task)
    return task
