"""What an SSH session on a simulated Pi sees (the shared session farm; nothing is broken)."""

import subprocess

import pytest

from pisim.profiles import BOOKWORM_STUB_CONFIG_TXT

from .sshutil import out, run

pytestmark = pytest.mark.pisim


def test_pi_logs_in_with_the_key_and_with_the_password(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    assert out(node, "whoami").strip() == "pi"
    status, stdout, _ = run(node, "echo $HOME; hostname", password=True)
    assert status == 0 and stdout.split() == ["/home/pi", "pi3"]


def test_openssh_client_accepts_the_published_host_key(pisim_farm, tmp_path):
    node = pisim_farm.nodes["pi4"]
    known = tmp_path / "known_hosts"
    known.write_text(node.known_hosts_line + "\n")
    proc = subprocess.run(
        [
            "ssh",
            "-i",
            node.private_key_path,
            "-o",
            f"UserKnownHostsFile={known}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=5",
            f"{node.user}@{node.host}",
            "cat /proc/sys/kernel/hostname",
        ],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "pi4"
    keygen = subprocess.run(
        ["ssh-keygen", "-lf", "-"],
        input=node.host_key_public,
        capture_output=True,
        text=True,
        check=True,
    )
    assert keygen.stdout.split()[1] == node.host_key_fingerprint


def test_sudo_needs_no_password(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    assert out(node, "sudo -n id -u").strip() == "0"
    assert "sudo: unable to resolve" not in run(node, "sudo -n true")[2]


@pytest.mark.parametrize(
    ("name", "revision", "model"),
    [
        ("pi3", "a02082", "Raspberry Pi 3 Model B Rev 1.2"),
        ("pi4", "c03114", "Raspberry Pi 4 Model B Rev 1.4"),
    ],
)
def test_board_identity_per_profile(pisim_farm, name, revision, model):
    node = pisim_farm.nodes[name]
    cpuinfo = out(node, "cat /proc/cpuinfo")
    assert f"Revision\t: {revision}" in cpuinfo
    assert f"Serial\t\t: {node.serial}" in cpuinfo
    assert f"Model\t\t: {model}" in cpuinfo
    assert "Hardware\t: BCM2835" in cpuinfo
    raw = node.run_as_root(["cat", "/sys/firmware/devicetree/base/model"]).stdout
    assert raw == model.encode() + b"\0"
    memtotal = int(out(node, "sed -n 's/^MemTotal: *//p' /proc/meminfo").split()[0])
    assert memtotal == node.profile.memtotal_kb


def test_config_txt_lives_where_the_os_keeps_it(pisim_farm):
    pi3, pi4 = pisim_farm.nodes["pi3"], pisim_farm.nodes["pi4"]
    assert "Raspbian GNU/Linux 11 (bullseye)" in out(pi3, "cat /etc/os-release")
    assert "dtparam=audio=on" in out(pi3, "cat /boot/config.txt")
    assert run(pi3, "test -e /boot/firmware")[0] != 0
    assert "VERSION_CODENAME=bookworm" in out(pi4, "cat /etc/os-release")
    assert "arm_boost=1" in out(pi4, "cat /boot/firmware/config.txt")
    assert out(pi4, "cat /boot/config.txt") == BOOKWORM_STUB_CONFIG_TXT
    assert pi4.read_file("/boot/firmware/config.txt") == pi4.profile.config_txt.encode()


def test_boot_id_uptime_and_governor_sysfs(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq"
    files = ["/proc/sys/kernel/random/boot_id", "/proc/uptime"] + [
        f"{cpufreq}/{name}"
        for name in (
            "scaling_governor",
            "scaling_available_governors",
            "scaling_cur_freq",
            "cpuinfo_max_freq",
        )
    ]
    boot_id, uptime, gov, govs, cur, fmax = out(node, "cat " + " ".join(files)).splitlines()
    assert boot_id == node.boot_id
    assert float(uptime.split()[0]) < 3600
    assert gov == "ondemand"
    assert govs.split() == [
        "conservative",
        "ondemand",
        "userspace",
        "powersave",
        "performance",
        "schedutil",
    ]
    assert int(cur) in (600000, 1800000) and fmax == "1800000"
    assert (
        run(node, "echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")[0]
        != 0
    )  # only root may change it


def test_the_node_is_isolated_from_the_host(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    routes = out(node, "ip route")
    assert "default" not in routes and "10.213." in routes
    seen = out(node, "ls /run/pisim").split()
    assert "booted.json" in seen and "ctl.sock" in seen  # the node's own /run/pisim ...
    assert "nodes" not in seen and "meta.json" not in seen  # ... not the farm's directory
    assert run(node, "ls /home")[1].split() == ["pi"]


@pytest.mark.parametrize(("name", "mbit"), [("pi3", 100), ("pi4", 1000)])
def test_ethernet_is_shaped_in_both_directions(pisim_farm, name, mbit):
    """At the line rate less the wire's own bytes of each full frame (FCS, preamble, gap),
    which tc does not count: 98,439 kbit/s of frames on a 100 Mbit/s port."""
    node = pisim_farm.nodes[name]
    assert node.profile.eth_mbit == mbit
    rate = f"{mbit * 1000 * (14 + 1500) // (14 + 1500 + 24)}Kbit"
    inside = node.run_as_root(["tc", "qdisc", "show", "dev", "eth0"]).stdout.decode()
    outside = subprocess.run(
        ["tc", "qdisc", "show", "dev", node.info["host_veth"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"rate {rate}" in inside and f"rate {rate}" in outside
