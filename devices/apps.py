from django.apps import AppConfig


class DevicesConfig(AppConfig):
    name = "devices"
    verbose_name = "Boards"

    def ready(self):
        # Deploy checks, and the kinds of board work of devices (devices.work).
        from devices import apply, board_tasks, checks  # noqa: F401
