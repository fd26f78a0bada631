"""The statistics behind comparisons, checked against numbers worked out elsewhere.

Every expected figure is a literal with its source: a published example, a hand calculation
shown in the comment, or scipy run on the same data apart from benchmarks/stats.py. The Fieller
intervals were found by inverting the ratio t-test of R's mratios::ttestratio (unequal
variances, degrees of freedom at the estimated ratio) with scipy.optimize.brentq: a numerical
root search, not the closed form the module uses.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import stats

FUZZ = settings(max_examples=300, deadline=None)
TRIALS = st.lists(st.floats(min_value=1e-3, max_value=1e6), min_size=1, max_size=12)

# R's ?t.test example, t.test(extra ~ group, data = sleep): Welch, t = -1.8608,
# df = 17.776, p-value = 0.07939; means 0.75 and 2.33.
SLEEP_GROUP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_GROUP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

TIMES_BEFORE = [10.1, 10.3, 9.9, 10.2, 10.0]  # seconds: lower is better
TIMES_AFTER = [11.0, 11.4, 10.9, 11.2, 11.1]


def test_describe_gives_the_relative_sd():
    # The textbook set (Wikipedia, "Standard deviation"): mean 5, squared deviations sum to 32,
    # so the sample SD is sqrt(32 / 7) = 2.1380899 and the relative SD 2.1380899 / 5.
    found = stats.describe([2, 4, 4, 4, 5, 5, 7, 9])
    assert found.mean == 5
    assert found.sd == pytest.approx(2.1380899, abs=1e-7)
    assert found.relative_sd == pytest.approx(0.42761799, abs=1e-8)
    assert found.to_dict()["relative_sd"] == found.relative_sd


def test_the_ci_width_that_adaptive_campaigns_stop_on_is_kept():
    # 9, 10, 11: mean 10, sd 1; Student's t for 2 df at 97.5 % is 4.303 (any t table), so the
    # half-width is 4.303 / sqrt(3) = 2.4841 and, relative to the mean, 0.24841.
    found = stats.describe([9, 10, 11])
    assert found.ci_low == pytest.approx(10 - 2.4841, abs=1e-4)
    assert found.relative_half_width == pytest.approx(0.24841, abs=1e-5)


def test_one_value_has_no_spread_and_a_zero_mean_no_relative_sd():
    one = stats.describe([3.5])
    assert (one.n, one.mean, one.median, one.min, one.max) == (1, 3.5, 3.5, 3.5, 3.5)
    assert one.sd is one.relative_sd is one.ci_low is one.ci_high is None
    assert stats.describe([-1.0, 1.0]).relative_sd is None  # sd / |0| tells nothing


def test_welch_matches_r_on_the_sleep_data_and_finds_no_significant_difference():
    found = stats.compare(SLEEP_GROUP_1, SLEEP_GROUP_2)
    assert found.p_value == pytest.approx(0.07939, abs=5e-6)
    assert (found.n_baseline, found.n_values) == (10, 10)
    assert found.ratio == pytest.approx(2.33 / 0.75)
    assert found.outcome == "no difference"
    assert found.verdict.startswith("no significant difference (p = 0.0794; 211 % higher")


def test_a_baseline_mean_not_clearly_above_zero_leaves_the_ratio_unbounded():
    # Sleep group 1: mean 0.75, so mean^2 = 0.5625, is below t^2 * s^2 / n = 1.5405 (t at the
    # Welch-Satterthwaite df of the ratio): Fieller's set is not an interval.
    found = stats.compare(SLEEP_GROUP_1, SLEEP_GROUP_2)
    assert found.ci_low is found.ci_high is None
    assert found.ci_unbounded
    assert found.verdict.endswith(
        "95 % CI unbounded, as the baseline's mean is not clearly above 0)"
    )


def test_a_second_r_welch_example_agrees():
    # R's t.test(ts1, ts2) on these values prints t = -1.8325, df = 17.9, p-value = 0.08356.
    ts1 = [11, 9, 10, 11, 10, 12, 9, 11, 12, 9]
    ts2 = [11, 13, 10, 13, 12, 9, 11, 12, 12, 11]
    assert stats.compare(ts1, ts2).p_value == pytest.approx(0.08356, abs=5e-6)


def test_equal_means_are_no_difference():
    found = stats.compare([10.0, 11.0, 12.0], [12.0, 10.0, 11.0])
    assert found.ratio == 1
    assert found.p_value == pytest.approx(1.0)  # t = 0
    assert found.outcome == "no difference"
    assert found.verdict.startswith("no significant difference (p = 1;")


def test_a_clear_win_in_throughput():
    # scipy.stats.ttest_ind(after, before, equal_var=False): p = 3.192946927013433e-09.
    before = [101.2, 99.8, 100.5, 100.9, 99.6]  # MB/s
    after = [112.1, 111.5, 113.0, 112.4, 111.8]
    found = stats.compare(before, after, higher_is_better=True)
    assert found.ratio == pytest.approx(1.1171314741035856)
    assert found.percent_change == pytest.approx(11.71314741035856)
    assert found.ci_low == pytest.approx(1.1071682749712064, rel=1e-9)
    assert found.ci_high == pytest.approx(1.12720978001778, rel=1e-9)
    assert found.p_value == pytest.approx(3.192946927013433e-09, rel=1e-6)
    assert found.outcome == "better"
    assert found.verdict == "better: 12 % higher (95 % CI 11 to 13 % higher; p < 0.001)"


def test_a_clear_loss_when_lower_is_better():
    # scipy.stats.ttest_ind(after, before, equal_var=False): p = 2.06661210464755e-05.
    found = stats.compare(TIMES_BEFORE, TIMES_AFTER, higher_is_better=False)
    assert found.ratio == pytest.approx(1.100990099009901)
    assert found.ci_low == pytest.approx(1.0747377792013981, rel=1e-9)
    assert found.ci_high == pytest.approx(1.1278184840468084, rel=1e-9)
    assert found.p_value == pytest.approx(2.06661210464755e-05, rel=1e-6)
    assert found.outcome == "worse"
    assert found.verdict == "worse: 10 % higher (95 % CI 7.5 to 13 % higher; p < 0.001)"


def test_a_clear_win_when_lower_is_better():
    found = stats.compare(TIMES_AFTER, TIMES_BEFORE, higher_is_better=False)
    assert found.ratio == pytest.approx(0.9082733812949639)
    assert found.ci_low == pytest.approx(0.8866675038095033, rel=1e-9)
    assert found.ci_high == pytest.approx(0.930459521710558, rel=1e-9)
    assert found.outcome == "better"
    assert found.verdict == "better: 9.2 % lower (95 % CI 7 to 11 % lower; p < 0.001)"


def test_a_significant_difference_under_the_minimum_effect_is_no_win():
    # 1 % more, very consistently: scipy's Welch p = 3.3939579396853224e-13.
    before = [100.0, 100.1, 99.9, 100.0, 100.1, 99.9, 100.0, 100.05]
    after = [101.0, 101.1, 100.9, 101.0, 101.1, 100.9, 101.0, 101.05]
    found = stats.compare(before, after)
    assert found.p_value == pytest.approx(3.3939579396853224e-13, rel=1e-5)
    assert found.outcome == "no difference"
    assert found.verdict == (
        "no significant difference: a difference under 2 % "
        "(1 % higher, 95 % CI 0.92 to 1.1 % higher; p < 0.001)"
    )
    assert stats.compare(before, after, min_effect=0.005).outcome == "better"


def test_one_value_on_a_side_is_too_few():
    found = stats.compare([5.0], [4.0, 4.1])
    assert found.p_value is found.ci_low is found.ci_high is None
    assert found.ratio == pytest.approx(0.81)
    assert found.outcome == "cannot tell"
    assert found.verdict == (
        "too few values to compare: 1 in the baseline, 2 compared; each side needs 2 or more"
    )
    assert stats.compare([4.0, 4.1], [5.0], test="mann-whitney").p_value is None


def test_identical_values_on_both_sides_are_certain():
    # No spread at all: t is 0/0 for equal means (no difference) and infinite for unequal ones.
    same = stats.compare([5.0, 5.0, 5.0], [5.0, 5.0, 5.0])
    assert (same.p_value, same.ratio, same.ci_low, same.ci_high) == (1.0, 1.0, 1.0, 1.0)
    assert same.outcome == "no difference"
    assert same.verdict == "no significant difference (p = 1; unchanged, 95 % CI 0 %)"
    apart = stats.compare([5.0, 5.0, 5.0], [6.0, 6.0, 6.0])
    assert (apart.p_value, apart.ci_low, apart.ci_high) == (0.0, 1.2, 1.2)
    assert apart.verdict == "better: 20 % higher (95 % CI 20 % higher; p < 0.001)"


def test_a_baseline_mean_not_above_zero_gives_no_percent_change():
    found = stats.compare([-1.0, 1.0], [1.0, 2.0])
    assert found.ratio is found.percent_change is found.ci_low is None
    assert found.outcome == "cannot tell"
    assert found.verdict == "no percent change: the baseline's mean is not above 0"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_not_finite_values_are_refused(bad):
    with pytest.raises(ValueError, match="finite"):
        stats.compare([1.0, bad], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        stats.compare([1.0, 2.0], [bad, 2.0])
    with pytest.raises(ValueError):
        stats.holm([0.01, bad])


def test_an_unknown_test_or_a_negative_minimum_effect_is_refused():
    with pytest.raises(ValueError, match="mann-whitney"):
        stats.compare([1.0, 2.0], [1.0, 2.0], test="student")
    with pytest.raises(ValueError, match="min_effect"):
        stats.compare([1.0, 2.0], [1.0, 2.0], min_effect=-0.01)


def test_mann_whitney_matches_scipys_documented_example():
    # scipy.stats.mannwhitneyu's documentation, after Boston University's public health course
    # notes: ages at diagnosis, males [19, 22, 16, 29, 24] and females [20, 11, 17, 12]:
    # U = 17, exact two-sided p = 0.1111 (14 of the C(9, 4) = 126 orderings).
    found = stats.compare([20, 11, 17, 12], [19, 22, 16, 29, 24], test="mann-whitney")
    assert found.p_value == pytest.approx(1 / 9)


def test_mann_whitney_sees_through_one_slow_outlier():
    # Latencies in ms, lower is better; one trial of the new group hit a 48 ms stall.
    # Every new value is above every old one: 1 of the C(12, 6) = 924 orderings, so the exact
    # two-sided p is 2 / 924 = 0.0021645. Welch, swayed by the stall, finds nothing
    # (scipy: p = 0.3066514270537898).
    before = [10.2, 10.4, 10.1, 10.3, 10.5, 10.0]
    after = [11.0, 11.2, 10.9, 11.1, 11.3, 48.0]
    ranks = stats.compare(before, after, higher_is_better=False, test="mann-whitney")
    assert ranks.p_value == pytest.approx(2 / 924)
    assert ranks.outcome == "worse"
    assert ranks.verdict.startswith("worse: 68 % higher")
    assert ranks.verdict.endswith("; Mann-Whitney p = 0.00216)")  # the means' CI spans 0
    means = stats.compare(before, after, higher_is_better=False)
    assert means.p_value == pytest.approx(0.3066514270537898, rel=1e-6)
    assert means.outcome == "no difference"


def test_mann_whitney_calls_nothing_a_win_when_ranks_and_means_disagree():
    # Seven of eight new times are below every old one, but one 40 s trial lifts the mean 27 %.
    # scipy.stats.mannwhitneyu(after, before), exact: U = 8, p = 0.010411810411810413.
    before = [10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 10.7]
    after = [9.0, 9.1, 9.2, 9.3, 9.4, 9.5, 9.6, 40.0]
    found = stats.compare(before, after, higher_is_better=False, test="mann-whitney")
    assert found.p_value == pytest.approx(0.010411810411810413)
    assert found.ratio == pytest.approx(1.2693236714975846)
    assert found.outcome == "cannot tell"
    assert found.verdict == (
        "the ranks and the means disagree: the values tend to be lower, "
        "but their mean is 27 % higher (Mann-Whitney p = 0.0104)"
    )


def test_holm_matches_the_worked_example():
    # The four-hypothesis example of Wikipedia's "Holm-Bonferroni method": p = 0.01, 0.04,
    # 0.03, 0.005. Step-down (as R's p.adjust(method = "holm")): 4 * 0.005 = 0.02,
    # 3 * 0.01 = 0.03, 2 * 0.03 = 0.06, max(0.06, 1 * 0.04) = 0.06.
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_keeps_order_caps_at_one_and_passes_none_through():
    # By hand: 2 * 0.3 = 0.6, then max(0.6, 1 * 0.4) = 0.6 (monotone, not 0.4).
    assert stats.holm([0.4, None, 0.3]) == pytest.approx([0.6, None, 0.6])
    assert stats.holm([0.6, 0.7]) == [1.0, 1.0]  # 2 * 0.6 = 1.2, capped
    assert stats.holm([]) == []
    with pytest.raises(ValueError):
        stats.holm([1.5])


def test_compare_many_judges_each_group_with_holm_adjusted_p_values():
    # scipy's Welch p against the baseline: faster 0.029136185724447514, similar
    # 0.767872710306459, slightly 0.2785395629031971. Holm over the three that could be
    # tested: 3 * 0.029136 = 0.087409, 2 * 0.278540 = 0.557079, max(0.557079, 0.767873).
    baseline = [100.0, 102.0, 98.0, 101.0, 99.0]
    groups = {
        "faster": [102.5, 104.5, 100.5, 103.5, 102.0],
        "similar": [100.5, 101.5, 99.0, 102.0, 98.5],
        "slightly": [101.0, 103.5, 99.0, 102.0, 100.5],
        "once": [104.0],
    }
    alone = stats.compare(baseline, groups["faster"])
    assert alone.p_value == pytest.approx(0.029136185724447514, rel=1e-6)
    assert alone.outcome == "better"

    table = stats.compare_many(iter(baseline), groups)  # any iterable, read once
    assert list(table) == ["faster", "similar", "slightly", "once"]
    assert table["faster"].p_value == alone.p_value
    assert table["faster"].p_adjusted == pytest.approx(0.087408557, rel=1e-6)
    assert table["slightly"].p_adjusted == pytest.approx(0.557079126, rel=1e-6)
    assert table["similar"].p_adjusted == pytest.approx(0.767872710, rel=1e-6)
    assert table["once"].p_adjusted is None
    assert table["faster"].outcome == "no difference"
    assert table["faster"].verdict.startswith(
        "no significant difference (Holm-adjusted p = 0.0874; 2.6 % higher"
    )
    assert table["once"].outcome == "cannot tell"


def test_a_comparison_reads_as_a_plain_dict():
    found = stats.compare(TIMES_BEFORE, TIMES_AFTER, higher_is_better=False)
    data = found.to_dict()
    assert data["baseline"]["n"] == 5
    assert data["verdict"] == found.verdict
    assert data["outcome"] == "worse"
    assert data["percent_change"] == pytest.approx(10.0990099)


@FUZZ
@given(
    baseline=TRIALS,
    values=TRIALS,
    higher_is_better=st.booleans(),
    test=st.sampled_from(["welch", "mann-whitney"]),
)
def test_any_positive_trials_give_a_p_value_an_interval_and_words(
    baseline, values, higher_is_better, test
):
    found = stats.compare(baseline, values, higher_is_better, test=test)
    assert found.p_value is None or 0 <= found.p_value <= 1
    if found.ci_low is not None:  # the estimate lies in its interval (to rounding)
        assert found.ci_low * (1 - 1e-12) <= found.ratio <= found.ci_high * (1 + 1e-12)
    assert found.outcome in {"better", "worse", "no difference", "cannot tell"}
    assert found.verdict


@FUZZ
@given(st.lists(st.none() | st.floats(min_value=0, max_value=1)))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(p_values):
    adjusted = stats.holm(p_values)
    pairs = [(p, q) for p, q in zip(p_values, adjusted, strict=True) if p is not None]
    assert all(q is None for p, q in zip(p_values, adjusted, strict=True) if p is None)
    assert all(p <= q <= 1 for p, q in pairs)
    assert all(q1 <= q2 for p1, q1 in pairs for p2, q2 in pairs if p1 < p2)


@pytest.mark.parametrize(
    ("baseline", "values"),
    [([1e200, 1], [2e200, 3]), ([1.7e302, 1.6e302], [1.79e302] * 3)],
)
def test_large_finite_values_compare_as_the_same_values_scaled_down(baseline, values):
    # The t-test and the ratio do not change when both sides are divided by one number: their
    # squares (sd^2, mean^2) overflowed a float unscaled.
    found = stats.compare(baseline, values)
    small = stats.compare([v / 1e200 for v in baseline], [v / 1e200 for v in values])
    assert found.p_value == pytest.approx(small.p_value)
    assert found.ratio == pytest.approx(small.ratio)
    assert (found.ci_low, found.ci_high) == pytest.approx((small.ci_low, small.ci_high))
    assert found.outcome == small.outcome and found.verdict == small.verdict
    assert found.values == stats.describe(values)  # the values as given, not scaled


def test_values_near_the_largest_float_are_described():
    found = stats.describe([1.7e308, 1.7e308])
    assert (found.mean, found.median, found.sd, found.min) == (1.7e308, 1.7e308, 0.0, 1.7e308)
    assert stats.compare([1.7e308, 1.6e308], [1.7e308, 1.75e308]).p_value is not None


def test_a_spread_wider_than_a_float_cannot_tell():
    found = stats.compare([1.7e308, -1.7e308], [1.0, 2.0])
    assert found.values.sd == pytest.approx(0.7071, abs=1e-4) and math.isinf(found.baseline.sd)
    assert (found.p_value, found.outcome) == (None, "cannot tell")
    assert found.verdict == "cannot tell: the values spread wider than a float can hold"
