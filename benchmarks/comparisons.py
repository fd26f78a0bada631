"""A comparison: one metric of chosen runs, in groups (by preset, bitness, board...), each group
described and compared with a baseline group by benchmarks.stats.

Tens of thousands of measurements stay fast because nothing here loads a Run: the values come
from one query of a few columns of the run and its measurement (ids, no joins further), read
through the index run_comparison and not the runs' wide rows; what a group's trials share
(probes, preset versions, tool versions) from one query of distinct rows; and what the ids
stand for (boards, probes, preset versions) from one small query each. So a comparison costs
the same few queries however many runs it holds.
"""

import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Q, QuerySet

from benchmarks import catalog, network_link, simulated, stats
from benchmarks.group_names import (
    AS_IS,
    GroupNames,
    joined,
    json_value,
)
from benchmarks.models import Measurement, Run
from benchmarks.results import value_text

PARAM_PREFIX = "param:"
# The ways to group that every benchmark has; its parameters add "param:<name>".
GROUP_BY = {
    "preset": "preset version",
    "bits": "kernel and userland bitness",
    "userland": "userland bitness",
    "board": "board",
    "board_model": "board model",
    "campaign": "campaign",
    "configuration": "what ran (config.txt, governor, OS)",
}
# The column of Run whose value makes each group's key (GroupNames says what it reads).
_KEY_COLUMNS = {
    "preset": "preset_version_id",
    "bits": "snapshot_id",
    "userland": "snapshot_id",
    "board": "board_id",
    "board_model": "snapshot_id",
    "campaign": "campaign_id",
    "configuration": "config_fingerprint",
}


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
    run_ids: list[int] = field(default_factory=list)  # each value's run
    clocks: list[float | None] = field(default_factory=list)  # each value's run's clock
    # Boards whose runs in the group ran more than one configuration (config.txt and
    # governor, benchmarks.effective): the group is not one treatment there.
    mixed: list[str] = field(default_factory=list)

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
    # A network throughput's line rate and TCP goodput ceiling (benchmarks.network_link); None for
    # any other metric.
    references: network_link.References | None = None
    simulated: bool = False  # some of its runs ran on simulated boards (benchmarks.simulated)
    # Groups whose every trial was suspect, so none is drawn or compared: their counts.
    emptied: dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return sum(group.description.n for group in self.groups)

    @property
    def resolution(self) -> dict | None:
        """The noise against the minimum effect: the groups' largest relative SD, the trials
        per group a change of the minimum effect needs at it (stats.trials_needed), and the
        fewest a group has; None without a comparison or a spread."""
        if not self.comparisons:
            return None
        min_effect = next(iter(self.comparisons.values())).min_effect
        spreads = [g.description.relative_sd for g in self.groups if g.description.relative_sd]
        if not spreads:
            return None
        noisiest = max(spreads)
        return {
            "relative_sd": noisiest,
            "min_effect": min_effect,
            "needed": stats.trials_needed(noisiest, min_effect),
            "fewest": min(group.description.n for group in self.groups),
        }

    @property
    def simulated_note(self) -> str:
        return simulated.NOTE if self.simulated else ""

    @property
    def table(self) -> list[tuple[Group, stats.Comparison | None]]:
        """Each group with its comparison against the baseline (None for the baseline)."""
        return [(group, self.comparisons.get(group.key)) for group in self.groups]

    @property
    def suspects_excluded(self) -> int:
        return sum(group.suspects_excluded for group in self.groups) + sum(self.emptied.values())

    @property
    def clocked(self) -> bool:
        """Whether any counted trial's run measured its Arm clock under load."""
        return any(clock is not None for group in self.groups for clock in group.clocks)


class _Tally:
    """What compare() gathers of one group's rows (or one key's: several keys may share a
    name, such as the probes of boards of one bitness)."""

    def __init__(self):
        self.values, self.boards, self.clocks, self.runs = [], [], [], []
        self.snapshots, self.versions, self.tools, self.ran = set(), set(), set(), set()
        self.suspects = 0

    def merge(self, other: "_Tally") -> None:
        for name in ("values", "boards", "clocks", "runs"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("snapshots", "versions", "tools", "ran"):
            getattr(self, name).update(getattr(other, name))
        self.suspects += other.suspects


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
    selected = runs.filter(benchmark=benchmark, measurements__metric=metric).order_by()
    key_column = _key_column(group_by)
    # One row a trial that counts, of the few columns that differ from trial to trial (the
    # run's own row and its value: the index run_comparison holds them); what a group's
    # trials share, as distinct rows; the suspects left out, counted by key. Ids only: names
    # come from the few rows they point at (GroupNames).
    counting = selected if include_suspects else selected.filter(suspect=False)
    rows = _fetched(
        counting.values_list("measurements__value", "board_id", "clock_mhz", "id", key_column)
    )
    shared = _fetched(
        selected.values_list(
            key_column,
            "suspect",
            "snapshot_id",
            "preset_version_id",
            "campaign_id",
            "tool_version",
            "board_id",
            "config_fingerprint",
        ).distinct()
    )
    # The suspects' keys, counted here: a GROUP BY would have SQLite walk every run in the
    # key's own index order (to spare a sort) rather than seek the few suspects in
    # run_comparison, several times slower over a campaign of one benchmark.
    suspects = Counter()
    if not include_suspects:
        suspects.update(
            key for (key,) in _fetched(selected.filter(suspect=True).values_list(key_column))
        )
    names = GroupNames(group_by, {row[1] for row in rows}, shared, selected)
    tallies = _tallies(rows, shared, suspects, include_suspects, names)
    if not any(tally.values for tally in tallies.values()):
        raise ComparisonError(f"no {metric} values of {benchmark} in these runs")
    # A metric's unit and direction are the benchmark definition's, the same in every run.
    # Any row will do, the first found (first() would sort them all by id for one).
    unit, higher_is_better = selected.values_list(
        "measurements__unit", "measurements__higher_is_better"
    )[0]
    counted = {key: tally for key, tally in tallies.items() if tally.values}
    keys = sorted(counted, key=group_order)
    baseline = baseline if baseline in counted else keys[0]
    groups = [_group(key, counted[key], names) for key in keys]
    others = {key: counted[key].values for key in keys if key != baseline}
    # The board is the unit of the test (stats, benchmarks.designs), unless it is what the
    # groups are: then their trials are.
    boards = None
    if group_by != "board":
        boards = {key: names.board_names(counted[key].boards) for key in keys}
    return Result(
        benchmark=benchmark,
        metric=metric,
        unit=unit,
        higher_is_better=higher_is_better,
        group_by=group_by,
        group_by_label=choices[group_by],
        baseline=baseline,
        include_suspects=include_suspects,
        groups=groups,
        comparisons=stats.compare_many(
            counted[baseline].values,
            others,
            higher_is_better,
            unit=unit,
            baseline_boards=boards and boards[baseline],
            boards=boards,
            baseline_name=baseline,
        ),
        references=_references(benchmark, unit, selected, key_column, names, counted),
        simulated=names.simulated,
        emptied={
            key: tally.suspects
            for key, tally in sorted(tallies.items())
            if not tally.values and tally.suspects
        },
    )


def _tallies(
    rows: list[tuple],
    shared: list[tuple],
    suspects: dict,
    include_suspects: bool,
    names: GroupNames,
) -> dict[str, _Tally]:
    """compare()'s rows gathered by group name: by their key's raw value first (the loop of
    a comparison's cost), named once per key after."""
    by_key = defaultdict(_Tally)
    for value, board, clock, run, key in rows:  # the trials that count
        tally = by_key[key]
        tally.values.append(value)
        tally.boards.append(board)
        tally.clocks.append(clock)
        tally.runs.append(run)
    for key, suspect, snapshot, version, _, tool, board, fingerprint in shared:
        tally = by_key[key]
        if tool:
            tally.tools.add(tool)
        if include_suspects or not suspect:
            tally.snapshots.add(snapshot)
            tally.versions.add(version)
            tally.ran.add((board, fingerprint))
    for key, count in suspects.items():
        by_key[key].suspects = count
    named = {}
    for key, tally in by_key.items():
        label = names.label(key)
        if label in named:
            named[label].merge(tally)
        else:
            named[label] = tally
    return named


def _group(key: str, tally: _Tally, names: GroupNames) -> Group:
    """A group's trials in order of value (each with its run and clock): the charts and the
    runs offered for telemetry pick them by rank, and sorting what is sorted costs little."""
    values = np.asarray(tally.values, float)
    order = np.argsort(values, kind="stable")
    boards = np.asarray(tally.boards)
    description = stats.describe(values)
    by_board = {board: values[boards == board] for board in set(tally.boards)}
    clocks = [clock for clock in tally.clocks if clock is not None]
    return Group(
        key=key,
        values=values[order].tolist(),
        suspects_excluded=tally.suspects,
        description=description,
        boards=_spread(by_board, names.boards, description),
        environment=names.environment(tally.snapshots, tally.versions)
        | {
            "measured Arm clock": _clock_text(clocks),
            "tool versions": joined(tally.tools),
            "what ran": names.what_ran(tally.ran),
        },
        mixed=names.mixed(tally.ran),
        run_ids=np.asarray(tally.runs)[order].tolist(),
        clocks=np.asarray(tally.clocks, object)[order].tolist(),
    )


def _references(benchmark, unit, selected, key, names, counted):
    """The line rate and goodput ceiling of a network throughput's groups, from the links
    their runs recorded (one more query, of distinct rows, for network benchmarks only)."""
    if (
        unit not in network_link.UNITS_IN_MBIT
        or _category(benchmark) not in network_link.NETWORK_CATEGORIES
    ):
        return None
    rows = _fetched(
        selected.values_list(
            key, "environment__link__mbit", "environment__link__mtu", "params__mtu"
        ).distinct()
    )
    links = defaultdict(set)
    for key, mbit, link_mtu, param_mtu in rows:
        label = names.label(key)
        if label in counted:  # a group of suspects only is not drawn
            mtu = network_link.recorded(
                json_value(param_mtu), *network_link.MTU_RANGE
            ) or network_link.recorded(json_value(link_mtu), *network_link.MTU_RANGE)
            links[label].add((network_link.recorded(json_value(mbit)), mtu))
    return network_link.references(unit, links)


def _category(benchmark: str) -> str:
    try:
        return catalog.lookup(benchmark).category
    except catalog.UnknownBenchmark:
        return ""


def trial_choices(result: Result, per_group: int = 12) -> list[tuple[str, list[tuple]]]:
    """Runs of each group to look into, for the telemetry chart's choice: its lowest and
    highest trials and others evenly spaced by value between, as (run code, words), with
    one query for them all (however many runs the comparison holds)."""
    picked = {}
    for group in result.groups:  # its trials come in order of value (_group)
        count = len(group.values)
        step = max((count - 1) / max(per_group - 1, 1), 1)
        ranks = [round(i * step) for i in range(min(per_group, count))]
        picked[group.key] = [(group.values[rank], group.run_ids[rank]) for rank in ranks]
    ids = [run for trials in picked.values() for _, run in trials]
    runs = Run.objects.filter(pk__in=ids).values_list("pk", "code", "board__name", "repetition")
    known = {pk: (code, board, repetition) for pk, code, board, repetition in runs}
    return [
        (
            key,
            [
                (
                    known[run][0],
                    f"{value:.4g} {result.unit} · {known[run][1]} · run {known[run][2]}",
                )
                for value, run in trials
                if run in known
            ],
        )
        for key, trials in picked.items()
    ]


def _spread(values_by_board: dict, board_names: dict, pooled: stats.Description) -> dict:
    """Each board's own description, by board name (one board's is the group's own)."""
    if len(values_by_board) == 1:
        return {board_names[pk]: pooled for pk in values_by_board}
    return {
        name: stats.describe(values_by_board[pk])
        for pk, name in board_names.items()
        if pk in values_by_board
    }


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
    if group_by not in GROUP_BY or group_by == "configuration":  # names read by compare()
        raise ComparisonError(f"an overview cannot be grouped by {group_by!r}")
    measured = Measurement.objects.filter(run__in=runs).order_by()
    if metrics:
        chosen = Q()
        for benchmark, metric in metrics:
            chosen |= Q(run__benchmark=benchmark, metric=metric)
        measured = measured.filter(chosen)
    rows = _fetched(
        measured.values_list(
            "value",
            "run__suspect",
            "run__board_id",
            "run__snapshot_id",
            "run__preset_version_id",
            "run__campaign_id",
            f"run__{_key_column(group_by)}",
            "run__benchmark",
            "run__params",
            "metric",
            "unit",
            "higher_is_better",
        )
    )
    # What GroupNames reads: the boards, and the key, suspect, probe, preset version and campaign.
    shared = {(row[6], row[1], row[3], row[4], row[5]) for row in rows}
    names = GroupNames(group_by, {row[2] for row in rows}, list(shared))
    # row, stratum, group: (value, board) of each trial
    cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    kernels = defaultdict(set)  # (row, stratum, group): kernel bits
    directions, params_of = {}, {}
    for (
        value,
        suspect,
        board,
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
        cells[row_key][stratum][group].append((value, board))
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
            sides = {
                side: [trial for stratum in paired for trial in strata[stratum][side]]
                for side in (baseline, group)
            }
            bits = {
                side: joined(b for stratum in paired for b in kernels[row_key, stratum, side])
                for side in (baseline, group)
            }
            comparison = _compared(
                sides[baseline], sides[group], higher, unit, names, (baseline, group)
            )
            found.append(Row(benchmark, shown, metric, unit, group, comparison, bits))
        for stratum, there in strata.items():
            for group, trials in there.items():
                partnered = (len(there) > 1) if group == baseline else baseline in there
                if not partnered:
                    count = f"{len(trials)} trial{'s' if len(trials) != 1 else ''}"
                    left_out.append(f"{label}: {count} of {group} {stratum}")
    adjusted = stats.holm([row.comparison.p_value for row in found])
    for row, p in zip(found, adjusted, strict=True):
        row.comparison = replace(row.comparison, p_adjusted=p)
    return Overview(group_by, GROUP_BY[group_by], baseline, found, left_out)


def _compared(
    before: list[tuple],
    after: list[tuple],
    higher_is_better: bool,
    unit: str,
    names: GroupNames,
    sides: tuple[str, str],
) -> stats.Comparison:
    """An overview row's comparison of its sides' (value, board) trials, the board as the unit
    unless it is the factor grouped by."""
    by_board = names.group_by != "board"
    return stats.compare(
        [value for value, _ in before],
        [value for value, _ in after],
        higher_is_better,
        unit=unit,
        names=sides,
        baseline_boards=names.board_names(board for _, board in before) if by_board else None,
        values_boards=names.board_names(board for _, board in after) if by_board else None,
    )


def _setting_apart(params_of: dict, row_key: tuple) -> dict:
    """The parameters of a row's runs whose values differ among its benchmark's rows."""
    benchmark = row_key[0]
    others = [params for key, params in params_of.items() if key[0] == benchmark]
    return {
        name: value
        for name, value in params_of[row_key].items()
        if any(params.get(name) != value for params in others)
    }


def group_order(key: str):
    """As the board is first (the usual baseline), then numbers by size (MTU 1400 before
    9000), then the rest by name."""
    head = key.split()[0].removesuffix("-bit") if key else key
    return (key != AS_IS, not head.isdigit(), int(head) if head.isdigit() else 0, key)


def _fetched(rows: QuerySet) -> list[tuple]:
    """The rows of a values_list straight from the database cursor.

    Django would pass each value of a JSON key (a parameter, a run's link) through json.loads,
    which for 50,000 rows costs more than the query. Each database gives such a value its own
    way (see json_value): they are decoded where one is read for its meaning, once per
    distinct value (a group's key names a group: GroupNames.label)."""
    try:
        sql, params = rows.query.sql_with_params()
    except EmptyResultSet:  # nothing selected (a saved comparison's campaigns deleted)
        return []
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _key_column(group_by: str) -> str:
    """The column of Run whose value decides a row's group."""
    if group_by.startswith(PARAM_PREFIX):
        return f"params__{group_by.removeprefix(PARAM_PREFIX)}"
    return _KEY_COLUMNS[group_by]


def _clock_text(clocks: list[float]) -> str:
    if not clocks:
        return "not measured"
    median = statistics.median(clocks)
    low, high = min(clocks), max(clocks)
    spread = "" if low == high else f" (runs {low:g} to {high:g})"
    return f"{median:g} MHz median under load{spread}"
