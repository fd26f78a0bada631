"""One way to put work for a board on its worker queue: board tasks and preset applications.

Only the record's id goes into Redis (job arguments show on the queue dashboard), after the
transaction that wrote the record commits. Work that cannot be queued (a queue no worker
serves, Redis down) ends its record at once with the reason, rather than leaving it "queued"
for an hour. A job that finds its board driven by another job gives its worker back and
queues its next try for later (the workers' scheduler delivers it) instead of waiting.
"""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import django_rq
from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Callback, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from devices.locks import is_locked

log = logging.getLogger(__name__)


def busy_retry_s() -> float:
    return float(settings.PIFARM_BUSY_RETRY)


def busy_wait_s() -> float:
    return float(settings.PIFARM_BUSY_WAIT)


# RQ keeps a job in these states when it ended without running its record to the end: the
# work horse was killed (failed, no failure callback), or a person stopped or canceled it.
ENDED_UNFINISHED = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


def on_board_queue(
    record: models.Model,
    function,
    *,
    job_timeout: float,
    on_failure,
    unqueued: Callable[[str], None],
    at: datetime | None = None,
) -> None:
    """Queue function(record.pk) on the queue of record.board once the transaction commits,
    or at `at` if given. unqueued(reason) ends the record when it cannot be queued."""
    queue_name = record.board.queue

    def send():
        try:
            job = _send(queue_name, function, record.pk, at, job_timeout, Callback(on_failure))
        except Unqueued as exc:
            log.error("could not queue %s: %s", record, exc)
            unqueued(str(exc))
            return
        # The stale sweep asks Redis about this job: whether it still lives, and its worker.
        type(record).objects.filter(pk=record.pk).update(job_id=job.id)

    transaction.on_commit(send)


class Unqueued(Exception):
    """The job could not be queued; the message says why, for the record."""


def _send(queue_name: str, function, record_id: int, at, job_timeout, on_failure) -> Job:
    if queue_name not in settings.RQ_QUEUES:  # a queue no worker serves (PIFARM_QUEUES)
        known = ", ".join(settings.RQ_QUEUES)
        raise Unqueued(
            f"no worker serves the queue {queue_name!r} (the queues are: {known}); "
            "set the board's worker queue to one of them"
        )
    # Already after the commit (on_board_queue): queue now, so the job's id comes back.
    queue = django_rq.get_queue(queue_name, commit_mode="auto")
    options = {"job_timeout": job_timeout, "on_failure": on_failure}
    try:
        if at is None:
            return queue.enqueue(function, record_id, **options)
        return queue.enqueue_at(at, function, record_id, **options)
    except RedisError as exc:
        raise Unqueued(f"could not reach the job queue (Redis): {exc}") from None


def wait_for_board(record: models.Model, requeue: Callable[[datetime], None]) -> bool:
    """The record's board is busy: mark the record waiting and queue its next try.

    False, with nothing changed, once it has waited PIFARM_BUSY_WAIT: the caller ends it.
    """
    now = timezone.now()
    since = record.waiting_since or now
    if (now - since).total_seconds() >= busy_wait_s():
        return False
    next_try = now + timedelta(seconds=busy_retry_s())
    State = type(record).State
    waiting = (
        type(record)
        .objects.filter(pk=record.pk, state=State.RUNNING)
        .update(state=State.WAITING, waiting_since=since, next_try=next_try)
    )
    if waiting:  # not if something else ended it meanwhile (the stale-task sweep)
        log.info("%s waits for its board; next try at %s", record, next_try)
        requeue(next_try)
    return True


def why_dead(queue_name: str, job_id: str, board_id: int) -> str:
    """Why the RQ job carrying a record can no longer end it, in words; "" while it can.

    A worker killed outright leaves its job "started"; its key in Redis, which it renews
    while it works (every 30 s, for 90 s), then expires: that is how we know it is gone. Its
    work horse may outlive it (killing only the worker's main process orphans it), and a
    horse at work renews the board's lock: while the board is locked, the job may be alive.
    """
    if queue_name not in settings.RQ_QUEUES:
        return ""  # it was never queued: its record ended when that failed
    connection = django_rq.get_connection(queue_name)
    try:
        job = Job.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return "its job vanished from the job queue (was Redis restarted or emptied?)"
    status = job.get_status(refresh=False)
    if status in ENDED_UNFINISHED:
        return f"its job ended as {status.value} in the job queue before finishing it"
    if status == JobStatus.STARTED and not _worker_alive(job.worker_name, connection):
        if is_locked(board_id):
            return ""  # its horse may still drive the board; its lock expires if not
        return f"its worker {job.worker_name} stopped (killed, or its machine went down)"
    return ""


def _worker_alive(name: str | None, connection) -> bool:
    return bool(name) and bool(connection.exists(Worker.redis_worker_namespace_prefix + name))
