"""The built-in benchmarks, each declared once in its category's module, by name."""

from benchmarks.catalog import (
    compression,
    cpu,
    crypto,
    media,
    memory,
    network,
    storage,
    tunnels,
)
from benchmarks.catalog.spec import Benchmark

BUILT_IN: dict[str, Benchmark] = {
    benchmark.name: benchmark
    for module in (cpu, crypto, compression, memory, media, storage, network, tunnels)
    for benchmark in module.BENCHMARKS
}
