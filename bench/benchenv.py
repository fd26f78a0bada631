"""What every bench/ script starts with: pifarm's Django on a throw-away data directory.

    import benchenv  # first: the environment must be set before Django loads its settings

SQLite and the embedded Redis in a new temporary directory, whatever the shell exports, so a
bench run never touches the demo's or a team server's data. `cleanup()` stops that Redis and
removes the directory.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA_DIR = Path(tempfile.mkdtemp(prefix="pifarm-bench-"))
os.environ["PIFARM_DATA_DIR"] = str(DATA_DIR)
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pifarm.settings")

import django  # noqa: E402 - settings must see the environment above

django.setup()


def start_workers(count: int, *options: str) -> list[subprocess.Popen]:
    """count real `manage.py rqworker default` processes on this data directory."""
    command = [sys.executable, "manage.py", "rqworker", "default", *options]
    workers = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]
    time.sleep(3)  # let every worker connect and block on the queue
    return workers


def stop_workers(workers: list[subprocess.Popen], timeout: float = 60) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=timeout)


def cleanup() -> None:
    """Stop the embedded Redis (if one started) and remove the data directory."""
    socket_path = DATA_DIR / "redis.sock"
    if socket_path.exists():
        import redis

        redis.Redis(unix_socket_path=str(socket_path)).shutdown(nosave=True)
    shutil.rmtree(DATA_DIR, ignore_errors=True)
