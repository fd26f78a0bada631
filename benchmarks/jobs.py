"""The RQ job that drives a campaign's lane: one run per job, then the lane's next job.

A lane's job claims the lane, takes its board's lock (and its peer board's), claims the next
queued run, runs it (benchmarks.runner), and queues the lane again. One run per job keeps each
job's time limit honest and lets other work (a probe, another campaign's run) in between two
runs: one board is still driven by one job at a time, and a run checks that the board runs its
preset before it starts. Work for a busy board waits without holding a worker, the way probes
and applications do (devices.enqueue).
"""

import logging
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from benchmarks import campaigns, runner
from benchmarks.models import Lane, Run
from benchmarks.runner import LOCK_TTL_S
from devices import apply, enqueue, retire, work
from devices.locks import BoardBusy

log = logging.getLogger(__name__)


def job_timeout() -> float:
    """RQ's limit for one lane job: one application and the longest run, with room."""
    return apply.job_timeout() + runner.longest_run_s() + 300


def queue_lane(lane: Lane, at=None) -> None:
    enqueue.on_board_queue(
        lane,
        drive_lane,
        job_timeout=job_timeout(),
        on_failure=lane_crashed,
        unqueued=lambda reason: _unqueued(lane, reason),
        at=at,
    )


def _unqueued(lane: Lane, reason: str) -> None:
    """A queue that no worker serves ends the lane; a Redis hiccup leaves it queued for the
    sweep to queue again (nothing is lost)."""
    if lane.board.queue in settings.RQ_QUEUES:
        Lane.objects.filter(pk=lane.pk).update(step=f"not queued yet ({reason}); will retry")
        return
    _end_lane(lane, Lane.State.FAILED, reason, skip_reason=f"not run: {reason}")


def drive_lane(lane_id: int) -> None:
    lane = _claim(lane_id)
    if lane is None:
        return
    boards = [lane.board_id, *([lane.peer_board_id] if lane.peer_board_id else [])]
    try:
        with work.hold(*boards, ttl=LOCK_TTL_S, label=f"lane {lane.pk}") as hold:
            run = _claim_next_run(lane)
            if run is not None:
                runner.execute(run, lane, hold)
            if not lane.runs.filter(state=Run.State.QUEUED).exists():
                runner.leave_as_found(lane, hold)
    except BoardBusy:
        _wait(lane)
        return
    _continue(lane)


def _claim(lane_id: int) -> Lane | None:
    running = {"state": Lane.State.RUNNING, "heartbeat": timezone.now(), "next_try": None}
    if not retire.claim(Lane.objects, lane_id, running=running, reason_field="error"):
        lane = Lane.objects.filter(pk=lane_id, state=Lane.State.FAILED).first()
        if lane is not None and lane.error:  # its board was retired: its runs cannot happen
            _skip_rest(lane, lane.error)
            campaigns.finish_if_done(lane.campaign_id)
        return None
    return Lane.objects.select_related("board", "peer_board", "campaign").get(pk=lane_id)


def _claim_next_run(lane: Lane) -> Run | None:
    with transaction.atomic():
        run = (
            lane.runs.select_for_update(skip_locked=True)
            .filter(state=Run.State.QUEUED)
            .order_by("sequence")
            .first()
        )
        if run is None:
            return None
        Run.objects.filter(pk=run.pk).update(state=Run.State.RUNNING, started=timezone.now())
    return Run.objects.select_related("preset_version__preset", "board").get(pk=run.pk)


def _wait(lane: Lane) -> None:
    if enqueue.wait_for_board(lane, partial(queue_lane, lane)):
        Lane.objects.filter(pk=lane.pk).update(step="waiting: another job is driving the board")
        return
    reason = (
        f"{lane.board.name} (or its peer) was busy with other work for more than "
        f"{enqueue.busy_wait_s():.0f} s"
    )
    _end_lane(lane, Lane.State.FAILED, reason, skip_reason=f"not run: {reason}")


def _continue(lane: Lane) -> None:
    """Queue the lane's next run, or end the lane when none is left."""
    with transaction.atomic():
        more = lane.runs.filter(state=Run.State.QUEUED).exists()
        if not more:
            _end_lane(lane, Lane.State.DONE)
            return
        Lane.objects.filter(pk=lane.pk, state=Lane.State.RUNNING).update(
            state=Lane.State.QUEUED, job_id="", waiting_since=None
        )
        queue_lane(lane)


def _end_lane(lane: Lane, state: str, error: str = "", *, skip_reason: str = "") -> None:
    if skip_reason:
        _skip_rest(lane, skip_reason)
    Lane.objects.filter(pk=lane.pk, state__in=Lane.UNFINISHED).update(
        state=state, error=error, step="", finished=timezone.now()
    )
    campaigns.finish_if_done(lane.campaign_id)


def _skip_rest(lane: Lane, reason: str) -> None:
    lane.runs.filter(state=Run.State.QUEUED).update(
        state=Run.State.SKIPPED, reason=reason, finished=timezone.now()
    )


def lane_crashed(job, connection, exc_type, exc_value, traceback) -> None:
    """RQ failure callback: the job raised (a bug, its time limit). Its run ends failed with
    the reason, and the lane goes on with its next run."""
    lane = Lane.objects.select_related("board").filter(pk=job.args[0]).first()
    if lane is None:
        return
    runner.end_interrupted(
        lane, f"the job failed unexpectedly ({exc_type.__name__}); see the worker log"
    )
    restart(lane)


def restart(lane: Lane) -> None:
    """Queue a lane whose job died, for its remaining runs (or end it if none remain)."""
    with transaction.atomic():
        if not Lane.objects.filter(pk=lane.pk, state__in=Lane.UNFINISHED).update(
            state=Lane.State.RUNNING
        ):
            return
    _continue(lane)
