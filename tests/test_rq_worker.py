"""pifarm's RQ worker (pifarm.rq_worker): its scheduler process, killed, runs again within
seconds. RQ alone looked every 10 minutes, and busy boards' next tries waited that long."""

import os
import signal
from pathlib import Path

import pytest

from pifarm.rq_worker import WATCH_S
from tests.workers import wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def children(pid: int) -> list[int]:
    """Every child of pid, whichever of its threads started it (the watcher starts the new
    scheduler from a thread of its own)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in task.read_text().split()]
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return found


def test_a_killed_scheduler_process_is_started_again_within_seconds(start_worker):
    worker = start_worker(scheduler=True)
    [scheduler] = wait_until(lambda: children(worker.process.pid), "the scheduler process")
    os.kill(scheduler, signal.SIGKILL)
    again = wait_until(
        lambda: [pid for pid in children(worker.process.pid) if pid != scheduler] or None,
        "a new scheduler process",
        timeout=WATCH_S * 4,
    )
    assert len(again) == 1
