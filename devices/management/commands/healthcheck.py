import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from devices import apply, tasks
from devices.models import Application, Board, BoardTask
from devices.tasks import JOB_TIMEOUT_S

# A running task past its job timeout lost its worker (killed, machine gone); a queued one
# this old has no worker listening on its queue.
RUNNING_STALE_AFTER = timedelta(seconds=JOB_TIMEOUT_S + 60)
QUEUED_STALE_AFTER = timedelta(hours=1)


def fail_stale_tasks() -> int:
    """Nothing stays "running" forever: tasks whose worker vanished end as failed."""
    now = timezone.now()
    running = BoardTask.objects.filter(
        state=BoardTask.State.RUNNING, started__lt=now - RUNNING_STALE_AFTER
    ).update(
        state=BoardTask.State.FAILED,
        error="the worker running this task stopped before it finished (killed?)",
        finished=now,
    )
    queued = BoardTask.objects.filter(
        state=BoardTask.State.QUEUED, created__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=BoardTask.State.FAILED,
        error="no worker took this task within an hour: is a worker running for its queue?",
        finished=now,
    )
    return running + queued + _fail_stale_applications(now)


def _fail_stale_applications(now) -> int:
    """Applications whose worker vanished. A running one may have left the board half-way,
    so a person looks; a queued one never started."""
    stale = Application.objects.filter(
        created__lt=now - timedelta(seconds=apply.job_timeout() + 60)
    )
    never_started = stale.filter(state=Application.State.QUEUED).update(
        state=Application.State.FAILED,
        outcome="No worker took this application: is a worker running for the board's queue? "
        "Nothing was changed.",
        finished=now,
    )
    interrupted = stale.filter(state=Application.State.RUNNING)
    boards = list(interrupted.values_list("board", flat=True))
    count = interrupted.update(
        state=Application.State.NEEDS_ATTENTION,
        outcome="The worker running this application stopped before it finished. Check the "
        "board's config.txt against the backup in this record, then re-probe it.",
        step="",
        finished=now,
    )
    Board.objects.filter(pk__in=boards).update(
        status=Board.Status.NEEDS_ATTENTION,
        status_reason="a preset application was interrupted (its worker stopped)",
    )
    return never_started + count


def queue_health_checks() -> int:
    """A check for every board, except where the last one has not run yet (no pile-up)."""
    pending = BoardTask.objects.filter(
        kind=BoardTask.Kind.HEALTH, state=BoardTask.State.QUEUED
    ).values("board")
    boards = (
        Board.objects.in_service()
        .exclude(host_key="")
        .exclude(status=Board.Status.MAINTENANCE)
        .exclude(pk__in=pending)
    )
    with transaction.atomic():
        for board in boards:
            tasks.start(board, BoardTask.Kind.HEALTH)
    return len(boards)


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
        while True:
            stale = fail_stale_tasks()
            count = queue_health_checks()
            self.stdout.write(f"queued {count} health checks; {stale} stale tasks failed")
            if not every:
                return
            time.sleep(every)
