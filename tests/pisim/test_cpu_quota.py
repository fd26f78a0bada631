"""Each simulated Pi runs in a cgroup whose CPU quota follows its emulated Arm clock."""

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pisim import cgroup, procs
from pisim.faults import Faults
from pisim.nodecpu import PERIOD_US, REFERENCE_MHZ

from .sshutil import client_for, out, wait_for

pytestmark = pytest.mark.pisim
GOVERNOR = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
# One sha1sum per node CPU over a sparse file in the node's /tmp; prints the nanoseconds taken.
SHA1SUM_LOOP = """truncate -s "$1"M /tmp/sparse && start=$(date +%s%N) && i=0
while [ "$i" -lt "$2" ]; do sha1sum /tmp/sparse >/dev/null & i=$((i + 1)); done
wait && echo $(( $(date +%s%N) - start ))"""
PKG_PARENT = Path(__file__).resolve().parents[2]
# A farm whose mount namespace has no cgroup hierarchy with the cpu controller.
UNTHROTTLED_FARM = textwrap.dedent("""
    import json, subprocess, sys
    from pisim.pytest_plugin import FACTORY_SUBNETS, start_free_farm
    farm = start_free_farm("u", FACTORY_SUBNETS, [("n1", "pi3b-legacy", None)], 0.5)
    try:
        node = farm.nodes["n1"]
        status = subprocess.run([sys.executable, "-m", "pisim", "status", "--name", farm.name],
                                capture_output=True, text=True, timeout=30).stdout
        log = (node.dir / "log" / "node.log").read_text()
        print(json.dumps({"quota": node.cpu_quota, "status": status, "log": log}))
    finally:
        farm.stop()
""")


@pytest.fixture(autouse=True)
def _cpu_controller():
    if cgroup.detect().mode == "none":
        pytest.skip(f"no CPU quota on this machine: {cgroup.detect().note}")


def quota(node) -> tuple[int, int]:
    """(quota, period) in microseconds as the kernel holds them for the node's group."""
    group = Path(node.cpu_quota["cgroup"])
    if (group / "cpu.max").exists():
        limit, period = (group / "cpu.max").read_text().split()
        return int(limit), int(period)
    return int((group / "cpu.cfs_quota_us").read_text()), int(
        (group / "cpu.cfs_period_us").read_text()
    )


def expected_quota(node, mhz: int) -> tuple[int, int]:
    """Each of the node's CPUs gets mhz / REFERENCE_MHZ of a host CPU."""
    return round(node.booted["ncpu"] * mhz * PERIOD_US / REFERENCE_MHZ), PERIOD_US


def set_governor(node, governor: str) -> None:
    node.run_as_root(["sh", "-c", 'echo "$1" > "$2"', "sh", governor, GOVERNOR], check=True)


def wait_for_quota(node, mhz: int, what: str, timeout: float = 5) -> None:
    wait_for(lambda: quota(node) == expected_quota(node, mhz), timeout=timeout, what=what)


def arm_mhz(node) -> int:
    return int(out(node, "vcgencmd measure_clock arm").split("=")[1]) // 1_000_000


def boot_with(node, config: bytes, extra: str) -> None:
    """Power-cycle the node into config.txt = config plus extra."""
    node.write_file(node.profile.config_path, config + f"\n[all]\n{extra}".encode())
    before = node.boot_id
    node.power_cycle()
    wait_for(lambda: node.boot_id != before and node.state == "up", what="the boot")
    node.wait_ssh()


def test_quota_follows_the_governor_and_the_load(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy")
    ints = node.booted["config"]["ints"]
    fmax, fmin = ints["arm_freq"], ints["arm_freq_min"]
    wait_for_quota(node, fmin, "the idle clock under ondemand")
    set_governor(node, "performance")
    wait_for_quota(node, fmax, "performance")
    assert node.read_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq") == (
        f"{fmax * 1000}\n".encode()
    )
    assert arm_mhz(node) == fmax
    set_governor(node, "powersave")
    wait_for_quota(node, fmin, "powersave")
    assert arm_mhz(node) == fmin
    set_governor(node, "ondemand")
    client = client_for(node)
    try:
        client.exec_command("timeout 3 sh -c 'while :; do :; done'")
        wait_for_quota(node, fmax, "ondemand under load", timeout=2)
        assert arm_mhz(node) == fmax
    finally:
        client.close()
    wait_for_quota(node, fmin, "ondemand idle again", timeout=8)  # the loop ends after 3 s


def test_quota_follows_the_booted_arm_freq(pisim_node_factory):
    node = pisim_node_factory(downtime=0.5)
    config = node.read_file(node.profile.config_path)
    boot_with(node, config, "arm_freq=1000\nforce_turbo=1\n")  # force_turbo: the maximum at once
    wait_for_quota(node, 1000, "arm_freq 1000")
    assert node.cpu_quota["mode"] == cgroup.detect().mode and node.cpu_quota["mhz"] == 1000
    assert pisim_node_factory.farm.status()[node.name]["cpu_quota"] == cgroup.detect().mode


def sleep_pid(init_pid: int) -> int | None:
    for pid in procs.namespace_members(init_pid):
        if Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x0030\x00":
            return pid
    return None


def test_every_process_of_the_node_is_in_its_cgroup(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy")
    group = Path(node.cpu_quota["cgroup"])
    in_node = "/" + str(group.relative_to(cgroup.detect().root))
    session = out(node, "cat /proc/self/cgroup")
    assert any(line.endswith(f":{in_node}") for line in session.splitlines()), session
    init_pid = node._state["init_pid"]
    client = client_for(node)
    try:
        client.exec_command("sleep 30")
        sleeper = wait_for(lambda: sleep_pid(init_pid), what="the session's sleep")
        members = {init_pid, sleeper, *procs.namespace_members(init_pid)}
        assert members <= {int(pid) for pid in (group / "cgroup.procs").read_text().split()}
    finally:
        client.close()
    as_root = node.run_as_root(["cat", "/proc/self/cgroup"], check=True).stdout.decode()
    assert any(line.endswith(f":{in_node}") for line in as_root.splitlines())


def test_no_cgroup_is_left_after_power_off_or_stop(pisim_node_factory):
    node = pisim_node_factory(downtime=1.0)
    farm = pisim_node_factory.farm
    group = Path(node.cpu_quota["cgroup"])
    assert group.is_dir() and farm.name in cgroup.farm_groups()
    node.power_cycle()
    node.wait_state("down", timeout=3)
    assert not group.exists()
    node.wait_ssh()
    assert group.is_dir()
    farm.stop()
    assert farm.name not in cgroup.farm_groups()


def sha1sum_mb_per_s(node, size_mb: int = 128) -> float:
    """sha1sum throughput of all the node's CPUs, timed inside the node."""
    ncpu = node.booted["ncpu"]
    command = shlex.join(["timeout", "30", "sh", "-c", SHA1SUM_LOOP, "sh", str(size_mb), str(ncpu)])
    nanoseconds = int(out(node, command, timeout=40))
    return ncpu * size_mb / (nanoseconds / 1e9)


@pytest.mark.measures
def test_sha1sum_at_arm_freq_1500_is_clearly_faster_than_at_1000(pisim_node_factory):
    """The quota makes the clock show in the numbers. The figure itself (1.5x within 10 % on a
    quiet host) is bench/sim_clock_scaling.py's: a shared CI host moves it both ways."""
    node = pisim_node_factory(downtime=0.5)
    config = node.read_file(node.profile.config_path)
    rates = {}
    for mhz in (1000, 1500):
        boot_with(node, config, f"arm_freq={mhz}\n")
        set_governor(node, "performance")
        wait_for_quota(node, mhz, f"arm_freq {mhz}")
        # Best of 5: other work on the host only ever slows a run down (its softirqs, say,
        # are charged to whatever task they interrupt, and so to the node's quota).
        rates[mhz] = max(sha1sum_mb_per_s(node) for _ in range(5))
    assert rates[1500] / rates[1000] >= 1.15, rates


def test_without_a_cpu_controller_a_node_runs_unthrottled_and_says_so():
    hierarchy = str(cgroup.detect().root)  # unmounted in a mount namespace of the test's own
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'umount -l "$1" && shift && exec "$@"',
            "sh",
            hierarchy,
            sys.executable,
            "-c",
            UNTHROTTLED_FARM,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=PKG_PARENT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["quota"]["mode"] == "none"
    assert "cpu controller" in report["quota"]["note"]
    assert "cpu quota none, unthrottled" in report["status"]
    assert "no CPU quota" in report["log"] and "unthrottled" in report["log"]


def test_a_node_that_becomes_slower_gets_a_share_of_its_quota_saying_nothing_else(
    pisim_node_factory,
):
    node = pisim_node_factory(
        profile="pi3b-legacy", faults=Faults(slower_after_s=3.0, slower_share=0.5)
    )
    set_governor(node, "performance")
    fmax = node.booted["config"]["ints"]["arm_freq"]
    wait_for_quota(node, fmax, "the full quota before the fault")
    throttled = out(node, "vcgencmd get_throttled")
    full, period = expected_quota(node, fmax)
    wait_for(lambda: quota(node) == (round(full * 0.5), period), timeout=10, what="half quota")
    assert node.cpu_quota["share"] == 0.5
    assert arm_mhz(node) == fmax  # the clock reads as before
    assert out(node, "vcgencmd get_throttled") == throttled
    assert (
        "the node gets 50% of its CPU quota from now on"
        in (node.dir / "log" / "node.log").read_text()
    )
