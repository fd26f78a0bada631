import logging
import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone
from redis.exceptions import RedisError

from devices import apply, enqueue, presets, tasks
from devices.models import Application, Board, BoardTask

log = logging.getLogger(__name__)

# A running task a minute past its job timeout (tasks.job_for: a prepare task's is long) lost
# its worker (killed, machine gone); a queued one this old has no worker listening on its
# queue. A waiting one is judged by its next try (it may rightly wait a long time for a busy
# board): an hour past it, nothing delivered it.
RUNNING_GRACE = timedelta(seconds=60)
QUEUED_STALE_AFTER = timedelta(hours=1)
NO_SCHEDULER = (
    "its next try was due an hour ago and never came: do the workers run with --with-scheduler?"
)
# Work younger than this is left alone by the job checks: its job may not be queued yet (the
# record commits first, then its job is queued and its id stored).
JOB_GRACE = timedelta(seconds=30)
# A next try this late was not delivered: the worker holding RQ's scheduler died, and another
# takes the scheduler over only at its maintenance pass (every 10 minutes).
OVERDUE_AFTER = timedelta(seconds=60)


def fail_stale_tasks() -> int:
    """Nothing stays "running" forever. Work whose RQ job died (its worker killed, Redis
    emptied) ends within a round of the death; the time limits below are the backstop for
    work whose job cannot be asked about."""
    now = timezone.now()
    dead = _end_dead_jobs(now)
    running = sum(
        BoardTask.objects.filter(
            state=BoardTask.State.RUNNING,
            kind=kind,
            started__lt=now - timedelta(seconds=tasks.job_for(kind)[1]) - RUNNING_GRACE,
        ).update(
            state=BoardTask.State.FAILED,
            error="the worker running this task stopped before it finished (killed?)",
            finished=now,
        )
        for kind in BoardTask.Kind.values
    )
    queued = BoardTask.objects.filter(
        state=BoardTask.State.QUEUED, created__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=BoardTask.State.FAILED,
        error="no worker took this task within an hour: is a worker running for its queue?",
        finished=now,
    )
    waiting = BoardTask.objects.filter(
        state=BoardTask.State.WAITING, next_try__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=BoardTask.State.FAILED,
        error=f"Waited for the board, but {NO_SCHEDULER}",
        finished=now,
    )
    lanes = _sweep_lanes(now)
    return dead + running + queued + waiting + _fail_stale_applications(now) + lanes


def _sweep_lanes(now) -> int:
    """Campaign lanes whose job died go on with their next run (benchmarks.jobs.sweep)."""
    from benchmarks import jobs  # the benchmarks app builds on this one

    try:
        return jobs.sweep(now)
    except RedisError as exc:
        log.warning("could not ask the job queue about campaign lanes: %s", exc)
        return 0


def queue_overdue_tries() -> int:
    """Queue now the next tries of waiting work that no scheduler delivered. Should the late
    delivery still come, it finds the record running or ended and does nothing."""
    now = timezone.now()
    from benchmarks.jobs import queue_lane
    from benchmarks.models import Lane

    queued = 0
    try:
        kinds = (
            (BoardTask, tasks.queue_task),
            (Application, presets.queue_application),
            (Lane, queue_lane),
        )
        for model, queue in kinds:
            waiting = model.objects.filter(state=model.State.WAITING)
            for record in waiting.filter(next_try__lt=now - OVERDUE_AFTER).select_related("board"):
                # Its next try is now: the next round does not queue it again meanwhile.
                if waiting.filter(pk=record.pk).update(next_try=now):
                    queue(record)
                    queued += 1
    except RedisError as exc:  # the dead-job sweep ends them once Redis is back
        log.warning("could not queue overdue next tries: %s", exc)
    if queued:
        log.warning("queued %d next tries that no scheduler delivered", queued)
    return queued


def _end_dead_jobs(now) -> int:
    old_enough = {"state__in": BoardTask.UNFINISHED, "created__lt": now - JOB_GRACE}
    tasks = BoardTask.objects.filter(**old_enough).exclude(job_id="").select_related("board")
    applications = (
        Application.objects.filter(**old_enough)
        .exclude(job_id="")
        .select_related("board", "version__preset")
    )
    ended = 0
    try:
        for task in tasks:
            if why := enqueue.why_dead(task.board.queue, task.job_id, task.board_id):
                ended += BoardTask.objects.filter(
                    pk=task.pk, state__in=BoardTask.UNFINISHED, job_id=task.job_id
                ).update(state=BoardTask.State.FAILED, error=f"{why}; start it again", finished=now)
        for application in applications:
            if why := enqueue.why_dead(
                application.board.queue, application.job_id, application.board_id
            ):
                cause = f"It stopped{apply.while_step(application)}: {why}."
                ended += apply.end_interrupted(application, cause)
    except RedisError as exc:  # the time limits still apply
        log.warning("could not ask the job queue about unfinished work: %s", exc)
    return ended


def _fail_stale_applications(now) -> int:
    """Applications whose worker vanished. A running one may have left the board half-way,
    so a person looks; a queued one never started."""
    stale_after = now - timedelta(seconds=apply.job_timeout() + 60)
    never_started = Application.objects.filter(
        state=Application.State.QUEUED, created__lt=stale_after
    ).update(
        state=Application.State.FAILED,
        outcome="No worker took this application: is a worker running for the board's queue? "
        "Nothing was changed.",
        finished=now,
    )
    never_retried = Application.objects.filter(
        state=Application.State.WAITING, next_try__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=Application.State.FAILED,
        outcome=f"Nothing was changed: it waited for the board, but {NO_SCHEDULER}",
        step="",
        finished=now,
    )
    # Started, not created: an application may wait a long time for its board first.
    interrupted = Application.objects.filter(
        state=Application.State.RUNNING, started__lt=stale_after
    ).select_related("version__preset")
    count = 0
    for application in interrupted:
        cause = (
            f"The worker running this application stopped{apply.while_step(application)}, "
            "before it finished."
        )
        count += apply.end_interrupted(application, cause)
    return never_started + never_retried + count


def queue_health_checks() -> int:
    """A check for every board, except where the last one has not run yet (no pile-up).

    One board's failure (its queue unknown, Redis down) is logged and the others go on.
    """
    pending = BoardTask.objects.filter(
        kind=BoardTask.Kind.HEALTH, state__in=BoardTask.UNFINISHED
    ).values("board")
    boards = (
        Board.objects.in_service()
        .exclude(host_key="")
        # A person must look at a board that needs attention: its answering says nothing.
        .exclude(status__in=[Board.Status.MAINTENANCE, Board.Status.NEEDS_ATTENTION])
        .exclude(pk__in=pending)
    )
    queued = 0
    for board in boards:
        try:
            with transaction.atomic():
                task = tasks.start(board, BoardTask.Kind.HEALTH)
        except Exception:
            log.exception("could not start a health check of %s", board)
            continue
        task.refresh_from_db()
        if task.state == BoardTask.State.FAILED:
            log.warning("health check of %s not queued: %s", board, task.error)
        else:
            queued += 1
    return queued


class Command(BaseCommand):
    help = "Queue a health check of every board (online/offline), once or periodically."

    def add_arguments(self, parser):
        parser.add_argument(
            "--every",
            type=int,
            metavar="SECONDS",
            help=f"repeat forever, e.g. {settings.HEALTH_CHECK_INTERVAL} "
            "(the PIFARM_HEALTH_CHECK_INTERVAL default)",
        )

    def handle(self, *args, every=None, **options):
        if not every:
            self.round()
            return
        while True:
            try:
                self.round()
            except Exception:
                # The demo stops when this process exits: a bad round is logged, not fatal.
                log.exception("health-check round failed; trying again in %s s", every)
            time.sleep(every)

    def round(self) -> None:
        stale = fail_stale_tasks()
        overdue = queue_overdue_tries()
        count = queue_health_checks()
        self.stdout.write(
            f"queued {count} health checks and {overdue} overdue next tries; "
            f"{stale} stale tasks failed"
        )
