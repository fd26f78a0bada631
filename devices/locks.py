"""One job drives a board at a time, across workers and machines.

The lock lives in the shared Redis and expires by itself, so a worker that dies while
holding it blocks its board for at most the lock's lifetime. Taking it never waits: a job
that finds the board busy gives its worker back and tries again later (devices.work).
"""

from contextlib import contextmanager

import django_rq
from redis.exceptions import LockError


class BoardBusy(Exception):
    pass


def _key(board_id: int) -> str:
    return f"pifarm:board-lock:{board_id}"


def is_locked(board_id: int) -> bool:
    """Does some job hold the board now (a live one renews it; a dead one's lock expires)?"""
    return bool(django_rq.get_connection("default").exists(_key(board_id)))


def holder(board_id: int) -> str:
    """The id of the job that holds the board now ("" for none, or one that did not say)."""
    held = django_rq.get_connection("default").get(_key(board_id))
    return held.decode() if held else ""


@contextmanager
def board_lock(board_id: int, *, ttl: float, job_id: str = ""):
    """job_id: the holder's RQ job, kept as the lock's token, so that the sweep can tell its
    lock from the next job's (holder); a lock taken outside a job gets a random one."""
    lock = django_rq.get_connection("default").lock(_key(board_id), timeout=ttl, blocking=False)
    if not lock.acquire(token=f"{job_id}" if job_id else None):
        raise BoardBusy("another job is driving this board right now")
    try:
        yield lock
    finally:
        try:
            lock.release()
        except LockError:  # expired while we worked: someone else may hold it now
            pass
