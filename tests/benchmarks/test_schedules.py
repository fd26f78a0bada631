"""Campaigns on a schedule (benchmarks.schedules), with real Redis and RQ's own scheduler."""

import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rq.registry import ScheduledJobRegistry

from benchmarks import campaigns, schedules
from benchmarks.models import Campaign, Run, Schedule, ScheduledStart
from benchmarks.specs import SpecError
from devices.models import Board
from tests.devices.factories import make_board
from tests.workers import wait_until

pytestmark = pytest.mark.django_db


def spec(board, **schedule) -> dict:
    return {
        "name": "nightly sha1",
        "boards": [board.name],
        "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
        "repetitions": 1,
        "quiet": False,
        "schedule": schedule or {"every": "15m"},
    }


def scheduled_jobs(queue) -> dict[str, float]:
    """job id: the time it is due (seconds since the epoch), as RQ's scheduler holds them."""
    registry = ScheduledJobRegistry(queue=queue)
    return dict(queue.connection.zrange(registry.key, 0, -1, withscores=True))


@pytest.fixture
def board():
    # A queue no worker serves: a started campaign's lane fails at once, touching no board.
    return make_board("bench-s", queue="nobody-serves-this")


@pytest.mark.parametrize(
    ("given", "timing"),
    [
        ({"every": "15m"}, {"every_s": 900}),
        ({"every": "90s"}, {"every_s": 90}),
        ({"every": 3600}, {"every_s": 3600}),
        ({"every": "1d"}, {"every_s": 86400}),
        ({"cron": "0  3 * * *"}, {"cron": "0 3 * * *"}),
        ({"cron": "*/5 * * * 1-5"}, {"cron": "*/5 * * * 1-5"}),
    ],
)
def test_a_schedule_is_a_cron_string_or_an_interval(given, timing):
    assert schedules.check_timing(given) == timing


@pytest.mark.parametrize(
    ("given", "field", "words"),
    [
        ({"every": "29s"}, "schedule.every", "from 30 s"),
        ({"every": "2w"}, "schedule.every", 'such as "90s"'),
        ({"every": True}, "schedule.every", 'such as "90s"'),
        ({"every": 90.5}, "schedule.every", "whole seconds"),
        ({"cron": "61 * * * *"}, "schedule.cron", "is not a cron schedule"),
        ({"cron": "0 0 31 2 *"}, "schedule.cron", "never comes due"),
        ({"cron": "R * * * *"}, "schedule.cron", "is not a cron schedule"),  # croniter's own
        ({"cron": "0 3 L * *"}, "schedule.cron", "is not a cron schedule"),
        ({"cron": "0 3 * * 5#2"}, "schedule.cron", "is not a cron schedule"),
        ({"cron": "١ * * * *"}, "schedule.cron", "is not a cron schedule"),
        ({"every": "١٥m"}, "schedule.every", 'such as "90s"'),
        ({"every": "\u200915m"}, "schedule.every", 'such as "90s"'),
        ({"cron": "@daily"}, "schedule.cron", "five fields"),
        ({"cron": "0 3 * * *", "every": "1h"}, "schedule", "one of the two"),
        ("0 3 * * *", "schedule", "one of the two"),
    ],
)
def test_a_schedule_that_is_neither_is_refused_naming_its_field(given, field, words):
    with pytest.raises(SpecError, match=words) as refused:
        schedules.check_timing(given)
    assert refused.value.field == field


def test_a_spec_with_a_schedule_makes_a_schedule_whose_first_start_rq_holds(
    board, redis_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        schedule = schedules.create(spec(board))
    schedule.refresh_from_db()
    assert "schedule" not in schedule.spec and schedule.every_s == 900
    assert abs((schedule.next_at - timezone.now()).total_seconds()) < 5  # every: at once
    assert scheduled_jobs(redis_queue) == {
        schedule.job_id.encode(): pytest.approx(schedule.next_at.timestamp(), abs=1)
    }
    assert not Campaign.objects.exists()  # started by the scheduler, not here


def test_a_cron_schedule_starts_at_its_next_time_in_the_sites_time_zone(board, settings):
    settings.TIME_ZONE = "Europe/Berlin"
    with timezone.override("Europe/Berlin"):
        schedule = schedules.create(spec(board, cron="0 3 * * *"))
        assert schedules.timing_words(schedule) == "cron “0 3 * * *” (Europe/Berlin)"
    local = timezone.localtime(schedule.next_at, timezone.get_fixed_timezone(60))
    assert (local.hour, local.minute) == (3, 0)  # 03:00 in Berlin (UTC+1 in December)


def test_a_spec_a_start_would_refuse_is_refused_before_any_schedule(board):
    with pytest.raises(SpecError, match="no board"):
        schedules.create({**spec(board), "boards": ["no-such-board"]})
    assert not Schedule.objects.exists()


def fire_due(schedule) -> str:
    schedule.refresh_from_db()
    return schedules.fire(schedule.pk, schedule.next_at.isoformat())


def test_a_due_start_starts_a_campaign_and_queues_the_next(
    board, redis_queue, django_capture_on_commit_callbacks
):
    schedule = schedules.create(spec(board))
    due = schedule.next_at
    with django_capture_on_commit_callbacks(execute=True):
        said = fire_due(schedule)
    start = ScheduledStart.objects.get()
    assert said == f"started campaign {start.campaign.code}"
    assert start.campaign.spec["boards"] == ["bench-s"] and start.skipped == ""
    schedule.refresh_from_db()
    assert schedule.next_at >= due + timedelta(minutes=15)
    assert schedule.job_id.encode() in scheduled_jobs(redis_queue)


def test_a_start_while_the_last_campaign_runs_is_skipped_with_the_reason(board, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)  # its runs stay queued
    schedule = schedules.create(spec(board))
    fire_due(schedule)
    said = fire_due(schedule)
    assert said.startswith("the last one, nightly sha1 of ")
    assert said.endswith(", is still running")
    skipped = ScheduledStart.objects.filter(campaign__isnull=True).get()
    assert skipped.skipped == said
    assert Campaign.objects.count() == 1


def test_the_next_start_after_the_last_campaign_ended_starts_again(board, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    schedule = schedules.create(spec(board))
    fire_due(schedule)
    Run.objects.update(state=Run.State.DONE)
    Campaign.objects.update(finished=timezone.now(), state=Campaign.State.FINISHED)
    fire_due(schedule)
    assert Campaign.objects.count() == 2


def test_a_job_for_a_time_the_schedule_no_longer_has_does_nothing(board, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    schedule = schedules.create(spec(board))
    due = schedule.next_at.isoformat()
    assert schedules.fire(schedule.pk, due).startswith("started campaign")
    # Delivered twice (a worker killed after the start): the schedule has moved on.
    assert schedules.fire(schedule.pk, due).startswith("not due")
    schedules.pause(schedule)
    assert schedules.fire(schedule.pk, due).startswith("not due")
    assert Campaign.objects.count() == 1 and ScheduledStart.objects.count() == 1


def test_a_board_retired_since_skips_the_start_saying_why(board):
    schedule = schedules.create(spec(board))
    Board.objects.filter(pk=board.pk).update(retired=timezone.now())
    said = fire_due(schedule)
    assert said.startswith("the spec was refused:") and "bench-s" in said
    assert not Campaign.objects.exists()
    schedule.refresh_from_db()
    assert schedule.next_at is not None  # it goes on: the board may be restored


def test_pause_drops_the_job_and_resume_queues_it_again(
    board, redis_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        schedule = schedules.create(spec(board))
    assert schedules.pause(schedule) is True
    assert schedules.pause(schedule) is False
    assert schedule.paused and schedule.next_at is None
    assert scheduled_jobs(redis_queue) == {}
    with django_capture_on_commit_callbacks(execute=True):
        assert schedules.resume(schedule) is True
    assert not schedule.paused and schedule.next_at is not None
    assert list(scheduled_jobs(redis_queue)) == [schedule.job_id.encode()]
    assert schedules.resume(schedule) is False


def test_a_schedule_whose_job_redis_lost_is_queued_again_from_the_database(
    board, redis_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        schedule = schedules.create(spec(board))
        paused = schedules.create({**spec(board), "name": "paused one"})
    schedules.pause(paused)
    redis_queue.connection.flushdb()  # Redis restarted with nothing of before
    with django_capture_on_commit_callbacks(execute=True):
        assert schedules.rearm() == 1
    schedule.refresh_from_db()
    assert list(scheduled_jobs(redis_queue)) == [schedule.job_id.encode()]
    with django_capture_on_commit_callbacks(execute=True):
        assert schedules.rearm() == 0  # held already: nothing doubled


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_that_starts_queues_lost_starts_again_and_its_scheduler_delivers_them(
    board, redis_queue, start_worker
):
    schedule = schedules.create(spec(board))  # committed: its job is in Redis
    redis_queue.connection.flushdb()  # lost, with the worker that would have run it
    start_worker(scheduler=True)
    start = wait_until(
        lambda: ScheduledStart.objects.filter(schedule=schedule).first(),
        "the scheduled start",
        timeout=60,
    )
    assert start.campaign is not None
    schedule.refresh_from_db()
    assert schedule.next_at > start.due


def test_the_campaign_command_schedules_a_spec_and_lists_pauses_and_resumes_it(
    board, tmp_path, capsys
):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec(board, every="10m")))
    call_command("campaign", "start", str(path))
    schedule = Schedule.objects.get()
    out = capsys.readouterr().out
    assert f"scheduled nightly sha1 ({schedule.code})" in out
    assert "every 10 min, next start " in out
    assert not Campaign.objects.exists()
    call_command("campaign", "schedule", "pause", str(schedule.code))
    assert "every 10 min, paused" in capsys.readouterr().out
    call_command("campaign", "schedule", "list")
    assert f"nightly sha1 ({schedule.code}) | every 10 min, paused" in capsys.readouterr().out
    call_command("campaign", "schedule", "resume", str(schedule.code))
    schedule.refresh_from_db()
    assert not schedule.paused and "next start" in capsys.readouterr().out
    with pytest.raises(CommandError, match="there is no schedule 'nope'"):
        call_command("campaign", "schedule", "show", "nope")


def test_the_campaign_command_refuses_a_bad_schedule_with_status_2(board, tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec(board, every="5s")))
    with pytest.raises(CommandError, match="the spec was refused: every is whole") as refused:
        call_command("campaign", "start", str(path))
    assert refused.value.returncode == 2
    assert not Schedule.objects.exists()


def test_the_schedules_page_lists_each_with_its_timing_and_last_start(
    board, client, viewer, monkeypatch, django_assert_max_num_queries
):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    schedule = schedules.create(spec(board))
    fire_due(schedule)
    fire_due(schedule)  # skipped: the first is still running
    for number in range(5):
        schedules.create({**spec(board), "name": f"other {number}"})
    client.force_login(viewer)
    with django_assert_max_num_queries(8):  # not one more per schedule
        body = client.get(reverse("benchmarks:schedules")).content.decode()
    assert "every 15 min" in body and "other 4" in body
    assert "skipped: the last one, nightly sha1 of " in body
    page = client.get(schedule.get_absolute_url()).content.decode()
    campaign = Campaign.objects.get()
    assert f'href="{campaign.get_absolute_url()}"' in page
    assert "Next start:" in page and "Pause" not in page  # a viewer's page has no controls
    started = client.get(campaign.get_absolute_url()).content.decode()
    assert f'Started by the schedule <a href="{schedule.get_absolute_url()}">' in started


def test_an_operator_pauses_and_resumes_a_schedule_from_its_page(board, client, operator):
    schedule = schedules.create(spec(board))
    client.force_login(operator)
    page = client.get(schedule.get_absolute_url()).content.decode()
    assert reverse("benchmarks:schedule_pause", args=[schedule.code]) in page
    client.post(reverse("benchmarks:schedule_pause", args=[schedule.code]))
    schedule.refresh_from_db()
    assert schedule.paused
    page = client.get(schedule.get_absolute_url()).content.decode()
    assert "Paused" in page and reverse("benchmarks:schedule_resume", args=[schedule.code]) in page
    response = client.post(reverse("benchmarks:schedule_pause", args=[schedule.code]), follow=True)
    assert "nightly sha1 was paused already." in response.content.decode()
    client.post(reverse("benchmarks:schedule_resume", args=[schedule.code]))
    schedule.refresh_from_db()
    assert not schedule.paused and schedule.next_at is not None


def test_a_start_of_a_spec_with_a_schedule_says_where_schedules_are_made(board, client, operator):
    with pytest.raises(SpecError, match="makes a schedule, not one campaign") as refused:
        campaigns.start(spec(board))
    assert refused.value.field == "schedule"
    client.force_login(operator)
    response = client.post(
        reverse("api:campaign-list"), spec(board), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == "schedule"
    assert not Campaign.objects.exists() and not Schedule.objects.exists()


def test_a_schedule_for_a_user_who_may_no_longer_start_campaigns_skips_saying_so(board, operator):
    schedule = schedules.create(spec(board), operator)
    operator.is_active = False
    operator.save()
    said = fire_due(schedule)
    assert said.startswith(f"{operator.username} may no longer start campaigns")
    assert not Campaign.objects.exists()


def test_the_command_says_a_schedule_has_no_one_campaign_to_follow_and_prints_its_json(
    board, tmp_path, capsys
):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec(board)))
    with pytest.raises(CommandError, match="no one campaign to --follow") as refused:
        call_command("campaign", "start", str(path), "--follow")
    assert refused.value.returncode == 2 and not Schedule.objects.exists()
    call_command("campaign", "start", str(path), "--json")
    found = json.loads(capsys.readouterr().out)
    assert found["schedule"] == str(Schedule.objects.get().code)
    assert found["timing"] == "every 15 min"


def test_an_admin_deletes_a_schedule_and_its_queued_start(
    board, client, django_user_model, redis_queue, django_capture_on_commit_callbacks
):
    from devices import roles
    from tests.conftest import member

    with django_capture_on_commit_callbacks(execute=True):
        schedule = schedules.create(spec(board))
    schedule.refresh_from_db()
    assert scheduled_jobs(redis_queue)
    client.force_login(member(django_user_model, "lab-admin", roles.ADMIN))
    url = reverse("admin:benchmarks_schedule_delete", args=[schedule.pk])
    client.post(url, {"post": "yes"})
    assert not Schedule.objects.exists()
    assert scheduled_jobs(redis_queue) == {}
