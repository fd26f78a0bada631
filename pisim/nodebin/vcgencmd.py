#!/usr/bin/python3
"""vcgencmd -- SIMULATED by pisim (no VideoCore here).

Installed as /usr/local/bin/pisim-vcgencmd inside each simulated Raspberry Pi, behind the sh
vcgencmd (nodebin/vcgencmd.sh) that answers the sampler's readings itself. Output formats follow a
real Pi (see shared/reference/raspberry-pi.yaml: vcgencmd); the values follow the
configuration read at the node's last simulated boot (/run/pisim/booted.json), the governor in
the simulated cpufreq sysfs and the CPU load of this node's own processes. Under ondemand the
Arm clock is the one the node's PID 1 chose (scaling_cur_freq), which its CPU quota follows.
Standalone on purpose: only the standard library, no pisim import.
"""

import json
import os
import random
import sys
import time

BOOTED = "/run/pisim/booted.json"
POLICY = "/sys/devices/system/cpu/cpufreq/policy0"
THERMAL = "/sys/class/thermal/thermal_zone0/temp"
USAGE = """\
Usage: vcgencmd command [ params ]
Send a command to the VideoCore and print the result.

Without any argument this information is shown.

Use the command 'vcgencmd commands' to get a list of available commands

Exit status:
   0    command completed successfully
 else   VideoCore returned an error

SIMULATED: this vcgencmd is the pisim emulator; values are simulated.
"""
COMMANDS = (
    "version, commands, get_mem, measure_clock, measure_volts, get_throttled, "
    "measure_temp, get_config"
)
# A hostile node's output (the same values as pisim.hostile, which this file cannot import).
MARKUP = b'<script>alert(1)</script>"><img src=x onerror=alert(2)>'
BINARY = b"\x00\xff\xfe\xc3\x28 (NUL and invalid UTF-8)"
FLOOD = b"flood " * 10 + b"\n"
# Fixed peripheral clocks in Hz (the rest follow the booted configuration).
FIXED_CLOCKS = {
    "uart": 48000000,
    "pwm": 0,
    "emmc": 250000000,
    "pixel": 0,
    "vec": 0,
    "hdmi": 0,
    "dpi": 0,
}


def node_ticks(skip: int) -> int:
    """CPU ticks used by this node's processes (its /proc only lists the node's)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, skip):
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total


def busy(window: float = 0.05) -> bool:
    """Sample the node's load over ~50 ms: is some process of the node using the CPU?"""
    me = os.getpid()
    before = node_ticks(me)
    time.sleep(window)
    return node_ticks(me) - before >= 1  # >= 10 ms of CPU in 50 ms: busy (ondemand)


def governor() -> str:
    try:
        with open(f"{POLICY}/scaling_governor") as f:
            return f.read().strip()
    except OSError:
        return "ondemand"


def arm_mhz(booted: dict) -> int:
    # yaml: overclocking.general: busy cores at arm_freq, idle at arm_freq_min;
    # force_turbo=1 pins the maximum; arm_freq is only reached through the governor (FW956).
    ints = booted["config"]["ints"]
    gov = governor()
    if ints.get("force_turbo") or gov == "performance":
        mhz = ints["arm_freq"]
    elif gov in ("powersave", "userspace"):
        mhz = ints["arm_freq_min"]
    else:
        mhz = ondemand_mhz(ints)
    if booted["profile"]["family"] == "pi5":
        mhz = min(mhz, 3000)  # yaml: arm_freq.reported_limits.pi5
    return mhz


def ondemand_mhz(ints: dict) -> int:
    """The clock PID 1 chose from the node's load, which the node's CPU quota follows."""
    try:
        with open(f"{POLICY}/scaling_cur_freq") as f:
            return int(f.read()) // 1000
    except (OSError, ValueError):
        return ints["arm_freq_min"]


def hz(mhz: int) -> int:
    # Real readings are a little off the nominal value, e.g. frequency(48)=1500345728.
    return mhz * 1000000 + random.randint(0, mhz * 250) if mhz else 0  # noqa: S311


def measure_clock(booted: dict, args: list) -> str:
    ints = booted["config"]["ints"]
    ids = booted["profile"]["clock_ids"]
    name = args[0] if args else "arm"
    if name == "arm":
        value = hz(arm_mhz(booted))
    elif name in ("core", "h264", "isp", "v3d", "hevc"):
        top = ints.get(f"{name}_freq", 0)
        low = ints.get(f"{name}_freq_min", top)
        full = ints.get("force_turbo") or governor() == "performance" or busy()
        value = hz(top if full else low)
    else:
        value = FIXED_CLOCKS.get(name, 0)
    return f"frequency({ids.get(name, 0)})={value}"


def measure_volts(booted: dict, args: list) -> str:
    ints = booted["config"]["ints"]
    prof = booted["profile"]
    which = args[0] if args else "core"
    if which == "core":
        mhz = arm_mhz(booted)
        span = max(ints["arm_freq"] - ints["arm_freq_min"], 1)
        volts = prof["volts_idle"] + (prof["volts_busy"] - prof["volts_idle"]) * (
            (mhz - ints["arm_freq_min"]) / span
        )
        # yaml: over_voltage: 0.025 V steps; over_voltage_delta in microvolts.
        volts += 0.025 * ints.get("over_voltage", 0) + ints.get("over_voltage_delta", 0) / 1e6
    else:
        volts = 1.1 + 0.025 * ints.get("over_voltage_sdram", ints.get(f"over_voltage_{which}", 0))
    return f"volt={volts:.4f}V"  # yaml: vcgencmd.measure_volts "volt=0.8700V"


def measure_temp(_booted: dict, _args: list) -> str:
    try:
        with open(THERMAL) as f:
            milli = int(f.read().strip())
    except (OSError, ValueError):
        milli = 45000
    return f"temp={milli / 1000:.1f}'C"  # yaml: vcgencmd.measure_temp


def get_config(booted: dict, args: list) -> str:
    cfg = booted["config"]
    if not args:
        return 'error=2 error_msg="Invalid arguments"'
    what = args[0]
    if what == "int":
        return "\n".join(f"{k}={v}" for k, v in sorted(cfg["ints"].items()) if v)
    if what == "str":
        return "\n".join(f"{k}={v}" for k, v in sorted(cfg["strs"].items()))
    if what in cfg["ints"]:
        return f"{what}={cfg['ints'][what]}"
    if what in cfg["strs"]:
        return f"{what}={cfg['strs'][what]}"
    return f"{what}=0"


def get_mem(booted: dict, args: list) -> str:
    ints = booted["config"]["ints"]
    gpu = ints.get("gpu_mem", 76)
    which = args[0] if args else "arm"
    if which == "gpu":
        return f"gpu={gpu}M"
    return f"arm={min(ints.get('total_mem', 1024), 1024) - gpu}M"  # yaml: vcgencmd.get_mem


def main(argv: list) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    try:
        with open(BOOTED) as f:
            booted = json.load(f)
    except OSError:
        print("Can't open device file: /dev/vcio (pisim: node not booted)")
        return 255
    cmd, args = argv[0], argv[1:]
    handlers = {
        "measure_clock": measure_clock,
        "measure_volts": measure_volts,
        "measure_temp": measure_temp,
        "get_config": get_config,
        "get_mem": get_mem,
        "get_throttled": lambda b, a: f"throttled={b.get('throttled', 0):#x}",
        "version": lambda b, a: b["profile"]["firmware_version"].rstrip("\n"),
        "commands": lambda b, a: f'commands="{COMMANDS}"',
    }
    if cmd not in handlers:
        print('error=1 error_msg="Command not registered"')
        return 1
    out = handlers[cmd](booted, args)
    traits = booted.get("hostile", [])
    if traits:
        return hostile_reply(out, cmd, traits)
    print(out)
    return 2 if out.startswith("error=") else 0


def hostile_reply(out: str, cmd: str, traits: list) -> int:
    """What a hostile board's vcgencmd prints (pisim.hostile): its version carries markup or
    bytes that are not text, and a flood follows every answer."""
    data = out.encode()
    if cmd == "version":
        date, _, rest = data.partition(b"\n")
        if "markup" in traits:
            date = MARKUP + b" " + date
        if "binary" in traits:
            date = BINARY + b" " + date
        data = date + b"\n" + rest
    try:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.buffer.flush()
        while "flood" in traits:  # until the reader goes away
            sys.stdout.buffer.write(FLOOD)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
