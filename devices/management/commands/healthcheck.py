import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from devices import tasks
from devices.models import Board, BoardTask

# A task still queued or running after this long lost its worker (killed, machine gone).
STALE_AFTER = timedelta(minutes=10)


def fail_stale_tasks() -> int:
    """Nothing stays "running" forever: tasks whose worker vanished end as failed."""
    return BoardTask.objects.filter(
        state__in=[BoardTask.State.QUEUED, BoardTask.State.RUNNING],
        created__lt=timezone.now() - STALE_AFTER,
    ).update(
        state=BoardTask.State.FAILED,
        error="no worker finished this task in time (worker stopped or killed?)",
        finished=timezone.now(),
    )


def queue_health_checks() -> int:
    boards = Board.objects.exclude(host_key="").exclude(status=Board.Status.MAINTENANCE)
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
