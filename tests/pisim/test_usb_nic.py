"""An opt-in USB Ethernet: a relay in the node's cgroup makes the link follow the emulated clock."""

import json
import shlex
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from pisim import SMSC95XX_CYCLES_PER_FRAME, Faults, cgroup, netns, procs

from .sshutil import out, wait_for
from .test_cpu_quota import boot_with, set_governor, wait_for_quota

pytestmark = pytest.mark.pisim
USB_NIC = Faults(usb_nic_cycles=SMSC95XX_CYCLES_PER_FRAME)
IPERF_SECONDS = 2
# Best of 2: other work on the host only ever slows a run down (busy host CPUs delay the
# iperf3 server and the softirqs of the host's side; one run in ~10 lost half its rate).
RUNS = 2


@pytest.fixture(autouse=True)
def _cpu_controller():
    if cgroup.detect().mode == "none":
        pytest.skip(f"no CPU quota on this machine: {cgroup.detect().note}")


def bridge_address(farm) -> str:
    return f"10.213.{farm.subnet_index}.1"


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def iperf3_mbit(node, farm) -> float:
    """TCP from the node to an iperf3 server on the farm's bridge, as the node's user."""
    address = bridge_address(farm)
    port = str(free_port(address))
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-B", address, "-p", port],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _listening(address, int(port)), what="the iperf3 server")
        client = ["timeout", "20", "iperf3", "-c", address, "-p", port]
        report = out(node, shlex.join([*client, "-t", str(IPERF_SECONDS), "-J"]), timeout=30)
        server.wait(timeout=10)
    finally:
        server.kill()
        server.wait()
    return json.loads(report)["end"]["sum_received"]["bits_per_second"] / 1e6


def _listening(address: str, port: int) -> bool:
    return any(f"{address}:{port}" in line for line in _ss_listening())


def _ss_listening() -> list[str]:
    return subprocess.run(
        ["ss", "-Htln"], capture_output=True, text=True, timeout=10, check=True
    ).stdout.splitlines()


def mbit_at(node, farm, governor: str, mhz: int) -> float:
    set_governor(node, governor)
    wait_for_quota(node, mhz, governor)
    return max(iperf3_mbit(node, farm) for _ in range(RUNS))


def relay_pids(node) -> list[int]:
    """Host pids of the node's usbnic processes."""
    members = procs.namespace_members(node._state["init_pid"])
    return [pid for pid in members if _comm(pid) == "usbnic"]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.mark.measures
def test_with_a_usb_nic_the_link_at_arm_freq_600_is_clearly_slower_than_at_1200(
    pisim_node_factory,
):
    node = pisim_node_factory(profile="pi3b-legacy", faults=USB_NIC)
    farm = pisim_node_factory.farm
    ints = node.booted["config"]["ints"]
    slow = mbit_at(node, farm, "powersave", ints["arm_freq_min"])
    fast = mbit_at(node, farm, "performance", ints["arm_freq"])
    assert fast / slow >= 1.4, (slow, fast)
    assert fast >= 0.8 * node.profile.eth_mbit, (slow, fast)  # the line, nearly
    # The relay's CPU time is the node's: in its /proc, and in its cgroup.
    comm, seconds = out(node, "ps -C usbnic -o comm=,times=").split()
    assert comm == "usbnic" and int(seconds) >= 1
    group = Path(node.cpu_quota["cgroup"])
    assert set(relay_pids(node)) <= {int(p) for p in (group / "cgroup.procs").read_text().split()}


@pytest.mark.measures
def test_without_a_usb_nic_the_link_is_at_the_line_rate_and_no_relay_runs(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy")
    farm = pisim_node_factory.farm
    mbit = mbit_at(node, farm, "powersave", node.booted["config"]["ints"]["arm_freq_min"])
    assert mbit >= 0.9 * node.profile.eth_mbit
    assert relay_pids(node) == []
    links = node.run_as_root(["ip", "-br", "link"], check=True).stdout.decode().split()
    assert netns.USB_WIRE not in " ".join(links)


def test_the_relay_survives_kill_sshd_and_comes_back_after_a_crash_or_a_reboot(
    pisim_node_factory,
):
    node = pisim_node_factory(profile="pi3b-legacy", faults=USB_NIC, downtime=0.5)
    (first,) = relay_pids(node)
    node.kill_sshd()
    node.wait_ssh()
    assert relay_pids(node) == [first]
    procs.send_signal(first, signal.SIGKILL)
    wait_for(lambda: relay_pids(node) not in ([], [first]), what="a new relay")
    node.wait_ssh()
    assert out(node, "cat /sys/class/net/eth0/address") == out(
        node, f"cat /sys/class/net/{netns.USB_WIRE}/address"
    )
    before = node.boot_id
    node.power_cycle()
    wait_for(lambda: node.boot_id != before and node.state == "up", what="the boot")
    node.wait_ssh()
    assert len(relay_pids(node)) == 1


def test_nothing_of_a_usb_nic_is_left_after_stop(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy", faults=USB_NIC)
    farm = pisim_node_factory.farm
    (relay,) = relay_pids(node)
    namespace = node.info["netns"]
    farm.stop()
    assert not procs.exists(relay)
    assert namespace not in netns.list_netns()
    assert netns.farm_links(farm.name) == []


@pytest.mark.measures
def test_a_pi_1_b_has_its_usb_nic_by_design_and_the_classic_overclock_speeds_its_link(
    pisim_node_factory,
):
    node = pisim_node_factory(profile="pi1b-legacy-32")
    farm = pisim_node_factory.farm
    ints = node.booted["config"]["ints"]
    assert (ints["arm_freq"], ints["arm_freq_min"]) == (700, 700)  # yaml: pi1 defaults
    assert relay_pids(node)  # no fault asked for: a Pi 1 B's Ethernet is on USB
    assert out(node, "uname -m").strip() == "i686"  # 32-bit, as Raspberry Pi OS on a Pi 1
    stock = mbit_at(node, farm, "performance", 700)
    boot_with(node, node.read_file(node.profile.config_path), "arm_freq=900")
    overclocked = mbit_at(node, farm, "performance", 900)
    assert overclocked / stock >= 1.15, (stock, overclocked)
    assert overclocked <= node.profile.eth_mbit, (stock, overclocked)
