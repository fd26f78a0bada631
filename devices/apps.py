import sys

from django.apps import AppConfig
from django.conf import settings

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


class DevicesConfig(AppConfig):
    name = "devices"
    verbose_name = "Boards"

    def ready(self):
        # Deploy checks, and the kinds of board work of devices (devices.work).
        from devices import apply, checks, jobs  # noqa: F401

        if settings.EMBEDDED_REDIS and not _queue_free_command(sys.argv):
            from pifarm import embedded_redis

            embedded_redis.ensure_running(settings.DATA_DIR)


def _queue_free_command(argv: list[str]) -> bool:
    return len(argv) > 1 and argv[0].endswith("manage.py") and argv[1] in COMMANDS_WITHOUT_QUEUE
