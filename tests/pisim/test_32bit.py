"""Simulated Pis whose userland is really 32-bit: they run Debian i386 binaries (pisim.rootfs).

pi4b-bookworm-32 is Raspberry Pi OS 32-bit on a Pi 4: the host's 64-bit kernel, a 32-bit
userland. pi3b-legacy-32 is 32-bit through and through: `uname -m` says i686 in every session.
"""

import hashlib
import os
import re
from pathlib import Path

import pytest

from benchmarks.catalog import cpu
from devices import tasks
from devices.models import BoardTask
from pisim import Faults, rootfs
from pisim.pytest_plugin import SESSION_SUBNETS, start_free_farm

from ..benchmarks.catalog_support import assert_sane, run_on_node
from ..devices.simfarm import register_node
from .sshutil import connect_error, out, run, wait_for

pytestmark = pytest.mark.pisim

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ELFCLASS32, ELFCLASS64 = 1, 2
HOST_MACHINE = os.uname().machine  # what a 64-bit kernel says here (a Pi 4's says aarch64)
# name: (profile, uname -m, getconf LONG_BIT, dpkg architecture, ELF class)
NODES = {
    "p4": ("pi4b-bookworm-32", HOST_MACHINE, "32", "i386", ELFCLASS32),
    "p3": ("pi3b-legacy-32", "i686", "32", "i386", ELFCLASS32),
    "p64": ("pi4b-bookworm", HOST_MACHINE, "64", "amd64", ELFCLASS64),
}


@pytest.fixture(scope="module")
def farm():
    if os.geteuid() != 0:
        pytest.skip("pisim needs root (network namespaces, mounts, sshd)")
    farm = start_free_farm(
        "b", SESSION_SUBNETS, [(name, spec[0], None) for name, spec in NODES.items()], 1.0
    )
    try:
        yield farm
    finally:
        farm.stop()


def elf_class(node, path: str) -> int:
    """The EI_CLASS byte of an ELF file on the node, as its own od reads it."""
    header = out(node, f"head -c 5 -- {path} | od -An -tu1").split()
    assert header[1:4] == ["69", "76", "70"], header  # "ELF"
    return int(header[4])


@pytest.mark.parametrize("name", NODES)
def test_the_node_says_what_its_kernel_and_userland_are(farm, name):
    node = farm.nodes[name]
    _, machine, long_bit, dpkg_arch, _ = NODES[name]
    assert out(node, "uname -m").strip() == machine
    assert out(node, "sudo -n uname -m").strip() == machine  # every session, root's too
    assert node.run_as_root(["uname", "-m"]).stdout.decode().strip() == machine
    assert out(node, "getconf LONG_BIT").strip() == long_bit
    assert out(node, "dpkg --print-architecture").strip() == dpkg_arch
    bits = "32" if long_bit == "32" else "64"
    assert f"ELF {bits}-bit" in out(node, "file -L $(command -v sha1sum)")


@pytest.mark.parametrize("name", NODES)
def test_the_programs_the_node_runs_are_of_its_userland(farm, name):
    node = farm.nodes[name]
    expected = NODES[name][4]
    assert elf_class(node, "/proc/$$/exe") == expected  # the login shell itself
    assert elf_class(node, "$(command -v sha1sum)") == expected
    # What runs as sha1sum is the binary of the i386 root, byte for byte.
    running = out(node, "sha1sum /proc/self/exe").split()[0]
    if expected == ELFCLASS32:
        on_disk = (rootfs.root_dir() / "usr/bin/sha1sum").read_bytes()
        assert running == hashlib.sha1(on_disk).hexdigest()  # noqa: S324 - a file's identity


def test_the_pi4_on_a_32_bit_os_has_the_files_of_a_real_one(farm):
    real = FIXTURES / "probe" / "roots" / "pi4_bookworm32"
    node = farm.nodes["p4"]
    assert out(node, "cat /etc/os-release") == (real / "etc" / "os-release").read_text()
    config_txt = "boot/firmware/config.txt"
    assert node.read_file(f"/{config_txt}") == (real / config_txt).read_bytes()


@pytest.mark.parametrize("name", ["p4", "p3"])
def test_a_32_bit_node_is_a_pi_like_the_others(farm, name):
    node = farm.nodes[name]
    profile = node.profile
    assert out(node, "sudo -n true") == ""
    assert out(node, "vcgencmd get_config arm_freq").startswith("arm_freq=")
    assert out(node, "vcgencmd measure_clock arm").startswith("frequency(")
    assert out(node, f"cat {profile.config_path}").encode() == node.read_file(profile.config_path)
    assert f"Model\t\t: {profile.model}" in out(node, "cat /proc/cpuinfo")
    assert out(node, "hostname").strip() == name
    # Its own /proc/stat and /proc/loadavg (pisim.procstat), as on the other nodes.
    stat = out(node, "cat /proc/stat /proc/loadavg")
    btime = int(re.search(r"^btime (\d+)$", stat, re.MULTILINE).group(1))
    assert abs(btime - node.booted["booted_at"]) < 60, stat
    assert len(re.findall(r"^cpu", stat, re.MULTILINE)) == node.booted["ncpu"] + 1
    # The node's CPU quota holds its sessions too (pisim.nodecpu).
    assert node.cpu_quota["mode"] in ("v1", "v2", "none")
    if node.cpu_quota["mode"] != "none":
        group = node.cpu_quota["cgroup"].rsplit("/pisim/", 1)[1]
        assert f"/pisim/{group}" in out(node, "cat /proc/self/cgroup")
    for tool in ("iperf3", "openssl", "sysbench", "stress-ng", "7zz", "flac", "lame", "fio"):
        assert elf_class(node, f"$(command -v {tool})") == ELFCLASS32, tool


def test_missing_tools_apt_get_and_reboot_work_on_a_32_bit_node(pisim_node_factory):
    node = pisim_node_factory(
        profile="pi3b-legacy-32", faults=Faults(missing_tools=("sysbench",)), downtime=0.5
    )
    assert run(node, "command -v sysbench")[0] != 0
    assert "Setting up sysbench" in out(node, "sudo -n apt-get install -y sysbench")
    assert out(node, "command -v sysbench").strip() == "/usr/bin/sysbench"
    boot_count = node.boot_count
    assert run(node, "sudo reboot")[0] == 0
    wait_for(lambda: connect_error(node) == "refused", timeout=3, what="the node to go down")
    node.wait_ssh(timeout=10)
    assert node.boot_count == boot_count + 1
    assert out(node, "uname -m").strip() == "i686"
    assert out(node, "command -v sysbench").strip() == "/usr/bin/sysbench"  # stays installed
    assert elf_class(node, "/usr/bin/sysbench") == ELFCLASS32


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("name", "kernel_bits", "userland_bits"), [("p4", 64, 32), ("p3", 32, 32), ("p64", 64, 64)]
)
def test_the_probe_reports_the_boards_as_they_are(farm, run_jobs, name, kernel_bits, userland_bits):
    node = farm.nodes[name]
    task = tasks.start(register_node(node), BoardTask.Kind.PROBE)
    run_jobs()
    task.refresh_from_db()
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert facts["kernel_arch"] == NODES[name][1]
    assert (facts["kernel_bits"], facts["userland_bits"]) == (kernel_bits, userland_bits)
    assert facts["dpkg_arch"] == NODES[name][3]  # what dpkg says: i386 here, armhf on a Pi
    assert facts["simulated"] is True
    assert facts["model"] == node.profile.model
    assert facts["tools"]["sha1sum"] and facts["tools"]["iperf3"] and facts["tools"]["sudo"]


# The quick ones: intloop is built by the node's own (i386) gcc. 7zip, fio and the rest of the
# catalog run there too, but take 10 s each or need a peer.
@pytest.mark.parametrize("benchmark", [cpu.SHA1SUM, cpu.INTLOOP], ids=lambda b: b.name)
def test_pifarm_benchmarks_run_on_a_32_bit_node(farm, benchmark):
    raw = {"seconds": 1} if benchmark is cpu.INTLOOP else {}
    assert_sane(benchmark, run_on_node(farm.nodes["p4"], benchmark, raw))
