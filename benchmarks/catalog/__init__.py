"""The built-in benchmarks, each declared once (see spec.py), looked up by name."""

from benchmarks.catalog import cpu, network, tunnels
from benchmarks.catalog.spec import Benchmark

BUILT_IN: dict[str, Benchmark] = {
    benchmark.name: benchmark
    for module in (cpu, network, tunnels)
    for benchmark in module.BENCHMARKS
}


class UnknownBenchmark(LookupError):
    pass


def get(name: str) -> Benchmark:
    try:
        return BUILT_IN[name]
    except KeyError:
        raise UnknownBenchmark(
            f"there is no benchmark {name!r} (there are: {', '.join(sorted(BUILT_IN))})"
        ) from None
