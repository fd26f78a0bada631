"""Custom benchmarks an admin defined (benchmarks.models.CustomBenchmark), as catalog entries.

The command is the admin's own shell; the parameters a campaign gives reach it as environment
variables PIFARM_<NAME>, each passed as one argv element of `env`, so no value is shell syntax.
"""

import json

import regex

from benchmarks.catalog.custom_rules import (
    custom_param,
    params_problem,
    pattern_problem,
)
from benchmarks.catalog.parsing import bounded
from benchmarks.catalog.spec import (
    Benchmark,
    Command,
    Metric,
    Parsed,
    ParseError,
    Plan,
    UnknownBenchmark,
)

MAX_TIMEOUT_S = 3600  # of a custom command; the lane job's time limit counts on it
OUTPUT_CAP = 1024 * 1024  # bytes a custom command may print; the rest stops it
REGEX_TIME_LIMIT_S = 5  # a pattern that backtracks without end must not hold the worker
# The command, its output cut at $2 bytes on the board itself (a command that prints without
# end must not fill the board's RAM disk); a command cut off so ends with a clear message. It
# writes into a FIFO that head reads: once the command itself has ended, what it left running
# in the background may hold the FIFO open, so head gets a second to drain it, then stops.
# (GNU head buffers what it writes: stdbuf makes it write at once, so stopping it loses none.)
_CAPPED = r"""
fifo=$PIFARM_WORKDIR/.output
mkfifo -- "$fifo"
unbuffered=
command -v stdbuf > /dev/null 2>&1 && unbuffered="stdbuf -o0"
$unbuffered head -c "$2" < "$fifo" &
reader=$!
sh -c "$1" > "$fifo"
status=$?
i=0
while kill -0 "$reader" 2>/dev/null && [ $i -lt 38 ]; do
  if [ $i -lt 20 ]; then sleep 0.005; else sleep 0.05; fi  # at once, as a rule: 1 s at most
  i=$((i + 1))
done
kill "$reader" 2>/dev/null
rm -f -- "$fifo"
if [ "$status" = 141 ]; then
  echo "it printed more than $2 bytes, all a custom command may print; it was stopped there" >&2
fi
exit "$status"
"""


def lookup(name: str) -> Benchmark | None:
    from benchmarks.models import CustomBenchmark

    row = CustomBenchmark.objects.filter(name=name).first()
    return None if row is None else from_row(row)


class UnusableBenchmark(UnknownBenchmark):
    """A custom benchmark whose stored definition cannot run (saved before a check existed, or
    around the admin): refused wherever it is named, as an unknown one, with what to fix."""

    def __init__(self, name: str, problem: str):
        super().__init__(
            f"{name} cannot be used until an admin fixes it in Admin › Custom benchmarks: {problem}"
        )
        self.problem = problem


def defined() -> tuple[list[Benchmark], list[tuple[object, UnusableBenchmark]]]:
    """The custom benchmarks that can be used, and the rows of those that cannot with their
    refusal: one bad definition must not take the builder or the catalog down for the others.
    A row with a built-in's name is left out, as lookup() finds the built-in."""
    from benchmarks.catalog import BUILT_IN
    from benchmarks.models import CustomBenchmark

    usable, unusable = [], []
    for row in CustomBenchmark.objects.exclude(name__in=list(BUILT_IN)):
        try:
            usable.append(from_row(row))
        except UnusableBenchmark as exc:
            unusable.append((row, exc))
    return usable, unusable


def from_row(row) -> Benchmark:
    """The catalog entry of a row; UnusableBenchmark if its parameters cannot be used."""
    if problem := params_problem(row.params):
        raise UnusableBenchmark(row.name, problem)
    params = tuple(custom_param(key, default) for key, default in sorted(row.params.items()))

    def plan(values: dict, ctx) -> Plan:
        env = [f"PIFARM_{key.upper()}={value}" for key, value in sorted(values.items())]
        env.append(f"PIFARM_WORKDIR={ctx.workdir}")
        argv = ("env", *env, "sh", "-c", _CAPPED, "pifarm-custom", row.command, str(OUTPUT_CAP))
        timeout = min(max(1, row.timeout_s), MAX_TIMEOUT_S)  # 0 would be no limit at all
        shown = f"{row.name}'s command"
        return Plan(measure=Command("board", argv, timeout_s=timeout, shown=shown))

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
        # Its figure is whatever its command prints: how long that must run to repeat well
        # is its author's to know, so no trial of it is lengthened or marked short.
        min_trial_s=0,
        noise_floor_s=0,
    )


def extract(parser: str, pattern: str, text: str) -> float:
    """The number the parser finds in text, or ParseError saying what was not found."""
    if parser == "regex":
        found = _search(pattern, text)
    else:
        try:
            # Integers read as floats: one too large for a float is then inf (refused below,
            # as 1e400 is) rather than an OverflowError, and past 4,300 digits Python's int
            # would refuse to read it at all.
            found = json_path(json.loads(text, parse_int=float), pattern)
        except json.JSONDecodeError as exc:
            raise ParseError(f"the output is not JSON: {exc}") from None
        except RecursionError:
            raise ParseError("the output's JSON is nested too deeply to read") from None
    try:
        value = float(found)
    except (TypeError, ValueError):
        raise ParseError(f"{str(found)[:80]!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ParseError(f"{found!r} is not a finite number")
    return bounded(value, "the value")


def _search(pattern: str, text: str) -> str:
    """re.search with a time limit: a pattern such as (a+)+b backtracks for ever on a long
    line of a's, and Python's re cannot be interrupted. The regex module's matcher (in its
    re-compatible V0 mode) checks a deadline as it goes."""
    if problem := pattern_problem(pattern):
        raise ParseError(f"the benchmark's pattern is refused: {problem}")
    try:
        match = regex.search(pattern, text, flags=regex.V0, timeout=REGEX_TIME_LIMIT_S)
    except TimeoutError:
        raise ParseError(
            f"the pattern {pattern[:80]!r} took more than {REGEX_TIME_LIMIT_S} s on this "
            "output (it backtracks without end); simplify it"
        ) from None
    except regex.error as exc:
        raise ParseError(f"the pattern could not be applied: {exc}") from None
    if match is None:
        raise ParseError(f"the output has no match for {pattern[:200]!r}")
    return match.group("value")


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
