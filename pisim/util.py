"""Small helpers shared by the host side of pisim (client, supervisor, CLI)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

# Root of all farm runtime directories; overridable for unusual hosts.
RUN_ROOT = Path(os.environ.get("PISIM_RUN_DIR", "/run/pisim"))
SUBNET_PREFIX = "10.213"  # the only addresses pisim uses (10.213.<subnet_index>.0/24)
NETNS_PREFIX = "pisim-"
SSHD = "/usr/sbin/sshd"


class PisimError(RuntimeError):
    """A simulated farm could not do what was asked."""


def write_atomic(path: Path, data: bytes | str, mode: int = 0o644) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    raw = data.encode() if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, raw)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_json(path: Path, data: dict, mode: int = 0o644) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n", mode)


def read_json(path: Path, default: dict | None = None) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        if default is None:
            raise
        return dict(default)


def run(
    cmd: list[str], check: bool = True, timeout: float = 15, **kw
) -> subprocess.CompletedProcess:
    """Run a host command (ip, tc, ...) and raise PisimError with its stderr on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, **kw)
    if check and proc.returncode != 0:
        raise PisimError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def fingerprint(public_line: str) -> str:
    """'SHA256:...' as ssh-keygen -lf prints it."""
    blob = base64.b64decode(public_line.split()[1])
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def pid_alive(pid: int | None, needle: str = "pisim") -> bool:
    """True if pid runs and its command line mentions `needle` (guards against pid reuse)."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if cmdline == b"":  # zombie
        return False
    return needle.encode() in cmdline


def kill_until_gone(pids: Callable[[], list[int]], *, pause_s: float, tries: int = 0) -> None:
    """SIGKILL what pids() lists until it lists nothing: a process may fork as it dies. tries:
    give up after that many rounds (0: never)."""
    round_ = 0
    while victims := pids():
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        round_ += 1
        if round_ == tries:
            return
        time.sleep(pause_s)


def read_line(sock: socket.socket) -> bytes:
    """One request or reply of the control channel: up to its newline, or what came before the
    other end hung up."""
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf
