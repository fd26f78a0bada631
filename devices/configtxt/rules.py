"""One table of config.txt options: value type, documented range, boards, defaults.

Overclocking facts are from shared/reference/raspberry-pi.yaml (keys cited per entry). Options
the yaml does not list come from the official config.txt pages, cited by file name:
raspberrypi/documentation documentation/asciidoc/computers/config_txt/*.adoc and
legacy_config_txt/*.adoc (boot, common, video, memory, audio, camera, gpio, misc,
codeclicence, autoboot, overclocking).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

__all__ = [
    "BOOT_OPTIONS",
    "FAMILIES",
    "FAMILY_NAMES",
    "RULES",
    "Rule",
    "UNKNOWN_HINTS",
    "far_above",
    "rule_for",
]

# raspberry-pi.yaml: overclocking.options (family keys, in the order of its comment)
FAMILIES = ("pi0", "pi1", "pi2", "pi3", "pi3p", "pi4", "pi4_r14", "pi400", "pi02", "pi5")
# What pages call each family (its key is for code and files only).
FAMILY_NAMES = {
    "pi0": "Zero / Zero W",
    "pi1": "Pi 1",
    "pi2": "Pi 2",
    "pi3": "Pi 3B",
    "pi3p": "Pi 3A+ / 3B+",
    "pi02": "Zero 2 W",
    "pi4": "Pi 4B up to rev 1.3, CM4",
    "pi4_r14": "Pi 4B rev 1.4",
    "pi400": "Pi 400",
    "pi5": "Pi 5",
}
PI4 = frozenset({"pi4", "pi4_r14", "pi400"})
PI4_AND_LATER = PI4 | {"pi5"}
BEFORE_PI4 = frozenset(FAMILIES) - PI4_AND_LATER
NOT_PI5 = frozenset(FAMILIES) - {"pi5"}
ALL = "*"  # a cautions/warn_above key meaning every family


@dataclass(frozen=True)
class Rule:
    kind: str = "str"  # "int": the firmware reads an integer (decimal or 0x hex); "str": text
    lo: int | None = None  # documented range: outside it is an error (a warning if boot_safe)
    hi: int | None = None
    boot_safe: bool = False  # display or audio: a wrong value cannot stop the board booting
    boards: frozenset[str] | None = None  # families where it does something; None: all
    why_not: str = ""  # said when it is set on a board outside `boards`
    defaults: Mapping[str, int] = field(default_factory=dict)
    cautions: Mapping[str, str] = field(default_factory=dict)  # family -> true warning if set
    warn_above: Mapping[str, tuple[int, str]] = field(default_factory=dict)  # reported limits
    below_default: str = ""  # warning when the value is below the family's default
    overclock: bool = False  # a clock, voltage or thermal setting: what presets are made of
    stock: bool = False  # stock OS files set it in model sections: never report it hidden
    accumulates: bool = False  # every line adds to the list (dtoverlay) instead of replacing
    mhz: bool = False  # a clock frequency: far above the family's figures is an error


def _d(*values: int | None) -> dict[str, int]:
    """Defaults per family, given in FAMILIES order (None: not applicable)."""
    return {f: v for f, v in zip(FAMILIES, values, strict=True) if v is not None}


def _freq(defaults: dict[str, int], **kw) -> Rule:
    # raspberry-pi.yaml: overclocking.general "Frequencies in MHz"; below 0 is meaningless
    # (inference), and no upper limit is documented except core_freq on Pi 4.
    return Rule("int", lo=0, defaults=defaults, overclock=True, mhz=True, **kw)


def _volt(**kw) -> Rule:
    # raspberry-pi.yaml: overclocking.options.over_voltage.range "-16..8" (steps of 0.025 V)
    return Rule("int", -16, 8, overclock=True, **kw)


_NO_SDRAM = "the SDRAM frequency cannot be set on Pi 4 and later"
# Which boards have a clock at all, said once for the frequency and its minimum.
_H264_BLOCK = {"boards": NOT_PI5, "why_not": "a Pi 5 has no H.264 block clock"}
_HEVC_BLOCK = {"boards": PI4_AND_LATER, "why_not": "there is no HEVC block before Pi 4"}
_SDRAM_CLOCK = {"boards": BEFORE_PI4, "why_not": _NO_SDRAM}
_NO_SDRAM_V = "SDRAM voltages cannot be set on Pi 4 and later"
_FIXED_V = "on Pi 4, setting over_voltage switches off automatic voltage scaling (fixed voltage)"

RULES: dict[str, Rule] = {
    # raspberry-pi.yaml: overclocking.options.arm_freq (defaults; reported_limits are
    # observations, so they warn rather than fail)
    "arm_freq": _freq(
        _d(1000, 700, 900, 1200, 1400, 1500, 1500, 1800, 1000, 2400),
        warn_above={
            "pi3": (1600, "reported as the PLL limit of a Pi 3"),
            **dict.fromkeys(PI4, (2500, "a Pi 4 set above about 2500 was seen stuck at 600")),
            "pi5": (3000, "a Pi 5 was seen capped at 3000 whatever was set"),
        },
    ),
    # raspberry-pi.yaml: overclocking.options.arm_boost. Stock Raspberry Pi OS files set it for
    # every board, so no board check (common.adoc says it only acts on 4B rev 1.4+ and 400).
    "arm_boost": Rule("int", 0, 1, overclock=True, stock=True),
    # raspberry-pi.yaml: overclocking.options.gpu_freq (no defaults of its own)
    "gpu_freq": _freq({}),
    # raspberry-pi.yaml: overclocking.options.core_freq (Pi 4 maximum: see board_checks.py)
    "core_freq": _freq(_d(400, 250, 250, 400, 400, 500, 500, 500, 400, 910)),
    # raspberry-pi.yaml: overclocking.options.h264_freq (n/a on Pi 5; pi4_r14: overclocking.adoc)
    "h264_freq": _freq(
        _d(300, 250, 250, 400, 400, 500, 500, 500, 300, None),
        **_H264_BLOCK,
    ),
    # raspberry-pi.yaml: overclocking.options.isp_freq and v3d_freq (pi4_r14 from overclocking.adoc)
    "isp_freq": _freq(_d(300, 250, 250, 400, 400, 500, 500, 500, 300, 910)),
    "v3d_freq": _freq(_d(300, 250, 250, 400, 400, 500, 500, 500, 300, 910)),
    # raspberry-pi.yaml: overclocking.options.hevc_freq.note "not on Pi 0-3 / Zero 2 W"
    "hevc_freq": _freq(
        _d(None, None, None, None, None, 500, 500, 500, None, 910),
        **_HEVC_BLOCK,
    ),
    # raspberry-pi.yaml: overclocking.options.sdram_freq and overclocking.general
    "sdram_freq": _freq(
        _d(450, 400, 450, 450, 500, 3200, 3200, 3200, 450, 4267),
        **_SDRAM_CLOCK,
    ),
    # raspberry-pi.yaml: overclocking.options.arm_freq_min.note (overclocking.adoc: below the
    # default "does not result in any significant power savings, and is not currently supported")
    "arm_freq_min": _freq(
        _d(700, 700, 600, 600, 600, 600, 600, 600, 600, 1500),
        below_default="a minimum below the default saves little power and is not supported",
    ),
    # raspberry-pi.yaml: overclocking.options.core_freq_min, gpu_freq_min, h264_freq_min,
    # isp_freq_min, v3d_freq_min, sdram_freq_min (shorthand keys expanded per family)
    "core_freq_min": _freq(_d(250, 250, 250, 250, 250, 200, 200, 200, 250, 500)),
    "gpu_freq_min": _freq(_d(250, 250, 250, 250, 250, 250, 250, 250, 250, 500)),
    "h264_freq_min": _freq(
        _d(250, 250, 250, 250, 250, 250, 250, 250, 250, None),
        **_H264_BLOCK,
    ),
    "isp_freq_min": _freq(_d(250, 250, 250, 250, 250, 250, 250, 250, 250, 500)),
    "v3d_freq_min": _freq(_d(250, 250, 250, 250, 250, 250, 250, 250, 250, 500)),
    # overclocking.adoc lists hevc_freq_min without defaults; boards as hevc_freq
    "hevc_freq_min": _freq({}, **_HEVC_BLOCK),
    "sdram_freq_min": _freq(
        _d(400, 400, 400, 400, 400, 3200, 3200, 3200, 400, 4267),
        **_SDRAM_CLOCK,
    ),
    # raspberry-pi.yaml: overclocking.options.over_voltage (notes: Pi 4 fixed-voltage mode,
    # deprecated on Pi 5; values 7 and 8 and the warranty bit: see board_checks.py)
    "over_voltage": _volt(
        defaults=_d(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        cautions={
            **dict.fromkeys(PI4, _FIXED_V),
            "pi5": "over_voltage is deprecated on Pi 5; over_voltage_delta replaces it",
        },
    ),
    # raspberry-pi.yaml: overclocking.options.over_voltage_min.note "deprecated on Pi 4 and Pi 5"
    "over_voltage_min": _volt(
        cautions=dict.fromkeys(PI4_AND_LATER, "over_voltage_min is deprecated on Pi 4 and Pi 5"),
    ),
    # raspberry-pi.yaml: overclocking.options.over_voltage_delta (microvolts; no documented range)
    "over_voltage_delta": Rule(
        "int", boards=PI4_AND_LATER, why_not="it exists only on Pi 4 and Pi 5", overclock=True
    ),
    # raspberry-pi.yaml: overclocking.options.over_voltage_sdram, _c, _i, _p (not on Pi 4+)
    **{
        name: _volt(boards=BEFORE_PI4, why_not=_NO_SDRAM_V)
        for name in ("over_voltage_sdram", "over_voltage_sdram_c")
        + ("over_voltage_sdram_i", "over_voltage_sdram_p")
    },
    # raspberry-pi.yaml: overclocking.options.force_turbo (values [0, 1])
    "force_turbo": Rule("int", 0, 1, overclock=True),
    # raspberry-pi.yaml: overclocking.options.initial_turbo (max 60 s)
    "initial_turbo": Rule("int", 0, 60, overclock=True),
    # raspberry-pi.yaml: overclocking.options.temp_limit ("values over 85 are clamped to 85")
    "temp_limit": Rule(
        "int", overclock=True, warn_above={ALL: (85, "the firmware clamps it to 85")}
    ),
    # raspberry-pi.yaml: overclocking.options.temp_soft_limit ("3A+/3B+ only", max 70)
    "temp_soft_limit": Rule(
        "int",
        hi=70,
        boards=frozenset({"pi3p"}),
        why_not="it exists only on the 3A+ and 3B+",
        overclock=True,
    ),
    # raspberry-pi.yaml: overclocking.options.dvfs ("Pi 4 only", 1..3, "removed on Pi 5")
    "dvfs": Rule(
        "int",
        1,
        3,
        boards=PI4,
        why_not="it exists only on Pi 4 (removed on Pi 5)",
        overclock=True,
    ),
    # raspberry-pi.yaml: overclocking.options.hdmi_enable_4kp60 (common.adoc: Pi 4, CM4, 400 only)
    "hdmi_enable_4kp60": Rule(
        "int", 0, 1, boards=PI4, why_not="it applies only to the Pi 4 family", stock=True
    ),
    # raspberry-pi.yaml: overclocking.options.never_over_voltage (legacy: an OTP bit, forever)
    "never_over_voltage": Rule(
        "int",
        0,
        1,
        cautions={ALL: "never_over_voltage=1 forbids overvoltage forever (it burns an OTP bit)"},
    ),
    # raspberry-pi.yaml: overclocking.options.disable_auto_turbo ("legacy, Pi 2/3")
    "disable_auto_turbo": Rule(
        "int", boards=frozenset({"pi2", "pi3", "pi3p"}), why_not="it is a Pi 2/3 option"
    ),
    # raspberry-pi.yaml: overclocking.options.arm_64bit. No board check: stock Bookworm files set
    # it for every board, and the firmware of boards without 64-bit support ignores it.
    "arm_64bit": Rule("int"),
    # misc.adoc: "deprecated and has no effect"; boot.adoc: arm_control is deprecated
    "max_usb_current": Rule("int", boards=frozenset(), why_not="current firmware ignores it"),
    "arm_control": Rule("int", cautions={ALL: "arm_control is deprecated; use arm_64bit"}),
    # video.adoc: "Valid options are 0, 1, and 2"; "minimum is 0 and the maximum is 11"; tables
    # A wrong display value leaves a blank or odd screen, never a board that does not boot:
    # out of range is a warning for these (issue 6: a config.txt that boots is not refused).
    "max_framebuffers": Rule("int", 0, 2, boot_safe=True),
    "config_hdmi_boost": Rule("int", 0, 11, boot_safe=True),
    "hdmi_group": Rule("int", 0, 2, boot_safe=True),
    "hdmi_drive": Rule("int", 1, 2, boot_safe=True),
    "hdmi_pixel_encoding": Rule("int", 0, 4, boot_safe=True),
    "hdmi_blanking": Rule("int", 0, 1, boot_safe=True),
    "sdtv_aspect": Rule("int", 1, 3, boot_safe=True),
    "edid_content_type": Rule("int", 0, 4, boot_safe=True),
    # misc.adoc: avoid_warnings 1 or 2; memory.adoc: "The minimum value is 16"
    "avoid_warnings": Rule("int", 0, 2, boot_safe=True),
    **{name: Rule("int", lo=16) for name in ("gpu_mem", "gpu_mem_256", "gpu_mem_512")},
    "gpu_mem_1024": Rule("int", lo=16),
}

# Documented options taking an integer (flags, sizes, addresses) with no documented range.
_INT_OPTIONS = """
auto_initramfs camera_auto_detect display_auto_detect disable_overscan disable_fw_kms_setup
disable_splash enable_uart uart_2ndstage upstream_kernel start_x start_debug start_cd
force_eeprom_read disable_poe_fan enable_gic arm_peri_high kernel_old disable_commandline_tags
disable_l2cache otg_mode enable_tvout ignore_lcd disable_touchscreen enable_dpi_lcd hdmi_safe
hdmi_force_hotplug hdmi_ignore_hotplug disable_camera_led awb_auto_is_greyworld
disable_audio_dither enable_audio_dither hdmi_force_mode dispmanx_offline overscan_scale
framebuffer_ignore_alpha hdmi_edid_file hdmi_force_edid_audio hdmi_ignore_edid_audio
hdmi_force_edid_3d hdmi_ignore_cec_init hdmi_ignore_cec sdtv_disable_colourburst
power_force_3v3_pwm tryboot_a_b usb_max_current_enable display_default_lcd total_mem
boot_delay boot_delay_ms bootcode_delay init_uart_baud init_uart_clock framebuffer_width
framebuffer_height framebuffer_depth max_framebuffer_width max_framebuffer_height
framebuffer_priority overscan_left overscan_right overscan_top overscan_bottom hdmi_mode
sdtv_mode lcd_framerate lcd_rotate display_rotate display_hdmi_rotate display_lcd_rotate
test_mode pwm_sample_bits audio_pwm_mode logging_level hdmi_max_pixel_freq dpi_group dpi_mode
dpi_output_format hdmi_ignore_edid kernel_address ramfsaddr device_tree_address
device_tree_end kernel_watchdog_timeout enable_jtag_gpio psu_max_current dtdebug
boot_partition
""".split()

# Documented options whose value is text (file names, lists, timings, licence keys), and newer
# boot options (os_check ... boot_load_flags) known by name whose values are not checked.
_TEXT_OPTIONS = """
kernel cmdline ramfsfile armstub os_prefix overlay_prefix start_file fixup_file device_tree
hdmi_cvt hdmi_timings dpi_timings hdmi_edid_filename cec_osd_name decode_MPG2 decode_WVC1
os_check bootloader_update eeprom_write_protect kernel_watchdog_partition pciex4_reset
boot_ramdisk boot_load_flags
""".split()

# What decides which files the firmware loads and how the kernel starts (boot.adoc, autoboot.adoc;
# raspberry-pi.yaml: overclocking.options.kernel and arm_64bit, tryboot). Normal in a board's
# file, but a preset is about clocks, voltages and the governor: there they need a staff user's
# acknowledgment, as a wrong one leaves a board that does not boot.
BOOT_OPTIONS = frozenset(
    """
kernel kernel_old kernel_address cmdline os_prefix overlay_prefix start_file fixup_file start_x
start_debug start_cd device_tree device_tree_address device_tree_end initramfs ramfsfile
ramfsaddr auto_initramfs armstub arm_64bit arm_control upstream_kernel disable_commandline_tags
boot_partition boot_ramdisk boot_load_flags os_check tryboot_a_b kernel_watchdog_partition
""".split()
)

# dtoverlay/dtparam/gpio lines add up instead of replacing each other (common.adoc, gpio.adoc).
_LISTS = ("dtoverlay", "dtparam", "gpio")

for _name in _INT_OPTIONS:
    RULES.setdefault(_name, Rule("int"))
for _name in _TEXT_OPTIONS:
    RULES.setdefault(_name, Rule("str"))
for _name in _LISTS:
    RULES[_name] = Rule("str", accumulates=True)

# What people put in config.txt that belongs elsewhere (raspberry-pi.yaml: governor.persistence).
_GOVERNOR = (
    "the CPU governor is not a config.txt option: it is set in Linux "
    "(cpufreq.default_governor= in cmdline.txt, or /etc/default/cpu_governor)"
)
UNKNOWN_HINTS = {"governor": _GOVERNOR, "scaling_governor": _GOVERNOR, "cpu_governor": _GOVERNOR}


def rule_for(key: str | None) -> Rule | None:
    """The rule for an option name, with or without an HDMI port suffix ("hdmi_mode:1")."""
    if not key:
        return None
    return RULES.get(key.split(":", 1)[0])


# A clock more than this many times the highest figure the reference gives a family (its
# default or a reported limit) is a typo or an attack, not an overclock: an error.
FAR_FACTOR = 2
# gpu_freq sets core_freq and the block clocks together, and has no figures of its own.
_FIGURES_OF = {"gpu_freq": "core_freq"}


@cache  # a few dozen clocks times ten families; asked for every line of a file
def far_above(name: str, family: str) -> int | None:
    """The value above which a clock (an option name, no ":N" port) is an error on this
    family; None for non-clocks. A minimum shares its maximum's limit (arm_freq_min=arm_freq
    pins the clock)."""
    rule = RULES.get(name)
    if rule is None or not rule.mhz:
        return None
    base = name.removesuffix("_min")
    rule = RULES.get(_FIGURES_OF.get(base, base), rule)
    figures = _figures(rule, family) or [v for f in FAMILIES for v in _figures(rule, f)]
    return FAR_FACTOR * max(figures) if figures else None


def _figures(rule: Rule, family: str) -> list[int]:
    limit = rule.warn_above.get(family) or rule.warn_above.get(ALL)
    return [v for v in (rule.defaults.get(family), limit and limit[0]) if v]
