"""Telemetry: the sampler on real boards (pisim) and the host, its parser, the quiet wait and
the reasons a trial is suspect."""

import dataclasses
import json
import secrets
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import telemetry
from benchmarks.endpoints import BoardEndpoint, ControllerEndpoint
from benchmarks.telemetry import Sample, parse_samples, summarize, suspect_reasons, validity
from devices import ssh, vcgencmd
from pisim import Faults
from tests.devices.simfarm import target_for

FIXTURES = Path(__file__).parent.parent / "fixtures" / "benchmarks" / "telemetry"
PI4_LOG = (FIXTURES / "pi4_sha1sum.out").read_text()
HOST_LOG = (FIXTURES / "host_sha1sum.out").read_text()
ONE_CORE = 100.0  # procs CPU % of a process that keeps one core busy

# Writes its PID, then becomes the burner (exec keeps the PID), niced ahead of the rest.
BURNER = 'echo $$ > "$1"; shift; exec nice -n -10 "$@"'
# A busy loop whose comm holds a ')' and spaces, and reads as a ksoftirqd/N kernel thread.
RENAMED_BURNER = """
import ctypes, sys
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME
while True:
    pass
"""


def _board(node):
    return ssh.Session(target_for(node), ssh.Timeouts(connect=5, banner=5, auth=5))


@pytest.fixture
def on_board(pisim_farm):
    """(BoardEndpoint, a fresh work directory on it) on the shared farm's Pi 4."""
    node = pisim_farm.nodes["pi4"]
    with _board(node) as session:
        endpoint = BoardEndpoint(node.name, session)
        workdir = f"/dev/shm/pifarm-test-{secrets.token_hex(4)}"
        endpoint.run(["mkdir", "--", workdir], 10)
        yield endpoint, workdir
        stop_burners(endpoint, workdir)
        endpoint.run(["rm", "-rf", "--", workdir], 10, sudo=True)


def stop_burners(endpoint, workdir):
    """End the test's burners, so the next test's sampler does not count them."""
    script = 'for f in "$1"/*/pid; do [ -s "$f" ] && kill "$(cat -- "$f")"; done; true'
    endpoint.run(["sh", "-c", script, "stop", workdir], 10, sudo=True)


def run_sampler(endpoint, workdir, names, seconds, shell=("sh",)) -> list[Sample]:
    """The sampler for `seconds` (its timeout ends it, with a last sample), parsed."""
    argv = telemetry.sampler_argv(1, names)
    endpoint.start(workdir, "sampler", [*shell, *argv[1:]], seconds)
    assert endpoint.wait(workdir, "sampler", up_to_s=seconds + 5).finished
    return parse_samples(endpoint.read(f"{workdir}/sampler.out", 1 << 20).text)


def burn(endpoint, workdir, seconds, argv=("sha1sum", "/dev/zero"), comm="sha1sum") -> int:
    """Start a CPU burner (niced ahead of the rest of this machine's work); its PID, once it
    runs under its comm (a sampler started before would see it as new, with ticks of before)."""
    directory = f"{workdir}/{secrets.token_hex(4)}"
    argv = ["sh", "-c", BURNER, "burner", f"{directory}/pid", *argv]
    endpoint.start(directory, "burn", argv, seconds, sudo=True)
    script = 'pid=$(cat -- "$1") && [ "$(cat "/proc/$pid/comm")" = "$2" ] && echo "$pid"'
    for _ in range(100):
        running = endpoint.run(["sh", "-c", script, "running", f"{directory}/pid", comm], 5)
        if running.ok:
            return int(running.text)
        time.sleep(0.05)
    raise AssertionError(f"the burner {comm} did not start")


def kernel_cpu_seconds(endpoint, pid: int) -> float:
    """The CPU time of pid as the scheduler counts it (schedstat, ns): not from the utime and
    stime ticks the sampler reads, so a reference for them."""
    return int(endpoint.run(["cat", "--", f"/proc/{pid}/schedstat"], 5).text.split()[0]) / 1e9


def simulated_core(endpoint, ncpu: int) -> float:
    """Host CPUs one core of a simulated Pi gets (its quota, pisim.nodecpu): the unit its
    /proc/stat counts in, and so the sampler's CPU % of a core."""
    info = json.loads(endpoint.run(["cat", "/run/pisim/cpu.json"], 5).text)
    return info["quota_us"] / info["period_us"] / ncpu


def sampled_and_kernel_pct(endpoint, workdir, pid, name, seconds, shell=("sh",), simulated=True):
    """(the sampler's CPU % for name over its run, the kernel's for pid over about the same
    time, in the board's cores: on a simulated Pi, of one core's quota; the share of the host
    CPU one core gets is returned third). On an idle machine the burner uses one host CPU;
    other test sessions sharing the host's CPUs can leave it less, and the two must still
    agree."""
    before, started = kernel_cpu_seconds(endpoint, pid), time.monotonic()
    samples = run_sampler(endpoint, workdir, [name], seconds, shell)
    kernel = (kernel_cpu_seconds(endpoint, pid) - before) / (time.monotonic() - started)
    assert len(rated(samples)) >= 2
    core = simulated_core(endpoint, samples[-1].cpus) if simulated else 1.0
    used = sum(
        later.procs.get(name, 0) * (later.t - earlier.t)
        for earlier, later in zip(samples, samples[1:], strict=False)
    )
    return used / samples[-1].t, 100 * kernel / core, core


def booted_arm_freq(endpoint) -> int:
    answer = endpoint.run(["vcgencmd", "get_config", "arm_freq"], 10).text
    return int(vcgencmd.parse_get_config(answer)["arm_freq"])


def rated(samples):
    return [sample for sample in samples if sample.cpu_busy_pct is not None]


# --- the sampler's output, captured (see tests/fixtures/benchmarks/telemetry/README.md) ---


def test_a_pi4_log_parses_into_a_baseline_and_one_sample_per_interval():
    samples = parse_samples(PI4_LOG)
    assert len(samples) == PI4_LOG.count("\nend\n") + PI4_LOG.endswith("\nend")
    baseline, rest = samples[0], samples[1:]
    assert baseline.t == 0 and baseline.cpu_busy_pct is None and baseline.procs == {}
    assert all(later.t > earlier.t for earlier, later in zip(samples, rest, strict=False))
    assert all(sample.cpu_busy_pct is not None for sample in rest)
    assert {sample.throttled for sample in samples} == {0}
    assert all(sample.temp_c is not None and sample.swap_used_kb == 0 for sample in samples)


def test_a_pi4_log_shows_the_burner_on_one_core_and_the_clock_up_under_load():
    samples = parse_samples(PI4_LOG)
    burning = [sample.procs["sha1sum"] for sample in samples if "sha1sum" in sample.procs]
    assert burning and max(burning) == pytest.approx(ONE_CORE, abs=10)
    summary = summarize(samples)
    idle_clock = min(sample.arm_mhz for sample in samples)
    assert summary["arm_mhz_under_load"]["min"] > idle_clock
    assert summary["arm_mhz_under_load"]["max"] == max(sample.arm_mhz for sample in samples)


def test_a_host_without_vcgencmd_or_sysfs_readings_has_none_rather_than_zero():
    samples = parse_samples(HOST_LOG)
    assert len(samples) > 2
    for sample in samples:
        assert (sample.arm_mhz, sample.temp_c, sample.throttled) == (None, None, None)
    assert max(sample.procs.get("sha1sum", 0) for sample in samples) == pytest.approx(
        ONE_CORE, abs=10
    )
    summary = summarize(samples)
    assert summary["arm_mhz_under_load"] is None and summary["throttled_seen"] is None


def test_a_half_written_log_gives_its_complete_samples_unchanged():
    whole = parse_samples(PI4_LOG)
    cut = PI4_LOG[: PI4_LOG.rindex("\nend")]
    assert parse_samples(cut) == whole[:-1]


def test_samples_go_to_compact_json_and_back():
    for sample in parse_samples(PI4_LOG):
        stored = json.loads(json.dumps(sample.to_dict(), separators=(",", ":")))
        back = Sample.from_dict(stored)
        assert back.procs.keys() == sample.procs.keys()
        assert back.t == pytest.approx(sample.t, abs=0.01)
        assert back.cpu_busy_pct == pytest.approx(sample.cpu_busy_pct, abs=0.01)
        assert back.to_dict() == stored
    assert "cpu_busy_pct" not in parse_samples(PI4_LOG)[0].to_dict()  # None is left out


@pytest.mark.parametrize("names", [["a b"], ["$(reboot)"], ["x" * 16], [""]])
def test_the_sampler_refuses_process_names_that_are_not_plain_words(names):
    with pytest.raises(ValueError, match="process names"):
        telemetry.sampler_argv(1, names)


# --- the sampler running, on a simulated Pi and on the host ---


@pytest.mark.pisim
@pytest.mark.measures  # the burner's share of a host CPU: other tests running beside it take some
@pytest.mark.parametrize("shell", [("sh",), ("busybox", "sh")], ids=["dash", "busybox"])
def test_the_sampler_on_a_board_gives_a_burner_the_cpu_the_kernel_gave_it(on_board, shell):
    endpoint, workdir = on_board
    pid = burn(endpoint, workdir, 30)  # the fixture stops it; 8 s ran out on a loaded host
    sampled, kernel, core = sampled_and_kernel_pct(endpoint, workdir, pid, "sha1sum", 3, shell)
    print(f"sampled {sampled:.0f} %, kernel {kernel:.0f} % of a core of {core:.2f} host CPU")
    # One thread uses at most one host CPU: on a Pi 4 node (4 cores sharing 2.4 host CPUs at
    # 1800 MHz) that is more than one of its cores, as the quota caps the node as a whole.
    assert 0 < sampled <= ONE_CORE / core * 1.05
    assert sampled == pytest.approx(kernel, rel=0.15)


@pytest.mark.pisim
def test_the_sampler_on_a_board_reads_the_clock_it_runs_at_under_load(on_board):
    endpoint, workdir = on_board
    burn(endpoint, workdir, 30)  # the fixture stops it: on a loaded host 6 s could run out
    samples = run_sampler(endpoint, workdir, ["sha1sum"], 3)
    assert summarize(samples)["arm_mhz_under_load"]["max"] == booted_arm_freq(endpoint)


@pytest.mark.pisim
@pytest.mark.measures  # the burner's share of a host CPU, as its sibling above
def test_a_comm_with_spaces_and_a_parenthesis_is_read_after_its_last_parenthesis(on_board):
    endpoint, workdir = on_board
    comm = "ksoftirqd/) 7 7"
    pid = burn(endpoint, workdir, 30, ("python3", "-c", RENAMED_BURNER, comm), comm)
    sampled, kernel, _ = sampled_and_kernel_pct(endpoint, workdir, pid, "ksoftirqd", 3)
    assert sampled == pytest.approx(kernel, rel=0.15)


@pytest.mark.slow
def test_the_sampler_runs_on_the_controller_too(tmp_path):
    endpoint = ControllerEndpoint()
    comm = f"tlm-{secrets.token_hex(4)}"  # the host's own processes hold sha1sums of others
    pid = burn(endpoint, str(tmp_path), 30, ("python3", "-c", RENAMED_BURNER, comm), comm)
    sampled, kernel, _ = sampled_and_kernel_pct(
        endpoint, str(tmp_path), pid, comm, 2, simulated=False
    )
    stop_burners(endpoint, str(tmp_path))
    assert sampled == pytest.approx(kernel, abs=15)


@pytest.mark.pisim
def test_a_throttled_board_held_at_its_lowest_clock_makes_the_trial_suspect(
    pisim_node_factory, tmp_path
):
    # A node's /proc/stat is its own, so its busy time is what its CPU quota lets its burners
    # use: a Pi 5's lowest clock, 1500 MHz, gives each core half a host CPU, enough to be
    # "under load" (a Pi 4's 600 MHz gives a fifth: not with fewer than four host CPUs).
    node = pisim_node_factory(profile="pi5-bookworm", faults=Faults(throttled_after_boot=0x50005))
    governor = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
    node.run_as_root(["sh", "-c", 'echo powersave > "$1"', "sh", governor], check=True)
    with _board(node) as session:
        endpoint, workdir = BoardEndpoint(node.name, session), "/dev/shm/pifarm-test"
        endpoint.run(["mkdir", "--", workdir], 10)
        for _ in range(node.booted["ncpu"]):  # they outlast the sampler (a slow host) by far
            burn(endpoint, workdir, 60)
        samples = run_sampler(endpoint, workdir, ["sha1sum"], 5)
        arm_freq = booted_arm_freq(endpoint)
        stop_burners(endpoint, workdir)
    reasons = suspect_reasons(samples, expected_arm_mhz=arm_freq, involved={"sha1sum"})
    # Only the sticky bits were there before the trial; the "now" bits are what counts.
    throttled = f"throttled bits appeared during the trial: 0x5 ({vcgencmd.throttle_summary(5)})"
    assert throttled in reasons
    clock = [reason for reason in reasons if reason.startswith("the Arm clock under load")]
    assert clock and clock[0].endswith(f"below the preset's arm_freq {arm_freq} MHz")


@pytest.mark.pisim
def test_a_trial_is_not_suspect_for_background_cpu_while_another_board_burns(
    on_board, pisim_farm, tmp_path
):
    endpoint, workdir = on_board
    # The host burns too: neither its work nor another node's is this board's.
    host = ControllerEndpoint()
    burn(host, str(tmp_path), 60)
    other = pisim_farm.nodes["pi3"]
    try:
        with _board(other) as session:
            neighbour, its_dir = BoardEndpoint(other.name, session), "/dev/shm/pifarm-test-burn"
            neighbour.run(["mkdir", "-p", "--", its_dir], 10)
            for _ in range(other.booted["ncpu"]):
                burn(neighbour, its_dir, 60)
            burn(endpoint, workdir, 60)
            samples = run_sampler(endpoint, workdir, ["sha1sum"], 5)
            # Its sampler shares a saturated quota with four burners: a 2 s window can end
            # before its first interval is written.
            neighbour_samples = run_sampler(neighbour, its_dir, ["sha1sum"], 4)
            stop_burners(neighbour, its_dir)
    finally:
        stop_burners(host, str(tmp_path))
    reasons = suspect_reasons(samples, expected_arm_mhz=None, involved={"sha1sum"})
    assert not [reason for reason in reasons if reason.startswith("background CPU")], reasons
    assert max(sample.procs.get("sha1sum", 0) for sample in samples) > 0.4 * ONE_CORE
    # The neighbour did burn, and its own board shows it (a Pi 3 at 1200 MHz: its quota is
    # 0.4 host CPU a core).
    busiest = max(sample.cpu_busy_pct * sample.cpus / 100 for sample in rated(neighbour_samples))
    assert busiest > 0.5, f"{busiest:.2f} cores busy on the burning neighbour"


@pytest.mark.pisim
def test_a_vcgencmd_that_floods_cannot_fill_the_sampler_log(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(hostile=("flood",)))
    with _board(node) as session:
        endpoint, workdir = BoardEndpoint(node.name, session), "/dev/shm/pifarm-test"
        run_sampler(endpoint, workdir, ["sshd"], 2)
        log = endpoint.read(f"{workdir}/sampler.out", 1 << 20).text
    blocks = log.count("\nend\n") + log.endswith("\nend")
    assert blocks >= 2
    assert log.count("\nvc ") <= 3 * (blocks + 1)  # + the one a TERM may have cut short
    samples = parse_samples(log)
    assert len(samples) == blocks and all(sample.arm_mhz for sample in samples)


# --- waiting for a quiet board ---


@pytest.mark.pisim
def test_a_board_within_the_limits_is_quiet_at_once(on_board):
    endpoint, _ = on_board
    # The limits are above anything: the simulated boards share the host's load and CPU
    # with whatever else runs here.
    quiet = telemetry.wait_until_quiet(
        endpoint, load_below=1000, cpu_below_pct=101, cool_below_c=80, deadline_s=30
    )
    assert quiet.reached, quiet.words
    assert quiet.words.startswith(f"quiet after {quiet.waited_s:.1f} s (load ")
    assert quiet.temp_c is not None and f"{quiet.temp_c:.1f} °C" in quiet.words


@pytest.mark.pisim
def test_a_board_burning_every_core_is_not_quiet_within_the_deadline(on_board):
    endpoint, workdir = on_board
    quiet_round = ["sh", "-c", telemetry.QUIET_ROUND, "pifarm-quiet", "1"]
    cpus = parse_samples(endpoint.run(quiet_round, 20).text)[0].cpus
    for _ in range(cpus):  # 30 s at most: the fixture stops them; on a loaded host starting
        burn(endpoint, workdir, 30)  # them all took longer than the 6 s they once had
    quiet = telemetry.wait_until_quiet(
        endpoint, load_below=1000, cpu_below_pct=50, cool_below_c=None, deadline_s=2
    )
    assert not quiet.reached
    assert quiet.waited_s >= 2
    assert quiet.words.startswith("not quiet within 2 s: CPU ")
    assert quiet.cpu_busy_pct >= 50


@pytest.mark.pisim
def test_a_board_warmer_than_asked_is_not_quiet(on_board):
    endpoint, _ = on_board
    quiet = telemetry.wait_until_quiet(
        endpoint, load_below=1000, cpu_below_pct=101, cool_below_c=0, deadline_s=0
    )
    assert not quiet.reached
    assert quiet.words == f"not quiet within 0 s: {quiet.temp_c:.1f} °C (needs below 0 °C)"


@pytest.mark.slow
def test_an_unknown_temperature_does_not_hold_the_wait():
    quiet = telemetry.wait_until_quiet(
        ControllerEndpoint(), load_below=1000, cpu_below_pct=101, cool_below_c=0, deadline_s=0
    )
    assert quiet.reached and quiet.temp_c is None
    assert quiet.words.endswith(", temperature unknown)")


# --- the reasons a trial is suspect ---


READINGS = {"arm_mhz", "temp_c", "throttled", "swap_used_kb", "cpus", "load1"}


def trial(*changes, **common):
    """A baseline and one rated sample per dict in changes, each a loaded interval of the tool
    on one core of two, at 1500 MHz, unthrottled, no swap in use, unless changed; common
    changes every sample (the baseline only in its readings: it has no rates)."""
    usual = {"arm_mhz": 1500, "throttled": 0, "swap_used_kb": 0, "cpus": 2, "load1": 1.0}
    readings = {key: value for key, value in common.items() if key in READINGS}
    samples = [Sample(t=0.0, **{**usual, **readings})]
    for i, change in enumerate(changes, start=1):
        loaded = {
            "cpu_busy_pct": 52.0,
            "cpu_user_pct": 50.0,
            "cpu_sys_pct": 2.0,
            "procs": {"tool": 100.0},
            "sampler_pct": 2.0,
        }
        samples.append(Sample(t=float(i), **{**usual, **loaded, **common, **change}))
    return samples


CLEAN = ({}, {}, {}, {})
SUSPECT_CASES = {
    "a clean trial": (trial(*CLEAN), []),
    "bits already set before the trial": (trial(*CLEAN, throttled=0x50000), []),
    "under-voltage now": (
        trial({}, {"throttled": 0x50005}, {}, {}),
        [
            "throttled bits appeared during the trial: 0x50005 "
            f"({vcgencmd.throttle_summary(0x50005)})"
        ],
    ),
    "a sticky bit that appeared": (
        trial({}, {}, {"throttled": 0x40000}, {}),
        ["throttled bits appeared during the trial: 0x40000 (throttling has occurred since boot)"],
    ),
    "the clock held low under load": (
        trial(*CLEAN, arm_mhz=600),
        ["the Arm clock under load stayed at 600 MHz, below the preset's arm_freq 1500 MHz"],
    ),
    "the clock low only while idle": (
        trial({}, {}, {"arm_mhz": 600, "cpu_busy_pct": 3.0, "procs": {}}, {}),
        [],
    ),
    "the clock mostly low": (
        trial({"arm_mhz": 600}, {"arm_mhz": 600}, {"arm_mhz": 1200}, {}),
        [
            "the Arm clock under load was at a median of 600 MHz (600-1200 MHz over 3 samples), "
            "below the preset's arm_freq 1500 MHz"
        ],
    ),
    "a busy process not of the benchmark": (
        trial(*CLEAN, procs={"tool": 100.0, "sshd": 90.0}, cpu_busy_pct=98.0, sampler_pct=0.0),
        [
            "background CPU averaged 48 % of the board (not the benchmark's processes; "
            "the limit is 25 %)"
        ],
    ),
    "swap grew": (
        trial({}, {"swap_used_kb": 6000}, {"swap_used_kb": 12288}, {}),
        ["swap in use grew by 12 MB"],
    ),
    "no vcgencmd": (trial(*CLEAN, arm_mhz=None, throttled=None), []),
    "no telemetry": ([], ["telemetry is missing: the sampler recorded nothing during the trial"]),
    "only the first reading": (
        trial(),
        [
            "telemetry is missing: the sampler recorded no interval of the trial, only its first "
            "reading"
        ],
    ),
    # A short custom command (0.2 s): a simulated board's counters may not move between the
    # two samples, and background CPU is not judged under BACKGROUND_WINDOW_S anyway.
    "a short trial with no CPU figure": (
        [Sample(t=0.0, arm_mhz=1500, throttled=0), Sample(t=0.2, arm_mhz=1500, throttled=0)],
        [],
    ),
    "a short interval that was throttled": (
        [Sample(t=0.0, throttled=0), Sample(t=0.2, throttled=0x50005)],
        [
            "throttled bits appeared during the trial: 0x50005 "
            f"({vcgencmd.throttle_summary(0x50005)})"
        ],
    ),
    "a long trial whose CPU time never advanced": (
        [Sample(t=0.0), Sample(t=1.5), Sample(t=3.0)],
        [
            "the board's CPU time did not advance (or went back) over the trial's 3.0 s, so "
            "background CPU could not be judged"
        ],
    ),
}


@pytest.mark.parametrize("samples, expected", SUSPECT_CASES.values(), ids=SUSPECT_CASES.keys())
def test_a_trial_is_suspect_for_the_reasons_its_telemetry_shows(samples, expected):
    assert suspect_reasons(samples, expected_arm_mhz=1500, involved={"tool"}) == expected


def test_the_summary_gives_the_clock_under_load_the_hottest_reading_and_the_bits_seen():
    samples = trial({"temp_c": 50.0}, {"temp_c": 61.5, "throttled": 0x8}, {"arm_mhz": 1400}, {})
    summary = summarize(samples)
    assert summary["n"] == len(samples) and summary["duration_s"] == samples[-1].t
    assert summary["arm_mhz_under_load"] == {"min": 1400, "median": 1500, "max": 1500}
    assert summary["temp_max_c"] == 61.5 and summary["throttled_seen"] == 0x8
    assert summary["procs_mean_pct"] == {"tool": 100.0}


def test_the_summary_weighs_each_interval_by_its_length():
    baseline, full, short = trial({"cpu_busy_pct": 60.0}, {"cpu_busy_pct": 20.0, "procs": {}})
    short = dataclasses.replace(short, t=full.t + 0.25)  # cut short by the stop
    summary = summarize([baseline, full, short])
    seconds = short.t - baseline.t
    assert summary["cpu_busy_mean_pct"] == pytest.approx((60 * 1 + 20 * 0.25) / seconds)
    assert summary["procs_mean_pct"] == {"tool": pytest.approx(100 * 1 / seconds)}


# --- the measurement's own process tree ---

# A 2-core board, 2 s of a trial: the measurement (a shell running a compiled program whose
# name nobody follows) keeps one core busy, then ends; the wrapper's `times` says it used
# 1.9 s of CPU in all. sshd (followed) used a little, outside the measurement's session.
TREE_LOG = """\
clk_tck 100
cpus 2
sample
uptime 100.00 0
stat cpu  1000 0 0 1000 0 0 0 0
core cpu0 500 0 0 500 0 0 0 0
core cpu1 500 0 0 500 0 0 0 0
self 0 0 0 0
proc sshd 7 100.00 - 0 0 0 0
end
sample
uptime 101.00 0
stat cpu  1100 0 2 1098 0 0 0 0
core cpu0 598 0 2 500 0 0 0 0
core cpu1 502 0 0 598 0 0 0 0
self 1 0 0 0
proc sshd 7 101.00 - 1 0 0 0
proc sh 41 101.00 trial 1 0 0 0
end
sample
uptime 102.00 0
stat cpu  1200 0 4 1196 0 0 0 0
core cpu0 696 0 4 500 0 0 0 0
core cpu1 504 0 0 696 0 0 0 0
self 2 0 0 0
proc sshd 7 102.00 - 2 0 0 0
trial_times 0m1.900000s 0m0.000000s
end
"""


def test_the_log_gives_each_core_the_sessions_processes_and_the_trees_cpu_time():
    baseline, first, last = parse_samples(TREE_LOG)
    assert first.cores_busy_pct == pytest.approx([100.0, 2.0])
    assert first.procs == {"sshd": pytest.approx(1.0), "sh": pytest.approx(1.0)}
    assert first.trial_procs_pct == pytest.approx(1.0) and last.trial_procs_pct is None
    assert (baseline.trial_cpu_s, first.trial_cpu_s, last.trial_cpu_s) == (None, None, 1.9)
    summary = summarize([baseline, first, last])
    assert summary["trial_cpu_s"] == 1.9
    assert summary["cores_busy_mean_pct"] == pytest.approx([100.0, 2.0])


def test_sshd_counts_the_commands_its_session_ran_and_reaped():
    # pifarm's round trips (a poll's shell and its sleeps) ended within the interval: their
    # time is in sshd's children's time, the engine's work. Another process's is not counted.
    log = TREE_LOG.replace("proc sshd 7 101.00 - 1 0 0 0", "proc sshd 7 101.00 - 1 0 40 10")
    log = log.replace("proc sh 41 101.00 trial 1 0 0 0", "proc sh 41 101.00 trial 1 0 30 0")
    first = parse_samples(log)[1]
    assert first.procs == {"sshd": pytest.approx(51.0), "sh": pytest.approx(1.0)}


def test_background_is_not_judged_over_less_than_a_second():
    busy = {"procs": {"tool": 100.0, "sshd": 90.0}, "cpu_busy_pct": 98.0, "sampler_pct": 0.0}
    baseline, second = trial(busy)
    short = [baseline, dataclasses.replace(second, t=validity.BACKGROUND_WINDOW_S - 0.05)]
    assert suspect_reasons(short, expected_arm_mhz=None, involved={"tool"}) == []
    assert suspect_reasons([baseline, second], expected_arm_mhz=None, involved={"tool"}) == [
        "background CPU averaged 48 % of the board (not the benchmark's processes; the limit "
        "is 25 %)"
    ]


def test_the_trees_cpu_time_read_in_a_block_too_close_to_the_last_still_counts():
    # The sampler's last sample (on its stop) came within the clock's resolution of the one
    # before: its block is skipped, but not the total it read.
    late = TREE_LOG.replace("uptime 102.00 0", "uptime 101.00 0", 1)
    samples = parse_samples(late)
    assert len(samples) == 2 and samples[-1].trial_cpu_s == 1.9


def test_the_measurements_whole_tree_is_its_own_work_not_background():
    samples = parse_samples(TREE_LOG)
    assert suspect_reasons(samples, expected_arm_mhz=None, involved={"sshd", "sh"}) == []
    # Without the tree's time, by names alone, the unnamed program is background.
    by_names = [dataclasses.replace(sample, trial_cpu_s=None) for sample in samples]
    assert suspect_reasons(by_names, expected_arm_mhz=None, involved={"sshd", "sh"}) == [
        "background CPU averaged 50 % of the board (not the benchmark's processes; "
        "the limit is 25 %)"
    ]


def test_other_work_during_the_measurement_is_still_background():
    # The same trial on a board where something else kept the second core busy too: 400 of
    # 400 ticks busy, 190 of them the measurement's, 2 sshd's, 2 the sampler's.
    busier = TREE_LOG.replace("1100 0 2 1098", "1198 0 2 1000").replace(
        "1200 0 4 1196", "1396 0 4 1000"
    )
    reasons = suspect_reasons(parse_samples(busier), expected_arm_mhz=None, involved={"sshd"})
    assert reasons == [
        "background CPU averaged 52 % of the board (not the benchmark's processes; "
        "the limit is 25 %)"
    ]


# --- a simulated board: its /proc/stat counts its capacity, a share of a host CPU ---

# A Pi 1 B node (one core at 700 MHz: 23 % of a host CPU, rounded here to 25 %): its /proc/stat
# total moves 25 ticks a second, what its core could do; busy and a process's ticks are host
# CPU time. Over 2 s the measurement (openvpn, in the trial's session) used 46 ticks, sshd 1 a
# second, the sampler 1 a second: the board was saturated by the measurement.
SIMULATED_LOG = """\
clk_tck 100
cpus 1
sample
uptime 100.00 0
stat cpu  1000 0 0 4000 0 0 0 0
core cpu0 1000 0 0 4000 0 0 0 0
self 0 0 0 0
proc openvpn 41 100.00 trial 0 0 0 0
proc sshd 7 100.00 - 0 0 0 0
end
sample
uptime 101.00 0
stat cpu  1025 0 0 4000 0 0 0 0
core cpu0 1025 0 0 4000 0 0 0 0
self 1 0 0 0
proc openvpn 41 101.00 trial 23 0 0 0
proc sshd 7 101.00 - 1 0 0 0
end
sample
uptime 102.00 0
stat cpu  1050 0 0 4000 0 0 0 0
core cpu0 1050 0 0 4000 0 0 0 0
self 2 0 0 0
proc openvpn 41 102.00 trial 46 0 0 0
proc sshd 7 102.00 - 2 0 0 0
trial_times 0m0.460000s 0m0.000000s
end
"""


def test_a_simulated_boards_process_cpu_is_of_one_of_its_own_cores():
    baseline, first, last = parse_samples(SIMULATED_LOG)
    assert first.cpu_busy_pct == 100.0
    assert first.procs == {"openvpn": pytest.approx(92.0), "sshd": pytest.approx(4.0)}
    assert first.sampler_pct == pytest.approx(4.0) and first.trial_procs_pct == pytest.approx(92.0)
    assert first.core_capacity == pytest.approx(0.25)
    assert summarize([baseline, first, last])["procs_mean_pct"]["openvpn"] == pytest.approx(92.0)


def test_a_simulated_boards_background_is_counted_in_its_own_units():
    involved = {"openvpn", "sshd"}
    samples = parse_samples(SIMULATED_LOG)
    assert suspect_reasons(samples, expected_arm_mhz=None, involved=involved) == []
    # The tree used half the board (23 of 50 ticks): sshd and the sampler 4, 23 someone else's.
    half = SIMULATED_LOG.replace("0m0.460000s", "0m0.230000s")
    reasons = suspect_reasons(parse_samples(half), expected_arm_mhz=None, involved=involved)
    assert reasons == [
        "background CPU averaged 46 % of the board (not the benchmark's processes; "
        "the limit is 25 %)"
    ]


# --- fuzzing the parser with what a broken or hostile board could print ---

KEYS = [
    "sample",
    "end",
    "vc",
    "uptime",
    "stat",
    "core",
    "loadavg",
    "cur_freq_khz",
    "thermal_milli_c",
    "swap_kb",
    "self",
    "proc",
    "trial_times",
    "clk_tck",
    "cpus",
    "pifarm-sampler",
]
VALUES = st.one_of(
    st.text(max_size=40),
    st.lists(st.integers(min_value=-5, max_value=10**30).map(str), max_size=11).map(" ".join),
    st.sampled_from(["cpu  1 2 3 4", "frequency(48)=1500000000", "temp=nan'C", "1e309", "x)"]),
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_samples(samples):
    assert all(isinstance(sample, Sample) for sample in samples)
    assert all(later.t > earlier.t for earlier, later in zip(samples, samples[1:], strict=False))
    json.dumps([sample.to_dict() for sample in samples], allow_nan=False)
    summarize(samples)
    suspect_reasons(samples, expected_arm_mhz=1500, involved={"sha1sum"})


@FUZZ
@given(st.text(max_size=2000))
def test_any_text_parses_without_crashing(text):
    check_samples(parse_samples(text))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(KEYS), VALUES), max_size=60))
def test_lines_in_the_sampler_vocabulary_with_junk_values_parse_without_crashing(lines):
    check_samples(parse_samples("\n".join(f"{key} {value}" for key, value in lines)))


@FUZZ
@given(st.integers(min_value=0, max_value=len(PI4_LOG)))
def test_a_log_cut_anywhere_gives_a_prefix_of_the_whole_log_samples(cut):
    part = parse_samples(PI4_LOG[:cut])
    assert part == parse_samples(PI4_LOG)[: len(part)]


@FUZZ
@given(st.data())
def test_a_log_with_lines_replaced_by_junk_parses_without_crashing(data):
    lines = PI4_LOG.splitlines()
    for _ in range(data.draw(st.integers(min_value=1, max_value=8))):
        index = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
        lines[index] = data.draw(st.one_of(VALUES, st.sampled_from(KEYS)))
    check_samples(parse_samples("\n".join(lines)))
