"""Nothing of a farm survives stop(), `pisim down`, its owner's death or a crash."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pisim import Farm, cgroup, cleanup_stale
from pisim.pytest_plugin import FACTORY_SUBNETS, start_free_farm

from .sshutil import client_for, out, wait_for

pytestmark = pytest.mark.pisim


@pytest.fixture(autouse=True)
def _root_only():
    if os.geteuid() != 0:
        pytest.skip("pisim needs root")


def free_subnet() -> int:
    for k in FACTORY_SUBNETS:
        if not Path(f"/sys/class/net/psbr{k}").exists() and not Path(f"/run/pisim/c{k}").exists():
            return k
    pytest.skip("no free pisim subnet")


def alive(pid: int) -> bool:
    """Exists and is not a zombie (a dead process waiting for its parent to reap it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def leftovers(farm_name: str, subnet_index: int, pids=()) -> list[str]:
    found = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += [f"netns {ns}" for ns in netns.split() if ns.startswith(f"pisim-{farm_name}-")]
    links = json.loads(subprocess.run(["ip", "-j", "link"], capture_output=True, text=True).stdout)
    for link in links:
        name, alias = link["ifname"], link.get("ifalias", "")
        if (
            name == f"psbr{subnet_index}"
            or name.startswith(f"psv{subnet_index}-")
            or alias.startswith(f"pisim:{farm_name}")
        ):
            found.append(f"link {name}")
    rundir = f"/run/pisim/{farm_name}"
    found += [f"pid {pid}" for pid in pids if alive(pid)]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if rundir.encode() in cmdline and alive(int(entry)):
                found.append(f"process {entry}: {cmdline[:80]!r}")
    if rundir in Path("/proc/self/mountinfo").read_text():
        found.append("host mount")
    if Path(rundir).exists():
        found.append(f"dir {rundir}")
    if farm_name in cgroup.farm_groups():
        found.append(f"cgroup of {farm_name}")
    return found


def node_pids(farm) -> list[int]:
    pids = [int((farm.dir / "supervisor.pid").read_text())]
    return pids + [json.loads((n.dir / "state.json").read_text())["init_pid"] for n in farm]


def test_stop_leaves_nothing_behind_even_with_open_sessions(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy")
    farm = pisim_node_factory.farm
    second = farm.add_node("late", profile="pi4b-bookworm")  # added after start
    assert out(second, "hostname").strip() == "late"
    client = client_for(node)
    client.exec_command("sleep 60")
    pids = node_pids(farm)
    assert leftovers(farm.name, farm.subnet_index) != []
    farm.stop()
    client.close()
    assert leftovers(farm.name, farm.subnet_index, pids) == []
    farm.stop()  # idempotent


def test_the_context_manager_leaves_nothing_behind():
    k = free_subnet()
    with Farm(f"c{k}", k, downtime=0.5) as farm:
        node = farm.add_node("solo", profile="pi3b-legacy")
        assert out(node, "hostname").strip() == "solo"
        pids = node_pids(farm)
    assert leftovers(farm.name, k, pids) == []


def test_a_farm_goes_away_when_its_owner_is_killed():
    script = textwrap.dedent("""
        import time
        from pisim.pytest_plugin import FACTORY_SUBNETS, start_free_farm
        farm = start_free_farm("o", FACTORY_SUBNETS, [("n1", "pi4b-bookworm", None)], 0.5)
        print(farm.name, farm.subnet_index, flush=True)
        time.sleep(60)
    """)
    owner = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        name, k = owner.stdout.readline().split()
        assert leftovers(name, int(k)) != []
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    wait_for(lambda: leftovers(name, int(k)) == [], timeout=15, what="self-teardown")


def test_cleanup_stale_removes_what_a_crashed_supervisor_left():
    farm = start_free_farm("k", FACTORY_SUBNETS, [("n1", "pi4b-bookworm", None)], 0.5)
    try:
        pids = node_pids(farm)
        os.kill(pids[0], signal.SIGKILL)  # the supervisor; its nodes die with it
        wait_for(lambda: not alive(pids[1]), timeout=5, what="nodes")
        assert leftovers(farm.name, farm.subnet_index) != []  # netns, links, dir
        if cgroup.detect().mode != "none":
            assert farm.name in cgroup.farm_groups()  # nobody removed the node's cgroup
        time.sleep(0.1)
        assert farm.name in cleanup_stale()
        assert leftovers(farm.name, farm.subnet_index, pids) == []
    finally:
        farm.stop()
