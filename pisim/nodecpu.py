"""A simulated Pi's CPU share, seen from its PID 1: a quota that follows the emulated Arm clock.

SIMULATED: one Pi core at X MHz gets X / REFERENCE_MHZ of one host CPU, and the node's quota is
its number of CPUs times that, so a CPU-bound job runs in proportion to the booted clock.
The supervisor (pisim.cgroup) created the node's cgroup, described it in run/cpu.json and hands
PID 1 an O_PATH descriptor of it (`ip netns exec` mounts a sysfs of its own, without
/sys/fs/cgroup). PID 1 joins the group before starting anything, sets the quota whenever the
clock changes and keeps /run/pisim/cpu.json current. Standard library only: pisim/boot.py
imports it from its own directory (it runs with python -I, outside the pisim package).
"""

import json
import os

# The fastest Arm clock a profile reports: a Pi 5's measure_clock stops at 3000 MHz (yaml:
# arm_freq.reported_limits.pi5), a Pi 3 tops out at 1600 (PLL) and a Pi 4 fails to boot above
# ~2500. So a core at 3000 MHz gets a whole host CPU, and no clock gets more than that.
REFERENCE_MHZ = 3000
# A short period spreads the throttling evenly: with the kernel's default 100 ms a sub-second
# run could finish inside the quota of a single period, at full host speed.
PERIOD_US = 10_000
MIN_QUOTA_US = 1000  # the kernel refuses less (v1 and v2)
STATUS = "/run/pisim/cpu.json"


def quota_us(mhz: int, ncpu: int) -> int:
    """CPU time per PERIOD_US for ncpu Pi cores at mhz (simulated)."""
    share = min(mhz, REFERENCE_MHZ) / REFERENCE_MHZ
    return max(MIN_QUOTA_US, round(ncpu * share * PERIOD_US))


def frame_cost_ns(cycles: int, ncpu: int) -> int:
    """Host CPU time a USB NIC's relay spends per frame (pisim/usbnic.py) for `cycles` Pi
    cycles. A Pi core at X MHz takes cycles/X us, and gets X/REFERENCE_MHZ of a host CPU:
    cycles/REFERENCE_MHZ us of host CPU, whatever the clock (the quota does the rest). Times
    ncpu: the one relay thread may use the whole node's quota, ncpu cores' worth, while a
    Pi's driver runs on one core."""
    return round(ncpu * cycles * 1000 / REFERENCE_MHZ)


def _write(dir_fd: int, name: str, value: str) -> None:
    fd = os.open(name, os.O_WRONLY, dir_fd=dir_fd)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


class CpuShare:
    """The node's cgroup quota (mode v1 or v2), or nothing at all (mode none: unthrottled)."""

    def __init__(self, info: dict, ncpu: int, log, dir_fd: int | None):
        self.info = dict(info, reference_mhz=REFERENCE_MHZ)
        self.ncpu = ncpu
        self.log = log
        self.dir_fd = dir_fd
        self.mhz: int | None = None
        self.share = 1.0  # of the quota the clock gives (Faults.slower_share once slowed)
        if self.throttled and dir_fd is None:
            self.give_up("no descriptor of the node's cgroup from the supervisor")
        elif self.throttled:
            try:
                os.set_inheritable(dir_fd, False)  # ours: sshd and sessions must not get it
                _write(dir_fd, "cgroup.procs", "0")  # before any child: they inherit the group
                if info["mode"] == "v1":
                    _write(dir_fd, "cpu.cfs_period_us", str(PERIOD_US))
            except OSError as exc:
                self.give_up(f"cannot join {self.group}: {exc}")
        self.log(self.describe())

    @property
    def throttled(self) -> bool:
        return self.info.get("mode") in ("v1", "v2")

    @property
    def group(self) -> str:
        return self.info["cgroup"]

    def describe(self) -> str:
        if not self.throttled:
            note = self.info.get("note")
            return f"no CPU quota ({note}): unthrottled, the simulated clock changes no speed"
        return (
            f"CPU quota ({self.info['mode']}, {self.group}): simulated, a core at X MHz "
            f"gets X/{REFERENCE_MHZ} of a host CPU"
        )

    def give_up(self, note: str) -> None:
        self.info = {"mode": "none", "note": note, "reference_mhz": REFERENCE_MHZ}

    def host_cpus(self) -> float:
        """Host CPUs the node could use since the last clock change."""
        if self.throttled and "quota_us" in self.info:
            return self.info["quota_us"] / PERIOD_US
        return float(self.ncpu)

    def slow_down(self, share: float) -> None:
        """From now on only share of the quota each clock gives (Faults.slower_after_s)."""
        self.share = share
        self.info["share"] = share
        mhz, self.mhz = self.mhz, None
        if mhz is not None:
            self.set_mhz(mhz)

    def set_mhz(self, mhz: int) -> None:
        """The quota for this clock first, then the status: a reader sees it in effect."""
        if mhz == self.mhz:
            return
        self.mhz = mhz
        if self.throttled:
            quota = max(MIN_QUOTA_US, round(quota_us(mhz, self.ncpu) * self.share))
            try:
                if self.info["mode"] == "v1":
                    _write(self.dir_fd, "cpu.cfs_quota_us", str(quota))
                else:
                    _write(self.dir_fd, "cpu.max", f"{quota} {PERIOD_US}")
                self.info.update(quota_us=quota, period_us=PERIOD_US)
            except OSError as exc:
                self.give_up(f"cannot set the quota in {self.group}: {exc}")
        self.info["mhz"] = mhz
        tmp = STATUS + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.info, f)
        os.replace(tmp, STATUS)
