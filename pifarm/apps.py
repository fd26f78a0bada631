"""The project level as an app: its commands (demo, healthcheck) and the embedded Redis."""

import sys

from django.apps import AppConfig
from django.conf import settings

from pifarm import embedded_redis

# Management commands that never touch the job queue: they must not leave a Redis running.
COMMANDS_WITHOUT_QUEUE = {
    "benchmarks",
    "check",
    "collectstatic",
    "configtxt",
    "createsuperuser",
    "createuser",
    "changepassword",
    "diffsettings",
    "makemigrations",
    "migrate",
    "showmigrations",
    "sqlmigrate",
}


class PifarmConfig(AppConfig):
    name = "pifarm"
    verbose_name = "pifarm"

    def ready(self):
        from pifarm import lockout  # noqa: F401 - connects its count of failed logins

        if settings.EMBEDDED_REDIS and not _queue_free_command(sys.argv):
            embedded_redis.ensure_running(settings.DATA_DIR)


def _queue_free_command(argv: list[str]) -> bool:
    return len(argv) > 1 and argv[0].endswith("manage.py") and argv[1] in COMMANDS_WITHOUT_QUEUE
