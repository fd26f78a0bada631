"""Statistics of a group of trials and of one group against a baseline (pure: numbers in,
numbers out; scipy does the distributions).

A comparison states how the compared values' mean relates to the baseline's, as a ratio with a
95 % confidence interval, and tests whether they differ (Welch's t-test, or Mann-Whitney U for
skewed data). Its verdict puts that in words that respect the metric's direction.

Why Fieller's interval for the ratio, not the delta method on the log ratio: pifarm's groups are
small (3 to 10 trials), where a first-order approximation is at its worst, and Fieller's set is
exact for normal means. It also says honestly when the ratio cannot be bounded: when the
baseline's mean is not clearly above 0 (mean^2 <= t^2 * its squared standard error) the set is
the whole line or two rays, and `ci_unbounded` is set instead of printing a falsely narrow
interval. The degrees of freedom are Welch-Satterthwaite's at the estimated ratio, as in R's
mratios::ttestratio (Tamhane & Logan, 2004). A baseline mean of 0 or below has no percent
change at all (`ratio` None): a ratio against it would flip or lose its meaning.
"""

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE  # a p-value below this is significant
WELCH, MANN_WHITNEY = "welch", "mann-whitney"
BETTER, WORSE, NO_DIFFERENCE, CANNOT_TELL = "better", "worse", "no difference", "cannot tell"


@dataclass(frozen=True)
class Description:
    n: int
    mean: float
    median: float
    sd: float | None  # None below two values
    relative_sd: float | None  # sd / |mean|; None below two values or for a mean of 0
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

    @property
    def squared_standard_error(self) -> float | None:
        """The variance of the mean, sd^2 / n (None below two values)."""
        return None if self.sd is None else self.sd**2 / self.n

    def to_dict(self) -> dict:
        return asdict(self)


@functools.lru_cache(maxsize=1024)
def _t_quantile(df: int) -> float:
    """Student's t at CONFIDENCE for df degrees of freedom: a page describes a group and each
    of its boards, often of the same n, and scipy's ppf costs a fraction of a millisecond."""
    return float(scipy_stats.t.ppf((1 + CONFIDENCE) / 2, df))


def describe(values) -> Description:
    # numpy, not the statistics module: a comparison describes groups of tens of thousands
    # of trials, and statistics.stdev's exact fractions took 6 ms for 16,000 of them.
    # numpy's mean sums pairwise and its sd takes two passes: accurate to the last digits
    # that matter here. The figures are Python floats (JSON, templates).
    values = np.asarray(values if isinstance(values, list | tuple | np.ndarray) else list(values),
                        float)  # fmt: skip
    if not values.size:
        raise ValueError("no values to describe")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite numbers")
    n, mean = int(values.size), _mean(values)
    sd = _sd(values) if n > 1 else None
    low = high = None
    if sd is not None:
        half = _t_quantile(n - 1) * sd / math.sqrt(n)
        low, high = float(mean - half), float(mean + half)
    return Description(
        n=n, mean=mean, median=_median(values), sd=sd,
        relative_sd=sd / abs(mean) if sd is not None and mean else None,
        ci_low=low, ci_high=high, min=float(values.min()), max=float(values.max()),
    )  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """The compared values against the baseline, on one metric.

    `ratio` is mean(values) / mean(baseline), with `ci_low`..`ci_high` its 95 % Fieller
    interval (None with too few values, or when `ci_unbounded`). The interval always describes
    the means, also when `test` is Mann-Whitney (which compares ranks), and it is never
    adjusted for many comparisons. `p_value` is the test's two-sided p (None with too few
    values); `p_adjusted` is its Holm-adjusted value within a table (`compare_many`), and the
    verdict uses it when set. With Mann-Whitney, `values_tend_higher` says which way the ranks
    lean; where a few outliers pull the mean the other way, the outcome is "cannot tell".
    """

    baseline: Description
    values: Description
    higher_is_better: bool
    test: str
    min_effect: float  # a change smaller than this fraction is no difference, significant or not
    ratio: float | None  # None when the baseline's mean is not above 0
    ci_low: float | None
    ci_high: float | None
    ci_unbounded: bool
    p_value: float | None
    p_adjusted: float | None = None
    values_tend_higher: bool | None = None  # Mann-Whitney: U above n * m / 2 (None: even, or Welch)

    @property
    def n_baseline(self) -> int:
        return self.baseline.n

    @property
    def n_values(self) -> int:
        return self.values.n

    @property
    def percent_change(self) -> float | None:
        """How much the mean moved, in % of the baseline's: +12 is 12 % higher."""
        return _percent(self.ratio)

    @property
    def percent_ci(self) -> tuple[float, float] | None:
        """The ratio's interval as percent changes (None where the ratio has none)."""
        if self.ci_low is None:
            return None
        return _percent(self.ci_low), _percent(self.ci_high)

    @property
    def outcome(self) -> str:
        """better, worse, no difference or cannot tell (for a table's colours)."""
        p = self._judged_p
        if p is None or self.ratio is None:
            return CANNOT_TELL
        if p >= ALPHA or abs(self.ratio - 1) < self.min_effect:
            return NO_DIFFERENCE
        if self._ranks_disagree:
            return CANNOT_TELL
        return BETTER if (self.ratio > 1) == self.higher_is_better else WORSE

    @property
    def verdict(self) -> str:
        """The outcome in words, e.g. "better: 12 % lower (95 % CI 9.1 to 15 % lower; p < 0.001)"
        for a time: "lower"/"higher" is what the mean did, "better"/"worse" what that means."""
        if self._judged_p is None and self._too_wide:
            return "cannot tell: the values spread wider than a float can hold"
        if self._judged_p is None:
            return (
                f"too few values to compare: {self.n_baseline} in the baseline, "
                f"{self.n_values} compared; each side needs 2 or more"
            )
        if self.ratio is None:
            return "no percent change: the baseline's mean is not above 0"
        change = _change(self.percent_change) if self.percent_change else "unchanged"
        interval, p = self._interval_words(), self._p_words()
        outcome = self.outcome
        if outcome == CANNOT_TELL:  # the ranks disagree with the means
            lean = "higher" if self.values_tend_higher else "lower"
            return (
                f"the ranks and the means disagree: the values tend to be {lean}, "
                f"but their mean is {change} ({p})"
            )
        if outcome == NO_DIFFERENCE and self._judged_p >= ALPHA:
            return f"no significant difference ({p}; {change}, {interval})"
        if outcome == NO_DIFFERENCE:
            under = f"a difference under {self.min_effect * 100:g} %"
            return f"no significant difference: {under} ({change}, {interval}; {p})"
        return f"{outcome}: {change} ({interval}; {p})"

    @property
    def _too_wide(self) -> bool:
        """A side's sd past the largest float (values near it, of both signs): no test."""
        return any(math.isinf(side.sd or 0) for side in (self.baseline, self.values))

    @property
    def _ranks_disagree(self) -> bool:
        return self.values_tend_higher is not None and self.values_tend_higher != (self.ratio > 1)

    @property
    def _judged_p(self) -> float | None:
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    def _p_words(self) -> str:
        # Named where it differs from a plain t-test's p, as a rank test can disagree with the
        # interval of the means.
        name = "Mann-Whitney p" if self.test == MANN_WHITNEY else "p"
        if self.p_adjusted is not None:
            name = f"Holm-adjusted {name}"
        p = self._judged_p
        return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3g}"

    def _interval_words(self) -> str:
        if self.ci_unbounded:
            return "95 % CI unbounded, as the baseline's mean is not clearly above 0"
        low, high = self.percent_ci
        # From the end nearer to no change to the far one, in the estimate's direction.
        near, far = (high, low) if self.percent_change < 0 else (low, high)
        near_words, far_words = _change(near), _change(far)
        if near_words == far_words:
            return f"95 % CI {far_words}"
        if (near < 0) == (far < 0):  # one side of no change: "9.1 to 15 % lower"
            return f"95 % CI {_number(near)} to {far_words}"
        return f"95 % CI {near_words} to {far_words}"

    def to_dict(self) -> dict:
        extra = ("n_baseline", "n_values", "percent_change", "percent_ci", "outcome", "verdict")
        return asdict(self) | {name: getattr(self, name) for name in extra}


def compare(
    baseline: Sequence[float],
    values: Sequence[float],
    higher_is_better: bool = True,
    *,
    test: str = WELCH,
    min_effect: float = 0.02,
) -> Comparison:
    """Compare `values` with `baseline` (ValueError for an empty side or a value not finite)."""
    if test not in (WELCH, MANN_WHITNEY):
        raise ValueError(f"unknown test {test!r}: use {WELCH!r} or {MANN_WHITNEY!r}")
    if not (math.isfinite(min_effect) and min_effect >= 0):
        raise ValueError("min_effect must be a fraction of 0 or more, e.g. 0.02 for 2 %")
    baseline, values = list(baseline), list(values)  # read twice: a generator would run dry
    before, after = describe(baseline), describe(values)
    scale = _scale(before, after)
    scaled_before, scaled_after = _scaled(before, scale), _scaled(after, scale)
    p_value = low = high = tend_higher = None
    if before.n >= 2 and after.n >= 2 and math.isfinite(before.sd + after.sd):
        if test == WELCH:
            p_value = _welch_p(scaled_before, scaled_after)
        else:
            found = scipy_stats.mannwhitneyu(values, baseline, alternative="two-sided")
            p_value = float(found.pvalue)
            even = after.n * before.n / 2
            tend_higher = None if found.statistic == even else bool(found.statistic > even)
    ratio = after.mean / before.mean if before.mean > 0 else None
    if ratio is not None and p_value is not None:
        low, high = _fieller(scaled_before, scaled_after, ratio) or (None, None)
    return Comparison(
        baseline=before, values=after, higher_is_better=higher_is_better, test=test,
        min_effect=min_effect, ratio=ratio, ci_low=low, ci_high=high,
        ci_unbounded=ratio is not None and p_value is not None and low is None,
        p_value=p_value, values_tend_higher=tend_higher,
    )  # fmt: skip


def compare_many(
    baseline: Sequence[float],
    groups: Mapping[str, Sequence[float]],
    higher_is_better: bool = True,
    *,
    test: str = WELCH,
    min_effect: float = 0.02,
) -> dict[str, Comparison]:
    """Compare each group with the baseline, for one table: the verdicts use Holm-adjusted
    p-values, so that among many groups a chance "win" is not called one."""
    baseline = list(baseline)  # compared with every group
    found = {
        name: compare(baseline, values, higher_is_better, test=test, min_effect=min_effect)
        for name, values in groups.items()
    }
    adjusted = holm([comparison.p_value for comparison in found.values()])
    return {
        name: replace(comparison, p_adjusted=p)
        for (name, comparison), p in zip(found.items(), adjusted, strict=True)
    }


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in the given order (R's p.adjust(method="holm")).

    The k-th smallest of m p-values is multiplied by m - k + 1, never falls below the one
    before it (step-down) and is capped at 1. None (no test was possible) stays None and is not
    counted in m.
    """
    for p in p_values:
        if p is not None and not 0 <= p <= 1:  # also refuses NaN
            raise ValueError(f"a p-value must lie between 0 and 1, not {p}")
    tested = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        adjusted[index] = running
    return adjusted


def _mean(values: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        mean = float(values.mean())
    if math.isfinite(mean):
        return mean
    # A sum past the largest float: exact, slower, but a mean of finite values fits one.
    return float(statistics.mean(values.tolist()))


def _median(values: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        median = float(np.median(values))
    if math.isfinite(median):
        return median
    # The two middle values' sum past the largest float: halved first (exact, a power of 2).
    return float(np.median(values * 0.5)) * 2


def _sd(values: np.ndarray) -> float:
    """The sample sd; infinite for a spread past the largest float (values near it of both
    signs), which the comparison then calls undecided."""
    with np.errstate(over="ignore", invalid="ignore"):
        sd = float(values.std(ddof=1))
    if math.isfinite(sd):
        return sd
    try:  # squares past the largest float: the exact fractions, slower, may still fit one
        return statistics.stdev(values.tolist())
    except OverflowError:
        return math.inf


def _scaled(description: Description, scale: float) -> Description:
    """The mean and sd a test reads, of the values times scale (a power of 2: exact)."""
    sd = None if description.sd is None else description.sd * scale
    return replace(description, mean=description.mean * scale, sd=sd)


def _scale(*sides: Description) -> float:
    """A power of 2 that brings the largest value to 0.5..1: exact, and it leaves the t-test
    and the ratio as they are while their squares (sd^2, mean^2) can no longer overflow. (The
    largest value from each side's min and max: a pass over the values costs more.)"""
    largest = max(max(abs(side.min), abs(side.max)) for side in sides)
    return math.ldexp(1.0, -math.frexp(largest)[1]) if largest else 1.0


def _welch_p(before: Description, after: Description) -> float:
    """Welch's two-sided p for a difference of means. With no spread on either side, t is 0/0
    for equal means (p 1) and infinite for unequal ones (p 0): every trial said the same."""
    vb, va = before.squared_standard_error, after.squared_standard_error
    if vb + va == 0:
        return 1.0 if after.mean == before.mean else 0.0
    t = (after.mean - before.mean) / math.sqrt(vb + va)
    df = (vb + va) ** 2 / (vb**2 / (before.n - 1) + va**2 / (after.n - 1))
    return float(2 * scipy_stats.t.sf(abs(t), df))


def _fieller(before: Description, after: Description, ratio: float) -> tuple[float, float] | None:
    """The 95 % Fieller interval of mean(after) / mean(before), or None where it is unbounded.

    It is the set of r where |mean(after) - r * mean(before)| <= t * sqrt(va + r^2 * vb), a
    quadratic in r whose leading coefficient is mean(before)^2 - t^2 * vb.
    """
    vb, va = before.squared_standard_error, after.squared_standard_error
    if vb == va == 0:
        return ratio, ratio
    if va == 0:  # the Welch-Satterthwaite df below then reduce to one side's n - 1
        df = before.n - 1
    elif vb == 0:
        df = after.n - 1
    else:
        df = (va + ratio**2 * vb) ** 2 / (va**2 / (after.n - 1) + ratio**4 * vb**2 / (before.n - 1))
    t = scipy_stats.t.ppf((1 + CONFIDENCE) / 2, df)
    leading = before.mean**2 - t**2 * vb
    if leading <= 0:
        return None
    half = t * math.sqrt(va * leading + vb * after.mean**2)
    centre = before.mean * after.mean
    return float((centre - half) / leading), float((centre + half) / leading)


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else (ratio - 1) * 100


def _number(percent: float) -> str:
    """A percentage's size for words: two significant digits below 10, whole above."""
    size = abs(percent)
    return f"{size:.2g}" if size < 10 else f"{size:.0f}"


def _change(percent: float) -> str:
    if _number(percent) == "0":
        return "0 %"
    return f"{_number(percent)} % {'lower' if percent < 0 else 'higher'}"
