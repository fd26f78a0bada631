"""A CPU share per simulated Pi: one cgroup per node, with the cpu controller of v1 or v2.

Layout: <hierarchy>/pisim/<farm>/<node>. The supervisor creates a node's group when the node
powers on and removes it when the node powers off; teardown_farm() and cleanup_all() remove
what a crash left. The node's PID 1 (pisim/boot.py) joins the group before it starts anything,
so every process of the node is in it, and sets the quota from the emulated Arm clock
(simulated: see pisim/README.md).

v1: the hierarchy that holds the cpu controller (e.g. /sys/fs/cgroup/cpu), cpu.cfs_quota_us.
v2: a cgroup2 mount whose cgroup.controllers has cpu; cpu is enabled down the path through
each ancestor's cgroup.subtree_control; the node's group gets cpu.max.
Neither: nodes run unthrottled, and say why (node log, run/cpu.json, `pisim status`).
"""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .util import PisimError

PARENT = "pisim"
# The weight of the pisim parent group against the host's other work: a hundred times the
# default (v2's maximum), so that a busy host does not squeeze a node below its emulated clock
# (at ten times, 5 busy host tasks per CPU already did). The quota still caps each node: a
# node never gets more than its clock allows, and the host keeps what the quotas leave.
PARENT_WEIGHT = {"v1": ("cpu.shares", "102400"), "v2": ("cpu.weight", "10000")}
REMOVE_WAIT_S = 3.0  # killed processes leave their group as they exit


@dataclass(frozen=True)
class CpuHierarchy:
    mode: str  # "v1", "v2" or "none"
    root: Path | None = None
    note: str = ""  # why there is no quota (mode "none")


def _unescape(field: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as \\ooo."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts() -> list[tuple[Path, str, list[str]]]:
    """(mount point, file system type, super options) of this mount namespace."""
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        fstype, _source, options = after.split(" ")[:3]
        mounts.append((Path(_unescape(before.split(" ")[4])), fstype, options.split(",")))
    return mounts


def detect() -> CpuHierarchy:
    """Which cgroup version can give this machine's nodes a CPU quota, if any."""
    mounts = _mounts()
    for point, fstype, options in mounts:
        if fstype == "cgroup" and "cpu" in options:
            if (point / "cpu.cfs_quota_us").exists():
                return CpuHierarchy("v1", point)
            return CpuHierarchy("none", note="cgroup v1 cpu has no cpu.cfs_quota_us")
    for point, fstype, _ in mounts:
        if fstype == "cgroup2" and "cpu" in _words(point / "cgroup.controllers"):
            return CpuHierarchy("v2", point)
    return CpuHierarchy("none", note="no cgroup hierarchy offers the cpu controller")


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def _enable_cpu_below(group: Path) -> None:
    """v2: the cpu controller for the children of `group`."""
    if "cpu" not in _words(group / "cgroup.subtree_control"):
        (group / "cgroup.subtree_control").write_text("+cpu")


def create_node_group(hierarchy: CpuHierarchy, farm: str, node: str) -> Path:
    """The node's group, with its ancestors; raises OSError when the hierarchy refuses."""
    tries = 3
    while True:
        try:
            return _create(hierarchy, farm, node)
        except FileNotFoundError:  # the last farm's clean-up removed the empty parent meanwhile
            tries -= 1
            if not tries:
                raise


def _create(hierarchy: CpuHierarchy, farm: str, node: str) -> Path:
    v2 = hierarchy.mode == "v2"
    if v2:
        _enable_cpu_below(hierarchy.root)
    parent = hierarchy.root / PARENT
    parent.mkdir(exist_ok=True)
    weight_file, weight = PARENT_WEIGHT[hierarchy.mode]
    (parent / weight_file).write_text(weight)
    group = parent
    for name in (farm, node):
        if v2:
            _enable_cpu_below(group)
        group = group / name
        group.mkdir(exist_ok=True)
    return group


def remove_group(group: Path) -> None:
    """rmdir a group once its processes are gone (they are killed if still there)."""
    deadline = time.monotonic() + REMOVE_WAIT_S
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise PisimError(f"cannot remove cgroup {group}: {exc}") from None
        for pid in _words(group / "cgroup.procs"):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def _parent() -> Path | None:
    root = detect().root
    return root / PARENT if root else None


def farm_groups() -> list[str]:
    """Names of the farms that have a group on this machine."""
    parent = _parent()
    if parent is None or not parent.is_dir():
        return []
    return sorted(d.name for d in parent.iterdir() if d.is_dir())


def remove_farm(farm: str) -> None:
    """Remove the groups of farm `farm` (nodes first), and the pisim parent once empty."""
    parent = _parent()
    if parent is None:
        return
    farm_dir = parent / farm
    if farm_dir.is_dir():
        for group in farm_dir.iterdir():
            if group.is_dir():
                remove_group(group)
        remove_group(farm_dir)
    try:
        parent.rmdir()
    except OSError:
        pass  # other farms still have groups (or there was none)
