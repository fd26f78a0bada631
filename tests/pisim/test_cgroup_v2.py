"""cgroup v2, on a tree shaped like one: this machine's cpu controller is bound to v1, so the
v2 path cannot run here for real. These check what pisim writes where, in v2's formats
(the kernel's Documentation/admin-guide/cgroup-v2.rst: cgroup.subtree_control, cpu.weight,
cpu.max "$MAX $PERIOD"); test_cpu_quota.py runs whichever version a machine has."""

import json
import os

import pytest

from pisim import cgroup, nodecpu


@pytest.fixture
def v2_root(tmp_path, monkeypatch):
    """A cgroup2 mount with the cpu controller available, as its files look to pisim."""
    root = tmp_path / "unified"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("")
    mounts = [(tmp_path / "v1-cpuacct", "cgroup", ["rw", "cpuacct"]), (root, "cgroup2", ["rw"])]
    monkeypatch.setattr(cgroup, "_mounts", lambda: mounts)
    return root


def test_a_cgroup2_mount_offering_cpu_is_chosen_when_no_v1_hierarchy_has_cpu(v2_root):
    assert cgroup.detect() == cgroup.CpuHierarchy("v2", v2_root)


def test_a_cgroup2_mount_without_cpu_gives_no_quota_and_says_why(v2_root):
    (v2_root / "cgroup.controllers").write_text("hugetlb\n")  # what this machine's offers
    hierarchy = cgroup.detect()
    assert hierarchy.mode == "none" and "cpu controller" in hierarchy.note


def test_a_node_group_gets_cpu_enabled_down_its_path_and_the_parent_its_weight(v2_root):
    group = cgroup.create_node_group(cgroup.detect(), "farm1", "node1")
    assert group == v2_root / "pisim" / "farm1" / "node1" and group.is_dir()
    for ancestor in (v2_root, v2_root / "pisim", v2_root / "pisim" / "farm1"):
        assert (ancestor / "cgroup.subtree_control").read_text() == "+cpu", ancestor
    assert (v2_root / "pisim" / "cpu.weight").read_text() == "10000"  # v2's maximum


def test_the_nodes_pid_1_joins_its_group_and_sets_cpu_max_from_the_clock(v2_root, monkeypatch):
    group = cgroup.create_node_group(cgroup.detect(), "farm1", "node1")
    for name in ("cgroup.procs", "cpu.max"):  # the kernel's files exist in every group
        (group / name).write_text("")
    monkeypatch.setattr(nodecpu, "STATUS", str(v2_root / "cpu.json"))
    dir_fd = os.open(group, os.O_PATH | os.O_DIRECTORY)
    try:
        share = nodecpu.CpuShare({"mode": "v2", "cgroup": str(group)}, 4, lambda _: None, dir_fd)
        assert (group / "cgroup.procs").read_text() == "0"  # itself, before any child
        share.set_mhz(1500)
        # 4 cores at 1500 of 3000 MHz: 2 host CPUs' worth per period.
        assert (group / "cpu.max").read_text() == f"{2 * nodecpu.PERIOD_US} {nodecpu.PERIOD_US}"
        (group / "cpu.max").write_text("")  # a cgroup file takes each write whole, not a plain one
        share.set_mhz(600)
        assert (group / "cpu.max").read_text() == f"{8000} {nodecpu.PERIOD_US}"
    finally:
        os.close(dir_fd)
    status = json.loads((v2_root / "cpu.json").read_text())
    assert status["mode"] == "v2" and status["mhz"] == 600 and status["quota_us"] == 8000
    assert not (group / "cpu.cfs_quota_us").exists()  # nothing of v1's
