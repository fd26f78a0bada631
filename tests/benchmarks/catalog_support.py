"""What the catalog tests share: fixture files, running a plan for real, and fuzzing a parser."""

import math
import uuid
from pathlib import Path

from hypothesis import strategies as st

from benchmarks import trial
from benchmarks.catalog.spec import Benchmark, Context, Parsed, ParseError
from benchmarks.endpoints import ControllerEndpoint, Endpoint
from tests.benchmarks.ends import board_end

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "benchmarks"


def fixture(tool: str, name: str) -> str:
    return (FIXTURES / tool / name).read_text()


def run(benchmark: Benchmark, raw_params: dict, end: Endpoint) -> Parsed:
    """The benchmark's real plan, run by trial.run on `end`, then parsed."""
    params = benchmark.clean_params(raw_params)
    ctx = Context(workdir=f"/dev/shm/pifarm-test-{uuid.uuid4().hex[:12]}")
    outcome = trial.run(benchmark.plan(params, ctx), {"board": end}, ctx)
    return benchmark.parse(outcome.outputs, params)


def run_on_controller(benchmark: Benchmark, raw_params: dict) -> Parsed:
    return run(benchmark, raw_params, ControllerEndpoint())


def run_on_node(node, benchmark: Benchmark, raw_params: dict) -> Parsed:
    with board_end(node) as end:
        return run(benchmark, raw_params, end)


def assert_sane(benchmark: Benchmark, parsed: Parsed) -> None:
    """Every metric of the benchmark (an optional one may be missing), each a finite number
    above zero."""
    required = {metric.name for metric in benchmark.metrics if not metric.optional}
    assert required <= set(parsed.values) <= {metric.name for metric in benchmark.metrics}
    for name, value in parsed.values.items():
        assert math.isfinite(value) and value > 0, (name, value)


def parses_or_refuses(benchmark: Benchmark, outputs: dict, params: dict) -> None:
    """What fuzzing checks: values for every metric, or ParseError; nothing else escapes."""
    try:
        parsed = benchmark.parse(outputs, params)
    except ParseError:
        return
    assert_sane(benchmark, parsed)


def mutated(text: str) -> st.SearchStrategy[str]:
    """Real output with a slice cut, repeated or replaced, or digits changed."""
    position = st.integers(0, len(text))
    cut = st.tuples(position, position).map(lambda ab: text[: min(ab)] + text[max(ab) :])
    repeated = st.tuples(position, position).map(
        lambda ab: text[: max(ab)] + text[min(ab) : max(ab)] + text[max(ab) :]
    )
    replaced = st.tuples(position, st.text(max_size=20)).map(
        lambda pt: text[: pt[0]] + pt[1] + text[pt[0] + len(pt[1]) :]
    )
    digits = st.sampled_from(["0", "-1", "1e999", "nan", "99999999999999999999999", ""]).map(
        lambda digit: "".join(digit if ch.isdigit() else ch for ch in text)
    )
    return st.one_of(cut, repeated, replaced, digits)
