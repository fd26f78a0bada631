"""Custom benchmarks an admin defined (benchmarks.models.CustomBenchmark), as catalog entries.

The command is the admin's own shell; the parameters a campaign gives reach it as environment
variables PIFARM_<NAME>, each passed as one argv element of `env`, so no value is shell syntax.
"""

import json
import re

from benchmarks.catalog.spec import Benchmark, Command, Metric, Param, Parsed, ParseError, Plan

MAX_PARAM_LENGTH = 200


def lookup(name: str) -> Benchmark | None:
    from benchmarks.models import CustomBenchmark

    row = CustomBenchmark.objects.filter(name=name).first()
    return None if row is None else from_row(row)


def from_row(row) -> Benchmark:
    params = tuple(
        Param(
            key,
            "text",
            str(default),
            "a custom parameter",
            pattern=rf"(?s).{{0,{MAX_PARAM_LENGTH}}}",
        )
        for key, default in sorted((row.params or {}).items())
    )

    def plan(values: dict, ctx) -> Plan:
        env = [f"PIFARM_{key.upper()}={value}" for key, value in sorted(values.items())]
        env.append(f"PIFARM_WORKDIR={ctx.workdir}")
        argv = ("env", *env, "sh", "-c", row.command)
        return Plan(measure=Command("board", argv, timeout_s=row.timeout_s))

    def parse(outputs, values) -> Parsed:
        return Parsed({row.metric: extract(row.parser, row.pattern, outputs.get("measure", ""))})

    return Benchmark(
        name=row.name,
        title=row.title,
        description=row.description,
        version=row.version,
        metrics=(Metric(row.metric, row.unit, row.higher_is_better),),
        plan=plan,
        parse=parse,
        params=params,
        tools=tuple(row.tools.split()),
        repetitions=row.repetitions,
        timeout_s=row.timeout_s,
        category="custom",
    )


def extract(parser: str, pattern: str, text: str) -> float:
    """The number the parser finds in text, or ParseError saying what was not found."""
    if parser == "regex":
        try:
            match = re.search(pattern, text)
        except re.error as exc:
            raise ParseError(f"the benchmark's regular expression is invalid: {exc}") from None
        if match is None or "value" not in match.groupdict():
            raise ParseError(f"the output has no match for {pattern!r}")
        found = match.group("value")
    else:
        try:
            found = json_path(json.loads(text), pattern)
        except json.JSONDecodeError as exc:
            raise ParseError(f"the output is not JSON: {exc}") from None
    try:
        value = float(found)
    except (TypeError, ValueError):
        raise ParseError(f"{str(found)[:80]!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ParseError(f"{found!r} is not a finite number")
    return value


def json_path(data, path: str):
    """Follow "end.sum_received.bits_per_second" or "intervals.0.sum.bytes" into data."""
    for key in path.split("."):
        if isinstance(data, list) and key.lstrip("-").isdigit():
            try:
                data = data[int(key)]
            except IndexError:
                raise ParseError(f"{path}: there is no item {key}") from None
        elif isinstance(data, dict) and key in data:
            data = data[key]
        else:
            raise ParseError(f"{path}: the output has no {key!r}")
    return data
