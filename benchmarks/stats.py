"""Statistics of a group of trials (pure: numbers in, numbers out; scipy does the maths)."""

import math
import statistics
from dataclasses import asdict, dataclass

from scipy import stats as scipy_stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Description:
    n: int
    mean: float
    median: float
    sd: float | None  # None below two values
    ci_low: float | None  # 95 % confidence interval of the mean (Student t)
    ci_high: float | None
    min: float
    max: float

    @property
    def relative_half_width(self) -> float | None:
        """The CI's half-width as a fraction of the mean (None if it cannot be told)."""
        if self.ci_low is None or not self.mean:
            return None
        return (self.ci_high - self.ci_low) / 2 / abs(self.mean)

    def to_dict(self) -> dict:
        return asdict(self)


def describe(values) -> Description:
    values = [float(value) for value in values]
    if not values:
        raise ValueError("no values to describe")
    if not all(math.isfinite(value) for value in values):
        raise ValueError("values must be finite numbers")
    n, mean = len(values), statistics.fmean(values)
    sd = statistics.stdev(values) if n > 1 else None
    low = high = None
    if sd is not None:
        half = scipy_stats.t.ppf((1 + CONFIDENCE) / 2, n - 1) * sd / math.sqrt(n)
        low, high = float(mean - half), float(mean + half)
    return Description(n, mean, statistics.median(values), sd, low, high, min(values), max(values))
