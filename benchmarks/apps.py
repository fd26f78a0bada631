from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """Benchmark catalog, campaigns, runs and their results."""

    name = "benchmarks"

    def ready(self):
        from benchmarks import kinds  # noqa: F401 - campaign lanes as a kind of board work
