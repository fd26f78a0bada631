"""A comparison: one metric of chosen runs, in groups (by preset, bitness, board...), each group
described and compared with a baseline group by benchmarks.stats.

Tens of thousands of measurements stay fast because nothing here loads a Run: the values come
from one query of a few columns of the measurement and its run (ids, no joins further), and
what the ids stand for (boards, probes, preset versions) from one small query each, as do the
tools' versions, which the database de-duplicates. So a comparison costs the same few queries
however many runs it holds.
"""

import contextlib
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, replace

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce

from benchmarks import catalog, stats
from benchmarks.models import Campaign, Measurement, Run
from benchmarks.results import TOOL_VERSION_KEYS, value_text
from devices.models import Board, FactSnapshot, PresetVersion

AS_IS = "as the board is"
UNKNOWN = "unknown"
PARAM_PREFIX = "param:"
# The ways to group that every benchmark has; its parameters add "param:<name>".
GROUP_BY = {
    "preset": "preset version",
    "bits": "kernel and userland bitness",
    "userland": "userland bitness",
    "board": "board",
    "board_model": "board model",
    "campaign": "campaign",
}
# The column of Measurement whose value makes each group's key (_Names says what it reads).
_KEY_COLUMNS = {
    "preset": "run__preset_version_id",
    "bits": "run__snapshot_id",
    "userland": "run__snapshot_id",
    "board": "run__board_id",
    "board_model": "run__snapshot_id",
    "campaign": "run__campaign_id",
}
# A probe's facts that a group's environment shows, and their columns.
_FACTS = {
    "board model": "model", "kernel": "facts__kernel_release", "kernel bits": "kernel_bits",
    "userland bits": "userland_bits", "OS": "os_name",
    "firmware": "facts__firmware_version__version", "governor": "facts__governor",
}  # fmt: skip
# The run's median Arm clock under load, from its telemetry summary (benchmarks.telemetry).
_CLOCK = "run__environment__telemetry__arm_mhz_under_load__median"
# The version line parsers keep, under one of results' keys: the first one a run has.
_TOOL_VERSION = Coalesce(*(KeyTextTransform(key, "run__details") for key in TOOL_VERSION_KEYS))


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
    # order_by(): Measurement's ordering would join the lane, campaign and board and make the
    # DISTINCT one of every measurement: several times slower over tens of thousands.
    found = Measurement.objects.filter(run__in=runs).order_by()
    return sorted(set(found.values_list("run__benchmark", "metric", "unit").distinct()))


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
    runs = runs.filter(benchmark=benchmark)
    measured = Measurement.objects.filter(run__in=runs, metric=metric).order_by()
    # Ids only, from the run's own row: names come from the few rows they point at (_Names).
    rows = _fetched(measured.values_list(
        "value", "run__suspect", "run__board_id", "run__snapshot_id", "run__preset_version_id",
        "run__campaign_id", _CLOCK, _TOOL_VERSION, _key_column(group_by),
    ))  # fmt: skip
    names = _Names(rows, group_by)
    counted, suspects, boards = defaultdict(list), defaultdict(int), defaultdict(dict)
    clocks, snapshots, versions = defaultdict(list), defaultdict(set), defaultdict(set)
    tools = defaultdict(set)
    for value, suspect, board, snapshot, version, _, clock, tool, key in rows:
        label = names.label(key)
        if tool:
            tools[label].add(tool)
        if suspect and not include_suspects:
            suspects[label] += 1
            continue
        counted[label].append(value)
        boards[label].setdefault(board, []).append(value)
        snapshots[label].add(snapshot)
        versions[label].add(version)
        if clock is not None:
            clocks[label].append(clock)
    if not counted:
        raise ComparisonError(f"no {metric} values of {benchmark} in these runs")
    # A metric's unit and direction are the benchmark definition's, the same in every run.
    unit, higher_is_better = measured.values_list("unit", "higher_is_better").first()
    keys = sorted(counted, key=group_order)
    baseline = baseline if baseline in counted else keys[0]
    groups = []
    for key in keys:
        description = stats.describe(counted[key])
        groups.append(Group(
            key=key, values=counted[key], suspects_excluded=suspects[key],
            description=description, boards=_spread(boards[key], names.boards, description),
            environment=names.environment(snapshots[key], versions[key]) | {
                "measured Arm clock": _clock_text(clocks[key]),
                "tool versions": _joined(tools[key]),
            },
        ))  # fmt: skip
    others = {key: counted[key] for key in keys if key != baseline}
    return Result(
        benchmark=benchmark, metric=metric, unit=unit, higher_is_better=higher_is_better,
        group_by=group_by, group_by_label=choices[group_by], baseline=baseline,
        include_suspects=include_suspects, groups=groups,
        comparisons=stats.compare_many(counted[baseline], others, higher_is_better),
    )  # fmt: skip


@dataclass
class Row:
    """One benchmark metric (with the parameters that set it apart from the benchmark's other
    rows) of a group against the baseline, in an overview."""

    benchmark: str
    params: dict
    metric: str
    unit: str
    group: str
    comparison: stats.Comparison
    kernel_bits: dict[str, str]  # each side's kernel bitness: "64", or "32; 64" if mixed

    @property
    def label(self) -> str:
        return _row_label(self.benchmark, self.metric, self.params)


def _row_label(benchmark: str, metric: str, params: dict) -> str:
    """A row's benchmark, metric and the parameters that set it apart, e.g. "iperf3-tcp
    throughput (direction peer-to-board)"."""
    apart = ", ".join(f"{name} {value_text(value)}" for name, value in sorted(params.items()))
    return f"{benchmark} {metric}" + (f" ({apart})" if apart else "")


@dataclass
class Overview:
    group_by: str
    group_by_label: str
    baseline: str
    rows: list[Row]
    left_out: list[str]  # trials with no partner on the other side, in words


def overview(
    runs: QuerySet,
    group_by: str,
    baseline: str,
    metrics: list[tuple[str, str]] | None = None,
    include_suspects: bool = False,
) -> Overview:
    """Every benchmark and metric of the runs (or only the (benchmark, metric)s given), each
    group against the baseline group, a row each, with Holm-adjusted p-values across the rows.

    Like is compared with like: a row pools only the trials whose board model and preset
    version (but for the factor grouped by) the other side has too; the others are left out
    and named. So 64-bit userland against 32-bit compares the same Pi with the same preset."""
    if group_by not in GROUP_BY:
        raise ComparisonError(f"an overview cannot be grouped by {group_by!r}")
    measured = Measurement.objects.filter(run__in=runs).order_by()
    if metrics:
        chosen = Q()
        for benchmark, metric in metrics:
            chosen |= Q(run__benchmark=benchmark, metric=metric)
        measured = measured.filter(chosen)
    # _Names reads the ids from the start of each row, as compare()'s.
    rows = _fetched(measured.values_list(
        "value", "run__suspect", "run__board_id", "run__snapshot_id", "run__preset_version_id",
        "run__campaign_id", _key_column(group_by), "run__benchmark", "run__params", "metric",
        "unit", "higher_is_better",
    ))  # fmt: skip
    names = _Names(rows, group_by)
    cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))  # row, stratum, group
    kernels = defaultdict(set)  # (row, stratum, group): kernel bits
    directions, params_of = {}, {}
    for (
        value,
        suspect,
        _,
        snapshot,
        version,
        _,
        key,
        benchmark,
        params,
        metric,
        unit,
        higher,
    ) in rows:
        if suspect and not include_suspects:
            continue
        params = json.loads(params) if isinstance(params, str) else params
        row_key = (benchmark, json.dumps(params, sort_keys=True), metric)
        group, stratum = names.label(key), names.stratum(snapshot, version)
        cells[row_key][stratum][group].append(value)
        kernels[row_key, stratum, group].add(names.facts.get(snapshot, {}).get("kernel bits"))
        directions[row_key], params_of[row_key] = (unit, bool(higher)), params
    found, left_out = [], []
    for row_key in sorted(cells, key=lambda row_key: (row_key[0], row_key[2], row_key[1])):
        strata = cells[row_key]
        benchmark, _, metric = row_key
        unit, higher = directions[row_key]
        shown = _setting_apart(params_of, row_key)
        label = _row_label(benchmark, metric, shown)
        groups = sorted({group for groups in strata.values() for group in groups}, key=group_order)
        for group in groups:
            if group == baseline:
                continue
            paired = [
                stratum for stratum, there in strata.items() if {baseline, group} <= set(there)
            ]
            if not paired:
                continue
            sides = {side: [v for stratum in paired for v in strata[stratum][side]]
                     for side in (baseline, group)}  # fmt: skip
            bits = {side: _joined(b for stratum in paired for b in kernels[row_key, stratum, side])
                    for side in (baseline, group)}  # fmt: skip
            comparison = stats.compare(sides[baseline], sides[group], higher)
            found.append(Row(benchmark, shown, metric, unit, group, comparison, bits))
        for stratum, there in strata.items():
            for group, values in there.items():
                partnered = (len(there) > 1) if group == baseline else baseline in there
                if not partnered:
                    trials = f"{len(values)} trial{'s' if len(values) != 1 else ''}"
                    left_out.append(f"{label}: {trials} of {group} {stratum}")
    adjusted = stats.holm([row.comparison.p_value for row in found])
    for row, p in zip(found, adjusted, strict=True):
        row.comparison = replace(row.comparison, p_adjusted=p)
    return Overview(group_by, GROUP_BY[group_by], baseline, found, left_out)


def _setting_apart(params_of: dict, row_key: tuple) -> dict:
    """The parameters of a row's runs whose values differ among its benchmark's rows."""
    benchmark = row_key[0]
    others = [params for key, params in params_of.items() if key[0] == benchmark]
    return {
        name: value
        for name, value in params_of[row_key].items()
        if any(params.get(name) != value for params in others)
    }


def _spread(values_by_board: dict, board_names: dict, pooled: stats.Description) -> dict:
    """Each board's own description, by board name (one board's is the group's own)."""
    if len(values_by_board) == 1:
        return {board_names[pk]: pooled for pk in values_by_board}
    return {name: stats.describe(values_by_board[pk]) for pk, name in board_names.items()
            if pk in values_by_board}  # fmt: skip


def group_order(key: str):
    """As the board is first (the usual baseline), then numbers by size (MTU 1400 before
    9000), then the rest by name."""
    head = key.split()[0].removesuffix("-bit") if key else key
    return (key != AS_IS, not head.isdigit(), int(head) if head.isdigit() else 0, key)


def _fetched(rows: QuerySet) -> list[tuple]:
    """The rows of a values_list straight from the database cursor.

    Django would pass each value of a JSON key (the clock, a parameter) through json.loads,
    which for 50,000 rows costs more than the query; the database has already extracted them
    (SQLite's json_extract gives numbers and text, psycopg decodes jsonb), so the raw rows
    hold the same values, but for a list, which comes as JSON text (see _Names.label)."""
    try:
        sql, params = rows.query.sql_with_params()
    except EmptyResultSet:  # nothing selected (a saved comparison's campaigns deleted)
        return []
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _key_column(group_by: str) -> str:
    """The column of Measurement whose value decides a row's group."""
    if group_by.startswith(PARAM_PREFIX):
        return f"run__params__{group_by.removeprefix(PARAM_PREFIX)}"
    return _KEY_COLUMNS[group_by]


class _Names:
    """What the runs' ids stand for (their boards, probes, preset versions, campaigns), read
    once per comparison with a query each, and so each group's name and environment."""

    def __init__(self, rows: list[tuple], group_by: str):
        """rows: compare()'s, which begin with value, suspect and the ids of the run's board,
        probe, preset version and campaign."""
        self.group_by = group_by
        board_ids, snapshot_ids, version_ids, campaign_ids = (
            {row[column] for row in rows} for column in range(2, 6)
        )
        boards = Board.objects.filter(pk__in=board_ids).order_by("name")
        self.boards = dict(boards.values_list("pk", "name"))  # by name: the spread's order
        probes = FactSnapshot.objects.filter(pk__in=snapshot_ids).values_list(
            "pk", *_FACTS.values()
        )
        self.facts = {row[0]: dict(zip(_FACTS, row[1:], strict=True)) for row in probes}
        versions = PresetVersion.objects.filter(pk__in=version_ids).order_by()
        rows = versions.values_list("pk", "preset__name", "number")
        self.versions = {pk: f"{name} v{number}" for pk, name, number in rows}
        self.campaigns = {}
        if group_by == "campaign":
            campaigns = Campaign.objects.filter(pk__in=campaign_ids).order_by()
            self.campaigns = dict(campaigns.values_list("pk", "name"))
        self._labels = {}  # tens of thousands of rows share a few keys

    def label(self, key) -> str:
        """A group's name, from the key column's value: on the page, in the CSV, as a saved
        comparison's baseline."""
        if (found := self._labels.get(key)) is None:
            found = self._labels[key] = self._name(key)
        return found

    def _name(self, key) -> str:
        by = self.group_by
        if by == "preset":
            return self.versions.get(key, AS_IS)
        if by == "board":
            return self.boards.get(key, UNKNOWN)
        if by == "campaign":
            return self.campaigns.get(key, UNKNOWN)
        facts = self.facts.get(key, {})
        if by == "bits":
            kernel, userland = (f"{facts[name]}-bit" if facts.get(name) else UNKNOWN
                                for name in ("kernel bits", "userland bits"))  # fmt: skip
            return f"{kernel} kernel, {userland} userland"
        if by == "userland":
            bits = facts.get("userland bits")
            return f"{bits}-bit userland" if bits else UNKNOWN
        value = facts.get("board model") if by == "board_model" else key
        if value is None or value == "":
            return UNKNOWN
        if isinstance(value, str) and value.startswith("["):  # a list parameter (_fetched)
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        return value_text(value)

    def stratum(self, snapshot_id, version_id) -> str:
        """What an overview pairs like with like by, in words: "on <model>, <preset>", but for
        the factor grouped by."""
        model = (self.facts.get(snapshot_id) or {}).get("board model") or UNKNOWN
        words = [] if self.group_by in ("board_model", "board") else [f"on {model}"]
        if self.group_by != "preset":
            words.append(self.versions.get(version_id, AS_IS))
        return ", ".join(words)

    def environment(self, snapshot_ids, version_ids) -> dict[str, str]:
        """The boards' models, kernels, OS... (the probes the runs were made with) in words."""
        known = [self.facts[pk] for pk in snapshot_ids if pk in self.facts]
        words = {name: _joined(facts[name] for facts in known) for name in _FACTS}
        labels = [self.versions.get(pk, AS_IS) for pk in version_ids]
        return words | {"preset version": _joined(labels)}


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
