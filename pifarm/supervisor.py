"""Keep the demo's parts running: restart what died, within a limit, and say so.

`make demo` runs workers, a health-check loop, a web server and (by default) an embedded
Redis. Killing one of them used to stop all the others. The supervisor restarts a part that
may be restarted, refuses to do so more than a few times a minute (a crash loop is a bug to
look at, not to hide), and ends the demo with the reason when a part may not be restarted.
"""

import os
import signal
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Protocol

from pifarm import embedded_redis

# A crash loop: more restarts than this within the window ends the demo.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
STOP_GRACE_S = 10.0


def listening(port: int, timeout: float) -> bool:
    """Whether something accepts TCP on 127.0.0.1:port within timeout seconds (a server that
    was just started)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


class Stopped(Exception):
    """A part died that may not (or may no longer) be restarted; the message says which."""


class Part(Protocol):
    name: str
    restart: bool  # False: its death ends the demo
    lost: str  # what a restart loses, said when it happens ("" when nothing)

    def start(self) -> None: ...
    def alive(self) -> bool: ...
    def why_down(self) -> str: ...
    def terminate(self) -> None: ...
    def reap(self) -> None: ...


class Process:
    """A child process: a worker, the health-check loop, the web server."""

    lost = ""

    def __init__(
        self, name: str, command: list[str], *, cwd: Path, log: BinaryIO, restart: bool = True
    ):
        self.name, self.command, self.cwd, self.log = name, command, cwd, log
        self.restart = restart
        self.popen: subprocess.Popen | None = None

    def start(self) -> None:
        # A session of its own, so that reap() can end what it started too: an RQ worker's
        # work horse outlives a worker killed after its grace, and would go on with its job
        # against a farm the demo has taken down.
        self.popen = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def why_down(self) -> str:
        code = self.popen.returncode if self.popen else None
        if code is None:
            return "it did not start"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def terminate(self) -> None:
        if self.alive():
            self.popen.terminate()

    def reap(self) -> None:
        """Wait STOP_GRACE_S for it to end, else KILL it and all it started in its session (a
        work horse: its run is then failed by the next health check's sweep, saying why)."""
        if self.popen is None:
            return
        try:
            self.popen.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            # Still unreaped, so its id cannot be anyone else's group: safe to KILL by it.
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()


class EmbeddedRedis:
    """The Redis pifarm starts by itself. It keeps nothing on disk, so a restart is empty."""

    name = "the embedded Redis"
    restart = True
    lost = (
        "the jobs it held are lost (queued, scheduled or running); "
        "the health check ends their records"
    )
    # Workers must be restarted after it: their scheduler died with the connection, and
    # the new server knows nothing of them.

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir

    def start(self) -> None:
        embedded_redis.ensure_running(self.data_dir)

    def alive(self) -> bool:
        return embedded_redis.is_running(self.data_dir)

    def why_down(self) -> str:
        return "its process is gone"

    def terminate(self) -> None:
        """Stopped in `reap`, after the workers, which still talk to it as they stop."""

    def reap(self) -> None:
        embedded_redis.stop(self.data_dir)


class Supervisor:
    """Start parts, then call `poll()` now and then: it restarts the dead, or raises Stopped."""

    def __init__(
        self,
        say: Callable[[str], None],
        *,
        max_restarts: int = MAX_RESTARTS,
        window_s: float = RESTART_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.say, self.max_restarts, self.window_s, self.clock = say, max_restarts, window_s, clock
        self.parts: list[Part] = []
        self._restarts: dict[str, deque[float]] = {}
        self._followers: dict[str, list[Part]] = {}

    def add(self, part: Part, *, restart_after: Part | None = None) -> Part:
        """Start `part`; `restart_after`: restart it too whenever that part was restarted."""
        self.parts.append(part)
        self._restarts[part.name] = deque()
        self._followers[part.name] = []
        if restart_after is not None:
            self._followers[restart_after.name].append(part)
        part.start()
        return part

    def poll(self) -> None:
        for part in self.parts:
            if not part.alive():
                self._revive(part)

    def stop(self) -> None:
        """Ask every part to stop at once, then wait for each (the last added first)."""
        for part in reversed(self.parts):
            part.terminate()
        for part in reversed(self.parts):
            part.reap()

    def _revive(self, part: Part) -> None:
        why = part.why_down()
        if not part.restart:
            raise Stopped(f"{part.name} stopped ({why}); the demo cannot go on without it")
        recent = self._restarts[part.name]
        now = self.clock()
        while recent and now - recent[0] > self.window_s:
            recent.popleft()
        if len(recent) >= self.max_restarts:
            raise Stopped(
                f"{part.name} stopped ({why}) after {len(recent)} restarts within "
                f"{self.window_s:g} s: it keeps crashing, so the demo stops instead"
            )
        recent.append(now)
        lost = f"; {part.lost}" if part.lost else ""
        self.say(f"{part.name} stopped ({why}); restarting it{lost}")
        try:
            part.start()
        except (OSError, RuntimeError, subprocess.SubprocessError) as error:
            # The next poll tries again, within the same limit.
            self.say(f"{part.name} did not restart: {error}")
            return
        self._restart_followers(part)

    def _restart_followers(self, part: Part) -> None:
        """Asked to stop, they finish what they do; the next polls start them again."""
        followers = self._followers[part.name]
        if followers:
            names = ", ".join(follower.name for follower in followers)
            self.say(f"asking {names} to stop after the current job and start again with it")
        for follower in followers:
            follower.terminate()
