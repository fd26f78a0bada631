import json

from django.core.management.base import BaseCommand

from benchmarks.catalog import BUILT_IN, custom
from benchmarks.catalog.spec import Benchmark


class Command(BaseCommand):
    help = "List the benchmark catalog: metrics, parameters with defaults, tools, peer."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print the catalog as JSON")

    def handle(self, *args, json: bool = False, **options):
        usable, unusable = custom.defined()
        for _row, refusal in unusable:
            self.stderr.write(str(refusal))
        benchmarks = [*BUILT_IN.values(), *usable]
        if json:
            self.stdout.write(_json([describe(benchmark) for benchmark in benchmarks]))
            return
        for benchmark in benchmarks:
            self.stdout.write(text(benchmark))


def describe(benchmark: Benchmark) -> dict:
    return {
        "name": benchmark.name,
        "title": benchmark.title,
        "version": benchmark.version,
        "metrics": [
            {"name": m.name, "unit": m.unit, "higher_is_better": m.higher_is_better}
            for m in benchmark.metrics
        ],
        "params": [
            {"name": p.name, "kind": p.kind, "default": p.default, "choices": list(p.choices)}
            for p in benchmark.params
        ],
        "tools": list(benchmark.tools),
        "peer_tools": list(benchmark.peer_tools),
        "packages": list(benchmark.packages),
        "needs_peer": benchmark.needs_peer,
        "repetitions": benchmark.repetitions,
        "timeout_s": benchmark.timeout_s,
        "min_trial_s": benchmark.min_trial_s,
        "length_param": benchmark.length_param,
        "noise_floor_s": benchmark.noise_floor_s,
    }


def text(benchmark: Benchmark) -> str:
    metrics = ", ".join(f"{m.name} [{m.unit}, {m.direction}]" for m in benchmark.metrics)
    params = ", ".join(f"{p.name}={_default(p.default)}" for p in benchmark.params) or "none"
    tools = " ".join(benchmark.tools) or "none"
    peer = "needs a peer" if benchmark.needs_peer else "no peer"
    return (
        f"{benchmark.name} (v{benchmark.version}): {benchmark.title}\n"
        f"  metrics: {metrics}\n  params: {params}\n  tools: {tools}; {peer}\n"
        f"  trials: {_length(benchmark)}\n"
    )


def _length(benchmark: Benchmark) -> str:
    floor = f"suspect under {benchmark.noise_floor_s:g} s" if benchmark.noise_floor_s else ""
    if not benchmark.length_param:
        return floor or "any length"
    lengthened = f"lengthened to {benchmark.min_trial_s:g} s by {benchmark.length_param}"
    return f"{lengthened}, {floor}" if floor else lengthened


def _default(value) -> str:
    return "+".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _json(value) -> str:
    return json.dumps(value, indent=2)
