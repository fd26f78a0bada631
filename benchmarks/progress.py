"""How far a campaign has come and how long it should still take, for its page and its status.

The estimate before the start (Campaign.estimated_s) is a guess from typical trial lengths;
once a lane has finished runs, its own measured durations replace the guess for that lane.
Lanes run in parallel, so the campaign ends with its slowest lane.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.utils import timezone

from benchmarks.models import Campaign, Lane, Run


class _RunsLeft:
    """What a lane's progress and a campaign's share: eta_s, ended and total."""

    @property
    def finishing(self) -> bool:
        """Runs are left, every one past its expected length: how long they take is unknown."""
        return self.eta_s == 0 and self.ended < self.total


@dataclass(frozen=True)
class LaneProgress(_RunsLeft):
    lane: Lane
    total: int
    ended: int
    eta_s: float | None  # None: nothing left to run; 0: only runs past their expected length


@dataclass(frozen=True)
class Progress(_RunsLeft):
    total: int
    ended: int
    counts: dict[str, int]  # runs by state, every state present
    eta_s: float | None
    lanes: list[LaneProgress]

    @property
    def percent(self) -> int:
        return round(100 * self.ended / self.total) if self.total else 100


def of(campaign: Campaign) -> Progress:
    runs = list(campaign.runs.values_list("lane_id", "state", "started", "finished"))
    by_lane = defaultdict(list)
    for run in runs:
        by_lane[run[0]].append(run)
    fallback = _guessed_run_s(campaign, by_lane)
    lanes = [
        _lane_progress(lane, by_lane.get(lane.pk, []), fallback)
        for lane in campaign.lanes.select_related("board", "peer_board").order_by("board__name")
    ]
    counts = Counter(state for _, state, _, _ in runs)
    etas = [lane.eta_s for lane in lanes if lane.eta_s is not None]
    return Progress(
        total=len(runs),
        ended=sum(counts[state] for state in Run.ENDED),
        counts={state: counts[state] for state in Run.State.values},
        eta_s=max(etas) if etas else None,
        lanes=lanes,
    )


def _guessed_run_s(campaign: Campaign, by_lane: dict) -> float:
    """One run's share of the estimate: the estimate is the longest lane's total."""
    longest = max((len(runs) for runs in by_lane.values()), default=0)
    return (campaign.estimated_s or 0) / longest if longest else 0.0


def _lane_progress(lane: Lane, runs: list, fallback_s: float) -> LaneProgress:
    ended = [run for run in runs if run[1] in Run.ENDED]
    left = [run for run in runs if run[1] in Run.UNFINISHED]
    if not left:
        return LaneProgress(lane, len(runs), len(ended), None)
    measured = [
        (finished - started).total_seconds()
        for _, state, started, finished in ended
        if started and finished and state in (Run.State.DONE, Run.State.FAILED)
    ]
    per_run = sum(measured) / len(measured) if measured else fallback_s
    now = timezone.now()
    # A running run is partly done already; one past the length expected has none left that
    # anyone could tell (it is finishing), and it takes nothing from the runs queued after it.
    eta = sum(
        max(0.0, per_run - (now - started).total_seconds()) if started else per_run
        for _, _, started, _ in left
    )
    return LaneProgress(lane, len(runs), len(ended), eta)


def duration_words(seconds: float | None) -> str:
    """A duration as a person reads it: '45 s', '12 min', '2 h 05 min'. Under a second is
    "finishing": only an ETA gets that low (estimates hold each run's overhead), and an ETA
    of 0 with work left means the work is past its expected length, not done."""
    if seconds is None:
        return "–"
    if seconds < 0.5:
        return "finishing"
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
