"""The node's own /proc/stat and /proc/loadavg, written by its PID 1 (pisim/boot.py).

The node's /proc is its pid namespace's, but the kernel's stat and loadavg in it are the
host's: every other node's work and the host's would show as the board's. PID 1 bind-mounts
files shaped like the kernel's over them and rewrites them in place every turn of its loop
(about every 50 ms, as the kernel's move on), from the last scan of the node's processes (the
one it makes every CLOCK_SAMPLE_S for the emulated clock anyway):
- busy: the node's CPU time, real host CPU time like /proc/<pid>/stat's utime and stime, so
  that telemetry can subtract the one from the other: the cgroup's accounting where the node
  has one (v2 cpu.stat, v1 cpuacct.usage when cpuacct is mounted with cpu), else the sum over
  the node's processes of their own and their reaped children's time (PID 1's included, which
  holds the orphans'), kept monotonic.
- idle: the node's capacity since boot less busy. SIMULATED: under a CPU quota (pisim/nodecpu)
  the node's cores get ncpu x min(MHz, REFERENCE_MHZ)/REFERENCE_MHZ of a host CPU, so that
  is what its cores could have done; counted the kernel's way, idle is that CPU time less
  busy. Its capacity is integrated over time as the clock (and so the quota) changes. A
  saturated node then reads 100 % busy as a saturated Pi does, and a process's ticks over the
  /proc/stat total's per core are its share of a simulated core (benchmarks.telemetry reads
  them so). Without a quota the capacity is ncpu host CPUs: ncpu x the time since boot.
  Idle never goes down: busy can run ahead of the capacity counted so far (the quota's
  slack; the processes' times, read every CLOCK_SAMPLE_S, arrive in steps).
- load: the kernel's exponential averages over 1, 5 and 15 minutes of the node's runnable
  (R) and uninterruptible (D) processes, updated every LOAD_INTERVAL_S.
Standard library only: boot.py imports it from its own directory.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

USER_HZ = 100  # the unit of /proc/stat and of /proc/<pid>/stat's times
LOAD_INTERVAL_S = 1.0  # the kernel samples every 5 s; a second follows a short trial better
LOAD_WINDOWS_S = (60, 300, 900)
_EMULATOR_DIRS = (b"/usr/local/bin/", b"/usr/local/sbin/")


@dataclass
class Scan:
    """One pass over the node's /proc (ours is the node's), in USER_HZ ticks."""

    clock_ticks: int = 0  # utime+stime of the node's work, for the emulated clock (boot.py)
    user: int = 0  # utime+cutime of every process, PID 1 included
    system: int = 0  # stime+cstime, likewise
    running: int = 0  # in state R, PID 1 (running this scan) left out
    blocked: int = 0  # in state D
    total: int = 0
    last_pid: int = 0


def scan() -> Scan:
    """The node's processes. clock_ticks leaves out PID 1 and pisim's emulators: a Python
    vcgencmd costs far more than the small C program it stands for, and asking for the clock
    must not raise it (their CPU time still counts against the quota, and as busy time)."""
    result = Scan()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            utime, stime, cutime, cstime = map(int, fields[11:15])
            emulator = entry != "1" and _is_emulator(entry)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        result.user += utime + cutime
        result.system += stime + cstime
        result.total += 1
        result.last_pid = max(result.last_pid, int(entry))
        if entry == "1":
            continue
        result.running += fields[0] == b"R"
        result.blocked += fields[0] == b"D"
        if not emulator:
            result.clock_ticks += utime + stime
    return result


def _is_emulator(pid: str) -> bool:
    """pisim.nodefs installs the emulators in /usr/local/{bin,sbin}: `#!python3 -IS` scripts,
    and vcgencmd's `#!/bin/sh` front."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    script = argv[2:3] if argv[1:2] == [b"-IS"] else argv[1:2]
    return bool(script) and script[0].startswith(_EMULATOR_DIRS)


def _keyed(dir_fd: int, name: str) -> dict[str, int]:
    """A cgroup file of "key value" lines ({} when the group has no such file)."""
    try:
        fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
    except OSError:
        return {}
    try:
        text = os.read(fd, 4096).decode()
    finally:
        os.close(fd)
    pairs = (line.split() for line in text.splitlines())
    return {words[0]: int(words[1]) for words in pairs if len(words) == 2 and words[1].isdigit()}


def _split(seconds: float, user_weight: int, system_weight: int) -> tuple[int, int]:
    """(user, system) ticks of seconds of CPU time, in the ratio the group's counters give."""
    ticks = round(seconds * USER_HZ)
    weights = user_weight + system_weight
    user = round(ticks * user_weight / weights) if weights else ticks
    return user, ticks - user


def cgroup_ticks(dir_fd: int | None) -> tuple[int, int] | None:
    """(user, system) ticks of the node's cgroup, or None where the group does not account
    CPU time (v1 with cpuacct mounted apart from cpu)."""
    if dir_fd is None:
        return None
    v2 = _keyed(dir_fd, "cpu.stat")
    if "usage_usec" in v2:
        return _split(v2["usage_usec"] / 1e6, v2.get("user_usec", 0), v2.get("system_usec", 0))
    usage = _keyed(dir_fd, "cpuacct.stat")  # user and system, in USER_HZ
    try:
        fd = os.open("cpuacct.usage", os.O_RDONLY, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        ns = int(os.read(fd, 64))
    finally:
        os.close(fd)
    return _split(ns / 1e9, usage.get("user", 0), usage.get("system", 0))


def _rewrite(fd: int, text: str) -> None:
    """In place: the file is bind-mounted, a new one would not be."""
    data = text.encode()
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def _even(ticks: int, ncpu: int) -> list[int]:
    """ticks spread over ncpu cores, the remainder on the first ones: they add up."""
    share, rest = divmod(ticks, ncpu)
    return [share + (cpu < rest) for cpu in range(ncpu)]


class NodeStat:
    """The node's /proc/stat and /proc/loadavg (bind-mounted by setup_mounts)."""

    def __init__(
        self,
        ncpu: int,
        booted_at: float,
        cgroup_fd: int | None,
        host_cpus: Callable[[], float],
        log,
    ):
        self.ncpu = ncpu
        self.host_cpus = host_cpus  # what the node's cores may use now (nodecpu.CpuShare)
        self.booted_at = booted_at  # time.monotonic() of the boot, as /proc/uptime counts
        self.btime = round(time.time() - (time.monotonic() - booted_at))
        self.cgroup_fd = cgroup_fd if cgroup_ticks(cgroup_fd) is not None else None
        log(
            "/proc/stat busy time: "
            + ("the cgroup's accounting" if self.cgroup_fd is not None else "the processes' times")
        )
        self.user = self.system = 0
        # Host CPU seconds the node could have used since boot, and when last counted.
        self.capacity_s, self.capacity_at = 0.0, booted_at
        self.idle = 0
        self.load = [0.0] * len(LOAD_WINDOWS_S)
        self.load_at = time.monotonic()
        self.runnable: list[int] = []  # R and D counts of the scans since the last load update
        self.stat_fd = os.open("/proc/stat", os.O_RDWR)
        self.loadavg_fd = os.open("/proc/loadavg", os.O_RDWR)

    def refresh(self, processes: Scan) -> None:
        now = time.monotonic()
        # Kept monotonic: a process reaped between our reads of it and of its parent is
        # missing from one scan.
        user, system = cgroup_ticks(self.cgroup_fd) or (processes.user, processes.system)
        self.user, self.system = max(self.user, user), max(self.system, system)
        self.capacity_s += self.host_cpus() * (now - self.capacity_at)
        self.capacity_at = now
        capacity = round(self.capacity_s * USER_HZ)
        self.idle = max(self.idle, capacity - self.user - self.system)
        self.runnable.append(processes.running + processes.blocked)
        if now - self.load_at >= LOAD_INTERVAL_S:
            self.update_load(now)
        _rewrite(self.stat_fd, self.render_stat(processes, now))
        _rewrite(self.loadavg_fd, self.render_loadavg(processes))

    def update_load(self, now: float) -> None:
        """The kernel's exponential decay, with the mean runnable count over the interval."""
        active = sum(self.runnable) / len(self.runnable)
        for index, window in enumerate(LOAD_WINDOWS_S):
            decay = math.exp(-(now - self.load_at) / window)
            self.load[index] = self.load[index] * decay + active * (1 - decay)
        self.load_at, self.runnable = now, []

    def render_stat(self, processes: Scan, now: float) -> str:
        elapsed = round((now - self.booted_at) * USER_HZ)  # ticks of one core since boot
        # user nice system idle iowait irq softirq steal guest guest_nice
        per_cpu = (_even(ticks, self.ncpu) for ticks in (self.user, self.system, self.idle))
        cores = zip(*per_cpu, strict=True)
        lines = [f"cpu  {self.user} 0 {self.system} {self.idle} 0 0 0 0 0 0"]
        lines += [f"cpu{n} {u} 0 {s} {i} 0 0 0 0 0 0" for n, (u, s, i) in enumerate(cores)]
        timer = self.ncpu * elapsed  # a timer interrupt per tick and core, nothing else counted
        lines += [
            f"intr {timer}",
            f"ctxt {timer + 10 * processes.last_pid}",
            f"btime {self.btime}",
            f"processes {processes.last_pid}",  # pids of a new namespace count from 1
            f"procs_running {max(1, processes.running)}",  # the reader runs
            f"procs_blocked {processes.blocked}",
            f"softirq {timer} 0 {timer} 0 0 0 0 0 0 0 0",  # total, hi, timer, net_tx, ... rcu
        ]
        return "\n".join(lines) + "\n"

    def render_loadavg(self, processes: Scan) -> str:
        averages = " ".join(f"{load:.2f}" for load in self.load)
        running = max(1, processes.running)  # the reader runs
        return f"{averages} {running}/{processes.total} {processes.last_pid}\n"
