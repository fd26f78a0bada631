"""The one lifecycle of board work (devices.work), kind by kind where the kinds differ: what a
waiting lane says, the time limits and lock lives each kind gets, and what an SSH error out of
an application's or a lane's body does (a crash: the application may have changed the board;
the lane goes on). Found by a review of the merge of the three lifecycles."""

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks import campaigns, runner
from benchmarks.models import Lane, Run
from devices import apply, presets, ssh, tasks, work
from devices.locks import board_lock
from devices.models import Application, Board, BoardTask, Preset
from pifarm.management.commands.healthcheck import fail_stale_tasks

from .factories import make_board

pytestmark = pytest.mark.django_db(transaction=True)


def lane_spec(board: Board, repetitions: int = 1) -> dict:
    return {
        "name": "lifecycle",
        "boards": [board.name],
        "repetitions": repetitions,
        "benchmarks": [{"name": "sha1sum"}],
        "quiet": False,
    }


def application_of(board: Board) -> Application:
    version = presets.new_version(Preset.objects.create(name="fast"), options={"arm_freq": "900"})
    return presets.start_application(board, version, Application.Mode.TRIAL)


def test_a_lane_waiting_for_its_board_says_so_in_its_step(redis_queue, run_jobs):
    board = make_board()
    campaign = campaigns.start(lane_spec(board))
    with board_lock(board.pk, ttl=60):
        run_jobs()
    lane = campaign.lanes.get()
    assert lane.state == Lane.State.WAITING
    assert lane.step == "waiting: another job is driving the board"


def test_a_lane_job_has_the_time_of_an_application_job_and_the_longest_run(redis_queue):
    """And five minutes to spare, as before the lifecycles were one."""
    campaigns.start(lane_spec(make_board()))
    (job,) = redis_queue.jobs
    assert job.timeout >= work.KINDS["apply"].job_timeout_s() + runner.longest_run_s() + 300


def test_an_ssh_error_out_of_a_lane_job_ends_its_run_and_the_lane_goes_on(
    redis_queue, run_jobs, monkeypatch
):
    def lost(run, lane, hold, kept):
        raise ssh.ConnectionLost("the connection to the board dropped")

    monkeypatch.setattr(runner, "execute", lost)
    campaign = campaigns.start(lane_spec(make_board(), repetitions=2))
    run_jobs()
    runs = list(campaign.runs.order_by("sequence"))
    assert [run.state for run in runs] == [Run.State.FAILED, Run.State.FAILED]
    assert all("the job failed unexpectedly (ConnectionLost)" in run.reason for run in runs)
    campaign.refresh_from_db()
    assert campaign.finished is not None


def test_an_ssh_error_out_of_an_application_past_its_changes_needs_attention(
    redis_queue, run_jobs, monkeypatch
):
    def run(self):
        self.step("writing config.txt")
        raise ssh.ConnectionLost("the connection to the board dropped")

    monkeypatch.setattr(apply._Applying, "run", run)
    application = application_of(make_board(status=Board.Status.ONLINE))
    run_jobs()
    application.refresh_from_db()
    assert application.state == Application.State.NEEDS_ATTENTION
    assert "It may have changed the board" in application.reason


def test_an_applications_lock_outlives_the_three_commands_of_a_step(settings):
    settings.SSH_CONNECT_TIMEOUT = 10
    settings.PIFARM_REBOOT_DEADLINE = 30  # a short reboot: the commands are the longer stretch
    three_commands = 3 * (apply.steps.COMMAND_TIMEOUT_S + ssh.KILL_GRACE_S)
    assert work.KINDS["apply"].lock_ttl_s() >= three_commands


def test_the_sweep_leaves_a_task_that_a_newer_job_carries(redis_queue):
    """Its job found dead, but meanwhile a newer one took it over: that one ends it."""
    board = make_board()
    task = board.tasks.create(kind="probe", state="queued", job_id="old")
    long_ago = timezone.now() - timedelta(minutes=5)
    type(task).objects.filter(pk=task.pk).update(created=long_ago)
    task.refresh_from_db()
    type(task).objects.filter(pk=task.pk).update(job_id="newer")
    assert work.KINDS["probe"].interrupt(task, why="its job vanished") == 0
    task.refresh_from_db()
    assert task.state == "queued"
    assert fail_stale_tasks() == 1  # asked about again with its newer job: gone from Redis


def test_a_board_an_application_is_changing_stays_busy_when_it_answers(db):
    """After a demo restart a health check marked a board online mid-application."""
    board = make_board(status=Board.Status.BUSY)
    version = presets.new_version(Preset.objects.create(name="oc"), options={"arm_freq": "1800"})
    application = Application.objects.create(board=board, version=version, state="running")
    work.mark_board(board.pk, Board.Status.ONLINE)
    board.refresh_from_db()
    assert board.status == Board.Status.BUSY and board.last_seen is not None
    Application.objects.filter(pk=application.pk).update(state="verified")
    work.mark_board(board.pk, Board.Status.ONLINE)  # nothing is changing it any more
    board.refresh_from_db()
    assert board.status == Board.Status.ONLINE


def ran_in(monkeypatch) -> list:
    """A lane's runs done at once, without a board; each run's kept sessions, in order: the
    same object for runs one job ran in a row."""
    seen = []

    def execute(run, lane, hold, kept):
        seen.append(kept)
        Run.objects.filter(pk=run.pk).update(state=Run.State.DONE, finished=timezone.now())

    monkeypatch.setattr(runner, "execute", execute)
    return seen


def test_a_lane_runs_its_runs_in_one_job_while_nothing_else_wants_its_board(
    redis_queue, run_jobs, monkeypatch
):
    seen = ran_in(monkeypatch)
    campaign = campaigns.start(lane_spec(make_board(), repetitions=3))
    run_jobs()
    assert len(seen) == 3 and len({id(kept) for kept in seen}) == 1
    assert campaign.lanes.get().state == Lane.State.DONE


def test_a_lane_gives_its_board_back_between_runs_when_other_work_waits_for_it(
    redis_queue, run_jobs, monkeypatch
):
    seen = ran_in(monkeypatch)
    board = make_board()
    campaign = campaigns.start(lane_spec(board, repetitions=2))
    tasks.start(board, BoardTask.Kind.PROBE)  # queued behind the lane's first job
    run_jobs()
    assert len(seen) == 2 and seen[0] is not seen[1]  # a job each: the probe went between
    assert campaign.lanes.get().state == Lane.State.DONE


def test_other_work_for_a_board_or_its_peer_is_wanting_it(redis_queue):
    board, peer, elsewhere = make_board("a"), make_board("b"), make_board("c")
    lane = campaigns.start(lane_spec(board)).lanes.get()
    assert not work.others_want(lane)
    tasks.start(elsewhere, BoardTask.Kind.PROBE)
    assert not work.others_want(lane)
    other = campaigns.start(lane_spec(peer)).lanes.get()
    Lane.objects.filter(pk=other.pk).update(peer_board=board)  # another lane's peer: the board
    assert work.others_want(lane)


def test_a_health_check_does_not_take_the_board_from_a_lane_it_would_not_wait_for(redis_queue):
    # Health checks come for every board each round, and end at once on a busy one: a lane
    # that gave the board back for them would rarely keep it past a round.
    board = make_board()
    lane = campaigns.start(lane_spec(board)).lanes.get()
    tasks.start(board, BoardTask.Kind.HEALTH)
    assert not work.others_want(lane)
    tasks.start(board, BoardTask.Kind.PROBE)  # a probe waits for the board: it is wanted
    assert work.others_want(lane)


def test_a_lane_that_hands_its_board_back_lets_the_waiting_work_go_first(redis_queue):
    # The probe came while the lane's job held the board: it waits, its try 5 s away. The lane
    # job, handing the board back, would be queued at once and take it again first.
    board = make_board()
    lane = campaigns.start(lane_spec(board, repetitions=2)).lanes.get()
    redis_queue.empty()
    Lane.objects.filter(pk=lane.pk).update(state=Lane.State.RUNNING)
    probe = tasks.start(board, BoardTask.Kind.PROBE)
    redis_queue.empty()
    later = timezone.now() + timedelta(seconds=5)
    BoardTask.objects.filter(pk=probe.pk).update(state=BoardTask.State.WAITING, next_try=later)
    work.again(Lane.objects.get(pk=lane.pk))
    (queued,) = redis_queue.jobs  # the probe's try, now
    assert queued.args == ("probe", probe.pk)
    (scheduled,) = redis_queue.scheduled_job_registry.get_job_ids()  # the lane's, after it
    assert redis_queue.fetch_job(scheduled).args == ("lane", lane.pk)
