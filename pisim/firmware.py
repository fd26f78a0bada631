"""What the (simulated) firmware makes of config.txt: filters, defaults, effective values.

Pure functions, no I/O except through the `read_include` callback. Every rule cites
shared/reference/raspberry-pi.yaml ("yaml: <key>").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

# yaml: overclocking.options.<name>.defaults, per board family.
_COMMON_MIN = {"h264_freq_min": 250, "isp_freq_min": 250, "v3d_freq_min": 250}
FAMILY_DEFAULTS: dict[str, dict[str, int]] = {
    "pi1": {
        "arm_freq": 700,
        "core_freq": 250,
        "h264_freq": 250,
        "isp_freq": 250,
        "v3d_freq": 250,
        "sdram_freq": 400,
        "arm_freq_min": 700,
        "core_freq_min": 250,
        "gpu_freq_min": 250,
        "sdram_freq_min": 400,
        **_COMMON_MIN,
    },
    "pi3": {
        "arm_freq": 1200,
        "core_freq": 400,
        "h264_freq": 400,
        "isp_freq": 400,
        "v3d_freq": 400,
        "sdram_freq": 450,
        "arm_freq_min": 600,
        "core_freq_min": 250,
        "gpu_freq_min": 250,
        "sdram_freq_min": 400,
        **_COMMON_MIN,
    },
    "pi3p": {
        "arm_freq": 1400,
        "core_freq": 400,
        "h264_freq": 400,
        "isp_freq": 400,
        "v3d_freq": 400,
        "sdram_freq": 500,
        "arm_freq_min": 600,
        "core_freq_min": 250,
        "gpu_freq_min": 250,
        "sdram_freq_min": 400,
        "temp_soft_limit": 60,
        **_COMMON_MIN,
    },
    "pi4": {
        "arm_freq": 1500,
        "core_freq": 500,
        "h264_freq": 500,
        "isp_freq": 500,
        "v3d_freq": 500,
        "hevc_freq": 500,
        "sdram_freq": 3200,
        "arm_freq_min": 600,
        "core_freq_min": 200,
        "gpu_freq_min": 250,
        "sdram_freq_min": 3200,
        **_COMMON_MIN,
    },
    "pi5": {
        "arm_freq": 2400,
        "core_freq": 910,
        "isp_freq": 910,
        "v3d_freq": 910,
        "hevc_freq": 910,
        "sdram_freq": 4267,
        "arm_freq_min": 1500,
        "core_freq_min": 500,
        "gpu_freq_min": 500,
        "isp_freq_min": 500,
        "v3d_freq_min": 500,
        "sdram_freq_min": 4267,
    },
}
# The Pi 400 is a Pi 4 whose firmware raises arm_freq to 1800 (yaml: the same defaults tables).
FAMILY_DEFAULTS["pi400"] = {**FAMILY_DEFAULTS["pi4"], "arm_freq": 1800}
FAMILY_DEFAULTS["pi4_r14"] = dict(FAMILY_DEFAULTS["pi4"])  # 1500, 1800 with arm_boost=1

# yaml: overclocking.options.arm_64bit.defaults ("1 on Pi 4/400/CM4/CM4S, 0 elsewhere").
ARM_64BIT_DEFAULT = {"pi3": 0, "pi3p": 0, "pi4": 1, "pi4_r14": 1, "pi400": 1, "pi5": 1}

# yaml: config_txt_syntax.conditional_filters.models
MODEL_FILTERS = {
    "pi0",
    "pi0w",
    "pi02",
    "pi1",
    "pi2",
    "pi3",
    "pi3+",
    "pi4",
    "pi400",
    "pi5",
    "pi500",
    "cm4",
    "cm4s",
    "cm5",
}

# Options whose value is a string even when it looks like a number.
STRING_OPTIONS = {
    "kernel",
    "initramfs",
    "cmdline",
    "device_tree",
    "os_prefix",
    "overlay_prefix",
    "start_file",
    "fixup_file",
    "ramfsfile",
    "armstub",
    "hdmi_cvt",
    "hdmi_timings",
    "dtoverlay",
    "dtparam",
    "include",
}
GPU_CLOCKS = ("core_freq", "h264_freq", "isp_freq", "v3d_freq", "hevc_freq")

MAX_LINE = 98  # yaml: config_txt_syntax.limits.line_length
_INT_RE = re.compile(r"\s*(-?)(0x[0-9a-fA-F]+|\d+)")


@dataclass(frozen=True)
class Board:
    """What the firmware knows about the board when it evaluates filters."""

    family: str
    model_filters: frozenset[str]
    board_type: int
    serial: str
    tryboot: bool = False


@dataclass
class BootConfig:
    ints: dict[str, int] = field(default_factory=dict)
    strs: dict[str, str] = field(default_factory=dict)
    dtoverlays: list[str] = field(default_factory=list)
    dtparams: list[str] = field(default_factory=list)
    explicit: set[str] = field(default_factory=set)  # names set by a line that applied

    def to_dict(self) -> dict:
        """What the node's PID 1 and vcgencmd read (booted.json): all but `explicit`."""
        return {key: value for key, value in asdict(self).items() if key != "explicit"}


def parse_int(text: str) -> int | None:
    """Integer as the firmware reads it: decimal or 0x hex, parsing stops at the first
    non-digit (yaml: config_txt_syntax.limits.hazard)."""
    m = _INT_RE.match(text)
    if not m:
        return None
    value = int(m.group(2), 16) if m.group(2).lower().startswith("0x") else int(m.group(2))
    return -value if m.group(1) else value


def filter_match(text: str, board: Board) -> tuple[str, bool]:
    """(filter type, matches) for the inside of a [section] header.

    Filters of the same type replace each other, different types AND together
    (yaml: conditional_filters.rules)."""
    text = text.strip()
    low = text.lower()
    if low in MODEL_FILTERS:
        return "model", low in board.model_filters
    if low.startswith("board-type="):
        return "model", parse_int(low.split("=", 1)[1]) == board.board_type
    if re.fullmatch(r"0x[0-9a-f]{8}", low):
        return "serial", board.serial.lower().endswith(low[2:])
    if low == "tryboot":
        return "tryboot", board.tryboot
    m = re.fullmatch(r"gpio(\d+)=([01])", low)
    if m:
        # Nothing drives the pins of a simulated board: power-on pulls (GPIO 0-8 high).
        level = 1 if int(m.group(1)) <= 8 else 0
        return f"gpio{m.group(1)}", level == int(m.group(2))
    if low.startswith("hdmi:"):
        return "hdmi", True  # scopes HDMI options only (yaml: conditional_filters.others)
    if low.startswith("edid="):
        return "edid", False  # no monitor attached
    return f"other:{low}", False


def iter_lines(text: str, read_include: Callable[[str], str | None] | None, depth: int = 0):
    """Lines of config.txt with includes expanded (yaml: config_txt_syntax.lines)."""
    for raw in text.splitlines():
        line = raw[:MAX_LINE].strip()  # characters past 98 are ignored (yaml: limits)
        if not line or line.startswith("#"):
            continue
        if line.startswith("include ") or line.startswith("include\t"):
            name = line.split(None, 1)[1].strip()
            if read_include and depth < 4:
                inc = read_include(name)
                if inc is not None:
                    yield from iter_lines(inc, read_include, depth + 1)
            continue
        yield line


def parse_config(
    text: str, board: Board, read_include: Callable[[str], str | None] | None = None
) -> BootConfig:
    """Apply the lines of config.txt that match `board`; later lines win."""
    cfg = BootConfig()
    active: dict[str, bool] = {}
    for line in iter_lines(text, read_include):
        if line.startswith("["):
            inner = line[1 : line.index("]")] if "]" in line else line[1:]
            if inner.strip().lower() == "all":
                active = {}
            elif inner.strip().lower() == "none":
                active["none"] = False
            else:
                kind, ok = filter_match(inner, board)
                active[kind] = ok
            continue
        if not all(active.values()):
            continue
        if "=" not in line:
            # e.g. "initramfs initrd.img followkernel" (yaml: config_txt_syntax.lines)
            parts = line.split(None, 1)
            if parts[0] == "initramfs" and len(parts) == 2:
                cfg.strs["initramfs"] = parts[1]
                cfg.explicit.add("initramfs")
            continue
        name, value = line.split("=", 1)
        if not name or any(c.isspace() for c in name):
            continue  # "over_voltage = 2": not a name the firmware knows
        if name == "dtoverlay":
            cfg.dtoverlays.append(value)
        elif name == "dtparam":
            cfg.dtparams.append(value)
        elif name in STRING_OPTIONS:
            cfg.strs[name] = value
        else:
            number = parse_int(value)
            if number is None:
                cfg.strs[name] = value
            else:
                cfg.ints[name] = number
        cfg.explicit.add(name)
    return cfg


def effective_config(
    text: str,
    board: Board,
    mem_mb: int,
    gpu_mem: int = 76,
    read_include: Callable[[str], str | None] | None = None,
) -> BootConfig:
    """Family defaults overridden by the matching config.txt lines, plus the derived values
    the firmware computes (what `vcgencmd get_config` reports)."""
    parsed = parse_config(text, board, read_include)
    ints = dict(FAMILY_DEFAULTS.get(board.family, FAMILY_DEFAULTS["pi4"]))
    ints.update(
        {
            "temp_limit": 85,
            "total_mem": mem_mb,
            "gpu_mem": gpu_mem,
            "arm_64bit": ARM_64BIT_DEFAULT.get(board.family, 0),
        }
    )
    # gpu_freq sets all GPU clocks (yaml: overclocking.options.gpu_freq) unless set one by one.
    for src, targets in (
        ("gpu_freq", GPU_CLOCKS),
        ("gpu_freq_min", tuple(c + "_min" for c in GPU_CLOCKS)),
    ):
        if src in parsed.ints:
            for target in targets:
                if target in ints or target.startswith("core"):
                    ints[target] = parsed.ints[src]
    explicit_ints = {k: v for k, v in parsed.ints.items() if k not in ("gpu_freq", "gpu_freq_min")}
    ints.update(explicit_ints)
    for shorthand in ("gpu_freq", "gpu_freq_min"):  # reported as set, as well as expanded
        if shorthand in parsed.ints:
            ints[shorthand] = parsed.ints[shorthand]
    # yaml: arm_boost: "Pi 4B rev 1.4: 1800" when arm_freq is left alone.
    if board.family == "pi4_r14" and ints.get("arm_boost") and "arm_freq" not in parsed.ints:
        ints["arm_freq"] = 1800
    # yaml: temp_limit: "values over 85 are clamped to 85".
    ints["temp_limit"] = min(ints["temp_limit"], 85)
    # yaml: over_voltage range -16..8; 7 and 8 only with force_turbo=1.
    if "over_voltage" in ints:
        top = 8 if ints.get("force_turbo") else 6
        ints["over_voltage"] = max(-16, min(ints["over_voltage"], top))
    if board.family == "pi5":
        ints["arm_64bit"] = 1  # yaml: arm_64bit: Pi 5 is 64-bit only and ignores it
    strs = dict(parsed.strs)
    strs.setdefault("kernel", default_kernel(board.family, ints["arm_64bit"]))
    return BootConfig(
        ints=ints,
        strs=strs,
        dtoverlays=parsed.dtoverlays,
        dtparams=parsed.dtparams,
        explicit=parsed.explicit,
    )


def default_kernel(family: str, arm_64bit: int) -> str:
    # yaml: overclocking.options.kernel.defaults
    if family == "pi5":
        return "kernel_2712.img"
    if family.startswith("pi4") or family == "pi400":
        return "kernel8.img" if arm_64bit else "kernel7l.img"
    return "kernel8.img" if arm_64bit else "kernel7.img"


def governor_from(cmdline: str | None, default_file: str | None, fallback: str) -> str:
    """Boot-time governor: kernel default, cmdline.txt, then /etc/default/cpu_governor
    applied later by the raspi-config init script (yaml: governor.persistence)."""
    governor = fallback
    for token in (cmdline or "").split():
        if token.startswith("cpufreq.default_governor="):
            governor = token.split("=", 1)[1] or governor
    for line in (default_file or "").splitlines():
        line = line.strip()
        if line.startswith("CPU_DEFAULT_GOVERNOR="):
            value = line.split("=", 1)[1].strip().strip("\"'")
            governor = value or governor
    return governor
