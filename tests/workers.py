"""Real RQ worker processes for tests that kill them or need one outside this process."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection
from rq import Worker
from rq.job import Job

ROOT = Path(__file__).resolve().parents[1]


def wait_until(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class WorkerProcess:
    """`manage.py rqworker default` on the test database and Redis: the forking worker the
    team server runs (docs/operations.md), so each job runs in a work horse of its own."""

    def __init__(self, *, scheduler: bool = False, **environment):
        """scheduler: also deliver scheduled jobs (a busy board's next try), as a team server's
        workers do; it runs in a child process of its own, beside the work horse."""
        database = connection.settings_dict["NAME"]
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{database}",
            "REDIS_URL": settings.REDIS_URL,
            **environment,
        }
        command = [sys.executable, "manage.py", "rqworker", "default"]
        if scheduler:
            command.append("--with-scheduler")
        # A session of its own: stop() ends its work horse too, which would otherwise go on
        # with its job after the test (and hold the test database open).
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)

    def horse_pid(self) -> int:
        """The work horse running the current job (the only child of a worker without a
        scheduler)."""
        pid = self.process.pid

        def child():
            try:
                return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except FileNotFoundError:
                return None

        return int(wait_until(child, "the work horse")[0])

    def kill(self) -> None:
        """SIGKILL the worker and its work horse: nothing of either runs another line."""
        horse = self.horse_pid()
        self.process.kill()
        self.process.wait(timeout=10)
        os.kill(horse, signal.SIGKILL)

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the worker and every horse of it are gone already
        self.process.wait(timeout=10)


def board_lock_expired(job: Job, board_id: int) -> None:
    """What Redis does once a dead job's board lock runs out (its TTL), done now. Until then
    the job's work horse may still be alive: killing a worker's main process orphans it."""
    key = f"pifarm:board-lock:{board_id}"
    assert job.connection.ttl(key) > 0
    job.connection.delete(key)


def worker_key_expired(job: Job) -> None:
    """What Redis does once a killed worker's last heartbeat (90 s) runs out, done now."""
    key = Worker.redis_worker_namespace_prefix + job.worker_name
    assert 0 < job.connection.ttl(key) <= 90  # the sweep knows within a minute and a half
    job.connection.delete(key)
