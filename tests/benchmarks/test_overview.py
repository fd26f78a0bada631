"""comparisons.overview: every benchmark and metric of runs compared by one factor, a row each,
like paired with like (board model and preset version), Holm across the rows."""

import pytest

from benchmarks import comparisons, stats
from benchmarks.models import Campaign
from tests.benchmarks.factories import intloop_trials, lane_on, overclock, reflashed, trials

pytestmark = pytest.mark.django_db
SLOW = [100.0, 102.0, 98.0]
FAST = [110.0, 112.0, 108.0]
PI3 = "Raspberry Pi 3 Model B Rev 1.2"


@pytest.fixture
def campaign():
    return Campaign.objects.create(name="32 against 64", spec={})


def runs(campaign):
    return comparisons.runs_selected([campaign.pk])


def test_each_benchmark_metric_is_a_row_of_64_against_32_bit_userland(campaign):
    lane_64 = lane_on(campaign, "pi-64")
    lane_32 = reflashed(lane_64)  # the same board: its own level is not in the comparison
    trials(lane_64, FAST)
    trials(lane_32, SLOW)
    intloop_trials(lane_64, [5.0, 5.1, 4.9], seconds=5)
    intloop_trials(lane_32, [5.0, 5.0, 5.1], seconds=5)
    found = comparisons.overview(runs(campaign), "userland", "32-bit userland")
    assert [(row.benchmark, row.metric) for row in found.rows] == [
        ("intloop", "iterations_per_second"),
        ("sha1sum", "throughput"),
    ]
    sha1 = found.rows[1]
    assert (sha1.group, sha1.unit) == ("64-bit userland", "MB/s")
    assert (sha1.comparison.n_baseline, sha1.comparison.n_values) == (3, 3)
    assert sha1.comparison.ratio == pytest.approx(1.1)
    assert sha1.comparison.outcome == stats.BETTER
    assert sha1.kernel_bits == {"32-bit userland": "64", "64-bit userland": "64"}
    assert found.left_out == []


def test_p_values_are_adjusted_across_the_rows(campaign):
    lane_64 = lane_on(campaign, "pi-64")
    lane_32 = reflashed(lane_64)
    for metric in ("throughput", "seconds"):
        trials(lane_64, FAST, metric=metric)
        trials(lane_32, SLOW, metric=metric)
    found = comparisons.overview(runs(campaign), "userland", "32-bit userland")
    plain = stats.compare(SLOW, FAST)
    assert len(found.rows) == 2
    assert [row.comparison.p_adjusted for row in found.rows] == pytest.approx(
        stats.holm([plain.p_value, plain.p_value])
    )
    assert found.rows[0].comparison.p_adjusted > plain.p_value


def test_only_like_is_paired_with_like_and_the_rest_is_named(campaign):
    trials(lane_on(campaign, "pi4-64"), FAST)
    trials(lane_on(campaign, "pi4-32", userland=32), SLOW)
    # A Pi 3 on 64-bit has no 32-bit Pi 3 to face; nor has the overclocked Pi 4 on 32-bit.
    trials(lane_on(campaign, "pi3-64", model=PI3), [1.0, 1.1, 0.9])
    trials(
        lane_on(campaign, "pi4-32-fast", userland=32), [500.0, 510.0], preset_version=overclock()
    )
    found = comparisons.overview(runs(campaign), "userland", "32-bit userland")
    (row,) = found.rows
    assert row.comparison.values == stats.describe(FAST)  # neither the Pi 3 nor the overclock
    assert row.comparison.baseline == stats.describe(SLOW)
    assert sorted(found.left_out) == [
        "sha1sum throughput: 2 trials of 32-bit userland on Raspberry Pi 4 Model B Rev 1.5, "
        "fast v2",
        f"sha1sum throughput: 3 trials of 64-bit userland on {PI3}, as the board is",
    ]


def test_parameters_that_differ_make_rows_of_their_own(campaign):
    lane_64 = lane_on(campaign, "pi-64")
    lane_32 = reflashed(lane_64)
    for direction, values in (("board-to-peer", FAST), ("peer-to-board", SLOW)):
        params = {"direction": direction, "duration": 5}
        trials(lane_64, values, benchmark="iperf3-tcp", metric="throughput", params=params)
        trials(lane_32, SLOW, benchmark="iperf3-tcp", metric="throughput", params=params)
    found = comparisons.overview(runs(campaign), "userland", "32-bit userland")
    assert [row.label for row in found.rows] == [
        "iperf3-tcp throughput (direction board-to-peer)",
        "iperf3-tcp throughput (direction peer-to-board)",
    ]
    assert [row.comparison.outcome for row in found.rows] == [stats.BETTER, stats.NO_DIFFERENCE]


def test_the_chosen_metrics_only(campaign):
    lane = lane_on(campaign, "pi-a")
    trials(lane, SLOW)
    trials(lane, FAST, preset_version=overclock())
    trials(lane, SLOW, metric="seconds", unit="s")
    trials(lane, SLOW, metric="seconds", unit="s", preset_version=overclock(name="other"))
    found = comparisons.overview(
        runs(campaign), "preset", comparisons.AS_IS, metrics=[("sha1sum", "throughput")]
    )
    assert [(row.metric, row.group) for row in found.rows] == [("throughput", "fast v2")]
