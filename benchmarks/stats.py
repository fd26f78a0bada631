"""Statistics of a group of trials and of one group against a baseline (pure: numbers in,
numbers out; scipy does the distributions).

A comparison states how the compared values' mean relates to the baseline's, as a ratio with a
95 % confidence interval, and tests whether they differ (Welch's t-test). Its verdict puts
that in words that respect the metric's direction.

One procedure gives the verdict and the interval. The test is Welch's, with the
Welch-Satterthwaite degrees of freedom of the difference of means; the ratio's interval is
Fieller's at the same t. Fieller's set is the ratios r with |mean(after) - r * mean(before)|
<= t * sqrt(va + r^2 * vb): at r = 1 that is the test itself, so the interval excludes no
change exactly when p < 0.05, and "better" never comes with an interval that includes no change.
(R's mratios::ttestratio takes the degrees of freedom at the estimated ratio instead, which
can disagree with the test near p = 0.05.) Why Fieller's and not the delta method on the log
ratio: groups are small (3 to 10 trials), where a first-order approximation is at its worst,
and Fieller's set says honestly when the ratio cannot be bounded: when the baseline's mean is
not clearly above 0 (mean^2 <= t^2 * its squared standard error) the set is the whole line or
two rays. Then, and for a baseline mean of 0 or below (where a ratio flips or loses its
meaning), the comparison is of the difference of means, with its interval in the metric's unit.

A change counts when the interval excludes no change and the ratio is at least the minimum
effect away from 1 on the log scale (|log ratio| >= log(1 + min_effect)), so that swapping the
sides mirrors the verdict. A significant change short of it is its own outcome, and an
interval that lies within the minimum effect is said to.

The board is the unit (benchmarks.designs): the trials of one board are not independent of
each other as trials of different boards are. Boards that ran both sides are blocks, whose own
level cancels; sides on different boards compare the boards' means; a side on one board
against another side on another cannot be told from the boards' own difference.

Every trial of each side alike (no spread) leaves nothing for a t-test: only the order of the
values is tested, exactly (a permutation test), and it cannot give a p below
2 / C(n + m, n): 0.1 for 3 against 3.
"""

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from benchmarks import designs
from benchmarks.designs import BLOCKS, BOARDS, CONFOUNDED, TRIALS, Design
from benchmarks.summaries import Summary

# A side of a comparison: its values (with their boards given apart, or none), or its values
# summed up board by board, by board name (a database's per-group sums: benchmarks.summaries).
Side = Sequence[float] | Mapping[str, Summary]

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE  # a p-value below this is significant
BETTER, WORSE, NO_DIFFERENCE, CANNOT_TELL = "better", "worse", "no difference", "cannot tell"
BELOW_MIN_EFFECT = "below the minimum effect"  # significant, but too small to count


@dataclass(frozen=True)
class Description:
    n: int
    mean: float
    median: float | None  # None where only the values' sums were at hand
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


def _special():
    """scipy.special, imported where a figure is first computed: scipy takes over a second to
    import, which every management command and the web server's start would pay through the
    URL conf (the share pages import this module)."""
    from scipy import special

    return special


def _t_quantile(df: float) -> float:
    """Student's t at CONFIDENCE for df degrees of freedom (scipy.stats.t.ppf's own function,
    without its argument checks: a page describes every group and board, a fiftieth of the
    cost)."""
    return float(_special().stdtrit(df, (1 + CONFIDENCE) / 2))


def describe(values) -> Description:
    """values: the values, or their Summary (benchmarks.summaries)."""
    if isinstance(values, Summary):
        return _described(values)
    # numpy, not the statistics module: a comparison describes groups of tens of thousands
    # of trials, and statistics.stdev's exact fractions took 6 ms for 16,000 of them.
    # numpy's mean sums pairwise and its sd takes two passes: accurate to the last digits
    # that matter here. The figures are Python floats (JSON, templates).
    values = np.asarray(
        values if isinstance(values, list | tuple | np.ndarray) else list(values), float
    )
    if not values.size:
        raise ValueError("no values to describe")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite numbers")
    n = int(values.size)
    sd = _sd(values) if n > 1 else None
    low, high = float(values.min()), float(values.max())
    return _description(n, _mean(values), sd, _median(values), low, high)


def _described(summary: Summary) -> Description:
    """A Description from a Summary: the same figures as from the values (the median only
    where the summary knows it)."""
    if not summary.finite:
        raise ValueError("values must be finite numbers")
    n = summary.n
    sd = math.sqrt(summary.m2 / (n - 1)) if n > 1 else None
    return _description(n, summary.mean, sd, summary.median, summary.min, summary.max)


def _description(n, mean, sd, median, low, high) -> Description:
    """The figures, and the mean's confidence interval from them (where there is an sd)."""
    ci_low = ci_high = None
    if sd is not None:
        half = _t_quantile(n - 1) * sd / math.sqrt(n)
        ci_low, ci_high = float(mean - half), float(mean + half)
    return Description(
        n=n,
        mean=mean,
        median=median,
        sd=sd,
        relative_sd=sd / abs(mean) if sd is not None and mean else None,
        ci_low=ci_low,
        ci_high=ci_high,
        min=low,
        max=high,
    )


@dataclass(frozen=True)
class Comparison:
    """The compared values against the baseline, on one metric.

    `ratio` is the mean of the values over the baseline's (as the design reads them: see
    benchmarks.designs), with `ci_low`..`ci_high` its 95 % Fieller interval (None with too few
    values, when `ci_unbounded`, or when every trial of a side was alike). `difference` is the
    values' mean less the baseline's, in the metric's unit, with `difference_ci`; the verdict
    reads it instead of the ratio when the ratio cannot be bounded. Neither interval is adjusted
    for many comparisons. `p_value` is the test's two-sided p (None with too few values or no
    test); `p_adjusted` is its Holm-adjusted value within a table (`compare_many`), and the
    verdict uses it when set.
    """

    baseline: Description
    values: Description
    higher_is_better: bool
    min_effect: float  # a change smaller than this fraction does not count, significant or not
    ratio: float | None  # None when the baseline's mean is not above 0
    ci_low: float | None
    ci_high: float | None
    ci_unbounded: bool
    p_value: float | None
    p_adjusted: float | None = None
    difference: float | None = None
    difference_ci: tuple[float, float] | None = None
    log_ratio: float | None = None  # log(values) - log(baseline): mirrored exactly by a swap
    unit: str = ""
    design: Design = Design()
    n_units: tuple[int, int] = (0, 0)  # what each side's test took: trials, or boards' means
    identical: bool = False  # every unit of each side alike: only their order was tested
    names: tuple[str, str] = ("the baseline", "the compared values")

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
    def confounded(self) -> bool:
        """Each side on boards of its own, one of them on a single board: no test."""
        return self.design.units == CONFOUNDED

    @property
    def outcome(self) -> str:
        """better, worse, below the minimum effect, no difference or cannot tell."""
        p = self._judged_p
        if p is None:
            return CANNOT_TELL
        changed = self.difference != 0 if self.identical else self._excludes_no_change
        if p >= ALPHA or not changed:
            # Alike trials that differ, of too few to order significantly: not "no difference".
            return CANNOT_TELL if self.identical and self.difference else NO_DIFFERENCE
        if self.log_ratio is not None and abs(self.log_ratio) < math.log1p(self.min_effect):
            return BELOW_MIN_EFFECT
        return BETTER if (self.difference > 0) == self.higher_is_better else WORSE

    @property
    def verdict(self) -> str:
        """The outcome in words, e.g. "better: 12 % lower (95 % CI 9.1 to 15 % lower; p < 0.001)"
        for a time: "lower"/"higher" is what the mean did, "better"/"worse" what that means."""
        if self._too_wide:
            return "cannot tell: the values spread wider than a float can hold"
        if self.confounded:
            return self._confounded_words()
        if self._judged_p is None and self.identical:
            return (
                "cannot tell: every trial on a board gave the same value, and the boards "
                "disagree on the direction"
            )
        if self._judged_p is None:
            return self._too_few_words()
        outcome, p = self.outcome, self._p_words()
        if self.identical:
            return self._identical_words(outcome)
        change, interval, notes = self._change_words(), self._interval_words(), self._notes()
        if outcome == NO_DIFFERENCE and self.within_min_effect:
            return (
                f"no difference of {self.min_effect * 100:g} % or more: the 95 % CI lies within "
                f"it ({change}, {interval}; {p}{notes})"
            )
        if outcome == NO_DIFFERENCE:
            return f"no significant difference ({p}; {change}, {interval}{notes})"
        return f"{self._lead(outcome)}: {change} ({interval}; {p}{notes})"

    @property
    def _too_wide(self) -> bool:
        """A side's sd past the largest float (values near it, of both signs): no test."""
        return any(math.isinf(side.sd or 0) for side in (self.baseline, self.values))

    @property
    def _on_ratio(self) -> bool:
        """Whether the words give the change as a percent (else as a difference)."""
        return self.ci_low is not None or (self.identical and self.ratio is not None)

    @property
    def _excludes_no_change(self) -> bool:
        if self.ci_low is not None:
            return not self.ci_low <= 1 <= self.ci_high
        return self.difference_ci is not None and not (
            self.difference_ci[0] <= 0 <= self.difference_ci[1]
        )

    @property
    def within_min_effect(self) -> bool:
        """Whether the 95 % CI of the ratio lies within the minimum effect either way: no
        change that counts, shown (not merely no change found)."""
        if self.ci_low is None or self.ci_low <= 0:
            return False
        limit = math.log1p(self.min_effect)
        return -limit < math.log(self.ci_low) and math.log(self.ci_high) < limit

    @property
    def _judged_p(self) -> float | None:
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    def _lead(self, outcome: str) -> str:
        if outcome == BELOW_MIN_EFFECT:
            return f"significant, but below the {self.min_effect * 100:g} % that counts"
        return outcome

    def _p_words(self) -> str:
        name = "p" if self.p_adjusted is None else "Holm-adjusted p"
        p = self._judged_p
        return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3g}"

    @property
    def _digits(self) -> int:
        """Three significant digits for a change under the minimum effect: two would show
        -1.96 % as "2 % lower", the very size it is said to be under."""
        return 3 if self.outcome == BELOW_MIN_EFFECT else 2

    def _change_words(self) -> str:
        if self._on_ratio:
            if not self.percent_change:
                return "unchanged"
            return _change(self.percent_change, self._digits)
        words = _amount(self.difference, self.unit)
        if self.baseline.mean <= 0:
            words += f" against a baseline mean of {_figure(self.baseline.mean)}"
        return words

    def _interval_words(self) -> str:
        if not self._on_ratio:
            low, high = self.difference_ci
            return f"95 % CI {_amount(low)} to {_amount(high, self.unit)}"
        low, high = self.percent_ci
        # From the end nearer to no change to the far one, in the estimate's direction.
        near, far = (high, low) if self.percent_change < 0 else (low, high)
        digits = self._digits
        near_words, far_words = _change(near, digits), _change(far, digits)
        if near_words == far_words:
            return f"95 % CI {far_words}"
        if (near < 0) == (far < 0):  # one side of no change: "9.1 to 15 % lower"
            return f"95 % CI {_number(near, digits)} to {far_words}"
        return f"95 % CI {near_words} to {far_words}"

    def _notes(self) -> str:
        """What the design and the scale of the change took, where it was not the plain one."""
        notes = []
        if self.ci_unbounded:
            notes.append(
                "a difference, as the baseline's mean is not clearly above 0 and the ratio's "
                "interval is unbounded"
            )
        design, left = self.design, ""
        if design.left_out:
            left = f": {_listed(design.left_out)} left out, only one side ran on it"
        if design.units == TRIALS and design.shared and left:
            notes.append(f"on {design.shared[0]}, the one board both sides ran on{left}")
        elif design.units == BLOCKS:
            notes.append(f"compared board by board, on {_listed(design.shared)}{left}")
        elif design.units == BOARDS:
            notes.append(
                f"the sides ran on different boards ({_listed(design.baseline_boards)}; "
                f"{_listed(design.values_boards)}): each board's mean counts as one value, and "
                f"{self._spread_words()}"
            )
        return "".join(f"; {note}" for note in notes)

    def _spread_words(self) -> str:
        spread = self.design.board_spread
        if spread is None:
            return (
                "how much boards differ on their own is unknown here, as no side ran on two boards"
            )
        return (
            f"boards of one side differ by {_number(spread * 100)} % (relative SD of their means)"
        )

    def _confounded_words(self) -> str:
        baseline, values = self.names
        design = self.design
        change = _change(self.percent_change) if self.ratio else _amount(self.difference, self.unit)
        return (
            f"cannot tell: confounded with the board: {baseline} ran on "
            f"{_listed(design.baseline_boards)}, {values} on {_listed(design.values_boards)} "
            f"({change}); {self._spread_words()}"
        )

    def _too_few_words(self) -> str:
        if self.design.units == BLOCKS:
            return (
                f"too few values to compare: on the boards both sides ran on "
                f"({_listed(self.design.shared)}), each side needs 2 or more trials on one of them"
            )
        before, after = self.n_units if self.design.shared else (self.n_baseline, self.n_values)
        return (
            f"too few values to compare: {before} in the baseline, {after} compared; "
            "each side needs 2 or more"
        )

    def _identical_words(self, outcome: str) -> str:
        if outcome == NO_DIFFERENCE:
            return "no difference: every trial on both sides gave the same value"
        what = "boards" if self.design.units == BOARDS else "trials"
        order = f"the order of {self.n_units[0]} and {self.n_units[1]} {what}"
        change = self._change_words()
        if outcome == CANNOT_TELL:
            return (
                f"cannot tell: every trial of a side gave the same value ({change}); with no "
                f"spread, only {order} can be tested, and it cannot give p below "
                f"{self.p_value:.3g}"
            )
        return (
            f"{self._lead(outcome)}: {change} (every trial of a side gave the same value; with "
            f"no spread, only {order} was tested: {self._p_words()}{self._notes()})"
        )

    def renamed(self, board: Callable[[str], str], side: Callable[[str], str]) -> "Comparison":
        """The comparison with its boards and its sides under other names, for its words (a
        share page's aliases)."""
        design = replace(
            self.design,
            baseline_boards=tuple(map(board, self.design.baseline_boards)),
            values_boards=tuple(map(board, self.design.values_boards)),
        )
        return replace(self, design=design, names=(side(self.names[0]), side(self.names[1])))

    def to_dict(self) -> dict:
        extra = ("n_baseline", "n_values", "percent_change", "percent_ci", "outcome", "verdict")
        return asdict(self) | {name: getattr(self, name) for name in extra}


def compare(
    baseline: Side,
    values: Side,
    higher_is_better: bool = True,
    *,
    min_effect: float = 0.02,
    unit: str = "",
    baseline_boards: Sequence | None = None,
    values_boards: Sequence | None = None,
    names: tuple[str, str] = ("the baseline", "the compared values"),
) -> Comparison:
    """Compare `values` with `baseline` (ValueError for an empty side or a value not finite).

    Each side is its values, with *_boards the board (its name) each ran on, for the design
    (benchmarks.designs); without them every trial is a unit. Or each side is its values
    summed up board by board (board name: Summary): the same answer from aggregates. names:
    the sides, for the words of a confounded one."""
    if not (math.isfinite(min_effect) and min_effect >= 0):
        raise ValueError("min_effect must be a fraction of 0 or more, e.g. 0.02 for 2 %")
    baseline, values = (_values(side) for side in (baseline, values))
    before, after = describe(_pooled(baseline)), describe(_pooled(values))
    scale = _scale(before, after)
    # The values times a power of 2 (exact): the ratio and the test are the same, while their
    # squares (variances, mean^2) can no longer overflow.
    by_board_before = _by_board(baseline, baseline_boards, scale)
    by_board_after = _by_board(values, values_boards, scale)
    known = "" not in by_board_before and "" not in by_board_after
    design = designs.design_of(
        by_board_before if known else None, by_board_after if known else None
    )
    found = Comparison(
        baseline=before,
        values=after,
        higher_is_better=higher_is_better,
        min_effect=min_effect,
        ratio=_ratio(before.mean, after.mean),
        ci_low=None,
        ci_high=None,
        ci_unbounded=False,
        p_value=None,
        difference=after.mean - before.mean,
        unit=unit,
        design=design,
        names=names,
    )
    if design.units == CONFOUNDED or found._too_wide:
        return found
    pairs = designs.strata(design, by_board_before, by_board_after)
    sides = [designs.estimate([pair[side] for pair in pairs]) for side in (0, 1)]
    return _tested(found, *sides, pairs, scale)


def _values(side: Side):
    """A side as a numpy array of its values, or as its summaries by board (checked)."""
    if isinstance(side, Mapping):
        if not side:
            raise ValueError("no values to describe")
        if not all(summary.finite for summary in side.values()):
            raise ValueError("values must be finite numbers")
        return dict(side)
    return np.asarray(side if isinstance(side, list | tuple | np.ndarray) else list(side), float)


def _pooled(side):
    return Summary.pooled(side.values()) if isinstance(side, dict) else side


def _by_board(side, boards: Sequence | None, scale: float) -> dict[str, Summary]:
    """A side's values times scale, summed up by board name ("" for all of them, where the
    boards are not known)."""
    if isinstance(side, dict):
        return {board: summary.scaled(scale) for board, summary in side.items()}
    scaled = side * scale
    if boards is None:
        return {"": Summary.of(scaled)}
    names = _board_names(boards, side.size)
    return {str(board): Summary.of(scaled[names == board]) for board in np.unique(names).tolist()}


def _tested(
    found: Comparison,
    before: designs.Estimate,
    after: designs.Estimate,
    pairs: list[tuple[Summary, Summary]],
    scale: float,
) -> Comparison:
    """found with the design's estimates, its test and its intervals."""
    ratio = _ratio(before.mean, after.mean)
    found = replace(
        found,
        ratio=ratio,
        difference=(after.mean - before.mean) / scale,
        n_units=tuple(sum(pair[side].n for pair in pairs) for side in (0, 1)),
        log_ratio=math.log(after.mean) - math.log(before.mean) if ratio and ratio > 0 else None,
    )
    if not (before.df and after.df):
        return found
    if before.variance == after.variance == 0:
        return replace(found, p_value=designs.order_p(pairs), identical=True)
    variance = before.variance + after.variance
    # Welch-Satterthwaite; a side with no spread adds nothing (the other's df alone).
    df = variance**2 / sum(side.variance**2 / side.df for side in (before, after) if side.variance)
    t, difference = _t_quantile(df), after.mean - before.mean
    p_value = float(2 * _special().stdtr(df, -abs(difference) / math.sqrt(variance)))
    half = t * math.sqrt(variance)
    found = replace(
        found,
        p_value=p_value,
        difference_ci=((difference - half) / scale, (difference + half) / scale),
    )
    if ratio is None:
        return found
    interval = _fieller(before, after, t)
    if interval is None:
        return replace(found, ci_unbounded=True)
    return replace(found, ci_low=interval[0], ci_high=interval[1])


def compare_many(
    baseline: Side,
    groups: Mapping[str, Side],
    higher_is_better: bool = True,
    *,
    min_effect: float = 0.02,
    unit: str = "",
    baseline_boards: Sequence | None = None,
    boards: Mapping[str, Sequence] | None = None,
    baseline_name: str = "the baseline",
) -> dict[str, Comparison]:
    """Compare each group with the baseline, for one table: the verdicts use Holm-adjusted
    p-values, so that among many groups a chance "win" is not called one. boards: each group's
    values' boards, by group name, with baseline_boards the baseline's. A side may be its
    values summed up board by board, as compare() takes it."""
    if not isinstance(baseline, Mapping):
        baseline = list(baseline)  # compared with every group
    found = {
        name: compare(
            baseline,
            values,
            higher_is_better,
            min_effect=min_effect,
            unit=unit,
            baseline_boards=baseline_boards,
            values_boards=None if boards is None else boards[name],
            names=(baseline_name, name),
        )
        for name, values in groups.items()
    }
    adjusted = holm([comparison.p_value for comparison in found.values()])
    return {
        name: replace(comparison, p_adjusted=p)
        for (name, comparison), p in zip(found.items(), adjusted, strict=True)
    }


POWER = 0.8  # the chance of calling a change of the minimum effect that is there


def trials_needed(relative_sd: float, min_effect: float) -> int | None:
    """Units (trials, or boards' means) per group for a two-sided test at ALPHA to call a
    change of min_effect with POWER, at this relative SD of a unit: the normal approximation
    n = 2 (z(1 - ALPHA/2) + z(POWER))^2 (sd / delta)^2 on the log scale (delta = log(1 +
    min_effect), sd = relative_sd, close for a few % of spread), plus one for the t test's
    heavier tails at small n. None when it cannot be told (no spread known, no effect)."""
    if relative_sd is None or not math.isfinite(relative_sd) or min_effect <= 0:
        return None
    z = float(_special().ndtri(1 - ALPHA / 2) + _special().ndtri(POWER))  # 1.96 + 0.84
    n = 2 * (z * relative_sd / math.log1p(min_effect)) ** 2
    return max(2, math.ceil(n) + 1)


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


def _scale(*sides: Description) -> float:
    """A power of 2 that brings the largest value to 0.5..1: exact, and it leaves the t-test
    and the ratio as they are while their squares (sd^2, mean^2) can no longer overflow. (The
    largest value from each side's min and max: a pass over the values costs more.)"""
    largest = max(max(abs(side.min), abs(side.max)) for side in sides)
    return math.ldexp(1.0, -math.frexp(largest)[1]) if largest else 1.0


def _board_names(boards: Sequence, count: int) -> np.ndarray:
    names = np.asarray(boards).astype(str)
    if names.size != count:
        raise ValueError(f"{names.size} boards for {count} values: one board a value")
    return names


def _ratio(before: float, after: float) -> float | None:
    return after / before if before > 0 else None


def _fieller(before, after, t: float) -> tuple[float, float] | None:
    """The Fieller interval of mean(after) / mean(before) at t, or None where it is unbounded.

    It is the set of r where |mean(after) - r * mean(before)| <= t * sqrt(va + r^2 * vb), a
    quadratic in r whose leading coefficient is mean(before)^2 - t^2 * vb.
    """
    vb, va = before.variance, after.variance
    leading = before.mean**2 - t**2 * vb
    if leading <= 0:
        return None
    half = t * math.sqrt(va * leading + vb * after.mean**2)
    centre = before.mean * after.mean
    return float((centre - half) / leading), float((centre + half) / leading)


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else (ratio - 1) * 100


def _number(percent: float, digits: int = 2) -> str:
    """A percentage's size for words: two significant digits below 10 (or more, where two
    would round a change under the minimum effect up to it), whole above."""
    size = abs(percent)
    return f"{size:.{digits}g}" if size < 10 else f"{size:.0f}"


def _change(percent: float, digits: int = 2) -> str:
    if _number(percent, digits) == "0":
        return "0 %"
    return f"{_number(percent, digits)} % {'lower' if percent < 0 else 'higher'}"


def _figure(value: float) -> str:
    """A value in the metric's unit for words: three significant digits, whole from 1000 to a
    million."""
    return f"{value:,.0f}" if 1000 <= abs(value) < 1e6 else f"{value:.3g}"


def _amount(difference: float, unit: str = "") -> str:
    """A difference with its sign: "+41 retransmits"."""
    words = ("-" if difference < 0 else "+") + _figure(abs(difference))
    return f"{words} {unit}" if unit else words


def _listed(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
