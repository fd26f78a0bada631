"""Reboot emulation: reboot / shutdown -r / tryboot take the node down and boot it again."""

import pytest

from .sshutil import connect_error, out, run, wait_for

pytestmark = pytest.mark.pisim


def reboot_and_wait(node, command):
    before_id, before_count = node.boot_id, node.boot_count
    status, _, stderr = run(node, command)
    assert status == 0, stderr
    # The command returned; the node goes down ~0.3 s later and refuses connections while
    # it is down (nothing listens in its namespace).
    wait_for(
        lambda: connect_error(node) == "refused",
        timeout=3,
        interval=0.02,
        what=f"{node.name} to go down after {command!r}",
    )
    node.wait_ssh(timeout=10)
    assert node.boot_id != before_id
    assert node.boot_count == before_count + 1
    assert out(node, "cat /proc/sys/kernel/random/boot_id").strip() == node.boot_id


def test_every_way_of_rebooting_boots_the_node_again(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy", downtime=0.6)
    for command in ("reboot", "sudo reboot", "shutdown -r now", "sudo shutdown -r now"):
        reboot_and_wait(node, command)
    assert node.boot_count == 5
    run(node, "sudo shutdown -h now")  # halted: nothing answers until the power is cycled
    node.wait_state("halted", timeout=3)
    assert connect_error(node, timeout=0.5) == "timeout"
    node.power_cycle()
    node.wait_ssh(timeout=10)
    assert node.boot_count == 6


def tryboot_flag(node):
    raw = node.run_as_root(
        ["cat", "/sys/firmware/devicetree/base/chosen/bootloader/tryboot"]
    ).stdout
    return int.from_bytes(raw, "big")


def test_tryboot_reads_tryboot_txt_once(pisim_node_factory):
    node = pisim_node_factory(downtime=0.5)
    config = node.read_file("/boot/firmware/config.txt").decode()
    node.write_file("/boot/firmware/tryboot.txt", config + "arm_freq=1600\n")
    assert tryboot_flag(node) == 0
    reboot_and_wait(node, "sudo reboot '0 tryboot'")
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=1600"
    assert tryboot_flag(node) == 1
    reboot_and_wait(node, "reboot")  # the flag was one-shot: config.txt again
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=1800"
    assert tryboot_flag(node) == 0
    reboot_and_wait(node, "reboot '0 tryboot'")  # plain reboot with the argument works too
    assert node.booted_config["arm_freq"] == 1600


def test_governor_is_reset_at_boot_and_persisted_settings_apply(pisim_node_factory):
    node = pisim_node_factory(downtime=0.3)
    gov = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    out(node, f"echo powersave | sudo tee {gov}")
    node.write_file("/etc/default/cpu_governor", "CPU_DEFAULT_GOVERNOR=performance\n")
    reboot_and_wait(node, "sudo reboot")
    assert out(node, f"cat {gov}").strip() == "performance"
    node.write_file("/etc/default/cpu_governor", "")
    reboot_and_wait(node, "sudo reboot")
    assert out(node, f"cat {gov}").strip() == "ondemand"
