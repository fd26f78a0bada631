import logging
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from benchmarks import retention, schedules, tallies
from devices import tasks, work
from devices.models import Board, BoardTask
from pifarm import dbready

log = logging.getLogger(__name__)


def fail_stale_tasks() -> int:
    """Nothing stays "running" forever: work whose RQ job died (its worker killed, Redis
    emptied) ends, or goes on, within a round of the death (devices.work)."""
    return work.sweep(timezone.now())


def queue_overdue_tries() -> int:
    return work.queue_overdue_tries(timezone.now())


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
            log.warning("health check of %s not queued: %s", board, task.reason)
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
        # A loop would log the same failure every round: an unmigrated database stops it here
        # (one not up yet is waited for, round after round, as before).
        dbready.require_migrated()
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
        rearmed = schedules.rearm()
        removed = retention.remove_old_telemetry()
        tallied = tallies.catch_up()
        self.stdout.write(
            f"queued {count} health checks, {overdue} overdue next tries and {rearmed} "
            f"scheduled starts that Redis had lost; {stale} stale tasks failed; the telemetry "
            f"of {removed} old runs removed; {tallied} runs added to their campaign's tallies"
        )
