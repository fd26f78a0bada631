"""Each simulated Pi's /proc/stat and /proc/loadavg are its own, not the host's."""

import re
import shlex
import statistics
import subprocess
import time

import pytest

from benchmarks import telemetry

from .sshutil import client_for, out, wait_for

pytestmark = pytest.mark.pisim
# Busy loops in the background, each ended by its timeout.
BURN = "for i in $(seq {n}); do timeout {s} sh -c 'while :; do :; done' & done"
# The loop is the shell's own (no child): kill() in the test's finally ends it for certain
# (killing a `timeout` in front of it would leave the loop running forever).
HOST_BURN = ["sh", "-c", "while :; do :; done"]
CPU_LINE = re.compile(r"^cpu(\d*) +(?:\d+ ){9}\d+$")  # the kernel pads "cpu" with 2 spaces


def cpu_lines(text: str) -> list[list[int]]:
    """The "cpu" line of each /proc/stat in text (user nice system idle iowait ... guest_nice)."""
    return [
        list(map(int, line.split()[1:])) for line in text.splitlines() if line.startswith("cpu ")
    ]


def busy_cores(before: list[int], after: list[int], ncpu: int) -> float:
    """Cores' worth busy between two "cpu" lines: all but idle and iowait (guest and
    guest_nice are already in user and nice)."""
    delta = [b - a for a, b in zip(before, after, strict=True)][:8]
    return (sum(delta) - delta[3] - delta[4]) / sum(delta) * ncpu


def busy_over(node, seconds: float) -> float:
    """The node's busy cores over `seconds`, from two /proc/stat readings inside the node."""
    text = out(node, f"head -1 /proc/stat; sleep {seconds}; head -1 /proc/stat", timeout=30)
    return busy_cores(*cpu_lines(text), node.booted["ncpu"])


def load1(node) -> float:
    return float(out(node, "cat /proc/loadavg").split()[0])


def test_a_node_shows_its_own_cpus_and_not_the_work_of_others(pisim_farm):
    node, other = pisim_farm.nodes["pi4"], pisim_farm.nodes["pi3"]
    ncpu = node.booted["ncpu"]
    stat = out(node, "cat /proc/stat")
    cpus = [m.group(1) for m in map(CPU_LINE.match, stat.splitlines()) if m]
    assert cpus == ["", *map(str, range(ncpu))], stat
    for key in ("intr", "ctxt", "btime", "processes", "procs_running", "procs_blocked", "softirq"):
        assert re.search(rf"^{key} \d+", stat, re.MULTILINE), key
    host, client = subprocess.Popen(HOST_BURN), client_for(other)
    try:
        client.exec_command(BURN.format(n=other.booted["ncpu"], s=10))
        time.sleep(1)  # the burners are running
        busy = busy_over(node, 2)
        burning = busy_over(other, 1)
    finally:
        client.close()
        host.kill()
        host.wait()
    assert busy < 0.1 * ncpu, f"{busy:.2f} cores busy on an idle node"
    assert burning > 0.4, f"the other node's loops show as {burning:.2f} cores there"


def test_a_busy_loop_in_the_node_shows_in_its_busy_time_and_load(pisim_node_factory):
    node = pisim_node_factory()
    assert busy_over(node, 1) < 0.1 * node.booted["ncpu"]
    client = client_for(node)
    try:
        # Four loops: the 1-minute average (the kernel's exponential decay, no faster) passes
        # 0.5 after 60 s x ln(8/7) = 8 s of a load of 4, where one loop takes 42 s.
        client.exec_command(BURN.format(n=4, s=14))
        started = time.monotonic()
        busy = busy_over(node, 2)
        assert busy > 0.4, f"{busy:.2f} cores busy under four busy loops"
        wait_for(lambda: load1(node) > 0.5, timeout=12 - (time.monotonic() - started), what="load")
    finally:
        client.close()
    running = out(node, "cat /proc/loadavg").split()[3]
    assert re.fullmatch(r"\d+/\d+", running)


def test_the_counters_stay_monotonic_when_a_busy_process_exits(pisim_node_factory):
    node = pisim_node_factory()
    # The loops end after 2 s, in the middle of 4 s of readings every 0.2 s.
    script = (
        BURN.format(n=2, s=2) + "; for i in $(seq 20); do grep '^cpu' /proc/stat; sleep 0.2; done"
    )
    readings = out(node, script, timeout=30)
    lines: dict[str, list[list[int]]] = {}
    for line in readings.splitlines():
        name, *values = line.split()
        lines.setdefault(name, []).append(list(map(int, values)))
    assert len(lines) == node.booted["ncpu"] + 1
    for name, series in lines.items():
        for earlier, later in zip(series, series[1:], strict=False):
            assert all(a <= b for a, b in zip(earlier, later, strict=True)), (name, earlier, later)
    first, last = lines["cpu"][0], lines["cpu"][-1]
    assert busy_cores(first, last, node.booted["ncpu"]) > 0.1  # the loops' time is still there


def test_a_saturated_pi_1_reads_busy_in_its_own_cores_and_its_clock_under_load(
    pisim_node_factory,
):
    """A Pi 1 B's one core at 700 MHz gets 23 % of a host CPU: a busy loop uses all of that,
    and its /proc/stat must read it as the board's core busy, not 23 % of the host's."""
    node = pisim_node_factory(profile="pi1b-legacy-32")
    sampler = shlex.join(telemetry.sampler_argv(0.5, []))
    text = out(
        node,
        f"{sampler} > sampler.out & sampler=$!; sleep 0.3; "
        "timeout 3 sh -c 'while :; do :; done'; kill $sampler; wait $sampler; cat sampler.out",
        timeout=30,
    )
    samples = telemetry.parse_samples(text)
    busy = [sample.cpu_busy_pct for sample in samples[2:-1]]  # well inside the loop's 3 s
    print("busy %", [round(pct) for pct in busy])
    assert busy and statistics.fmean(busy) >= 80, busy
    under_load = telemetry.summarize(samples)["arm_mhz_under_load"]
    assert under_load is not None and under_load["median"] == 700, under_load
