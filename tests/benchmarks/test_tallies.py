"""benchmarks.tallies: a campaign's values summed up as its runs end, and comparisons read from
them giving the answers they give from every trial."""

import math
import random
import statistics

import pytest
from django.db import transaction
from django.utils import timezone

from benchmarks import comparisons, exports, tallies
from benchmarks.models import Campaign, Run, Tally
from tests.benchmarks.factories import add_trial, lane_on, overclock, reflashed, trials

pytestmark = pytest.mark.django_db


def compared(campaign, group_by, **options):
    runs = comparisons.runs_selected([campaign.pk])
    return comparisons.compare(runs, "sha1sum", "throughput", group_by, **options)


@pytest.fixture
def lab():
    """Two boards, each as it is and overclocked, one reflashed to 32-bit; a suspect trial."""
    campaign = Campaign.objects.create(name="tallied", spec={})
    rng = random.Random(7)
    version = overclock()
    for name, level in (("bench-a", 400.0), ("bench-b", 380.0)):
        lane = lane_on(campaign, name)
        trials(lane, [level + rng.gauss(0, 3) for _ in range(6)])
        trials(lane, [level * 1.08 + rng.gauss(0, 3) for _ in range(6)], preset_version=version)
        add_trial(lane, level * 0.5, suspect=True)
    reflashed(lane_on(campaign, "bench-c"))
    return campaign


def answers(result) -> list:
    """What a page shows of a comparison, to compare two ways of computing it."""
    return [
        (group.key, group.description.n, group.suspects_excluded, sorted(group.boards))
        for group in result.groups
    ] + [(key, found.verdict) for key, found in sorted(result.comparisons.items())]


@pytest.mark.parametrize("group_by", ["preset", "board", "bits", "configuration"])
@pytest.mark.parametrize("suspects", [False, True])
def test_a_comparison_from_the_tallies_answers_as_one_from_every_trial(lab, group_by, suspects):
    from_trials = compared(lab, group_by, include_suspects=suspects)
    assert tallies.catch_up() == Run.objects.filter(state=Run.State.DONE).count()
    assert not Run.objects.filter(state=Run.State.DONE, tallied__isnull=True).exists()
    from_tallies = compared(lab, group_by, include_suspects=suspects)
    assert answers(from_tallies) == answers(from_trials)
    for tallied, counted in zip(from_tallies.groups, from_trials.groups, strict=True):
        assert tallied.description == counted.description  # every trial at hand: the same
        assert tallied.values == counted.values
    for key, found in from_tallies.comparisons.items():
        expected = from_trials.comparisons[key]
        assert (found.p_value is None) == (expected.p_value is None)
        if expected.p_value is not None:
            assert found.p_value == pytest.approx(expected.p_value, rel=1e-9)
        assert found.ratio == pytest.approx(expected.ratio, rel=1e-12)


def test_runs_not_tallied_yet_count_beside_the_tallies(lab):
    tallies.catch_up()
    lane = lab.lanes.get(board__name="bench-a")
    late = add_trial(lane, 1000.0)  # after the tallies: the comparison sums it up itself
    result = compared(lab, "board")
    group = next(group for group in result.groups if group.key == "bench-a")
    assert group.description.n == 13 and group.description.max == 1000.0
    assert late.pk in group.run_ids


def test_a_large_group_draws_a_sample_and_says_so_while_its_figures_are_of_every_trial():
    campaign = Campaign.objects.create(name="large", spec={})
    lane = lane_on(campaign, "bench-a")
    rng = random.Random(3)
    values = [500.0 + rng.gauss(0, 5) for _ in range(2000)]
    trials(lane, values)
    for tallied in (False, True):
        if tallied:
            tallies.catch_up()
        (group,) = compared(campaign, "preset").groups
        assert group.description.n == 2000
        assert group.description.mean == pytest.approx(sum(values) / 2000, rel=1e-12)
        mean = sum(values) / 2000
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 1999)
        assert group.description.sd == pytest.approx(sd, rel=1e-9)
        assert group.description.min == min(values) and group.description.max == max(values)
        assert group.sampled and 200 <= len(group.values) <= 400, len(group.values)
        assert group.values == sorted(group.values) and set(group.values) <= set(values)
        assert group.description.median is None  # not known from sums: the page says so
        assert abs(group.sample_median - sorted(values)[1000]) < 2


def test_a_tally_keeps_a_uniform_sample_of_at_most_kept_trials():
    campaign = Campaign.objects.create(name="kept", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, [float(i) for i in range(3 * tallies.KEPT)])
    tallies.catch_up()
    (tally,) = Tally.objects.all()
    assert tally.n == 3 * tallies.KEPT and len(tally.drawn) == tallies.KEPT
    kept = sorted(value for value, _, _ in tally.drawn)
    # Spread over the whole range, not the first KEPT: a third of them below 300, about.
    assert 60 < sum(value < tallies.KEPT for value in kept) < 140
    assert kept[-1] > 2 * tallies.KEPT


def test_a_tally_keeps_the_digits_of_a_small_spread_around_a_large_mean():
    campaign = Campaign.objects.create(name="precise", spec={})
    lane = lane_on(campaign, "bench-a")
    # More than a group draws, so that its figures come from the tally's sums alone.
    values = [1e9 + 0.001 * (i % 10) for i in range(1000)]
    trials(lane, values)
    tallies.catch_up()
    (group,) = compared(campaign, "preset").groups
    assert group.sampled
    # Summed naively (x^2 less the squared mean), the spread of these would be lost.
    assert group.description.sd == pytest.approx(statistics.stdev(values), rel=1e-6)


def test_a_run_that_is_not_done_is_never_tallied_and_none_is_counted_twice():
    campaign = Campaign.objects.create(name="once", spec={})
    lane = lane_on(campaign, "bench-a")
    done = trials(lane, [10.0, 11.0])
    ended = add_trial(lane, 1.0)
    # Ended failed by a sweep that took its job for dead, as the job went on to record it.
    Run.objects.filter(pk=ended.pk).update(state=Run.State.FAILED)
    tallies.add(ended.pk)
    assert not Tally.objects.exists()
    # Two catch-ups that listed the same runs (a health-check round and a manual one).
    ids = [run.pk for run in done]
    with transaction.atomic():
        assert tallies._add(ids) == 2
    with transaction.atomic():
        assert tallies._add(ids) == 0
    (tally,) = Tally.objects.all()
    assert tally.n == 2 and tally.low == 10.0
    (group,) = compared(campaign, "preset").groups
    assert group.description.n == 2 and group.description.min == 10.0


def test_a_large_group_of_cells_of_one_trial_each_draws_its_share_of_them():
    # A probe a trial (each preset application reboots and probes the board again): as many
    # tallies as trials. Each must give its share, not round it to nothing.
    campaign = Campaign.objects.create(name="one a cell", spec={})
    lane = lane_on(campaign, "bench-a")
    for value in range(700):
        trials(reflashed(lane, userland=64), [500.0 + value % 7])
    (before,) = compared(campaign, "preset").groups
    tallies.catch_up()
    assert Tally.objects.count() == 700
    (after,) = compared(campaign, "preset").groups
    assert after.sampled and after.description.n == 700
    assert 200 <= len(after.values) <= 400, len(after.values)
    assert sorted(after.run_ids) == sorted(before.run_ids)  # the same draw either way


def test_a_retired_board_and_the_one_that_took_its_name_are_one_unit_in_a_large_group():
    campaign = Campaign.objects.create(name="same name", spec={})
    version = overclock()
    rng = random.Random(11)
    old = lane_on(campaign, "bench-a")
    old.board.retired = timezone.now()
    old.board.save()
    lanes = [old, lane_on(campaign, "bench-a"), lane_on(campaign, "bench-b")]
    for lane in lanes:
        trials(lane, [400 + rng.gauss(0, 3) for _ in range(120)])
        trials(lane, [430 + rng.gauss(0, 3) for _ in range(120)], preset_version=version)
    for tallied in (False, True):
        if tallied:
            tallies.catch_up()
        result = compared(campaign, "preset")
        assert all(group.sampled for group in result.groups)
        (found,) = result.comparisons.values()
        # Every trial in the test: 360 a side, by board name (two names, two units).
        assert sum(found.n_units) == 720, found.n_units


def test_runs_narrowed_past_what_a_tally_knows_are_counted_one_by_one(lab):
    tallies.catch_up()
    runs = comparisons.runs_selected([lab.pk])
    first = runs.order_by("pk").first()
    narrowed = {
        "intersection": runs & Run.objects.filter(pk=first.pk),
        "none": runs.none(),
        "sliced": runs.order_by("pk")[:1],
        "by state__in": runs.filter(state__in=[Run.State.FAILED]),
        "by date": runs.filter(finished__gt=timezone.now()),
    }
    for how, chosen in narrowed.items():
        assert chosen.tally_filter is None, how
    found = comparisons.compare(narrowed["intersection"], "sha1sum", "throughput", "board")
    assert sum(group.description.n for group in found.groups) == 1
    assert comparisons.metric_choices(narrowed["none"]) == []
    # What a tally knows too keeps the tallies: the same campaigns' done runs of a board.
    assert runs.filter(board__name="bench-a", state=Run.State.DONE).tally_filter is not None


def test_an_export_of_a_large_group_gives_the_median_of_its_sample_and_its_size():
    campaign = Campaign.objects.create(name="exported", spec={})
    trials(lane_on(campaign, "bench-a"), [float(value % 50) for value in range(1000)])
    tallies.catch_up()
    (row,) = exports.rows(compared(campaign, "preset"))
    assert row["median"] is None and row["n"] == 1000
    assert 200 <= row["sample_n"] <= 400 and 20 <= row["sample_median"] <= 29
