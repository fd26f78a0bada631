"""Start background work on a board: write the task row, enqueue its id after commit."""

import logging

import django_rq
from django.db import transaction
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Callback

from devices.models import Board, BoardTask

log = logging.getLogger(__name__)
JOB_TIMEOUT_S = 300


def start(board: Board, kind: str) -> BoardTask:
    from devices import jobs  # jobs needs the SSH stack: load it only when work starts

    task = BoardTask.objects.create(board=board, kind=kind)
    job_function = {
        BoardTask.Kind.FETCH_HOST_KEY: jobs.fetch_host_key,
        BoardTask.Kind.PROBE: jobs.probe_board,
        BoardTask.Kind.HEALTH: jobs.check_health,
    }[kind]

    def enqueue():
        # Only the task id goes into Redis: job arguments show on the queue dashboard.
        try:
            django_rq.get_queue(board.queue).enqueue(
                job_function,
                task.pk,
                job_timeout=JOB_TIMEOUT_S,
                on_failure=Callback(jobs.task_crashed),
            )
        except RedisError as exc:
            log.error("could not queue %s: %s", task, exc)
            BoardTask.objects.filter(pk=task.pk).update(
                state=BoardTask.State.FAILED,
                error=f"could not reach the job queue (Redis): {exc}",
                finished=timezone.now(),
            )

    transaction.on_commit(enqueue)
    return task
