"""Work whose RQ job died ends within a sweep of the death, with the reason in words.

Real worker processes (`manage.py rqworker`, forking a work horse per job) are killed with
SIGKILL mid-job; real Redis is emptied under waiting work. An application that was past the
steps that change nothing ends "needs attention", as does its board.
"""

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import django_rq
import pytest
from django.db.models import F
from django.utils import timezone
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry

from devices import locks, presets, tasks, work
from devices.models import Application, Board, BoardTask, Preset
from devices.work import JOB_GRACE
from pifarm.management.commands.healthcheck import fail_stale_tasks
from pisim import Faults
from tests.workers import board_lock_expired, wait_until, worker_key_expired

from .factories import make_board
from .simfarm import register_node

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
PI4_CONFIG = "/boot/firmware/config.txt"
State = Application.State


def job_of(record) -> Job:
    record.refresh_from_db()
    return Job.fetch(record.job_id, connection=django_rq.get_connection("default"))


def past_grace(record) -> None:
    """As if the record was made a while ago (the sweep leaves brand-new work alone)."""
    type(record).objects.filter(pk=record.pk).update(created=F("created") - 2 * JOB_GRACE)


# ---- board tasks ----------------------------------------------------------------------------


@pytest.fixture
def hanging_probe(pisim_node_factory, start_worker):
    """A probe whose job hangs in connect() (the board drops every packet), and its worker."""
    node = pisim_node_factory()
    board = register_node(node)
    node.set_unreachable(True)
    worker = start_worker(PIFARM_SSH_CONNECT_TIMEOUT="120")
    task = tasks.start(board, BoardTask.Kind.PROBE)
    wait_until(lambda: job_of(task).get_status() == JobStatus.STARTED, "the probe to start")
    # STARTED comes from the worker, before its horse takes the board's lock: on a loaded
    # host the sweep could otherwise find no lock yet and rightly take the job for dead.
    wait_until(lambda: locks.is_locked(board.pk), "the probe to hold the board's lock")
    past_grace(task)
    return task, worker


@pytest.mark.worker
@pytest.mark.pisim
def test_a_task_whose_work_horse_was_killed_fails_at_the_next_sweep(hanging_probe):
    task, worker = hanging_probe
    os.kill(worker.horse_pid(), signal.SIGKILL)
    # The worker sees its horse die and fails the job, but no failure callback runs.
    wait_until(lambda: job_of(task).get_status() == JobStatus.FAILED, "the job to fail")

    assert fail_stale_tasks() == 1
    task.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert (
        task.reason
        == "its job ended as failed in the job queue before finishing it; start it again"
    )
    assert task.finished is not None


@pytest.mark.worker
@pytest.mark.pisim
def test_a_task_whose_whole_worker_was_killed_fails_once_the_worker_is_gone(hanging_probe):
    task, worker = hanging_probe
    worker.kill()
    job = job_of(task)
    assert job.get_status() == JobStatus.STARTED  # nobody is left to say otherwise

    assert fail_stale_tasks() == 0  # its worker's key lives on: it may just be slow
    worker_key_expired(job)
    assert fail_stale_tasks() == 0  # the board's lock lives on: a horse may still hold it
    board_lock_expired(job, task.board_id)
    assert fail_stale_tasks() == 1

    task.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert task.reason == (
        f"its worker {job.worker_name} stopped (killed, or its machine went down); start it again"
    )


@pytest.mark.worker
@pytest.mark.pisim
def test_a_dead_jobs_task_fails_though_another_job_holds_its_board_since(hanging_probe):
    """A board in use goes on being locked, by a health check or a canary's lane: a lock in
    another job's name says nothing of the dead job's horse."""
    task, worker = hanging_probe
    worker.kill()
    job = job_of(task)
    worker_key_expired(job)
    assert locks.holder(task.board_id) == job.id  # its own: a horse may still hold it
    assert fail_stale_tasks() == 0
    board_lock_expired(job, task.board_id)
    with locks.board_lock(task.board_id, ttl=60, job_id="the-next-job"):
        assert fail_stale_tasks() == 1
    task.refresh_from_db()
    assert task.state == BoardTask.State.FAILED and "stopped (killed" in task.reason


# ---- applications ---------------------------------------------------------------------------


@pytest.fixture
def application_waiting_for_its_reboot(pisim_node_factory, start_worker):
    """A direct application that wrote config.txt and rebooted the board, which now accepts
    TCP but says nothing for two minutes; and the worker running it."""
    node = pisim_node_factory(downtime=0.3)
    board = register_node(node)
    Board.objects.filter(pk=board.pk).update(status=Board.Status.ONLINE)
    node.set_faults(Faults(banner_delay=120))  # from the application's reboot on
    version = presets.new_version(Preset.objects.create(name="fast"), options={"arm_freq": "1900"})
    worker = start_worker(PIFARM_SSH_CONNECT_TIMEOUT="2", PIFARM_REBOOT_POLL="1")
    application = presets.start_application(board, version, Application.Mode.DIRECT)

    def rebooted():
        application.refresh_from_db()
        return application.step.startswith("waiting for the board to come back")

    wait_until(rebooted, "the application to reboot the board", timeout=90)
    past_grace(application)
    return application, worker


def assert_needs_attention(application, cause: str):
    application.refresh_from_db()
    assert application.state == State.NEEDS_ATTENTION
    assert application.get_state_display() == "needs attention"
    assert application.reason.startswith(cause), application.reason
    assert (
        f"It may have changed the board: check {PI4_CONFIG} against the old file in this record "
        f"(also at {application.backup_path}), then probe the board."
    ) in application.reason
    assert application.step == "" and application.finished is not None
    board = Board.objects.get(pk=application.board_id)
    assert board.status == Board.Status.NEEDS_ATTENTION
    assert board.status_reason == "applying fast v1 stopped unexpectedly; check config.txt"


@pytest.mark.worker
@pytest.mark.pisim
def test_an_application_whose_work_horse_was_killed_after_the_write_needs_attention(
    application_waiting_for_its_reboot,
):
    application, worker = application_waiting_for_its_reboot
    os.kill(worker.horse_pid(), signal.SIGKILL)
    wait_until(lambda: job_of(application).get_status() == JobStatus.FAILED, "the job to fail")

    assert fail_stale_tasks() == 1
    assert_needs_attention(
        application,
        "It stopped while waiting for the board to come back (up to 180 s): its job ended as "
        "failed in the job queue before finishing it.",
    )


@pytest.mark.worker
@pytest.mark.pisim
def test_an_application_whose_worker_was_killed_after_the_write_needs_attention(
    application_waiting_for_its_reboot,
):
    application, worker = application_waiting_for_its_reboot
    worker.kill()
    job = job_of(application)
    worker_key_expired(job)
    assert fail_stale_tasks() == 0  # the board's lock lives on: a horse may still hold it
    board_lock_expired(job, application.board_id)

    assert fail_stale_tasks() == 1
    assert_needs_attention(
        application,
        "It stopped while waiting for the board to come back (up to 180 s): its worker "
        f"{job.worker_name} stopped (killed, or its machine went down).",
    )


@pytest.mark.worker
@pytest.mark.pisim
def test_the_next_workers_clean_up_of_a_killed_application_says_it_needs_attention(
    application_waiting_for_its_reboot,
):
    """A worker starting up fails the jobs whose worker stopped heartbeating, and runs their
    failure callback (AbandonedJobError): the same ending as the sweep's."""
    application, worker = application_waiting_for_its_reboot
    worker.kill()
    registry = StartedJobRegistry(queue=django_rq.get_queue("default"))
    registry.cleanup(timestamp=time.time() + 3600)  # as once the dead worker's 90 s are up

    assert_needs_attention(
        application,
        "The job failed unexpectedly (AbandonedJobError while waiting for the board to come "
        "back (up to 180 s)); see the worker log.",
    )
    assert fail_stale_tasks() == 0  # already ended


# ---- Redis lost the jobs --------------------------------------------------------------------


def test_work_whose_jobs_redis_lost_ends_at_the_next_sweep(redis_queue):
    board = make_board(status=Board.Status.ONLINE)
    waiting = []
    for _ in range(3):
        task = BoardTask.objects.create(board=board, kind="probe", state="waiting")
        work.queue(task, at=timezone.now() + timedelta(seconds=60))  # its next try
        waiting.append(task)
    version = presets.new_version(Preset.objects.create(name="fast"), options={"arm_freq": "900"})
    queued = presets.start_application(board, version, Application.Mode.TRIAL)
    fresh = BoardTask.objects.create(board=make_board("new"), kind="probe")
    work.queue(fresh)
    for record in [*waiting, queued]:
        past_grace(record)
    assert fail_stale_tasks() == 0  # every job is in Redis

    redis_queue.connection.flushdb()
    assert fail_stale_tasks() == 4

    lost = "its job vanished from the job queue (was Redis restarted or emptied?)"
    for task in waiting:
        task.refresh_from_db()
        assert (task.state, task.reason) == ("failed", f"{lost}; start it again")
    queued.refresh_from_db()
    assert queued.state == State.FAILED
    assert queued.reason == f"It stopped: {lost}. Nothing was changed on the board."
    fresh.refresh_from_db()
    assert fresh.state == "queued"  # its job may not be queued yet: it gets its grace
