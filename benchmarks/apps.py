from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """Benchmark catalog, campaigns, runs and their results."""

    name = "benchmarks"

    def ready(self):
        # Campaign lanes and board preparation as kinds of board work (devices.work).
        from benchmarks import jobs, prepare  # noqa: F401
