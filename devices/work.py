"""One mechanism for work on a board: probes, preset applications and campaign runs alike.

Each kind of work is a row (BoardTask, Application, a campaign's Lane) carried by an RQ job,
and they share every rule of how such a job behaves:
- it claims its row once (devices.retire.claim: queued or waiting -> running, only while the
  board is in service);
- it holds its board's lock (and a peer board's) while it drives the board, renewing it at
  every step; a long step (a reboot) holds it longer (`Hold`);
- a busy board gives the worker back and the row waits for its next try (devices.enqueue);
- a health-check round ends or continues rows whose job died (worker killed, Redis emptied),
  through the kind's own `end_dead`, and queues next tries that no scheduler delivered.
Each app registers its kinds (devices.kinds, benchmarks.kinds); the sweep knows only this.
"""

import logging
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import models
from redis.exceptions import LockError, RedisError

from devices import enqueue
from devices.locks import board_lock

log = logging.getLogger(__name__)

# Work younger than this is left alone by the job checks: its job may not be queued yet (the
# row commits first, then its job is queued and its id stored).
JOB_GRACE = timedelta(seconds=30)
# A next try this late was not delivered: the worker holding RQ's scheduler died, and another
# takes the scheduler over only at its maintenance pass (every 10 minutes).
OVERDUE_AFTER = timedelta(seconds=60)


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
    """Lock each board (BoardBusy, holding none, if any is driven by another job)."""
    with ExitStack() as stack:
        locks = [stack.enter_context(board_lock(pk, ttl=ttl)) for pk in board_ids]
        yield Hold(locks, label)


@dataclass(frozen=True)
class Kind:
    """How the sweep treats one kind of board work.

    candidates(now): the rows whose job to ask about (unfinished, past the grace).
    end_dead(row, why): its job died; end the row (or let it go on); how many rows ended.
    queue(row): queue its job now (an overdue next try).
    backstop(now): time limits for rows whose job cannot be asked about; how many ended.
    """

    name: str
    model: type[models.Model]
    candidates: Callable[[datetime], models.QuerySet]
    end_dead: Callable[[models.Model, str], int]
    queue: Callable[[models.Model], None]
    backstop: Callable[[datetime], int] = lambda now: 0


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    KINDS[kind.name] = kind


def sweep(now: datetime) -> int:
    """End (or continue) every row whose job died; apply the time limits. A kind whose Redis
    cannot be asked is left to its time limits and the next round."""
    ended = 0
    for kind in KINDS.values():
        try:
            ended += _end_dead(kind, now)
        except RedisError as exc:
            log.warning("could not ask the job queue about unfinished %s: %s", kind.name, exc)
        ended += kind.backstop(now)
    return ended


def _end_dead(kind: Kind, now: datetime) -> int:
    ended = 0
    for row in kind.candidates(now).select_related("board"):
        if not row.job_id:
            why = "it was never queued (was Redis down?)"
        else:
            why = enqueue.why_dead(row.board.queue, row.job_id, row.board_id)
        if why:
            ended += kind.end_dead(row, why)
    return ended


def queue_overdue_tries(now: datetime) -> int:
    """Queue now the next tries of waiting work that no scheduler delivered. Should the late
    delivery still come, it finds the row running or ended and does nothing."""
    queued = 0
    try:
        for kind in KINDS.values():
            waiting = kind.model.objects.filter(state="waiting")
            for row in waiting.filter(next_try__lt=now - OVERDUE_AFTER).select_related("board"):
                # Its next try is now: the next round does not queue it again meanwhile.
                if waiting.filter(pk=row.pk).update(next_try=now):
                    kind.queue(row)
                    queued += 1
    except RedisError as exc:  # the dead-job sweep ends them once Redis is back
        log.warning("could not queue overdue next tries: %s", exc)
    if queued:
        log.warning("queued %d next tries that no scheduler delivered", queued)
    return queued
