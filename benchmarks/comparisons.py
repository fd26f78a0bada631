"""A comparison: one metric of chosen runs, in groups (by preset, bitness, board...), each group
described and compared with a baseline group by benchmarks.stats.

A page's cost does not grow with the trials it sums up: nothing here loads a Run or a row per
trial. The database sums the trials up in one query, a row per cell of what the trials share
(the group's key, board, suspect or not, probe, preset version, campaign, tool version and
configuration): the count, the sums of each value's difference from a reference value and of
its square, the least and the greatest (benchmarks.summaries), so that the statistics come from
a few dozen rows however many trials there are. The trials drawn are at most POINTS_PER_GROUP
a group: all of a smaller group, a sample of a larger one (the same on every view), which the
page says. What the ids stand for (boards, probes, preset versions) comes from one small query
each.
"""

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, F, FloatField, Max, Min, Q, QuerySet, Sum, Value
from django.db.models.functions import Cast
from django.utils import timezone

from benchmarks import canaries, catalog, network_link, simulated, stats
from benchmarks.group_names import (
    AS_IS,
    GroupNames,
    joined,
    json_value,
)
from benchmarks.models import Measurement, Run, Tally
from benchmarks.results import value_text
from benchmarks.summaries import Summary

PARAM_PREFIX = "param:"
# The trials a comparison fetches and draws of each group: all of a group this small; of a
# larger one, those whose run id hashes below its share (Knuth's multiplicative hash spreads
# ids evenly over 2^32, whatever their order), about this many, the same on every view.
POINTS_PER_GROUP = 300
_HASH_MULTIPLIER = 2654435761
_HASH_RANGE = 2**32
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
    values). Chosen by campaign alone, a comparison of them reads their campaigns' tallies."""
    campaign_ids, run_ids = list(campaign_ids), list(run_ids)
    found = Run.objects.filter(
        Q(campaign_id__in=campaign_ids) | Q(pk__in=run_ids), state=Run.State.DONE
    )
    return found if run_ids else found.chosen_by_campaign(campaign_ids)


def metric_choices(runs: QuerySet) -> list[tuple[str, str, str]]:
    """(benchmark, metric, unit) of every value the runs measured, by benchmark and metric."""
    found = set()
    if (stored := getattr(runs, "tally_filter", None)) is not None:  # their campaigns' tallies
        tallied = Tally.objects.filter(stored).order_by()
        found |= set(tallied.values_list("benchmark", "metric", "unit").distinct())
        runs = runs.filter(tallied__isnull=True)
    # order_by(): Measurement's ordering would join the lane, campaign and board and make the
    # DISTINCT one of every measurement: several times slower over tens of thousands.
    measured = Measurement.objects.filter(run__in=runs).order_by()
    found |= set(measured.values_list("run__benchmark", "metric", "unit").distinct())
    return sorted(found)


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
    # The trials that count (suspects out unless included), in order of value: all of them,
    # or a sample of POINTS_PER_GROUP or so where there are more (description.n).
    values: list[float]
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

    @property
    def sampled(self) -> bool:
        """Whether values holds a sample of the group's trials, not all of them."""
        return len(self.values) < self.description.n

    @property
    def sample_median(self) -> float | None:
        """The median of the sample drawn, where the group's own is not known."""
        return float(np.median(self.values)) if self.values else None


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
    # Boards whose canary found a drift, with runs here from after it (benchmarks.canaries),
    # in words (a share page hides the names in them).
    drift_notes: list[str] = field(default_factory=list)

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
    def sampled(self) -> bool:
        """Whether a group's trials drawn are a sample of them."""
        return any(group.sampled for group in self.groups)

    @property
    def clocked(self) -> bool:
        """Whether any counted trial's run measured its Arm clock under load."""
        return any(clock is not None for group in self.groups for clock in group.clocks)


class _Cell(NamedTuple):
    """One row of compare()'s sums: the trials that share all of these."""

    key: object  # the group's key column's value
    board: int
    suspect: bool
    snapshot: int | None
    version: int | None
    campaign: int
    tool: str
    fingerprint: str
    summary: Summary
    clocks: int  # how many of its runs measured their clock
    clock_low: float | None
    clock_high: float | None
    first_run: int
    drawn: list | None = None  # a tally's sample of its trials: [value, clock, run] each


class _Tally:
    """What compare() gathers of one group's cells (several keys may share a name, such as
    the probes of boards of one bitness)."""

    def __init__(self):
        self.boards: dict[int, Summary] = {}  # the trials that count, board by board
        self.keys, self.snapshots, self.versions, self.tools, self.ran = (set() for _ in range(5))
        self.stored: list[_Cell] = []  # its cells from tallies, which carry samples
        self.suspects = self.clocks = 0
        self.clock_low = self.clock_high = None

    @property
    def n(self) -> int:
        return sum(summary.n for summary in self.boards.values())

    def count(self, cell: _Cell) -> None:
        found = self.boards.get(cell.board)
        self.boards[cell.board] = cell.summary if found is None else found.merged(cell.summary)
        self.snapshots.add(cell.snapshot)
        self.versions.add(cell.version)
        self.ran.add((cell.board, cell.fingerprint))
        if cell.drawn is not None:
            self.stored.append(cell)
        if cell.clocks:
            self.clocks += cell.clocks
            known = [found for found in (self.clock_low, self.clock_high) if found is not None]
            self.clock_low = min([*known, cell.clock_low])
            self.clock_high = max([*known, cell.clock_high])


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
    first = selected.values_list(
        "measurements__value", "measurements__unit", "measurements__higher_is_better"
    )[:1]
    if not first:
        raise ComparisonError(f"no {metric} values of {benchmark} in these runs")
    # A metric's unit and direction are the benchmark definition's, the same in every run.
    reference, unit, higher_is_better = first[0]
    stored = getattr(selected, "tally_filter", None)
    if stored is None:
        cells = _cells(selected, key_column, reference)
    else:  # the campaigns' tallies, and what runs are not in them yet (few)
        cells = _tallied(Tally.objects.filter(stored), key_column)
        cells += _cells(selected.filter(tallied__isnull=True), key_column, reference)
    shared = [
        (c.key, c.suspect, c.snapshot, c.version, c.campaign, c.tool, c.board, c.fingerprint)
        for c in cells
    ]
    first_runs = {}
    for cell in cells:
        if cell.fingerprint:
            first_runs[cell.fingerprint] = min(
                first_runs.get(cell.fingerprint, cell.first_run), cell.first_run
            )
    names = GroupNames(group_by, {cell.board for cell in cells}, shared, first_runs)
    tallies = _tallies(cells, include_suspects, names)
    counted = {key: tally for key, tally in tallies.items() if tally.boards}
    if not counted:
        raise ComparisonError(f"no {metric} values of {benchmark} in these runs")
    counting = selected if include_suspects else selected.filter(suspect=False)
    unsummed = counting if stored is None else counting.filter(tallied__isnull=True)
    drawn = _drawn(unsummed, key_column, counted, names)
    keys = sorted(counted, key=group_order)
    baseline = baseline if baseline in counted else keys[0]
    groups = [_group(key, counted[key], drawn[key], names) for key in keys]
    # The board is the unit of the test (stats, benchmarks.designs), unless it is what the
    # groups are: then their trials are.
    by_board = group_by != "board"
    sides = {key: _side(counted[key], drawn[key], names, by_board=by_board) for key in keys}
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
        comparisons=_described(
            stats.compare_many(
                sides[baseline][0],
                {key: sides[key][0] for key in keys if key != baseline},
                higher_is_better,
                unit=unit,
                baseline_boards=sides[baseline][1],
                boards={key: sides[key][1] for key in keys},
                baseline_name=baseline,
            ),
            {group.key: group.description for group in groups},
            baseline,
        ),
        references=_references(benchmark, unit, selected, key_column, names, counted),
        simulated=names.simulated,
        emptied={
            key: tally.suspects
            for key, tally in sorted(tallies.items())
            if not tally.boards and tally.suspects
        },
        drift_notes=[_drift_note(found) for found in canaries.drifts_in(counting)],
    )


def _described(found: dict, descriptions: dict, baseline: str) -> dict:
    """The comparisons with their sides described as their groups are (from the trials, with
    the median, where all of them were at hand)."""
    return {
        key: replace(comparison, baseline=descriptions[baseline], values=descriptions[key])
        for key, comparison in found.items()
    }


def _drift_note(found) -> str:
    since = timezone.localtime(found.since)
    return (
        f"{found.board.name} drifted on {since:%Y-%m-%d %H:%M} (its canary's {found.benchmark} "
        f"{found.metric} {found.change}), and runs of it from after that are in this "
        "comparison: the board they measured is not the board it was before."
    )


# What a cell's trials share besides their group's key: Run's columns, and Tally's (named
# alike). _Cell takes them in this order.
_CELL_COLUMNS = (
    "board_id",
    "suspect",
    "snapshot_id",
    "preset_version_id",
    "campaign_id",
    "tool_version",
    "config_fingerprint",
)


def _cells(selected: QuerySet, key_column: str, reference: float) -> list[_Cell]:
    """The trials summed up in the database, a row per cell of what they share."""
    value = F("measurements__value")
    # Sums around the value of one trial: their squares keep the digits of the spread.
    shifted = Cast(value - Value(reference), FloatField())
    columns = (key_column, *_CELL_COLUMNS)
    sums = {
        "n": Count("measurements__value"),
        "shifted": Sum(shifted),
        "squares": Sum(shifted * shifted),
        "low": Min(value),
        "high": Max(value),
        "clocks": Count("clock_mhz"),
        "clock_low": Min("clock_mhz"),
        "clock_high": Max("clock_mhz"),
        "first_run": Min("id"),
    }
    rows = _fetched(selected.values(*columns).annotate(**sums).values_list(*columns, *sums))
    return [
        _Cell(
            *row[:8],
            summary=Summary.from_sums(row[8], reference, row[9], row[10], row[11], row[12]),
            clocks=row[13],
            clock_low=row[14],
            clock_high=row[15],
            first_run=row[16],
        )
        for row in rows
    ]


def _tallies(cells: list[_Cell], include_suspects: bool, names: GroupNames) -> dict[str, _Tally]:
    """The cells gathered by group name."""
    found = defaultdict(_Tally)
    for cell in cells:
        tally = found[names.label(cell.key)]
        tally.keys.add(cell.key)
        if cell.tool:
            tally.tools.add(cell.tool)
        if include_suspects or not cell.suspect:
            tally.count(cell)
        else:
            tally.suspects += cell.summary.n
    return dict(found)


def _tallied(found, key_column: str) -> list[_Cell]:
    """Tallies as compare()'s cells (Tally's fields are named as Run's columns)."""
    columns = (key_column, *_CELL_COLUMNS)
    sums = ("n", "reference", "shifted", "squares", "low", "high")
    rest = ("clocks", "clock_low", "clock_high", "first_run", "drawn")
    return [
        _Cell(
            *row[:8],
            Summary.from_sums(*row[8:14]),
            *row[14:18],
            drawn=json_value(row[18]),
        )
        for row in _fetched(found.order_by().values_list(*columns, *sums, *rest))
    ]


def _drawn(unsummed: QuerySet, key_column: str, counted: dict, names: GroupNames) -> dict:
    """Each group's trials to draw, as (value, board, clock, run) in order of value: all of a
    group of POINTS_PER_GROUP or fewer; of a larger one, a sample of that many or so, each
    tally giving its share from its own sample and the runs in none giving theirs (one
    query, unsummed: those runs)."""
    chosen = Q()
    spot = (F("id") * _HASH_MULTIPLIER) % _HASH_RANGE
    found = defaultdict(list)
    for label, tally in counted.items():
        share = min(1.0, POINTS_PER_GROUP / tally.n)
        below = int(_HASH_RANGE * share)
        for cell in tally.stored:
            if len(cell.drawn) == cell.summary.n:
                # Every trial kept (always so in a group of POINTS_PER_GROUP or fewer): the
                # runs' own draw, as for the runs in no tally (a cell of one or two trials, as
                # a reboot's probe makes, then gives its share too).
                kept = [trial for trial in cell.drawn if _spot(trial[2]) < below]
            else:  # a sample of the cell: its share of the cell's trials, from the sample
                kept = sorted(cell.drawn, key=lambda trial: _spot(trial[2]))
                kept = kept[: round(share * cell.summary.n)]
            found[label] += [(value, cell.board, clock, run) for value, clock, run in kept]
        keys = Q()
        for key in tally.keys:
            keys |= _key_is(key_column, key)
        if share < 1:
            keys &= Q(spot__lt=int(_HASH_RANGE * share))
        chosen |= keys
    rows = _fetched(
        unsummed.alias(spot=spot)
        .filter(chosen)
        .values_list("measurements__value", "board_id", "clock_mhz", "id", key_column)
    )
    for value, board, clock, run, key in rows:
        found[names.label(key)].append((value, board, clock, run))
    return {label: sorted(found[label]) for label in counted}


def _spot(run: int) -> int:
    """Where a run falls in the draw (the SQL of _drawn computes the same from its id)."""
    return (run * _HASH_MULTIPLIER) % _HASH_RANGE


def _key_is(key_column: str, key) -> Q:
    """The runs whose key column holds key (as compare()'s raw rows give it)."""
    if key is None:
        return Q(**{f"{key_column}__isnull": True})
    if key_column.startswith("params__"):
        return Q(**{key_column: json_value(key)})
    return Q(**{key_column: key})


def _side(tally: _Tally, drawn: list[tuple], names: GroupNames, *, by_board: bool) -> tuple:
    """A group's trials as stats.compare takes them, with their boards (None: every trial a
    unit, where the board is what the groups are): its values where all of them are at hand
    (exact, whatever their size), else their sums board by board (by name), or as one ("":
    boards not known)."""
    if len(drawn) == tally.n:
        values = [value for value, *_ in drawn]
        return values, names.board_names(board for _, board, *_ in drawn) if by_board else None
    if not by_board:
        return {"": Summary.pooled(tally.boards.values())}, None
    # By name, as the values are: a retired board and the one that took its name are one unit.
    by_name = defaultdict(list)
    for board, summary in tally.boards.items():
        by_name[names.board_names([board])[0]].append(summary)
    return {name: Summary.pooled(summaries) for name, summaries in by_name.items()}, None


def _group(key: str, tally: _Tally, drawn: list[tuple], names: GroupNames) -> Group:
    """A group: its description from its sums, its trials drawn in order of value (each with
    its run and clock: the charts and the runs offered for telemetry pick them by rank)."""
    pooled = Summary.pooled(tally.boards.values())
    complete = len(drawn) == pooled.n
    values = [value for value, *_ in drawn]
    if complete:
        # Every trial at hand: the median too, and each board's own.
        description = stats.describe(values)
        boards = defaultdict(list)
        for value, board, *_ in drawn:
            boards[board].append(value)
        by_board = {board: stats.describe(found) for board, found in boards.items()}
    else:
        description = stats.describe(pooled)
        by_board = {board: stats.describe(summary) for board, summary in tally.boards.items()}
    if len(by_board) == 1:
        by_board = dict.fromkeys(by_board, description)
    return Group(
        key=key,
        values=values,
        suspects_excluded=tally.suspects,
        description=description,
        boards={
            names.board_names([board])[0]: by_board[board]
            for board in sorted(by_board, key=lambda pk: names.board_names([pk])[0])
        },
        environment=names.environment(tally.snapshots, tally.versions)
        | {
            "measured Arm clock": _clock_text(tally, [clock for *_, clock, _ in drawn], complete),
            "tool versions": joined(tally.tools),
            "what ran": names.what_ran(tally.ran),
        },
        mixed=names.mixed(tally.ran),
        run_ids=[run for *_, run in drawn],
        clocks=[clock for *_, clock, _ in drawn],
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
    summed = _overview_cells(runs, metrics, _key_column(group_by))
    # What GroupNames reads: the boards, and the key, suspect, probe, preset version and campaign.
    shared = {(row[10], row[5], row[7], row[8], row[9]) for row in summed}
    names = GroupNames(group_by, {row[6] for row in summed}, list(shared))
    # row, stratum, group: (sums, board) of each cell of trials
    cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    kernels = defaultdict(set)  # (row, stratum, group): kernel bits
    directions, params_of = {}, {}
    for row in summed:
        benchmark, params, metric, unit, higher, suspect, board, snapshot, version, _, key = row[
            :11
        ]
        if suspect and not include_suspects:
            continue
        params = json.loads(params) if isinstance(params, str) else params
        row_key = (benchmark, json.dumps(params, sort_keys=True), metric)
        group, stratum = names.label(key), names.stratum(snapshot, version)
        cells[row_key][stratum][group].append((row[11], board))
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
                    n = sum(summary.n for summary, _ in trials)
                    count = f"{n} trial{'s' if n != 1 else ''}"
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
    """An overview row's comparison of its sides' (sums, board) cells, the board as the unit
    unless it is the factor grouped by."""
    by_board = names.group_by != "board"

    def side(cells: list[tuple]) -> dict:
        found = {}
        for summary, board in cells:
            name = names.board_names([board])[0] if by_board else ""
            found[name] = summary if name not in found else found[name].merged(summary)
        return found

    return stats.compare(side(before), side(after), higher_is_better, unit=unit, names=sides)


def _overview_cells(runs: QuerySet, metrics, key_column: str) -> list[tuple]:
    """The runs' values of every benchmark and metric (or of the (benchmark, metric)s given),
    summed up by what an overview sorts them by, each row those columns and a Summary: from
    their campaigns' tallies where the runs were chosen by campaign, and from the values of
    the runs in none."""
    columns = (
        "benchmark",
        "params",
        "metric",
        "unit",
        "higher_is_better",
        "suspect",
        "board_id",
        "snapshot_id",
        "preset_version_id",
        "campaign_id",
        key_column,
    )
    in_tallies, in_measurements = Q(), Q()
    for benchmark, metric in metrics or ():
        in_tallies |= Q(benchmark=benchmark, metric=metric)
        in_measurements |= Q(run__benchmark=benchmark, metric=metric)
    found = []
    if (stored := getattr(runs, "tally_filter", None)) is not None:
        sums = ("n", "reference", "shifted", "squares", "low", "high")
        tallied = Tally.objects.filter(stored, in_tallies).order_by()
        found += [
            (*row[:11], Summary.from_sums(*row[11:]))
            for row in _fetched(tallied.values_list(*columns, *sums))
        ]
        runs = runs.filter(tallied__isnull=True)
    # The runs in no tally (few, or all where they were chosen one by one): their values.
    own = ("metric", "unit", "higher_is_better")
    through = [column if column in own else f"run__{column}" for column in columns]
    measured = Measurement.objects.filter(in_measurements, run__in=runs).order_by()
    values = defaultdict(list)
    for *cell, value in measured.values_list(*through, "value"):
        values[tuple(_hashable(part) for part in cell)].append(value)
    for cell, trials in values.items():
        found.append((cell[0], json.loads(cell[1]), *cell[2:], Summary.of(trials)))
    return found


def _hashable(value):
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


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


def _clock_text(tally: _Tally, drawn: list[float | None], complete: bool) -> str:
    """The group's runs' median Arm clock under load: of all of them where all are at hand,
    else of the sample drawn (and said so), with the range of all."""
    if not tally.clocks:
        return "not measured"
    clocks = [clock for clock in drawn if clock is not None]
    low, high = tally.clock_low, tally.clock_high
    spread = "" if low == high else f" (runs {low:g} to {high:g})"
    if not clocks:
        return f"{low:g} to {high:g} MHz under load"
    median = statistics.median(clocks)
    if complete:
        return f"{median:g} MHz median under load{spread}"
    return f"{median:g} MHz median under load, of a sample of {len(clocks):,} runs{spread}"
