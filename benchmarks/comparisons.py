"""A comparison: one metric of chosen runs, in groups (by preset, bitness, board...), each group
described and compared with a baseline group by benchmarks.stats.

Tens of thousands of measurements stay fast because nothing here loads a Run: the values come
from one values_list of the few columns a group needs, the environment from two more queries
that the database de-duplicates (the runs' distinct snapshots and tool versions). So a
comparison costs the same few queries however many runs it holds.
"""

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet

from benchmarks import catalog, stats
from benchmarks.models import Measurement, Run
from benchmarks.results import value_text
from devices.models import FactSnapshot

AS_IS = "as the board is"
UNKNOWN = "unknown"
PARAM_PREFIX = "param:"
# The ways to group that every benchmark has; its parameters add "param:<name>".
GROUP_BY = {
    "preset": "preset version",
    "bits": "kernel and userland bitness",
    "board": "board",
    "board_model": "board model",
    "campaign": "campaign",
}
# Columns of Measurement that make each group's key, and how the key reads.
_KEY_COLUMNS = {
    "preset": ("run__preset_version__preset__name", "run__preset_version__number"),
    "bits": ("run__snapshot__kernel_bits", "run__snapshot__userland_bits"),
    "board": ("run__board__name",),
    "board_model": ("run__snapshot__model",),
    "campaign": ("run__campaign__name",),
}
# The run's median Arm clock under load, from its telemetry summary (benchmarks.telemetry).
_CLOCK = "run__environment__telemetry__arm_mhz_under_load__median"
# The version lines parsers keep (benchmarks.results.tool_version reads the same keys).
_TOOL_VERSION_KEYS = ("tool_version", "iperf3_version", "version")


class ComparisonError(ValueError):
    """A choice that cannot make a comparison (an unknown grouping, no values...)."""


def runs_selected(campaign_ids=(), run_ids=()) -> QuerySet:
    """The runs of the chosen campaigns and the chosen runs, done ones only (they alone have
    values)."""
    return Run.objects.filter(
        Q(campaign_id__in=list(campaign_ids)) | Q(pk__in=list(run_ids)), state=Run.State.DONE
    )


def metric_choices(runs: QuerySet) -> list[tuple[str, str, str]]:
    """(benchmark, metric, unit) of every value the runs measured, by benchmark and metric."""
    found = Measurement.objects.filter(run__in=runs).values_list("run__benchmark", "metric", "unit")
    return sorted(set(found.distinct()))


def group_by_choices(benchmark: str) -> dict[str, str]:
    """GROUP_BY and the benchmark's own parameters (cipher, MTU...)."""
    try:
        params = catalog.lookup(benchmark).params
    except catalog.UnknownBenchmark:  # a custom benchmark deleted since, say
        params = ()
    return GROUP_BY | {f"{PARAM_PREFIX}{param.name}": f"parameter {param.name}" for param in params}


@dataclass
class Group:
    key: str
    values: list[float]  # the trials that count (suspects out unless included)
    suspects_excluded: int
    description: stats.Description
    boards: dict[str, stats.Description]  # each board's own trials
    environment: dict[str, str] = field(default_factory=dict)

    @property
    def several_boards(self) -> bool:
        return len(self.boards) > 1


@dataclass
class Result:
    benchmark: str
    metric: str
    unit: str
    higher_is_better: bool
    group_by: str
    group_by_label: str
    baseline: str
    include_suspects: bool
    groups: list[Group]
    comparisons: dict[str, stats.Comparison]  # by group key, every group but the baseline

    @property
    def n(self) -> int:
        return sum(group.description.n for group in self.groups)

    @property
    def table(self) -> list[tuple[Group, stats.Comparison | None]]:
        """Each group with its comparison against the baseline (None for the baseline)."""
        return [(group, self.comparisons.get(group.key)) for group in self.groups]

    @property
    def suspects_excluded(self) -> int:
        return sum(group.suspects_excluded for group in self.groups)


def compare(
    runs: QuerySet,
    benchmark: str,
    metric: str,
    group_by: str,
    baseline: str = "",
    include_suspects: bool = False,
) -> Result:
    """The groups of runs' values of benchmark's metric and their comparisons with baseline (a
    group's key; the first group when empty or gone)."""
    choices = group_by_choices(benchmark)
    if group_by not in choices:
        raise ComparisonError(f"{benchmark} cannot be grouped by {group_by!r}")
    columns = _key_columns(group_by)
    measured = Measurement.objects.filter(run__in=runs, run__benchmark=benchmark, metric=metric)
    rows = measured.values_list(
        "value", "run__suspect", "run__board__name",
        "run__snapshot_id", _CLOCK, *columns,
    )  # fmt: skip
    counted, suspects, boards = defaultdict(list), defaultdict(int), defaultdict(dict)
    clocks, snapshots = defaultdict(list), defaultdict(set)
    for value, suspect, board, snapshot, clock, *key in rows.iterator():
        label = _label(group_by, key)
        if suspect and not include_suspects:
            suspects[label] += 1
            continue
        counted[label].append(value)
        boards[label].setdefault(board, []).append(value)
        snapshots[label].add(snapshot)
        if clock is not None:
            clocks[label].append(clock)
    if not counted:
        raise ComparisonError(f"no {metric} values of {benchmark} in these runs")
    # A metric's unit and direction are the benchmark definition's, the same in every run.
    unit, higher_is_better = measured.values_list("unit", "higher_is_better").first()
    keys = sorted(counted, key=_order)
    baseline = baseline if baseline in counted else keys[0]
    environments = _environments(runs.filter(benchmark=benchmark), group_by, columns, snapshots)
    groups = [
        Group(
            key=key, values=counted[key], suspects_excluded=suspects[key],
            description=stats.describe(counted[key]),
            boards={name: stats.describe(found) for name, found in sorted(boards[key].items())},
            environment=environments[key] | {"measured Arm clock": _clock_text(clocks[key])},
        )
        for key in keys
    ]  # fmt: skip
    others = {key: counted[key] for key in keys if key != baseline}
    return Result(
        benchmark=benchmark, metric=metric, unit=unit, higher_is_better=higher_is_better,
        group_by=group_by, group_by_label=choices[group_by], baseline=baseline,
        include_suspects=include_suspects, groups=groups,
        comparisons=stats.compare_many(counted[baseline], others, higher_is_better),
    )  # fmt: skip


def _key_columns(group_by: str) -> tuple[str, ...]:
    if group_by.startswith(PARAM_PREFIX):
        return (f"run__params__{group_by.removeprefix(PARAM_PREFIX)}",)
    return _KEY_COLUMNS[group_by]


def _label(group_by: str, key: list) -> str:
    """A group's key as its name on the page, in the CSV and in a saved comparison."""
    if group_by == "preset":
        name, number = key
        return AS_IS if name is None else f"{name} v{number}"
    if group_by == "bits":
        kernel, userland = (f"{bits}-bit" if bits else UNKNOWN for bits in key)
        return f"{kernel} kernel, {userland} userland"
    (value,) = key
    if value is None or value == "":
        return UNKNOWN
    return value_text(value)


def _order(key: str):
    """As the board is first (the usual baseline), then numbers by size (MTU 1400 before
    9000), then the rest by name."""
    head = key.split()[0].removesuffix("-bit") if key else key
    return (key != AS_IS, not head.isdigit(), int(head) if head.isdigit() else 0, key)


def _environments(runs, group_by, columns, snapshots) -> dict[str, dict[str, str]]:
    """Each group's environment in words: the boards' models, kernels, OS... (from the distinct
    snapshots its runs were made with) and the tools' versions and preset versions its runs
    used (one query each, de-duplicated by the database)."""
    facts = {
        row[0]: row[1:]
        for row in FactSnapshot.objects.filter(pk__in=runs.values("snapshot_id")).values_list(
            "pk", "model", "kernel_bits", "userland_bits", "os_name", "facts__kernel_release",
            "facts__firmware_version__version", "facts__governor",
        )
    }  # fmt: skip
    used = defaultdict(lambda: defaultdict(set))
    run_columns = [column.removeprefix("run__") for column in columns]
    tool_columns = [f"details__{key}" for key in _TOOL_VERSION_KEYS]
    preset = ("preset_version__preset__name", "preset_version__number")
    for row in runs.values_list(*run_columns, *preset, *tool_columns).distinct().iterator():
        key, rest = row[: len(columns)], row[len(columns) :]
        label = _label(group_by, list(key))
        used[label]["preset version"].add(_label("preset", list(rest[:2])))
        used[label]["tool versions"].update(str(version) for version in rest[2:] if version)
    found = {}
    for label, ids in snapshots.items():
        known = [facts[pk] for pk in ids if pk in facts]
        words = {
            "board model": _joined(fact[0] for fact in known),
            "kernel": _joined(fact[4] for fact in known),
            "kernel bits": _joined(fact[1] for fact in known),
            "userland bits": _joined(fact[2] for fact in known),
            "OS": _joined(fact[3] for fact in known),
            "firmware": _joined(fact[5] for fact in known),
            "governor": _joined(fact[6] for fact in known),
        }
        found[label] = words | {name: _joined(seen) for name, seen in used[label].items()}
    return found


def _joined(values) -> str:
    """Distinct values, sorted, joined: "6.6.31-v8+; 6.6.51-v8+"; "unknown" for none."""
    seen = sorted({str(value) for value in values if value not in (None, "")})
    return "; ".join(seen) or UNKNOWN


def _clock_text(clocks: list[float]) -> str:
    if not clocks:
        return "not measured"
    median = statistics.median(clocks)
    low, high = min(clocks), max(clocks)
    spread = "" if low == high else f" (runs {low:g} to {high:g})"
    return f"{median:g} MHz median under load{spread}"
