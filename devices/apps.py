from django.apps import AppConfig
from django.conf import settings


class DevicesConfig(AppConfig):
    name = "devices"
    verbose_name = "Boards"

    def ready(self):
        from devices import checks  # noqa: F401 - registers the deploy checks

        if settings.EMBEDDED_REDIS:
            from pifarm import embedded_redis

            embedded_redis.ensure_running(settings.DATA_DIR)
