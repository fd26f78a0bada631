"""A board's canary (benchmarks.canaries): its series, the drift found in it, what changed."""

import random
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks import campaigns, canaries, comparisons, events, schedules, sharing
from benchmarks.models import (
    Campaign,
    Comparison,
    Drift,
    Lane,
    Run,
    ScheduledStart,
    ShareLink,
)
from devices.models import Board
from tests.benchmarks.factories import add_run, measure
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
START = timezone.now() - timedelta(days=30)


@pytest.fixture
def board():
    return make_board("bench-c", queue="nobody-serves-this")


@pytest.fixture
def canary(board):
    return canaries.set_up(board, every="1h")


def canary_occasion(canary, index: int, values, *, effective=None, throttled=None) -> Campaign:
    """One finished canary campaign, index hours after START, whose sha1sum runs measured
    values (MB/s); the runs ran with `effective` (what runner records) on a board whose
    snapshot said `throttled`."""
    at = START + timedelta(hours=index)
    campaign = Campaign.objects.create(name=f"canary {index}", spec={}, finished=at)
    Campaign.objects.filter(pk=campaign.pk).update(created=at)
    ScheduledStart.objects.create(schedule=canary, due=at, campaign=campaign)
    lane = Lane.objects.create(campaign=campaign, board=canary.canary_of)
    snapshot = canary.canary_of.snapshots.create(facts={}, throttled=throttled)
    for value in values:
        run = add_run(
            lane,
            state=Run.State.DONE,
            params={"size": "64M"},
            finished=at,
            snapshot=snapshot,
            environment={"effective": effective or {"governor": "ondemand", "kernel": "6.6"}},
        )
        measure(run, throughput=(value, "MB/s"))
    return campaign


def history(canary, levels, seed=1):
    rng = random.Random(seed)
    for index, level in enumerate(levels):
        canary_occasion(canary, index, [round(level * (1 + rng.gauss(0, 0.01)), 1) for _ in "abc"])


def test_a_canary_is_a_schedule_of_the_reference_campaign_on_its_board(board, canary):
    assert canary.canary_of == board and canary.every_s == 3600
    assert [item["name"] for item in canary.spec["benchmarks"]] == ["sha1sum", "iperf3-tcp"]
    assert canary.spec["peer"] == "controller" and canary.spec["boards"] == ["bench-c"]
    assert canaries.words(canary) == (
        "sha1sum (size 64M) and iperf3-tcp (duration 5) to the controller, 3 times each"
    )
    again = canaries.set_up(board, every="2h")
    assert again.pk == canary.pk and again.every_s == 7200  # changed, its history kept


def test_each_occasion_is_one_point_the_median_of_its_runs(canary):
    canary_occasion(canary, 0, [100.0, 50.0, 101.0])
    canary_occasion(canary, 1, [99.0, 98.0, 97.0])
    [one] = canaries.series(canary.canary_of)
    assert [(p.value, p.n) for p in one.points] == [(100.0, 3), (98.0, 3)]
    assert one.label == "sha1sum throughput (size 64M)" and one.unit == "MB/s"


def test_a_steady_board_has_no_drift(canary):
    history(canary, [100.0] * 40)
    assert canaries.judge(canary.canary_of) == []
    assert canaries.open_drift(canary.canary_of) is None


def test_a_board_that_became_slower_drifted_since_the_first_slow_canary(
    canary, django_capture_on_commit_callbacks
):
    history(canary, [100.0] * 30 + [90.0] * 6)
    announced = []

    def listen(sender, drift, **kwargs):
        announced.append(drift)

    events.board_drifted.connect(listen)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            [found] = canaries.judge(canary.canary_of)
    finally:
        events.board_drifted.disconnect(listen)
    assert found.since == START + timedelta(hours=30)
    assert found.mean_since / found.reference_mean == pytest.approx(0.9, abs=0.015)
    assert found.change.startswith("-") and found.change.endswith(" %") and found.unit == "MB/s"
    assert found.changed == []  # nothing pifarm records changed: the board itself did
    assert canaries.open_drift(canary.canary_of) == found
    assert announced == [found]
    assert canaries.judge(canary.canary_of) == []  # open already: not recorded twice


def test_what_changed_at_the_time_is_kept_with_the_drift(canary):
    history(canary, [100.0] * 30)
    for index in range(30, 36):
        canary_occasion(
            canary,
            index,
            [80.0, 80.5, 79.5],
            effective={"governor": "powersave", "kernel": "6.6"},
            throttled=0x50005,
        )
    [found] = canaries.judge(canary.canary_of)
    changed = {item["what"]: (item["before"], item["after"]) for item in found.changed}
    assert changed["governor"] == ("ondemand", "powersave")
    assert changed["throttled"][0] is None
    assert "under-voltage" in changed["throttled"][1].lower()
    assert "kernel" not in changed


def test_a_cleared_drift_restarts_the_series_from_the_change(canary):
    history(canary, [100.0] * 30 + [90.0] * 6)
    [found] = canaries.judge(canary.canary_of)
    assert canaries.clear(found) is True and canaries.clear(found) is False
    assert canaries.judge(canary.canary_of) == []  # 90 is the board now
    assert canaries.open_drift(canary.canary_of) is None


def test_a_finished_canary_campaign_is_judged(canary, django_capture_on_commit_callbacks):
    history(canary, [100.0] * 30 + [90.0] * 5)
    last = canary_occasion(canary, 35, [90.0, 90.1, 89.9])
    Campaign.objects.filter(pk=last.pk).update(finished=None, state=Campaign.State.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        campaigns.finish_if_done(last.pk)
    assert Drift.objects.filter(board=canary.canary_of).count() == 1


def test_a_comparison_of_runs_after_the_change_is_told_of_the_drift(canary):
    history(canary, [100.0] * 30 + [90.0] * 6)
    canaries.judge(canary.canary_of)
    before = Run.objects.filter(finished__lt=START + timedelta(hours=30))
    assert canaries.drifts_in(before) == []
    assert [d.board for d in canaries.drifts_in(Run.objects.all())] == [canary.canary_of]


def test_an_operator_sets_up_a_canary_from_the_board_page(board, client, operator):
    client.force_login(operator)
    page = client.get(board.get_absolute_url()).content.decode()
    assert "This board has no canary" in page and "Set up a canary" in page
    response = client.post(
        reverse("benchmarks:canary_set_up", args=[board.code]),
        {"every": "6h", "preset": "as-is"},
        follow=True,
    )
    body = response.content.decode()
    assert "The canary of bench-c runs every 6 h; its first start is now." in body
    assert board.canary.every_s == 6 * 3600
    assert "Change the canary" in body and "No canary has finished yet." in body


def test_the_board_page_says_since_when_it_drifted_with_the_chart_and_clears_it(
    canary, client, operator, viewer
):
    history(canary, [100.0] * 30 + [90.0] * 6)
    [found] = canaries.judge(canary.canary_of)
    board = canary.canary_of
    client.force_login(viewer)
    page = client.get(board.get_absolute_url()).content.decode()
    since = timezone.localtime(found.since)
    assert f"Drifted since {since:%Y-%m-%d %H:%M}." in page
    assert "Nothing pifarm records changed then" in page
    assert 'data-figure="canary-chart-0"' in page and "n=36 occasions" in page
    assert "It is what it is now" not in page  # a viewer cannot clear it
    client.force_login(operator)
    client.post(reverse("benchmarks:drift_clear", args=[board.code, found.pk]))
    found.refresh_from_db()
    assert found.cleared is not None and found.cleared_by == operator
    assert "Drifted since" not in client.get(board.get_absolute_url()).content.decode()


def test_a_comparison_with_runs_from_after_a_drift_says_so_and_a_share_hides_the_name(canary):
    history(canary, [100.0] * 30 + [90.0] * 6)
    canaries.judge(canary.canary_of)
    runs = Run.objects.filter(campaign__scheduled_start__schedule=canary)
    result = comparisons.compare(runs, "sha1sum", "throughput", "campaign")
    [note] = result.drift_notes
    assert note.startswith("bench-c drifted on ") and "sha1sum throughput -10" in note
    link = ShareLink(comparison=Comparison(name="x"), show_board_names=False)
    shown, _ = sharing.shown(link, result)
    assert "bench-c" not in shown.drift_notes[0] and "board 1 drifted on" in shown.drift_notes[0]
    early = runs.filter(finished__lt=START + timedelta(hours=30))
    assert comparisons.compare(early, "sha1sum", "throughput", "campaign").drift_notes == []


def test_the_dashboard_marks_a_drifted_board_reading_the_drifts_once(
    canary, client, viewer, django_assert_max_num_queries
):
    history(canary, [100.0] * 30 + [90.0] * 6)
    [found] = canaries.judge(canary.canary_of)
    for number in range(5):
        make_board(f"bench-{number}", host=f"10.213.9.{20 + number}")
    client.force_login(viewer)
    body = client.get(reverse("devices:dashboard")).content.decode()
    since = timezone.localtime(found.since)
    assert body.count("drifted since ") == 1
    assert f"drifted since {since:%Y-%m-%d %H:%M}" in body
    with django_assert_max_num_queries(12):  # not one more per board
        client.get(reverse("devices:dashboard"))


def test_a_drift_from_a_board_that_measured_0_says_from_0_not_a_percent(canary):
    for index in range(30):
        canary_occasion(canary, index, [0.0, 0.0, 0.0])
    for index in range(30, 34):
        canary_occasion(canary, index, [2.0, 2.0, 2.0])
    [found] = canaries.judge(canary.canary_of)
    assert found.change == "from 0 to 2 MB/s"


def test_a_canary_follows_its_board_renamed_and_pauses_once_it_is_retired(canary, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    board = canary.canary_of
    Board.objects.filter(pk=board.pk).update(name="bench-c2")
    canary.refresh_from_db()
    said = schedules.fire(canary.pk, canary.next_at.isoformat())
    started = Campaign.objects.get(name="canary of bench-c2")
    assert said == f"started campaign {started.code}"
    assert set(started.lanes.values_list("board", flat=True)) == {board.pk}
    Campaign.objects.filter(pk=started.pk).update(finished=timezone.now())
    Board.objects.filter(pk=board.pk).update(retired=timezone.now())
    # A new board given the old name is not this board: its canary does not move to it.
    make_board("bench-c", host="10.213.9.31")
    canary.refresh_from_db()
    said = schedules.fire(canary.pk, canary.next_at.isoformat())
    assert (
        said == "bench-c2 was retired, so its canary is paused (restore the board, then resume it)"
    )
    canary.refresh_from_db()
    assert canary.paused and canary.next_at is None
    assert Campaign.objects.count() == 1
