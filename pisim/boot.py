"""PID 1 of a simulated Pi: sets up the node's mount namespace, then runs and watches sshd.

Started by the supervisor as
    ip netns exec pisim-<farm>-<node> unshare --pid --fork --kill-child --mount --uts
        --propagation private --mount-proc <python> -I pisim/boot.py <nodedir> [<cgroup fd>]
Killing that unshare process powers the node off: every process of the node dies with us.

Signals from the supervisor: SIGUSR1 = kill sshd and every session now, keep sshd down;
SIGUSR2 = start sshd again; SIGHUP = restart the sshd listener (new host key).
With a banner fault (pisim.faults) port 22 is SshGate (pisim/sshgate.py), a relay in front of
sshd on loopback. The mounts: pisim/nodemounts.py; the boot log: pisim/nodelog.py.
PID 1 joins the node's cgroup first (pisim/nodecpu.py) and sets its CPU quota from the
emulated Arm clock, which it re-evaluates every CLOCK_SAMPLE_S from the governor and the load;
the same scan of the node's processes rewrites the node's own /proc/stat and /proc/loadavg
(pisim/procstat.py), as /proc/uptime is rewritten every loop turn.
A node with a USB NIC gets its eth0 from a relay (pisim/usbnic.py) that PID 1 starts before
sshd and restarts when it dies; killing "every process" for SIGUSR1 spares it (it is the
board's Ethernet, not a session). A 32-bit node's sshd runs chrooted into the i386 root of
pisim.rootfs, where PID 1 mounts the node's own files (setup_userland_root).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))  # python -I leaves our directory out
import nodecpu  # noqa: E402 - standard library only, from this directory
import nodelog  # noqa: E402 - likewise
import procstat  # noqa: E402 - likewise
import usbnic  # noqa: E402 - likewise
from nodelog import log  # noqa: E402 - likewise
from nodemounts import (  # noqa: E402 - likewise
    NODE_PATH,
    setup_mounts,
    show_line_rate,
    userland_argv,
    write,
)
from sshgate import GATED_SSHD_CONFIG, SSHD_CONFIG, SshGate  # noqa: E402 - likewise
from util import kill_until_gone  # noqa: E402 - likewise

SSHD = "/usr/sbin/sshd"


# How often the emulated clock (and with it the CPU quota) follows the load: often enough that
# a job is not held at arm_freq_min for long, like ondemand's own sampling.
CLOCK_SAMPLE_S = 0.2


# ondemand's up_threshold: busier than this, the cores run at arm_freq. Half of what the quota
# allows tells a busy core (measured ~1.0) from logins and probes (up to ~0.4 of a sample).
ONDEMAND_BUSY_LOAD = 0.5


POLICY = "/sys/devices/system/cpu/cpufreq/policy0"  # one cpufreq policy for all cores
USBNIC_READY_WAIT_S = 10.0
USBNIC_RESTART_DELAY_S = 1.0  # a relay that cannot start (no /dev/net/tun?) is not respawned hot


def _kill_all_but(keep: int | None) -> None:
    """Every process of the node but PID 1 and keep (the USB NIC's relay)."""
    kill_until_gone(lambda: [pid for pid in _living_pids() if pid not in (1, keep)], pause_s=0.01)


def _living_pids() -> list[int]:
    pids = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # not a process, or gone meanwhile
        if state not in (b"Z", b"X"):
            pids.append(int(entry))
    return pids


class UsbNic:
    """The node's USB Ethernet relay (pisim/usbnic.py), a child of PID 1 in the node's cgroup."""

    def __init__(self, usb_nic: dict, booted: dict):
        self.booted = booted
        self.address = usb_nic["address"]
        self.cost_ns = nodecpu.frame_cost_ns(usb_nic["cycles"], booted["ncpu"])
        self.pid: int | None = None
        self.down_since = 0.0

    def exited(self, status: int) -> None:
        log(f"usbnic relay exited (status {status}): eth0 is gone until it is back")
        self.pid = None
        self.down_since = time.monotonic()

    def restart_due(self, now: float) -> bool:
        return self.pid is None and now - self.down_since > USBNIC_RESTART_DELAY_S

    def start(self) -> None:
        """Returns once eth0 has the node's address (sshd listens on it), or after a wait."""
        ready_r, ready_w = os.pipe()
        argv = [usbnic.WIRE, usbnic.TAP, self.address, str(self.cost_ns)]
        # A fork, not a new interpreter: the node's /tmp is a tmpfs of its own, so the
        # project's interpreter may not be reachable from here (a checkout under /tmp).
        self.pid = os.fork()
        if self.pid == 0:
            status = 1
            try:
                for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)  # PID 1's own, not the relay's
                os.close(ready_r)
                os.dup2(ready_w, 1)
                os.dup2(nodelog.log_fd(), 2)
                os.environ.update(PATH="/usr/sbin:/usr/bin:/sbin:/bin", LANG="C.UTF-8")
                status = usbnic.main(argv)
            except BaseException as exc:  # noqa: BLE001 - say why in the node's log, then die
                os.write(2, f"usbnic relay failed: {exc!r}\n".encode())
            finally:
                os._exit(status)
        os.close(ready_w)
        try:
            ready, _, _ = select.select([ready_r], [], [], USBNIC_READY_WAIT_S)
            said = os.read(ready_r, 64) if ready else b""
        finally:
            os.close(ready_r)
        log(
            f"usbnic relay (pid {self.pid}, {self.cost_ns} ns of host CPU a frame): "
            + ("eth0 ready" if said.startswith(b"ready") else "eth0 NOT ready")
        )
        if said.startswith(b"ready"):
            try:
                show_line_rate(self.booted)  # a new TAP each start: a new sysfs file
            except OSError as exc:
                log(f"eth0's speed not shown: {exc}")


class Init:
    def __init__(self, booted: dict, cpu: nodecpu.CpuShare):
        self.booted = booted
        self.cpu = cpu
        usb_nic = booted.get("usb_nic")
        self.usb_nic = UsbNic(usb_nic, booted) if usb_nic else None
        self.sshd_pid: int | None = None
        self.sshd_config = SSHD_CONFIG
        self.sshd_down_since = 0.0
        self.hold = False
        self.generation = 0
        self.pending: list[str] = []
        ints = booted["config"]["ints"]
        self.fmax, self.fmin = ints["arm_freq"], ints["arm_freq_min"]
        self.temp = 0.0
        self.booted_at = time.monotonic()
        slower_after_s = booted.get("slower_after_s")
        self.slower_at = None if slower_after_s is None else self.booted_at + slower_after_s
        self.uptime_fd = os.open("/proc/uptime", os.O_RDWR)  # our bind-mounted file
        # The cgroup's CPU accounting is the node's only if PID 1 joined it (a quota is set).
        cgroup_fd = cpu.dir_fd if cpu.throttled else None
        self.stat = procstat.NodeStat(booted["ncpu"], self.booted_at, cgroup_fd, cpu.host_cpus, log)
        processes = procstat.scan()
        self.stat.refresh(processes)  # before anything of the node's can read it
        self.last_ticks = processes.clock_ticks
        self.last_sample = time.monotonic()

    def on_signal(self, signum, _frame) -> None:
        if signum == signal.SIGUSR1:
            # Takes effect now, inside the handler: "sshd dies in the middle of a command".
            self.hold = True
            if self.usb_nic:
                _kill_all_but(self.usb_nic.pid)
            else:
                os.kill(-1, signal.SIGKILL)  # from PID 1: every other process of the namespace
            log("sshd and all sessions killed")
        else:
            self.pending.append({signal.SIGUSR2: "release", signal.SIGHUP: "restart"}[signum])

    def status(self) -> None:
        data = {"generation": self.generation, "pid": self.sshd_pid, "held": self.hold}
        tmp = "/run/pisim/.sshd.json.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, "/run/pisim/sshd.json")

    def start_sshd(self) -> None:
        argv = userland_argv(self.booted, [SSHD, "-D", "-e", "-f", self.sshd_config])
        self.sshd_pid = os.posix_spawn(
            argv[0],
            argv,
            {
                "PATH": NODE_PATH,
                "LANG": "C.UTF-8",
            },
            file_actions=[
                (os.POSIX_SPAWN_DUP2, nodelog.log_fd(), 1),
                (os.POSIX_SPAWN_DUP2, nodelog.log_fd(), 2),
            ],
            setsid=True,
        )
        self.generation += 1
        log(f"sshd started (pid {self.sshd_pid}, generation {self.generation})")
        self.status()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.sshd_pid:
                log(f"sshd exited (status {status})")
                self.sshd_pid = None
                self.sshd_down_since = time.monotonic()
                self.status()
            elif self.usb_nic and pid == self.usb_nic.pid:
                self.usb_nic.exited(status)

    def handle(self, what: str) -> None:
        if what == "release":
            self.hold = False
            if self.sshd_pid is None:
                self.start_sshd()
        elif what == "restart" and not self.hold:
            if self.sshd_pid:
                os.kill(self.sshd_pid, signal.SIGTERM)
                os.waitpid(self.sshd_pid, 0)
                self.sshd_pid = None
            self.start_sshd()
        self.status()

    def refresh_sysfs(self, processes: procstat.Scan) -> None:
        """Simulated clock, CPU quota and SoC temperature from governor and node load."""
        now = time.monotonic()
        ticks = processes.clock_ticks
        elapsed = max(now - self.last_sample, 0.01)
        # Load as the Pi sees it: of the CPU time its cores could have had at their clock.
        used = max(0, ticks - self.last_ticks) / (elapsed * 100)
        load = used / self.cpu.host_cpus()
        self.last_ticks, self.last_sample = ticks, now
        mhz = self.arm_mhz(load)
        if self.slower_at is not None and now >= self.slower_at:
            share = float(self.booted.get("slower_share", 0.8))
            self.cpu.slow_down(share)
            self.slower_at = None
            log(f"fault slower_after_s: the node gets {share:.0%} of its CPU quota from now on")
        self.cpu.set_mhz(mhz)  # the quota first: whoever reads the clock sees its effect
        write(f"{POLICY}/scaling_cur_freq", f"{mhz * 1000}\n")
        ints = self.booted["config"]["ints"]
        target = 38 + 6 * mhz / 1000 + 14 * min(load, 1.0) + 0.5 * ints.get("over_voltage", 0)
        smoothing = 1 - 0.8**elapsed  # the SoC warms and cools over seconds
        self.temp = target if not self.temp else self.temp + (target - self.temp) * smoothing
        write("/sys/class/thermal/thermal_zone0/temp", f"{int(self.temp * 1000)}\n")

    def arm_mhz(self, load: float) -> int:
        """yaml: overclocking.general: busy cores at arm_freq, idle ones at arm_freq_min."""
        try:
            with open(f"{POLICY}/scaling_governor") as f:
                governor = f.read().strip()
        except OSError:
            governor = "ondemand"
        if governor == "performance" or self.booted["config"]["ints"].get("force_turbo"):
            return self.fmax
        if governor in ("powersave", "userspace"):
            return self.fmin
        return self.fmax if load > ONDEMAND_BUSY_LOAD else self.fmin

    def refresh_uptime(self) -> None:
        """/proc/uptime counts from this simulated boot (rewritten in place: bind-mounted)."""
        up = time.monotonic() - self.booted_at
        data = f"{up:.2f} {up * self.booted['ncpu'] * 0.9:.2f}\n".encode()
        os.pwrite(self.uptime_fd, data, 0)
        os.ftruncate(self.uptime_fd, len(data))

    def loop(self) -> None:
        next_refresh = 0.0
        restart_delay = float(self.booted.get("sshd_restart_delay", 1.0))
        while True:
            self.reap()
            while self.pending:
                self.handle(self.pending.pop(0))
            now = time.monotonic()
            if (
                self.sshd_pid is None
                and not self.hold
                and now - self.sshd_down_since > (restart_delay if self.generation else 0)
            ):
                self.start_sshd()
            if self.usb_nic and self.usb_nic.restart_due(now):
                self.usb_nic.start()
            self.refresh_uptime()
            if now >= next_refresh:
                processes = procstat.scan()  # one pass over /proc for the clock and /proc/stat
                self.refresh_sysfs(processes)
                next_refresh = now + CLOCK_SAMPLE_S
            # Every turn, as the kernel's counters move on between two scans: a reading taken
            # a tenth of a second after another (a short trial's telemetry) sees time pass.
            self.stat.refresh(processes)
            time.sleep(0.05)


def read_cpu_info(node: Path) -> dict:
    """What the supervisor made of this boot's cgroup (pisim.cgroup)."""
    try:
        return json.loads((node / "run" / "cpu.json").read_text())
    except (OSError, ValueError) as exc:
        return {"mode": "none", "note": f"no cgroup from the supervisor ({exc})"}


def main(argv: list[str]) -> int:
    node = Path(argv[0])
    nodelog.open_log(node / "log" / "node.log")
    booted = json.loads((node / "run" / "booted.json").read_text())
    cgroup_fd = int(argv[1]) if len(argv) > 1 else None
    cpu = nodecpu.CpuShare(read_cpu_info(node), booted["ncpu"], log, cgroup_fd)
    try:
        hostname = (node / "proc" / "hostname").read_bytes()  # before /run is covered
        setup_mounts(node, booted)
        socket.sethostname(hostname)
    except Exception as exc:  # noqa: BLE001 - log why the node failed to boot, then die
        log(f"boot failed: {exc!r}")
        return 1
    os.chdir("/")
    init = Init(booted, cpu)
    if init.usb_nic:
        init.usb_nic.start()  # eth0 and its address first: sshd and SshGate listen on it
    if booted.get("banner_delay") or booted.get("close_after_banner"):
        # "After the boot": from the firmware's boot that booted.json records, as the node's
        # users see it (node.booted), not from when this PID 1 got to run on a loaded host.
        since_boot = max(0.0, time.time() - booted["booted_at"])
        booted_at = time.monotonic() - since_boot
        gate = SshGate(booted_at, booted["banner_delay"], booted["close_after_banner"])
        gate.start()
        init.sshd_config = GATED_SSHD_CONFIG
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
        signal.signal(sig, init.on_signal)
    log(f"booted (boot_count {booted['boot_count']}, tryboot {booted['tryboot']})")
    init.loop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
