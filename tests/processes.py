"""manage.py in a process of its own, on a data directory of the test's."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the test run itself set up. PYTEST_XDIST_WORKER too: pifarm/settings.py would give the
# process a directory below the one it is given, as it gives each xdist process its own.
TEST_ONLY = {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "PYTEST_XDIST_WORKER"}


def inherited_environment() -> dict:
    """This process's environment without what the test run itself set up."""
    return {k: v for k, v in os.environ.items() if k not in TEST_ONLY}


def manage(data_dir, *args, stdin: str | None = None, **env) -> subprocess.CompletedProcess:
    environment = {**inherited_environment(), "PIFARM_DATA_DIR": str(data_dir), **env}
    return run_manage(environment, *args, stdin=stdin)


def run_manage(
    env: dict, *args, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """manage.py with exactly this environment, as a person runs it: its exit status and output.
    The one way tests start it (on a data directory of their own: manage)."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
