"""Start background work on a board: write the task row, enqueue its id after commit."""

import django_rq
from django.db import transaction
from rq import Callback

from devices.models import Board, BoardTask


def start(board: Board, kind: str) -> BoardTask:
    from devices import jobs  # jobs needs the SSH stack: load it only when work starts

    task = BoardTask.objects.create(board=board, kind=kind)
    job_function = {
        BoardTask.Kind.FETCH_HOST_KEY: jobs.fetch_host_key,
        BoardTask.Kind.PROBE: jobs.probe_board,
        BoardTask.Kind.HEALTH: jobs.check_health,
    }[kind]
    queue = django_rq.get_queue(board.queue)
    # Only the task id goes into Redis: job arguments show on the queue dashboard.
    transaction.on_commit(
        lambda: queue.enqueue(
            job_function, task.pk, job_timeout=300, on_failure=Callback(jobs.task_crashed)
        )
    )
    return task
