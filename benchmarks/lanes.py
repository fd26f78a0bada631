"""Campaign lanes as a kind of board work: runs in a row, then the lane's next job.

A lane's job (devices.work) claims the lane, takes its board's lock (and its peer board's),
claims the next queued run and runs it (benchmarks.runner). It goes on to the next run itself,
on the connection it has open, while no other work waits for its boards and for CHAIN_S at
most; then it queues the lane again, so other work (a probe, another campaign's run) gets in
between two runs and each job's time limit stays honest. One board is still driven by one job
at a time, and a run checks that the board runs its preset before it starts.

A lane whose job died does not end: its run under way ends failed with the reason, and the
lane goes on with its next run. A lane whose job vanished before it started (Redis emptied)
is simply queued again: nothing ran, nothing is lost.
"""

import logging
import time

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmarks import board_state, campaigns, runner
from benchmarks.models import Lane, Run
from devices import remote, work
from devices.models import Application

log = logging.getLogger(__name__)

# How long a job starts runs in a row: past it, the next run is a job of its own (work.AGAIN).
CHAIN_S = 120


def drive_lane(lane: Lane, hold: work.Hold):
    """Its next runs; then again, or done when no run is left.

    The job goes on to the lane's next run itself, on the connection it has open, while no
    other work waits for its boards, its worker was not asked to stop and it has run less than
    CHAIN_S; otherwise it hands the board back (work.AGAIN: the next run is a job of its own,
    which another worker, or this one started again, takes)."""
    started = time.monotonic()
    kept = remote.Kept()
    try:
        while True:
            lane = Lane.objects.select_related("board", "peer_board", "campaign").get(pk=lane.pk)
            run = _claim_next_run(lane)
            ended = runner.execute(run, lane, hold, kept) if run is not None else None
            if not lane.runs.filter(state=Run.State.QUEUED).exists():
                break
            if (
                run is None
                or (ended is not None and ended.skip == "lane")
                or time.monotonic() - started > CHAIN_S
                or work.others_want(lane)
                or work.worker_stopping()
            ):
                return work.AGAIN
            hold.renew()
    finally:
        kept.close()
    board_state.leave_as_found(lane, hold)
    return None


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


def _boards(lane: Lane) -> list[int]:
    return [lane.board_id, *([lane.peer_board_id] if lane.peer_board_id else [])]


def _longest_s() -> float:
    """A job's runs in a row: started within CHAIN_S, the last one (its preset applied first)
    as long as a run may be, then the board put back as it was (board_state.leave_as_found)."""
    application_s = work.KINDS[Application.WORK_KIND].job_timeout_s()
    return CHAIN_S + application_s + runner.longest_run_s() + 180 + application_s


def _claimed() -> dict:
    # Started once, at its first job; its heartbeat shows the sweep it lives.
    now = timezone.now()
    return {"heartbeat": now, "started": Coalesce("started", now)}


def _busy_reason(lane: Lane) -> str:
    return (
        f"{lane.board.name} (or its peer) was busy with other work for more than "
        f"{work.busy_wait_s():.0f} s"
    )


def _ended(lane: Lane) -> None:
    """Its runs not run yet cannot happen now; the campaign may be finished."""
    if lane.state == Lane.State.FAILED:
        lane.runs.filter(state=Run.State.QUEUED).update(
            state=Run.State.SKIPPED, reason=f"not run: {lane.reason}", finished=timezone.now()
        )
    campaigns.finish_if_done(lane.campaign_id)


def _interrupted(lane: Lane, why: str, crash: str) -> int:
    """Its run under way ends failed with the reason; the lane goes on with its next run. A
    lane that was not running (queued or waiting) lost only its job: it is queued again."""
    if crash or lane.state == Lane.State.RUNNING:
        ended = runner.end_interrupted(lane, work.crash_words(crash) if crash else why)
        restart(lane)
        return max(ended, 1)
    work.queue(lane)
    return 1


def restart(lane: Lane) -> None:
    """Queue a lane whose job died, for its remaining runs (or end it if none remain)."""
    with transaction.atomic():
        if not Lane.objects.filter(pk=lane.pk, state__in=Lane.UNFINISHED).update(
            state=Lane.State.RUNNING
        ):
            return
        if lane.runs.filter(state=Run.State.QUEUED).exists():
            work.again(lane)
            return
        work.end(lane, Lane.State.DONE, "")
    lane.refresh_from_db()
    _ended(lane)


work.register(
    work.Kind(
        name=Lane.WORK_KIND,
        model=Lane,
        body="benchmarks.lanes.drive_lane",
        longest_s=_longest_s,
        lock_step_s=runner.longest_step_s,
        boards=_boards,
        busy_reason=_busy_reason,
        also_drives="peer_board",
        waiting_step="waiting: another job is driving the board",
        interrupted=_interrupted,
        retries_unqueued=True,
        ended=_ended,
        claimed=_claimed,
    )
)
