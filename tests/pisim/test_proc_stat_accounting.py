"""Where a node's /proc/stat takes its busy time from: its cgroup's CPU accounting, in the
kernel's formats (Documentation/admin-guide/cgroup-v2.rst cpu.stat; cgroup-v1/cpuacct.rst),
on files shaped like them (this machine's cpuacct is not mounted with cpu, so its nodes use
their processes' times: tests/pisim/test_proc_stat.py)."""

import os

import pytest

from pisim import procstat


@pytest.fixture
def group_fd(tmp_path):
    fd = os.open(tmp_path, os.O_PATH | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_a_v2_group_gives_its_usage_in_ticks_split_as_user_and_system(tmp_path, group_fd):
    (tmp_path / "cpu.stat").write_text(
        "usage_usec 2500000\nuser_usec 1800000\nsystem_usec 600000\n"
        "nr_periods 40\nnr_throttled 3\nthrottled_usec 9000\n"
    )
    assert procstat.cgroup_ticks(group_fd) == (188, 62)  # 250 ticks, 3:1


def test_a_v1_group_with_cpuacct_gives_its_usage_split_by_cpuacct_stat(tmp_path, group_fd):
    (tmp_path / "cpu.stat").write_text("nr_periods 40\nnr_throttled 3\nthrottled_time 9000\n")
    (tmp_path / "cpuacct.usage").write_text("1000000000\n")  # ns
    (tmp_path / "cpuacct.stat").write_text("user 90\nsystem 10\n")
    assert procstat.cgroup_ticks(group_fd) == (90, 10)


def test_a_v1_cpu_group_without_cpuacct_leaves_it_to_the_processes(tmp_path, group_fd):
    (tmp_path / "cpu.stat").write_text("nr_periods 40\nnr_throttled 3\nthrottled_time 9000\n")
    assert procstat.cgroup_ticks(group_fd) is None
    assert procstat.cgroup_ticks(None) is None
