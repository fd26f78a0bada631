from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """Benchmark catalog, campaigns, runs and their results."""

    name = "benchmarks"

    def ready(self):
        # Campaign lanes and board preparation as kinds of board work (devices.work), and
        # the classic questions a spec may name (benchmarks.specs).
        from benchmarks import lanes, prepare, questions  # noqa: F401
