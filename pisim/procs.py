"""Process helpers of the supervisor (host side): reaping, finding a node's PID 1."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .usbnic import PROCESS_NAME as RELAY_NAME
from .util import pid_alive


def exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def send_signal(pid: int | None, sig: int) -> None:
    if pid:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def reap_orphans(tracked: set[int]) -> None:
    """Collect exited orphans (reparented to us) that no Popen object waits for."""
    me = os.getpid()
    try:
        kids = Path(f"/proc/{me}/task/{me}/children").read_text().split()
    except OSError:
        return
    for kid in map(int, kids):
        if kid not in tracked:
            try:
                os.waitpid(kid, os.WNOHANG)
            except ChildProcessError:
                pass


def wait_child(pid: int, timeout: float = 5) -> int | None:
    """Host pid of the node's PID 1 (the child of unshare running boot.py)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return None
        for kid in kids:
            if pid_alive(int(kid), "boot.py"):
                return int(kid)
        time.sleep(0.005)
    return None


def sessions(init_pid: int) -> list[int]:
    """The node's processes but PID 1 and its USB NIC relay (which outlives kill_sshd)."""
    return [pid for pid in namespace_members(init_pid) if _comm(pid) != RELAY_NAME]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def namespace_members(init_pid: int) -> list[int]:
    """Processes in the pid namespace of init_pid, other than init itself."""
    try:
        ns = os.readlink(f"/proc/{init_pid}/ns/pid")
    except OSError:
        return []
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != init_pid:
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                    members.append(int(entry))
            except OSError:
                continue
    return members
