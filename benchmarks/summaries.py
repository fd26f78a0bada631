"""What the statistics need of a set of values, in a few numbers (pure).

A Summary holds a set's count, mean, sum of squared deviations from the mean (m2), least and
greatest value: all that benchmarks.stats computes from (the median aside), so a page can
take it from per-group sums the database computed instead of from every value.

Summing squares naively (sum x^2 - (sum x)^2 / n) loses every digit when the spread is small
against the mean: values of 400.001 +- 0.001 leave nothing of the spread in a double. The sums
are taken around a reference value near the values (the shifted-data algorithm: sums of
x - reference and of its square), which keeps the digits of the spread; sets are merged with
Chan, Golub and LeVeque's pairwise update of the mean and m2. A set whose least and greatest
values are equal has no spread at all, exactly.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    m2: float  # the sum of squared deviations from the mean
    min: float
    max: float
    median: float | None = None  # known only where the values were at hand

    @property
    def variance(self) -> float | None:
        """The sample variance (None below two values)."""
        return self.m2 / (self.n - 1) if self.n > 1 else None

    @classmethod
    def of(cls, values) -> "Summary":
        """From the values themselves (finite numbers; ValueError for none)."""
        values = np.asarray(values, float)
        if not values.size:
            raise ValueError("no values to sum up")
        with np.errstate(over="ignore", invalid="ignore"):
            mean = float(values.mean())
            m2 = float(((values - mean) ** 2).sum())
            median = float(np.median(values))
        low, high = float(values.min()), float(values.max())
        if low == high:
            mean, m2 = low, 0.0
        return cls(int(values.size), mean, m2, low, high, median)

    @classmethod
    def from_sums(
        cls, n: int, reference: float, shifted: float, shifted_squares: float, low, high
    ) -> "Summary":
        """From the sums a database computed: n values, the sum of (value - reference) and of
        its square, the least and the greatest value."""
        if n < 1:
            raise ValueError("no values to sum up")
        if low == high:
            return cls(n, float(low), 0.0, float(low), float(high))
        mean = reference + shifted / n
        # What rounding leaves of the spread can fall a little below 0, never the spread.
        m2 = max(0.0, shifted_squares - shifted * shifted / n)
        return cls(n, min(max(mean, low), high), m2, float(low), float(high))

    def merged(self, other: "Summary") -> "Summary":
        """The summary of both sets together (the median is lost, unless one is empty)."""
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        low, high = min(self.min, other.min), max(self.max, other.max)
        if low == high:
            mean, m2 = low, 0.0
        return Summary(n, mean, m2, low, high)

    @classmethod
    def pooled(cls, summaries: Iterable["Summary"]) -> "Summary":
        """All the sets as one."""
        found = None
        for summary in summaries:
            found = summary if found is None else found.merged(summary)
        if found is None:
            raise ValueError("no values to sum up")
        return found

    def scaled(self, factor: float) -> "Summary":
        """Every value times factor (a power of 2 keeps it exact)."""
        median = None if self.median is None else self.median * factor
        low, high = sorted((self.min * factor, self.max * factor))
        return Summary(self.n, self.mean * factor, self.m2 * factor * factor, low, high, median)

    @property
    def finite(self) -> bool:
        return all(math.isfinite(x) for x in (self.mean, self.min, self.max))
