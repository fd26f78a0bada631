from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """Benchmark catalog, campaigns and results (built in later issues)."""

    name = "benchmarks"
