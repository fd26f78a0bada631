"""Is this board still the board it was? A series of one board's canary results, in time order,
judged against the board's own history (pure: numbers in, a finding out).

Each point is one canary occasion: the median of that occasion's trials of one metric. The
occasion, not the trial, is the unit here, as the board is for comparisons: trials within one
occasion share its conditions (temperature, what else ran), so they are not independent
looks at the board.

Two tests watch the series, and the first to fire dates the drift:

- **A jump** (conbench's lookback z-score): a point further than JUMP_Z spreads from the mean
  of the LOOKBACK points before it. One such point can be a hiccup (a slow SD card write, a
  cron job), and so can two; JUMP_POINTS in a row on the same side are a jump.
- **A slow drift** (a two-sided CUSUM, Page 1954): each point's distance from the reference,
  in spreads, clipped to CLIP (one wild point moves the sum at most CLIP - SLACK), less SLACK,
  summed while it stays above 0; a sum over THRESHOLD is a drift. The reference (the LOOKBACK
  points before the sum began to grow) stays fixed while the sum grows, so a slow slide is
  measured against the board as it was, not as it is becoming. The change point is where the
  sum began to grow.

The spread is the lookback's standard deviation, but never below SPREAD_FLOOR of its mean:
values rounded by a tool, or a board that varies less than the rounding, would otherwise give
a spread near 0 and any difference would be a drift.

Thresholds (bench/drift_detector.py measures them): on 1,000 stationary series of 100 points
with 0.3 to 2 % noise, one slow occasion in 50 and three significant figures, 0.6 % of series
raised a false alarm; a 5 % step was found within 5 points on all series with 0.5 % noise and
99.5 % with 1 % (medians 3 and 4 points), but with 2 % noise only on a fifth of them (median
8): a change of 2.5 spreads needs more looks to tell from noise.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

WARM_UP = 10  # points before any judgement: a spread needs a history
LOOKBACK = 30  # points of history a reference holds at most
SPREAD_FLOOR = 0.005  # of the reference's mean
OUTLIER_MADS = 4.0  # history points further than this from its median are left out of it
JUMP_Z = 5.0  # conbench's threshold
JUMP_POINTS = 3  # in a row, on one side
# CUSUM's k and h, in spreads: tuned for shifts of 3 spreads (a 5 % step on a board whose
# canary varies by 1 to 2 %); a spread estimated from 10 to 30 points is often too small,
# which is why k is not the textbook 0.5 (that gave 15 % false alarms in bench/).
SLACK = 1.5
THRESHOLD = 6.5
CLIP = 3.5  # a point counts at most this many spreads: one slow occasion is not a slide

JUMP, SLIDE = "jump", "slide"


@dataclass(frozen=True)
class Drift:
    kind: str  # JUMP or SLIDE
    found_at: int  # the index of the point that raised it
    since: int  # the index of the first point that differs (the change point)
    reference_mean: float  # the board as it was
    mean_since: float  # the mean of the points from since to found_at
    spread: float  # the reference's spread (floored)

    @property
    def percent(self) -> float:
        """How far the points since the change are from the board as it was, in %."""
        return (self.mean_since / self.reference_mean - 1) * 100 if self.reference_mean else 0.0

    @property
    def direction(self) -> str:
        return "higher" if self.mean_since > self.reference_mean else "lower"


@dataclass(frozen=True)
class _Reference:
    mean: float
    spread: float

    @classmethod
    def of(cls, points: Sequence[float]) -> "_Reference":
        """The mean and spread of points, leaving out those beyond OUTLIER_MADS robust spreads
        (1.4826 median absolute deviations) of their median: one slow occasion in the history
        would otherwise widen the spread and hide a real change for as long as it is in it."""
        median = statistics.median(points)
        robust = 1.4826 * statistics.median(abs(point - median) for point in points)
        kept = [p for p in points if abs(p - median) <= OUTLIER_MADS * robust] if robust else []
        kept = kept if len(kept) > 1 else list(points)
        mean = statistics.fmean(kept)
        sd = statistics.stdev(kept) if len(kept) > 1 else 0.0
        return cls(mean, max(sd, SPREAD_FLOOR * abs(mean)) or 1e-12)

    def z(self, value: float) -> float:
        return (value - self.mean) / self.spread


def first_drift(values: Sequence[float]) -> Drift | None:
    """The first drift in values (oldest first), or None while the board stays as it was."""
    points = [float(value) for value in values]
    if any(not math.isfinite(value) for value in points):
        raise ValueError("a canary series holds only finite numbers")
    # Per side (+1 up, -1 down): the CUSUM and the index where it began to grow.
    sums = {1: 0.0, -1: 0.0}
    began = {1: None, -1: None}
    # Points in a row beyond JUMP_Z on one side: the first's index, its side and the reference
    # it was judged by, which judges the next ones too (a lookback holding the jumped points
    # would hide the rest).
    jumped: tuple[int, int, _Reference] | None = None
    for index in range(WARM_UP, len(points)):
        value = points[index]
        if jumped is not None and jumped[1] * jumped[2].z(value) > JUMP_Z:
            if index - jumped[0] + 1 >= JUMP_POINTS:
                # Dated from where the CUSUM on its side began to grow, when that is earlier:
                # the first point of a step can be short of JUMP_Z by its own noise.
                began_on_side = began[jumped[1]]
                since = jumped[0] if began_on_side is None else min(jumped[0], began_on_side)
                return _found(JUMP, points, index, since)
        else:
            lookback = _Reference.of(points[max(0, index - LOOKBACK) : index])
            z = lookback.z(value)
            jumped = (index, 1 if z > 0 else -1, lookback) if abs(z) > JUMP_Z else None
        for direction in (1, -1):
            start = began[direction] if began[direction] is not None else index
            reference = _Reference.of(points[max(0, start - LOOKBACK) : start])
            step = max(-CLIP, min(CLIP, direction * reference.z(value))) - SLACK
            sums[direction] = max(0.0, sums[direction] + step)
            if sums[direction] == 0.0:
                began[direction] = None
            elif began[direction] is None:
                began[direction] = index
            if sums[direction] > THRESHOLD:
                return _found(SLIDE, points, index, began[direction])
    return None


def _found(kind: str, points: list[float], index: int, since: int) -> Drift:
    reference = _Reference.of(points[max(0, since - LOOKBACK) : since])
    return Drift(
        kind=kind,
        found_at=index,
        since=since,
        reference_mean=reference.mean,
        mean_since=statistics.fmean(points[since : index + 1]),
        spread=reference.spread,
    )
