from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import DatabaseError
from django.utils import timezone

from devices import presets
from devices.models import Application, Board, BoardTask, Preset
from pifarm.management.commands import healthcheck
from pifarm.management.commands.healthcheck import fail_stale_tasks
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)
def test_it_queues_one_check_per_board_and_never_piles_up(redis_queue):
    make_board("a")
    make_board("b", status=Board.Status.MAINTENANCE)
    make_board("c", host_key="")  # not confirmed yet: nothing to check
    call_command("healthcheck")
    call_command("healthcheck")  # the first checks have not run: no second round
    tasks = BoardTask.objects.filter(kind=BoardTask.Kind.HEALTH)
    assert [task.board.name for task in tasks] == ["a"]
    assert len(redis_queue.jobs) == 1


def test_tasks_whose_worker_vanished_end_as_failed():
    board = make_board()
    long_ago = timezone.now() - timedelta(hours=2)
    lost = BoardTask.objects.create(board=board, kind="probe", state="running", started=long_ago)
    waiting = BoardTask.objects.create(board=board, kind="probe", state="queued")
    BoardTask.objects.filter(pk=waiting.pk).update(created=long_ago)
    fresh = BoardTask.objects.create(
        board=board, kind="probe", state="running", started=timezone.now()
    )
    assert fail_stale_tasks() == 2
    lost.refresh_from_db()
    waiting.refresh_from_db()
    fresh.refresh_from_db()
    assert lost.state == "failed" and "stopped before it finished" in lost.reason
    assert waiting.state == "failed" and "is a worker running" in waiting.reason
    assert fresh.state == "running"


def test_a_prepare_task_running_apt_for_minutes_is_not_failed_as_stale():
    board = make_board()
    minutes_ago = timezone.now() - timedelta(minutes=8)  # long for a probe, not for apt
    installing = BoardTask.objects.create(
        board=board, kind="prepare", state="running", started=minutes_ago
    )
    probing = BoardTask.objects.create(
        board=board, kind="probe", state="running", started=minutes_ago
    )
    assert fail_stale_tasks() == 1
    installing.refresh_from_db()
    probing.refresh_from_db()
    assert installing.state == "running"
    assert probing.state == "failed"


def test_a_late_result_does_not_overwrite_a_failed_task():
    from devices import work

    board = make_board()
    task = BoardTask.objects.create(board=board, kind="probe", state="failed", reason="stale")
    work.end(task, "done", "")
    task.refresh_from_db()
    assert task.state == "failed"


class RoundsDone(Exception):
    """Ends `healthcheck --every` in a test, from its sleep between rounds."""


def stop_after(rounds: int):
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        if len(slept) == rounds:
            raise RoundsDone

    return sleep


@pytest.mark.django_db(transaction=True)
def test_a_board_on_a_queue_no_worker_serves_does_not_stop_the_health_checks(
    redis_queue, monkeypatch
):
    gone = make_board("a")
    Board.objects.filter(pk=gone.pk).update(queue="bench-gone")  # PIFARM_QUEUES changed since
    make_board("b")
    monkeypatch.setattr(healthcheck.time, "sleep", stop_after(rounds=2))

    with pytest.raises(RoundsDone):
        call_command("healthcheck", every=5)

    checks = BoardTask.objects.filter(kind=BoardTask.Kind.HEALTH)
    assert {task.board.name for task in checks.filter(state="queued")} == {"b"}
    failed = checks.filter(board=gone)
    assert failed.count() == 2  # one per round: the board's task says why
    assert all("no worker serves the queue 'bench-gone'" in task.reason for task in failed)
    assert len(redis_queue.jobs) == 1


@pytest.mark.django_db(transaction=True)
def test_a_round_that_fails_is_logged_and_the_next_one_runs(redis_queue, monkeypatch, caplog):
    make_board("a")
    rounds = []

    def flaky_sweep():
        rounds.append(1)
        if len(rounds) == 1:
            raise DatabaseError("database is locked")
        return 0

    monkeypatch.setattr(healthcheck, "fail_stale_tasks", flaky_sweep)
    monkeypatch.setattr(healthcheck.time, "sleep", stop_after(rounds=2))

    with pytest.raises(RoundsDone):
        call_command("healthcheck", every=5)

    assert len(rounds) == 2
    assert "health-check round failed" in caplog.text
    assert BoardTask.objects.filter(kind=BoardTask.Kind.HEALTH).count() == 1  # the 2nd round


def test_work_waiting_for_a_busy_board_is_not_failed_as_stale():
    board = make_board()
    long_ago, soon = timezone.now() - timedelta(hours=2), timezone.now() + timedelta(seconds=5)
    task = BoardTask.objects.create(
        board=board, kind="probe", state="waiting", started=long_ago, next_try=soon
    )
    preset = Preset.objects.create(name="p")
    version = presets.new_version(preset, options={"arm_freq": "1700"})
    # It waited two hours for its board, then started a moment ago: not stale.
    application = Application.objects.create(
        board=board, version=version, state="running", started=timezone.now()
    )
    BoardTask.objects.filter(pk=task.pk).update(created=long_ago)
    Application.objects.filter(pk=application.pk).update(created=long_ago)

    assert fail_stale_tasks() == 0
    task.refresh_from_db()
    application.refresh_from_db()
    assert task.state == "waiting"
    assert application.state == "running"


def test_waiting_work_whose_next_try_never_came_ends_as_failed():
    board = make_board()
    long_ago = timezone.now() - timedelta(hours=2)
    task = BoardTask.objects.create(board=board, kind="probe", state="waiting", next_try=long_ago)
    preset = Preset.objects.create(name="p")
    version = presets.new_version(preset, options={"arm_freq": "1700"})
    application = Application.objects.create(
        board=board, version=version, state="waiting", next_try=long_ago
    )

    assert fail_stale_tasks() == 2
    task.refresh_from_db()
    application.refresh_from_db()
    assert task.state == "failed" and "--with-scheduler" in task.reason
    assert application.state == "failed" and "--with-scheduler" in application.reason
    assert application.reason.startswith("Nothing was changed")


def test_next_tries_that_no_scheduler_delivered_are_queued_by_the_round(
    redis_queue, django_capture_on_commit_callbacks
):
    """The worker holding RQ's scheduler was killed: another takes it over only at its
    maintenance pass, ten minutes on. The round queues such tries itself, once."""
    board = make_board()
    overdue = timezone.now() - timedelta(minutes=2)
    task = BoardTask.objects.create(board=board, kind="probe", state="waiting", next_try=overdue)
    version = presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": "1700"})
    application = Application.objects.create(
        board=make_board("bench-2"), version=version, state="waiting", next_try=overdue
    )
    on_time = BoardTask.objects.create(
        board=make_board("bench-3"), kind="probe", state="waiting", next_try=timezone.now()
    )

    with django_capture_on_commit_callbacks(execute=True):  # the command runs outside any
        assert healthcheck.queue_overdue_tries() == 2  # transaction: it queues at once
        assert healthcheck.queue_overdue_tries() == 0  # not again in the next round
    jobs = {job.id: job for job in redis_queue.jobs}
    task.refresh_from_db()
    application.refresh_from_db()
    assert jobs[task.job_id].func_name == "devices.work.perform"
    assert jobs[task.job_id].args == ("probe", task.pk)
    assert jobs[application.job_id].args == ("apply", application.pk)
    assert len(jobs) == 2
    on_time.refresh_from_db()
    assert on_time.job_id == ""
