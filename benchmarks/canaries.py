"""A canary per board: a short reference campaign on a schedule, each result judged against
the board's own history (benchmarks.drift). "Is this board still the board it was?"

The canary runs sha1sum of 64 MB (the CPU and memory) and 5 s of iperf3 to the controller
(the network), three times each, at stock or at a named preset. Each finished canary campaign
is one point per metric: the median of its done runs, suspect ones included (a board that
throttles now is what a canary is for). A drift marks the board "drifted since" the first
canary that differs, with what pifarm recorded that changed at the time (config.txt, governor,
kernel, firmware, the throttled bits, the clock); a person clears it once the board is known to
be what it now is, and its series starts again from the change.
"""

import json
import statistics
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from benchmarks import drift, events, schedules, specs
from benchmarks.models import Campaign, Drift, Measurement, Run, Schedule
from benchmarks.specs import AS_IS
from devices.events import send
from devices.models import Board
from devices.vcgencmd import decode_throttled

CANARY_BENCHMARKS = (
    {"name": "sha1sum", "params": {"size": "64M"}},
    {"name": "iperf3-tcp", "params": {"duration": 5}},
)
REPETITIONS = 3
DEFAULT_EVERY = "1h"
# What a canary's start waits for, at most, before measuring: a busy board is not its normal.
QUIET = {"load_below": 1.0, "cpu_below_pct": 25.0, "deadline_s": 20}
SHOWN_POINTS = 500  # of a series, on the board's chart: the latest


def spec(board: Board, preset: str = AS_IS) -> dict:
    return {
        "name": f"canary of {board.name}",
        "boards": [board.name],
        "presets": [preset],
        "benchmarks": [dict(item) for item in CANARY_BENCHMARKS],
        "peer": "controller",
        "repetitions": REPETITIONS,
        "quiet": QUIET,
    }


def set_up(
    board: Board, every=DEFAULT_EVERY, preset: str = AS_IS, user=None, changes=None
) -> Schedule:
    """The board's canary, every `every` (as a schedule's "every"), at preset; changes: keys
    of its spec given otherwise (the demo's shorter one). A canary it had is changed, keeping
    its starts: the board's history goes on (a series per preset and parameters). SpecError
    when the board cannot run it (retired, no such preset)."""
    wanted = {**spec(board, preset), **(changes or {}), "schedule": {"every": every}}
    campaign_spec, timing = schedules.split(wanted)
    specs.check(campaign_spec)
    with transaction.atomic():
        schedule = Schedule.objects.select_for_update().filter(canary_of=board).first()
        if schedule is None:
            schedule = schedules.create(wanted, user)
            Schedule.objects.filter(pk=schedule.pk).update(canary_of=board)
        else:
            schedules.pause(schedule)
            Schedule.objects.filter(pk=schedule.pk).update(
                spec=campaign_spec, every_s=timing["every_s"], cron=""
            )
            schedules.resume(schedule)
    schedule.refresh_from_db()
    return schedule


@dataclass(frozen=True)
class Point:
    campaign_id: int
    at: datetime
    value: float  # the median of the occasion's runs
    n: int  # its runs
    low: float  # the lowest and highest of them
    high: float


@dataclass(frozen=True)
class Series:
    benchmark: str
    metric: str
    params: dict
    preset_version_id: int | None
    unit: str
    higher_is_better: bool
    points: list[Point]

    @property
    def label(self) -> str:
        shown = ", ".join(f"{key} {value}" for key, value in sorted(self.params.items()))
        return f"{self.benchmark} {self.metric}" + (f" ({shown})" if shown else "")


def series(board: Board, since: datetime | None = None) -> list[Series]:
    """The board's canary series, oldest point first: one per benchmark, metric and
    parameters; a point per finished canary campaign (from `since`, if given)."""
    campaigns = Campaign.objects.filter(
        scheduled_start__schedule__canary_of=board, finished__isnull=False
    )
    if since is not None:
        campaigns = campaigns.filter(created__gte=since)
    rows = (
        Measurement.objects.filter(run__campaign__in=campaigns, run__state=Run.State.DONE)
        .order_by("run__campaign__created", "run__campaign_id")
        .values_list(
            "run__campaign_id",
            "run__campaign__created",
            "run__benchmark",
            "run__params",
            "run__preset_version_id",
            "metric",
            "unit",
            "higher_is_better",
            "value",
        )
    )
    grouped: dict[tuple, dict] = {}
    for campaign_id, created, benchmark, params, preset, metric, unit, higher, value in rows:
        key = (benchmark, metric, json.dumps(params, sort_keys=True), preset or 0)
        found = grouped.setdefault(
            key, {"unit": unit, "higher": higher, "params": params, "values": {}}
        )
        found["values"].setdefault((campaign_id, created), []).append(value)
    return [
        Series(
            benchmark=benchmark,
            metric=metric,
            params=found["params"],
            preset_version_id=preset or None,
            unit=found["unit"],
            higher_is_better=found["higher"],
            points=[
                Point(
                    campaign_id,
                    at,
                    statistics.median(values),
                    len(values),
                    min(values),
                    max(values),
                )
                for (campaign_id, at), values in found["values"].items()
            ],
        )
        for (benchmark, metric, _, preset), found in sorted(grouped.items())
    ]


def _point(campaign_id: int, at: datetime, values: list[float]) -> Point:
    return Point(campaign_id, at, statistics.median(values), len(values), min(values), max(values))


def open_drift(board: Board) -> Drift | None:
    """The board's earliest drift not cleared: the board has "drifted since" its time."""
    return board.drifts.filter(cleared__isnull=True).order_by("since", "pk").first()


def judge(board: Board) -> list[Drift]:
    """Each series of the board, since the drift last cleared on it, judged: a drift found on
    a series with none open is recorded (and announced). The drifts it recorded."""
    found = []
    for one in series(board):
        key = {
            "benchmark": one.benchmark,
            "metric": one.metric,
            "params": one.params,
            "preset_version_id": one.preset_version_id,
        }
        if board.drifts.filter(cleared__isnull=True, **key).exists():
            continue
        cleared = board.drifts.filter(cleared__isnull=False, **key).order_by("-since").first()
        points = [p for p in one.points if cleared is None or p.at >= cleared.since]
        result = drift.first_drift([point.value for point in points])
        if result is None:
            continue
        since, at = points[result.since], points[result.found_at]
        recorded = Drift.objects.create(
            board=board,
            unit=one.unit,
            kind=result.kind,
            since=since.at,
            since_campaign_id=since.campaign_id,
            found_campaign_id=at.campaign_id,
            reference_mean=result.reference_mean,
            mean_since=result.mean_since,
            changed=changes(points[result.since - 1].campaign_id, since.campaign_id),
            **key,
        )
        found.append(recorded)
        transaction.on_commit(lambda recorded=recorded: _announce(recorded))
    return found


def _announce(recorded: Drift) -> None:
    send(events.board_drifted, Drift, drift=recorded)


def changes(before_campaign_id: int, after_campaign_id: int) -> list[dict]:
    """What pifarm recorded that differs between the last canary before a change and the
    first after it: [{"what", "before", "after"}], empty when nothing it records changed."""
    before, after = (
        _recorded(campaign_id) for campaign_id in (before_campaign_id, after_campaign_id)
    )
    return [
        {"what": what, "before": before.get(what), "after": after.get(what)}
        for what in dict.fromkeys([*before, *after])
        if before.get(what) != after.get(what)
    ]


def _recorded(campaign_id: int) -> dict:
    run = (
        Run.objects.filter(campaign_id=campaign_id, state=Run.State.DONE)
        .select_related("snapshot")
        .order_by("sequence")
        .first()
    )
    if run is None:
        return {}
    effective = run.environment.get("effective") or {}
    recorded = {
        "config.txt (SHA-256)": (effective.get("config_sha256") or "")[:12] or None,
        "governor": effective.get("governor"),
        "kernel": effective.get("kernel"),
        "firmware": effective.get("firmware_version"),
        "throttled": _throttled_words(run.snapshot.throttled if run.snapshot else None),
    }
    for key, value in (effective.get("firmware") or {}).items():
        recorded[f"config {key}"] = value
    return recorded


def _throttled_words(throttled: int | None) -> str | None:
    if throttled is None:
        return None
    return "; ".join(flag.words for flag in decode_throttled(throttled)) or "none"


def clear(recorded: Drift, user=None) -> bool:
    """The board is what it now is: its series starts again from the change. False if cleared
    already."""
    return bool(
        Drift.objects.filter(pk=recorded.pk, cleared__isnull=True).update(
            cleared=timezone.now(), cleared_by=user
        )
    )


def words(schedule: Schedule) -> str:
    """What a canary runs, from its spec: "sha1sum (size 64M) and iperf3-tcp (duration 5)
    to the controller, 3 times each"."""
    items = []
    for item in schedule.spec.get("benchmarks", []):
        params = ", ".join(f"{key} {value}" for key, value in (item.get("params") or {}).items())
        items.append(f"{item['name']}" + (f" ({params})" if params else ""))
    listed = " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)
    peer = " to the controller" if schedule.spec.get("peer") == "controller" else ""
    times = schedule.spec.get("repetitions", REPETITIONS)
    preset = schedule.spec.get("presets", [AS_IS])[0]
    at = "" if preset == AS_IS else f", at {preset}"
    return f"{listed}{peer}, {times} times each{at}"


def board_of(campaign: Campaign) -> Board | None:
    """The board whose canary started campaign, or None for any other campaign."""
    return Board.objects.filter(canary__starts__campaign=campaign).first()


def judge_finished_canary(sender, campaign: Campaign, **kwargs) -> None:
    """events.campaign_finished: a canary campaign's board is judged, and told of when runs
    of it failed (a canary that cannot run says something too)."""
    board = board_of(campaign)
    if board is None:
        return
    judge(board)
    if campaign.runs.filter(state__in=[Run.State.FAILED, Run.State.SKIPPED]).exists():
        send(events.canary_failed, Campaign, board=board, campaign=campaign)


def drifts_in(runs) -> list[Drift]:
    """The open drifts of the boards of runs (a queryset), where one of those runs ended at or
    after the change: a comparison of them says so. (A query per open drift, few, rather than
    one over every run of the comparison.)"""
    open_drifts = Drift.objects.filter(cleared__isnull=True).select_related("board")
    return [
        found
        for found in open_drifts.order_by("pk")
        if runs.filter(board_id=found.board_id, finished__gte=found.since).exists()
    ]
