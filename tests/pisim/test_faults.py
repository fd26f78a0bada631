"""Fault injection: bad overclock hangs, watchdog, throttling, dying sshd, new host key,
unreachable node, a banner that comes late, a server that hangs up after its banner."""

import socket
import threading
import time

import paramiko
import pytest

from pisim import Faults

from .sshutil import client_for, connect_error, out, run, wait_for

pytestmark = pytest.mark.pisim

OVERCLOCK = b"[pi4]\narm_freq=2000\n[all]\n"


def test_a_bad_overclock_hangs_until_the_card_is_fixed(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(max_boot_arm_freq=1800), downtime=0.3)
    stock = node.read_file("/boot/firmware/config.txt")
    node.write_file("/boot/firmware/config.txt", stock + OVERCLOCK)
    run(node, "sudo reboot")
    node.wait_state("hung", timeout=5)
    assert connect_error(node, timeout=1.0) == "timeout"  # a hung board answers nothing
    assert node.booted_config["arm_freq"] == 2000
    time.sleep(1.0)  # no watchdog rescue for a normal boot
    assert node.state == "hung"
    node.write_file("/boot/firmware/config.txt", stock)  # "take the SD card out and fix it"
    node.power_cycle()
    node.wait_ssh(timeout=10)
    assert node.boot_count == 3
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=1800"


def test_the_watchdog_rescues_a_hanging_tryboot(pisim_node_factory):
    faults = Faults(max_boot_arm_freq=1800, watchdog_timeout=1.0)
    node = pisim_node_factory(faults=faults, downtime=0.3)
    stock = node.read_file("/boot/firmware/config.txt")
    node.write_file("/boot/firmware/tryboot.txt", stock + OVERCLOCK)
    run(node, "sudo reboot '0 tryboot'")
    node.wait_state("hung", timeout=5)
    assert node.booted["tryboot"] is True
    node.wait_ssh(timeout=10)  # watchdog reset, then config.txt
    assert node.boot_count == 3
    assert node.booted["tryboot"] is False
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=1800"


def test_a_throttled_node_reports_it_after_boot(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(throttled_after_boot=0x50005), downtime=0.3)
    assert out(node, "vcgencmd get_throttled").strip() == "throttled=0x50005"
    node.set_faults(Faults())
    assert out(node, "vcgencmd get_throttled").strip() == "throttled=0x50005"  # until reboot
    before = node.boot_id
    run(node, "sudo reboot")
    wait_for(lambda: node.boot_id != before, what="reboot")
    node.wait_ssh()
    assert out(node, "vcgencmd get_throttled").strip() == "throttled=0x0"


def test_sshd_dies_in_the_middle_of_a_command_and_comes_back(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(sshd_restart_delay=1.0))
    boot_id = node.boot_id
    client = client_for(node)
    _, stdout, _ = client.exec_command("echo started; sleep 30; echo finished", timeout=20)
    assert stdout.readline().strip() == "started"
    result = {}

    def finish():
        try:
            result["rest"] = stdout.read()
            result["status"] = stdout.channel.recv_exit_status()
        except Exception as exc:  # noqa: BLE001 - any error is what we expect here
            result["error"] = exc

    reader = threading.Thread(target=finish)
    reader.start()
    node.kill_sshd()
    reader.join(timeout=5)
    assert not reader.is_alive()
    assert b"finished" not in result.get("rest", b"")
    assert "error" in result or result["status"] == -1  # no exit status: connection dropped
    assert not client.get_transport().is_active()
    client.close()
    assert connect_error(node) == "refused"
    node.wait_ssh(timeout=5)
    assert out(node, "echo back").strip() == "back"
    assert node.boot_id == boot_id  # sshd restarted, not a reboot


def test_a_changed_host_key_is_what_sshd_offers(pisim_node_factory):
    node = pisim_node_factory()
    old_public, old_fp = node.host_key_public, node.host_key_fingerprint
    client = client_for(node)  # an open session survives the change
    new_public = node.change_host_key()
    assert new_public == node.host_key_public != old_public
    assert node.host_key_fingerprint != old_fp
    transport = paramiko.Transport((node.host, node.port))
    try:
        transport.start_client(timeout=5)
        offered = transport.get_remote_server_key()
        assert f"{offered.get_name()} {offered.get_base64()}" == new_public
    finally:
        transport.close()
    assert out(node, "hostname").strip() == node.name  # the pinned new key is accepted
    _, stdout, _ = client.exec_command("echo still here")
    assert stdout.read().strip() == b"still here"
    client.close()


def test_an_unreachable_node_times_out_instead_of_refusing(pisim_node_factory):
    node = pisim_node_factory()
    node.set_unreachable(True)
    started = time.monotonic()
    assert connect_error(node, timeout=1.5) == "timeout"
    assert time.monotonic() - started >= 1.4
    node.set_unreachable(False)
    node.wait_ssh(timeout=5)
    assert out(node, "echo ok").strip() == "ok"


def reboot_with(node, faults: Faults) -> float:
    """Reboot into a boot with these faults; returns when it booted (epoch seconds)."""
    node.set_faults(faults)
    before = node.boot_id
    run(node, "sudo reboot")
    wait_for(lambda: node.boot_id != before and node.state == "up", what="reboot")
    node.wait_ssh()  # TCP accepted (by sshd, or by the gate in front of it)
    return node.booted["booted_at"]


def read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


@pytest.mark.measures  # when TCP is accepted, to 2 s: a loaded host's scheduler shifts it
def test_a_delayed_banner_comes_n_seconds_after_each_boot(pisim_node_factory):
    node = pisim_node_factory(downtime=0.3)
    booted_at = reboot_with(node, Faults(banner_delay=2.0))
    with socket.create_connection((node.host, node.port), timeout=1) as sock:
        accepted = time.time()
        sock.settimeout(5)
        banner = sock.recv(256)
        spoke = time.time()
    assert accepted < booted_at + 2.0  # TCP was accepted during the silence
    assert banner.startswith(b"SSH-2.0-OpenSSH")
    assert booted_at + 1.9 <= spoke <= booted_at + 3.5
    assert out(node, "echo through the gate").strip() == "through the gate"


def test_a_node_can_hang_up_right_after_its_banner_for_n_seconds_after_boot(pisim_node_factory):
    node = pisim_node_factory(downtime=0.3)
    # 5 s: room for a loaded host to get from the boot to this connection within the fault.
    booted_at = reboot_with(node, Faults(close_after_banner=5.0))
    with socket.create_connection((node.host, node.port), timeout=1) as sock:
        sock.sendall(b"SSH-2.0-pisim-test\r\n")
        sock.settimeout(5)
        received = read_until_closed(sock)
    assert time.time() < booted_at + 5.0
    assert received.startswith(b"SSH-2.0-OpenSSH") and received.count(b"\n") == 1
    wait_for(lambda: time.time() > booted_at + 5.1, what="the end of the fault")
    assert out(node, "echo ok").strip() == "ok"
    assert "sshd_config.gated" in out(node, "ps -o args= -C sshd")
    reboot_with(node, Faults())  # a boot without the fault: sshd itself on port 22 again
    assert "sshd_config.gated" not in out(node, "ps -o args= -C sshd")
