"""benchmarks.drift on synthetic series: what it must find, what it must not (its false-alarm
rate and delay at scale: bench/drift_detector.py)."""

import math
import random

import pytest

from benchmarks import drift


def noisy(count: int, *, level=100.0, noise=0.01, seed=1) -> list[float]:
    rng = random.Random(seed)
    return [float(f"{level * (1 + rng.gauss(0, noise)):.3g}") for _ in range(count)]


def test_a_stationary_series_raises_nothing():
    assert drift.first_drift(noisy(100)) is None


def test_few_points_are_not_judged():
    assert drift.first_drift([100.0] * (drift.WARM_UP - 1) + [50.0]) is None


def test_a_board_that_never_varies_is_judged_by_the_spread_floor():
    # The spread would be 0: without the floor, 100.1 would be infinitely far from 100.
    assert drift.first_drift([100.0] * 40 + [100.1] * 20) is None
    found = drift.first_drift([100.0] * 40 + [97.0] * 20)
    assert found is not None and found.since == 40


def test_a_five_percent_step_down_is_found_within_five_points_and_dated():
    values = noisy(40) + noisy(20, level=95.0, seed=2)
    found = drift.first_drift(values)
    assert found is not None
    assert 40 <= found.found_at <= 44
    assert found.since == 40
    assert found.direction == "lower"
    assert found.percent == pytest.approx(-5, abs=1.5)


def test_a_step_up_is_a_drift_too():
    found = drift.first_drift(noisy(40) + noisy(20, level=108.0, seed=3))
    assert found is not None and found.direction == "higher" and found.since == 40


def test_a_large_jump_is_a_jump_on_its_third_point():
    found = drift.first_drift(noisy(40) + [70.0] * 5)
    assert found is not None
    assert (found.kind, found.since, found.found_at) == (drift.JUMP, 40, 42)


def test_one_or_two_slow_occasions_are_not_a_drift():
    values = noisy(60)
    values[30] = values[45] = values[46] = 90.0
    assert drift.first_drift(values) is None


def test_a_slow_slide_is_found_and_dated_near_its_start():
    values = [v * (1 - 0.003 * max(0, i - 39)) for i, v in enumerate(noisy(100, noise=0.005))]
    found = drift.first_drift(values)
    assert found is not None
    assert found.kind == drift.SLIDE
    assert 40 <= found.since < found.found_at < 70


def test_a_slow_occasion_in_the_history_does_not_hide_a_step():
    values = noisy(40) + noisy(20, level=95.0, seed=2)
    values[35] = 80.0  # in the lookback of the step's first points
    found = drift.first_drift(values)
    assert found is not None and found.since == 40 and found.found_at <= 44


def test_false_alarms_on_stationary_series_are_rare():
    # At most 1 of 60 series (bench/drift_detector.py counts 1,000: 0.6 %).
    rng = random.Random(7)
    alarms = sum(
        1
        for seed in range(60)
        if drift.first_drift(noisy(100, noise=rng.uniform(0.003, 0.02), seed=100 + seed))
    )
    assert alarms <= 1


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_series_with_a_non_number_is_refused(bad):
    with pytest.raises(ValueError, match="finite"):
        drift.first_drift([100.0] * 20 + [bad])
