"""The boot log of a simulated Pi's PID 1 and its helpers: node/log/node.log once open.

Standard library only: pisim/boot.py runs as a script and imports it from this directory.
"""

import os
import time

_log_fd = 2


def open_log(path) -> int:
    """From now on, log to path (appended); the file descriptor, for children's output."""
    global _log_fd
    _log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    return _log_fd


def log_fd() -> int:
    return _log_fd


def log(msg: str) -> None:
    os.write(_log_fd, f"{time.strftime('%H:%M:%S')} boot: {msg}\n".encode())
