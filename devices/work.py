"""One lifecycle for work that drives a board: a task, a preset application, a campaign lane.

Each piece of such work is a BoardWork row (devices.models) carried by an RQ job, and every
kind goes through the same steps, here:
1. `queue`: after the transaction that wrote the row commits, its job goes on the board's
   worker queue, carrying only the kind's name and the row's id (job arguments show on the
   queue dashboard). A row that cannot be queued (a queue no worker serves, Redis down) ends
   at once with the reason, rather than staying "queued" for an hour.
2. `perform`, the job: it claims its row once (queued or waiting -> running) under the
   board's row lock, so a board's removal cannot cross it (devices.retire); a row whose board
   was retired ends failed, saying so.
3. It holds the board's lock (and a peer's) while the kind's body drives the board, renewing
   it at every step (`Hold`); a long step (a reboot) holds it longer.
4. A busy board gives the worker back: the row waits and its next try is queued for later,
   which the workers' scheduler delivers; after PIFARM_BUSY_WAIT it ends failed.
5. It ends in one of its kind's END_STATES with a reason (`Stop`), or done.
6. A job that raised ends its row through the crash callback (`crashed`); a health-check
   round ends the rows whose job died (worker killed, Redis emptied: `sweep`), queues next
   tries that no scheduler delivered, and applies time limits where Redis cannot tell.

A kind of work supplies its body and what it does differently (`Kind`), and registers itself
when its app is ready: devices (host keys, probes, health checks, applications), benchmarks
(campaign lanes, board preparation).
"""

import logging
from collections import defaultdict
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import django_rq
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string
from redis.exceptions import LockError, RedisError
from rq import Callback, Worker, get_current_job
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from devices import events, ssh
from devices.credentials import CredentialError
from devices.locks import BoardBusy, board_lock, holder
from devices.models import Board, BoardWork

log = logging.getLogger(__name__)

State = BoardWork.State

# Work younger than this is left alone by the sweep: its job may not be queued yet (the row
# commits first, then its job is queued and its id stored).
JOB_GRACE = timedelta(seconds=30)
# A next try this late was not delivered: the worker holding RQ's scheduler died, and another
# takes the scheduler over only at its maintenance pass (every 10 minutes).
OVERDUE_AFTER = timedelta(seconds=60)
# Past these, the sweep gives up on work that Redis cannot tell about: queued with no worker
# for its queue, or waiting for a next try that never came.
QUEUED_STALE_AFTER = timedelta(hours=1)
NO_SCHEDULER = (
    "its next try was due an hour ago and never came: do the workers run with --with-scheduler?"
)
# A running row this long past its job's time limit lost its worker (killed, machine gone).
RUNNING_GRACE = timedelta(seconds=60)
# RQ keeps a job in these states when it ended without running its row to the end: the work
# horse was killed (failed, no failure callback), or a person stopped or canceled it.
ENDED_UNFINISHED = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}
# The lock's margin over a kind's longest step between two renewals, and the job's over its
# longest run: a slow database write, a slow worker.
LOCK_MARGIN_S = 30
JOB_MARGIN_S = 120


def lock_ttl(longest_step_s: float) -> float:
    """The one rule for a board lock's life: a connection (TCP, banner and authentication,
    each with its own deadline), the longest step between two renewals, the kill grace of a
    command that overran, and a margin. A job that dies blocks its board for this long."""
    return 3 * settings.SSH_CONNECT_TIMEOUT + longest_step_s + ssh.KILL_GRACE_S + LOCK_MARGIN_S


def crash_words(exception_name: str) -> str:
    return f"the job failed unexpectedly ({exception_name}); see the worker log"


def busy_reason(row, then: str) -> str:
    """Why work ended after waiting PIFARM_BUSY_WAIT for its board, then what it means."""
    return f"{row.board.name} was busy with other work for more than {busy_wait_s():.0f} s, {then}"


def busy_retry_s() -> float:
    return float(settings.PIFARM_BUSY_RETRY)


def busy_wait_s() -> float:
    return float(settings.PIFARM_BUSY_WAIT)


class Stop(Exception):
    """Ends the work in `state` (one of its kind's END_STATES) with `reason`, in words.
    board_status: what it says about the board (mark_board), None for nothing."""

    def __init__(self, state: str, reason: str, *, board_status=None, board_reason: str = ""):
        super().__init__(reason)
        self.state, self.reason = state, reason
        self.board_status, self.board_reason = board_status, board_reason


# A body returns this when its row has more to do in a later job (a lane's next run).
AGAIN = "again"


def _own_board(row: BoardWork) -> list[int]:
    return [row.board_id]


def _nothing(row: BoardWork) -> None:
    pass


@dataclass(frozen=True)
class Kind:
    """What one kind of board work does; everything else is the lifecycle's.

    body: dotted path of body(row, hold), imported when a job runs it; it returns None (done)
      or AGAIN, or raises Stop. hold is None for a kind that takes no lock (lock_step_s None).
    longest_s: the longest its body may run, with every deadline reached: its job's limit.
    lock_step_s: its longest step between two renewals of the board lock (lock_ttl).
    boards: the boards it drives (a lane: its board and its peer board).
    on_busy: None (wait for the board) or the state it ends in at once (a health check: a
      board driven by another job evidently answers).
    busy_reason: the reason it ends with once it has waited PIFARM_BUSY_WAIT.
    interrupted(row, why, crash): its job died: it raised (crash: the exception's name), or
      its worker or Redis went away (why); end the row, or let it go on; how many rows ended.
      Defaults to failed, saying so.
    waiting_step: what its step says while it waits for its board ("": left as it is).
    ssh_errors_end_it: an SSH or credential error out of its body ends it failed, saying what
      it says of the board (a task); otherwise it is a crash (crashed, then interrupted): an
      application may have changed the board, a lane goes on with its next run.
    retries_unqueued: a row whose job Redis could not take (it was down) stays queued for the
      sweep to queue again, instead of ending failed with the reason (a lane: nothing is lost).
    untouched: how its reasons begin when it ended before it changed anything.
    ended(row): after it ended, once the board's lock is released (the next job may start).
    claimed: extra fields set when a job claims it.
    also_drives: the field of its model naming another board it drives (a lane's peer board).
    """

    name: str
    model: type[BoardWork]
    body: str
    longest_s: Callable[[], float]
    lock_step_s: Callable[[], float] | None
    busy_reason: Callable[[BoardWork], str] | None = None
    boards: Callable[[BoardWork], list[int]] = _own_board
    on_busy: str | None = None
    interrupted: Callable[[BoardWork, str, str], int] | None = None
    waiting_step: str = ""
    ssh_errors_end_it: bool = False
    retries_unqueued: bool = False
    untouched: str = ""
    ended: Callable[[BoardWork], None] = _nothing
    claimed: Callable[[], dict] = dict
    also_drives: str = ""

    def job_timeout_s(self) -> float:
        """The one rule for RQ's limit on a job: the body's longest run, and a margin."""
        return self.longest_s() + JOB_MARGIN_S

    def lock_ttl_s(self) -> float:
        return lock_ttl(self.lock_step_s())

    def interrupt(self, row: BoardWork, why: str = "", crash: str = "") -> int:
        if self.interrupted is not None:
            return self.interrupted(row, why, crash)
        if crash:
            return end(row, State.FAILED, crash_words(crash), unfinished=True)
        # Only while the job found dead carries it: not once a newer job has taken it over.
        return end(row, State.FAILED, f"{why}; start it again", unfinished=True, job=row.job_id)

    def reason_when_busy(self, row: BoardWork) -> str:
        if self.busy_reason is not None:
            return self.busy_reason(row)
        return busy_reason(row, "so it was not done. Try again later.")

    def fail_untouched(self, row: BoardWork, why: str) -> int:
        return end(row, State.FAILED, f"{self.untouched}{why}", unfinished=True)


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    KINDS[kind.name] = kind


def busy_on(boards) -> dict[int, list[BoardWork]]:
    """Each board's work not ended yet, of every kind registered, oldest first: what the
    dashboard says a board is busy with."""
    found = defaultdict(list)
    for model in {kind.model for kind in KINDS.values()}:
        rows = model.objects.filter(board__in=boards, state__in=model.UNFINISHED)
        for row in rows.select_related("board", *model.BUSY_RELATED).order_by("pk"):
            found[row.board_id].append(row)
    return found


def others_want(row: BoardWork) -> bool:
    """Whether other work not ended yet (queued, waiting or running) is for one of the boards
    that row drives: then row's job gives the boards back between two steps. Work that ends at
    once on a busy board (a health check: on_busy) does not count: it never waits for them."""
    return any(others.exists() for others in _others(row))


def worker_stopping() -> bool:
    """Whether the worker running this job was asked to stop (SIGTERM or SIGINT: a deploy, the
    demo's Ctrl-C). RQ then waits for the job to end, and notes the request in the worker's
    Redis hash, which is all the work horse can see of it: a job that goes on from step to
    step (a lane's runs) ends after the step under way, rather than hold the stop for minutes.
    Redis away: not stopping, as far as it can tell."""
    job = get_current_job()
    if job is None or not job.worker_name:
        return False
    try:
        asked = job.connection.hget(
            Worker.redis_worker_namespace_prefix + job.worker_name, "shutdown_requested_date"
        )
    except RedisError:
        return False
    return bool(asked)


def _others(row: BoardWork) -> list:
    """Per model, its rows not ended yet, but row, that drive one of row's boards and would
    wait for them (others_want)."""
    boards = kind_of(row).boards(row)
    found = []
    for model in _models():
        instant = [kind.name for kind in KINDS.values() if kind.model is model and kind.on_busy]
        if instant and not model.KIND_FIELD:
            continue  # a model of one kind, which never waits
        drives = Q(board__in=boards)
        for field in {kind.also_drives for kind in KINDS.values() if kind.model is model} - {""}:
            drives |= Q(**{f"{field}__in": boards})
        others = model.objects.filter(drives, state__in=BoardWork.UNFINISHED).exclude(
            pk=row.pk if isinstance(row, model) else None
        )
        if instant:
            others = others.exclude(**{f"{model.KIND_FIELD}__in": instant})
        found.append(others)
    return found


def kind_of(row: BoardWork) -> Kind:
    return KINDS[row.work_kind]


# ---- 1. queue ---------------------------------------------------------------------------


class Unqueued(Exception):
    """The job could not be queued; the message says why, for the row. transient: Redis
    could not be reached (it may be back by the sweep's next round)."""

    def __init__(self, reason: str, *, transient: bool = False):
        super().__init__(reason)
        self.transient = transient


def queue(row: BoardWork, at: datetime | None = None) -> None:
    """Queue row's job on its board's queue once the transaction commits (at `at`, if given).
    A row that cannot be queued ends, or is kept for the sweep, as its kind says."""
    kind, queue_name = kind_of(row), row.board.queue

    def send():
        try:
            job = _send(queue_name, kind, row.pk, at)
        except Unqueued as exc:
            log.error("could not queue %s: %s", row, exc)
            if exc.transient and kind.retries_unqueued:
                waits = f"not queued yet ({exc}); will retry"
                type(row).objects.filter(pk=row.pk).update(step=waits)
            elif kind.fail_untouched(row, str(exc)):
                row.refresh_from_db()
                kind.ended(row)
            return
        # The sweep asks Redis about this job: whether it still lives, and its worker.
        type(row).objects.filter(pk=row.pk).update(job_id=job.id)

    transaction.on_commit(send)


def _send(queue_name: str, kind: Kind, row_id: int, at: datetime | None) -> Job:
    if queue_name not in settings.RQ_QUEUES:  # a queue no worker serves (PIFARM_QUEUES)
        known = ", ".join(settings.RQ_QUEUES)
        raise Unqueued(
            f"no worker serves the queue {queue_name!r} (the queues are: {known}); "
            "set the board's worker queue to one of them"
        )
    # Already after the commit (queue): queue now, so the job's id comes back.
    rq_queue = django_rq.get_queue(queue_name, commit_mode="auto")
    options = {
        "job_timeout": kind.job_timeout_s(),
        "on_failure": Callback(crashed),
        "description": f"{kind.name} {row_id}",
    }
    try:
        if at is None:
            return rq_queue.enqueue(perform, kind.name, row_id, **options)
        return rq_queue.enqueue_at(at, perform, kind.name, row_id, **options)
    except RedisError as exc:
        reason = f"could not reach the job queue (Redis): {exc}"
        raise Unqueued(reason, transient=True) from None


# ---- 2. claim ---------------------------------------------------------------------------


def claim(kind: Kind, pk: int) -> BoardWork | None:
    """Queued (or waiting) to running, once, and only while its board is in service: a second
    delivery of the same job finds nothing to do. A row whose board was retired ends failed,
    saying so. None when there is nothing to do."""
    rows = kind.model.objects
    with transaction.atomic():
        board_id = rows.filter(pk=pk).values_list("board", flat=True).first()
        if board_id is None:
            return None
        queued = rows.filter(pk=pk, state__in=[State.QUEUED, State.WAITING])
        if Board.objects.in_service().select_for_update().filter(pk=board_id).exists():
            running = {"state": State.RUNNING, "started": timezone.now(), "next_try": None}
            claimed = queued.update(**{**running, **kind.claimed()})
        else:
            reason = retired_reason(Board.objects.get(pk=board_id))
            claimed = 0
            if queued.update(state=State.FAILED, finished=timezone.now(), reason=reason):
                kind.ended(rows.select_related("board").get(pk=pk))
    if not claimed:
        log.warning("%s %s was not queued any more, or its board retired", kind.name, pk)
        return None
    return rows.select_related("board").get(pk=pk)


def retired_reason(board: Board) -> str:
    when = timezone.localtime(board.retired)
    return (
        f"Nothing was done: {board.name} was retired on {when:%Y-%m-%d %H:%M} before this "
        "started. An admin can restore it."
    )


# ---- 3. hold the board ------------------------------------------------------------------


class Hold:
    """A job's hold on its board (and peer): the locks, renewed at each step of its work."""

    def __init__(self, locks: list, label: str):
        self.locks, self.label = locks, label

    def renew(self) -> None:
        for lock in self.locks:
            try:
                lock.reacquire()
            except LockError:  # it expired while a step overran: say so and finish the job
                log.warning("%s: the board lock expired", self.label)

    @contextmanager
    def longer(self, ttl: float):
        """For a step that goes long between two renewals (an application's reboot)."""
        usual = [lock.timeout for lock in self.locks]
        for lock in self.locks:
            lock.timeout = ttl
        self.renew()
        try:
            yield self
        finally:
            for lock, timeout in zip(self.locks, usual, strict=True):
                lock.timeout = timeout
            self.renew()


@contextmanager
def hold(*board_ids: int, ttl: float, label: str):
    """Lock each board (BoardBusy, holding none, if any is driven by another job), in the
    name of the RQ job running this (locks.holder)."""
    job = get_current_job()
    with ExitStack() as stack:
        locks = [
            stack.enter_context(board_lock(pk, ttl=ttl, job_id=job.id if job else ""))
            for pk in board_ids
        ]
        yield Hold(locks, label)


# ---- the job ----------------------------------------------------------------------------


def perform(kind_name: str, pk: int) -> None:
    """The RQ job of every kind of board work: claim the row, hold its boards, run its body,
    end it."""
    kind = KINDS[kind_name]
    row = claim(kind, pk)
    if row is None:
        return
    body = import_string(kind.body)
    ended = None
    try:
        if kind.lock_step_s is None:
            outcome = _run_body(kind, body, row, None)
        else:
            label = f"{kind.name} {row.pk}"
            with hold(*kind.boards(row), ttl=kind.lock_ttl_s(), label=label) as held:
                outcome = _run_body(kind, body, row, held)
                if outcome != AGAIN:  # ended before its boards are free: the work that
                    ended = _end_with(row, outcome)  # takes them next finds it ended
    except BoardBusy:
        if kind.on_busy is not None:
            outcome = kind.on_busy
        elif _wait_for_board(kind, row):
            return
        else:
            outcome = Stop(State.FAILED, kind.reason_when_busy(row))
    _conclude(kind, row, outcome, ended=ended)


def perform_holding(kind_name: str, pk: int, held: Hold) -> BoardWork | None:
    """Run a row's body from a job that holds its board already (a lane applies a preset):
    the same claim, record and end as `perform`. None if it was no longer queued."""
    kind = KINDS[kind_name]
    row = claim(kind, pk)
    if row is None:
        return None
    # Its `ended` is the holder's to see to: the holder's lock is not released yet.
    _conclude(kind, row, _run_body(kind, import_string(kind.body), row, held), after=False)
    row.refresh_from_db()
    return row


def _run_body(kind: Kind, body, row: BoardWork, held: Hold | None):
    try:
        return body(row, held)
    except Stop as stop:
        return stop
    except (ssh.SSHError, CredentialError) as exc:
        if not kind.ssh_errors_end_it:
            raise
        # The board did not let us in, or the connection went: what that says of it.
        return Stop(State.FAILED, str(exc), board_status=status_for(exc), board_reason=str(exc))


def _as_stop(outcome) -> Stop:
    return outcome if isinstance(outcome, Stop) else Stop(outcome or State.DONE, "")


def _end_with(row: BoardWork, outcome) -> int:
    stop = _as_stop(outcome)
    return end(row, stop.state, stop.reason)


def _conclude(
    kind: Kind, row: BoardWork, outcome, *, after: bool = True, ended: int | None = None
) -> None:
    """End the row with its body's outcome (ended: it was, while its boards were held), mark
    its board, and run its kind's `ended`; AGAIN: queue its next job instead."""
    if outcome == AGAIN:
        again(row)
        return
    stop = _as_stop(outcome)
    if ended is None:
        ended = end(row, stop.state, stop.reason)
    mark_board(row.board_id, stop.board_status, stop.board_reason)
    if ended and after:
        row.refresh_from_db()
        kind.ended(row)


def mark_board(
    board_id: int, status: str | None, reason: str = "", *, clears_attention: bool = False
) -> None:
    """Record a board's status, leaving a board that a person put in maintenance alone.

    "Needs attention", with its reason, stays until a probe that succeeds (clears_attention)
    says what the board is now: that a board answers says nothing about the config.txt a
    person must check, and a later failure (a changed host key) must not hide that reason.
    """
    if status is None:
        return
    limit = Board._meta.get_field("status_reason").max_length
    updates = {"status": status, "status_reason": reason[:limit]}
    if status in (Board.Status.ONLINE, Board.Status.BUSY):
        updates["last_seen"] = timezone.now()
    spared = [Board.Status.MAINTENANCE]
    if not clears_attention:  # nor a new reason: the first says what a person must check
        spared.append(Board.Status.NEEDS_ATTENTION)
    boards = Board.objects.filter(pk=board_id).exclude(status__in=spared)
    if status == Board.Status.NEEDS_ATTENTION:
        if boards.exclude(status=status).update(**updates):  # newly: a person is told once
            transaction.on_commit(lambda: _say_needs_attention(board_id, updates["status_reason"]))
    if status == Board.Status.ONLINE:
        # A board an application is changing stays busy: that it answers (a health check
        # after a restart) says nothing of that; it was seen, though.
        changing = boards.filter(
            status=Board.Status.BUSY, applications__state__in=BoardWork.UNFINISHED
        )
        if changing.update(last_seen=updates["last_seen"]):
            return
    boards.update(**updates)


def _say_needs_attention(board_id: int, reason: str) -> None:
    events.send(events.board_needs_attention, Board, board_id=board_id, reason=reason)


def status_for(error: Exception) -> str | None:
    """What an SSH failure says about the board; None when it says nothing new."""
    if isinstance(error, ssh.HostKeyMismatch | ssh.AuthFailed | CredentialError):
        return Board.Status.NEEDS_ATTENTION
    if isinstance(error, ssh.ConnectFailed | ssh.ConnectionLost):
        return Board.Status.OFFLINE
    return None  # it answered but a command misbehaved: the row's reason tells what


def again(row: BoardWork) -> None:
    """Queue the row's next job: it has more to do (a lane's next run). Work waiting for its
    boards gets its try now, and this job a moment later: queued at once, it would take the
    boards again before a try PIFARM_BUSY_RETRY away."""
    with transaction.atomic():
        woken = _wake_waiting(row)
        if (
            type(row)
            .objects.filter(pk=row.pk, state=State.RUNNING)
            .update(state=State.QUEUED, job_id="", waiting_since=None)
        ):
            queue(row, at=timezone.now() + timedelta(seconds=AFTER_WAKING_S) if woken else None)


# How long a job that handed its boards back to waiting work queues its next try after theirs:
# long enough for their worker to take the lock, a moment beside a run.
AFTER_WAKING_S = 2


def _wake_waiting(row: BoardWork) -> int:
    """Queue now the next tries of the work waiting for row's boards; how many. Should the
    try they were given still come, it finds the row running or ended and does nothing."""
    woken = 0
    now = timezone.now()
    for others in _others(row):
        for waiting in others.filter(state=State.WAITING).select_related("board"):
            if others.filter(pk=waiting.pk, state=State.WAITING).update(next_try=now):
                queue(waiting)
                woken += 1
    return woken


def end(
    row: BoardWork, state: str, reason: str, *, unfinished: bool = False, job: str | None = None
) -> int:
    """End the row in state with reason. Only a running row ends this way (one the sweep
    ended already keeps its end); unfinished: any row not ended yet (the sweep, a crash); job:
    only while that RQ job carries it."""
    rows = type(row).objects.filter(
        pk=row.pk, state__in=BoardWork.UNFINISHED if unfinished else [State.RUNNING]
    )
    if job is not None:
        rows = rows.filter(job_id=job)
    log.info("%s ended %s%s", row, state, f": {reason}" if reason else "")
    return rows.update(state=state, reason=reason, step="", finished=timezone.now())


# ---- 4. wait for a busy board -----------------------------------------------------------


def _wait_for_board(kind: Kind, row: BoardWork) -> bool:
    """The row's board is busy: mark the row waiting and queue its next try. False, with
    nothing changed, once it has waited PIFARM_BUSY_WAIT: the caller ends it."""
    now = timezone.now()
    since = row.waiting_since or now
    if (now - since).total_seconds() >= busy_wait_s():
        return False
    next_try = now + timedelta(seconds=busy_retry_s())
    step = {"step": kind.waiting_step} if kind.waiting_step else {}
    waiting = (
        type(row)
        .objects.filter(pk=row.pk, state=State.RUNNING)
        .update(state=State.WAITING, waiting_since=since, next_try=next_try, **step)
    )
    if waiting:  # not if something else ended it meanwhile (the sweep)
        log.info("%s waits for its board; next try at %s", row, next_try)
        queue(row, at=next_try)
    return True


# ---- 6. jobs that died ------------------------------------------------------------------


def crashed(job, connection, exc_type, exc_value, traceback) -> None:
    """RQ's failure callback for every kind: a job that raised (a bug, its time limit, its
    worker killed and found by another worker's clean-up) still ends its row."""
    kind_name, pk = job.args
    kind = KINDS[kind_name]
    row = kind.model.objects.filter(pk=pk, state__in=BoardWork.UNFINISHED).first()
    if row is not None:
        kind.interrupt(row, crash=exc_type.__name__)


def sweep(now: datetime) -> int:
    """End (or continue) every row whose job died; apply the time limits. Rows whose Redis
    cannot be asked are left to the time limits and the next round."""
    ended = 0
    for model in _models():
        try:
            ended += _end_dead(model, now)
        except RedisError as exc:
            log.warning("could not ask the job queue about unfinished %s: %s", model.__name__, exc)
        ended += _time_limits(model, now)
    return ended


def _models() -> list[type[BoardWork]]:
    return list(dict.fromkeys(kind.model for kind in KINDS.values()))


def _end_dead(model: type[BoardWork], now: datetime) -> int:
    ended = 0
    for row in model.sweepable(now - JOB_GRACE, now).select_related("board"):
        kind = kind_of(row)
        if not row.job_id:
            why = "it was never queued (was Redis down?)"
        else:
            why = why_dead(row.board.queue, row.job_id, row.board_id)
        if why:
            ended += kind.interrupt(row, why=why)
    return ended


def _time_limits(model: type[BoardWork], now: datetime) -> int:
    """For rows whose job Redis cannot tell about (the job's key expired): a running row long
    past its job's limit, a queued one no worker took, a waiting one whose try never came."""
    if not model.TIME_LIMITED:
        return 0
    ended = 0
    for row in model.objects.filter(state=State.RUNNING).select_related("board"):
        kind = kind_of(row)
        limit = timedelta(seconds=kind.job_timeout_s()) + RUNNING_GRACE
        if row.started and row.started < now - limit:
            why = "the worker running it stopped before it finished (killed?)"
            ended += kind.interrupt(row, why=why)
    stale = [
        (
            model.objects.filter(state=State.QUEUED, created__lt=now - QUEUED_STALE_AFTER),
            "no worker took it within an hour: is a worker running for its queue?",
        ),
        (
            model.objects.filter(state=State.WAITING, next_try__lt=now - QUEUED_STALE_AFTER),
            f"it waited for the board, but {NO_SCHEDULER}",
        ),
    ]
    for rows, why in stale:
        for row in rows.select_related("board"):
            ended += kind_of(row).fail_untouched(row, why)
    return ended


def why_dead(queue_name: str, job_id: str, board_id: int) -> str:
    """Why the RQ job carrying a row can no longer end it, in words; "" while it can.

    A worker killed outright leaves its job "started"; its key in Redis, which it renews
    while it works (every 30 s, for 90 s), then expires: that is how we know it is gone. Its
    work horse may outlive it (killing only the worker's main process orphans it), and a
    horse at work renews the board's lock: while the board is locked in this job's name, the
    job may be alive. Locked by another job (a health check, a canary's lane, taking the board
    after this one's lock expired), it is not: the board going on being used must not keep a
    dead job's row running.
    """
    if queue_name not in settings.RQ_QUEUES:
        return ""  # it was never queued: its row ended when that failed
    connection = django_rq.get_connection(queue_name)
    try:
        job = Job.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return "its job vanished from the job queue (was Redis restarted or emptied?)"
    status = job.get_status(refresh=False)
    if status in ENDED_UNFINISHED:
        return f"its job ended as {status.value} in the job queue before finishing it"
    if status == JobStatus.STARTED and not _worker_alive(job.worker_name, connection):
        if holder(board_id) == job_id:
            return ""  # its horse may still drive the board; its lock expires if not
        return f"its worker {job.worker_name} stopped (killed, or its machine went down)"
    return ""


def _worker_alive(name: str | None, connection) -> bool:
    return bool(name) and bool(connection.exists(Worker.redis_worker_namespace_prefix + name))


def queue_overdue_tries(now: datetime) -> int:
    """Queue now the next tries of waiting work that no scheduler delivered. Should the late
    delivery still come, it finds the row running or ended and does nothing."""
    queued = 0
    try:
        for model in _models():
            waiting = model.objects.filter(state=State.WAITING)
            for row in waiting.filter(next_try__lt=now - OVERDUE_AFTER).select_related("board"):
                # Its next try is now: the next round does not queue it again meanwhile.
                if waiting.filter(pk=row.pk).update(next_try=now):
                    queue(row)
                    queued += 1
    except RedisError as exc:  # the sweep ends them once Redis is back
        log.warning("could not queue overdue next tries: %s", exc)
    if queued:
        log.warning("queued %d next tries that no scheduler delivered", queued)
    return queued
