"""The benchmarks: built-in ones, each declared once (see spec.py), and custom ones that admins
define (benchmarks.models.CustomBenchmark), looked up by name."""

from benchmarks.catalog.built_in import BUILT_IN
from benchmarks.catalog.spec import Benchmark, UnknownBenchmark, shown


def lookup(name: str) -> Benchmark:
    from benchmarks.catalog import custom  # it reads the database

    if name in BUILT_IN:
        return BUILT_IN[name]
    found = custom.lookup(name)
    if found is None:
        raise UnknownBenchmark(
            f"there is no benchmark {shown(name)} (built in: {', '.join(sorted(BUILT_IN))})"
        )
    return found
