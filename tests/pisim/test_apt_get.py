"""Missing tools and the simulated apt-get: a hidden command is not found by `command -v` in
any shell, apt-get needs root, installs what it knows (for good) and refuses what it does not."""

import pytest

from pisim import Faults

from .sshutil import out, run

pytestmark = pytest.mark.pisim


def found(node, tool: str, shell: str = "sh") -> bool:
    return run(node, f"{shell} -c 'command -v {tool}'")[0] == 0


def test_a_missing_tool_is_not_found_by_any_shell_and_does_not_run(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    assert not found(node, "sysbench", "sh")
    assert not found(node, "sysbench", "bash")
    assert not found(node, "sysbench", "busybox sh")
    assert run(node, "sysbench --version")[0] != 0
    assert found(node, "openssl")  # only the named tools are hidden


def test_apt_get_needs_root(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    status, _, stderr = run(node, "apt-get install -y sysbench")
    assert status == 100
    assert "are you root?" in stderr
    assert not found(node, "sysbench")


def test_apt_get_install_uncovers_the_package_commands_for_good(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench", "fio")))
    assert "Reading package lists" in out(node, "sudo -n apt-get update")
    progress = out(node, "sudo -n apt-get install -y --no-install-recommends sysbench")
    assert "Setting up sysbench" in progress
    assert "SIMULATED" in progress
    assert found(node, "sysbench")
    assert "sysbench" in out(node, "sysbench --version")
    assert not found(node, "fio")  # another package's tool stays missing
    node.power_cycle()
    node.wait_ssh(timeout=15)
    assert found(node, "sysbench")
    assert not found(node, "fio")


def test_apt_get_refuses_a_package_it_does_not_know(pisim_node_factory):
    node = pisim_node_factory()
    status, _, stderr = run(node, "sudo -n apt-get install -y sysbench no-such-package")
    assert status == 100
    assert "E: Unable to locate package no-such-package" in stderr
