"""The vcgencmd emulator: real output formats, values from the configuration of the last boot.

Formats: shared/reference/raspberry-pi.yaml, section vcgencmd.
"""

import re

import pytest

from pisim import Faults

from .sshutil import out, run, wait_for

pytestmark = pytest.mark.pisim


def test_output_formats_match_a_real_pi(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    lines = out(
        node,
        "for c in 'measure_clock arm' 'measure_clock core' measure_temp "
        "measure_volts get_throttled 'get_config arm_freq' 'get_mem gpu'; "
        "do vcgencmd $c; done",
    ).splitlines()
    clock_arm, clock_core, temp, volts, throttled, arm_freq, gpu = lines
    assert re.fullmatch(r"frequency\(48\)=\d+", clock_arm)
    assert re.fullmatch(r"frequency\(1\)=\d+", clock_core)
    assert re.fullmatch(r"temp=\d+\.\d'C", temp)
    assert re.fullmatch(r"volt=\d\.\d{4}V", volts)
    assert throttled == "throttled=0x0"
    assert arm_freq == "arm_freq=1800"
    assert gpu == "gpu=76M"


def test_get_config_int_str_version_and_commands(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    ints = out(node, "vcgencmd get_config int").splitlines()
    assert all(re.fullmatch(r"\w+=-?\d+", line) for line in ints)
    assert "arm_freq=1200" in ints and "arm_64bit=0" not in ints  # non-zero only
    assert "kernel=kernel7.img" in out(node, "vcgencmd get_config str").splitlines()
    version = out(node, "vcgencmd version").splitlines()
    assert version[1] == "Copyright (c) 2012 Broadcom"
    assert re.fullmatch(r"version [0-9a-f]{40} \(clean\) \(release\) \(start\)", version[2])
    assert out(node, "vcgencmd commands").startswith('commands="')
    assert "SIMULATED" in out(node, "vcgencmd --help")


def test_unknown_command_is_an_error(pisim_farm):
    status, stdout, _ = run(pisim_farm.nodes["pi3"], "vcgencmd frobnicate")
    assert stdout.strip() == 'error=1 error_msg="Command not registered"'
    assert status != 0


def test_vcgencmd_works_through_sudo_too(pisim_farm):
    assert (
        out(pisim_farm.nodes["pi3"], "sudo vcgencmd get_config arm_freq").strip() == "arm_freq=1200"
    )


def arm_hz(node, prefix=""):
    return int(out(node, f"{prefix}vcgencmd measure_clock arm").split("=")[1])


def test_arm_clock_follows_governor_and_load(pisim_node_factory):
    node = pisim_node_factory(profile="pi3b-legacy")
    assert 600e6 <= arm_hz(node) < 601e6  # idle under ondemand: arm_freq_min
    # PID 1 re-reads the load every 0.2 s: read the clock until it rises, up to 4 s into the load.
    busy = (
        "timeout 6 sh -c 'while :; do :; done' & i=0; while [ $i -lt 20 ]; do sleep 0.2; "
        "f=$(vcgencmd measure_clock arm); [ ${f#*=} -ge 1200000000 ] && break; i=$((i + 1)); "
        'done; kill $!; echo "$f"'
    )
    assert 1200e6 <= int(out(node, busy).split("=")[1]) < 1201e6
    node.run_as_root(
        ["sh", "-c", "echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"],
        check=True,
    )
    assert 1200e6 <= arm_hz(node) < 1201e6
    assert (
        out(node, "cat /sys/devices/system/cpu/cpu1/cpufreq/scaling_governor").strip()
        == "performance"
    )  # one policy for all cores, like a Pi


def test_values_follow_the_last_boot_not_the_edited_file(pisim_node_factory):
    node = pisim_node_factory(downtime=0.5)
    before = node.boot_id
    config = node.read_file("/boot/firmware/config.txt").decode()
    node.write_file(
        "/boot/firmware/config.txt", config + "[pi4]\narm_freq=2000\nforce_turbo=1\n[all]\n"
    )
    node.write_file("/boot/firmware/tryboot.txt", config)  # present, but no tryboot asked
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=1800"
    run(node, "sudo reboot")
    wait_for(lambda: node.boot_id != before, what="reboot")
    node.wait_ssh()
    assert out(node, "vcgencmd get_config arm_freq").strip() == "arm_freq=2000"
    assert 2000e6 <= arm_hz(node) < 2001e6  # force_turbo pins the maximum
    assert node.booted_config["arm_freq"] == 2000 and node.booted_config["force_turbo"] == 1
    assert (
        out(node, "cat /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").strip() == "2000000"
    )


def test_the_samplers_readings_come_from_sh_and_agree_with_the_emulator(pisim_node_factory):
    """The three readings the sampler takes each second must not start a Python (its cost
    sits in the node's CPU quota): with pisim-vcgencmd off PATH they still answer, as it does."""
    node = pisim_node_factory(profile="pi3b-legacy")
    governor = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
    node.run_as_root(["sh", "-c", 'echo powersave > "$1"', "sh", governor], check=True)
    for reading in ("measure_clock arm", "measure_temp", "get_throttled"):
        quick = out(node, f"PATH=/usr/bin:/bin /usr/local/bin/vcgencmd {reading}").strip()
        full = out(node, f"pisim-vcgencmd {reading}").strip()
        if reading == "measure_clock arm":  # the same clock, each with its own small jitter
            assert re.fullmatch(r"frequency\(45\)=600\d{6}", quick)
            assert quick[:-6] == full[:-6]
        elif reading == "measure_temp":  # it moves a little between the two readings
            assert re.fullmatch(r"temp=\d+\.\d'C", quick)
            assert float(quick[5:-2]) == pytest.approx(float(full[5:-2]), abs=1)
        else:
            assert quick == full


def test_a_hostile_nodes_readings_all_come_from_the_emulator(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(hostile=("markup",)))
    status, _, error = run(node, "PATH=/usr/bin:/bin /usr/local/bin/vcgencmd get_throttled")
    assert status == 127 and "pisim-vcgencmd" in error
    assert out(node, "vcgencmd get_throttled").strip() == "throttled=0x0"
