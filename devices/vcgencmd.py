"""Parsers for the text that ``vcgencmd`` prints on a Raspberry Pi.

Pure functions, no Django and no I/O. Output formats are those of
shared/reference/raspberry-pi.yaml, section ``vcgencmd`` (keys cited inline). Every
parser raises VcgencmdError (a ValueError) with a readable message on anything else, including
the firmware's own error replies, and never another exception type: the text comes from a
remote board and may be anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "ThrottleFlag",
    "VcgencmdError",
    "decode_throttled",
    "parse_clock",
    "parse_get_config",
    "parse_temp",
    "parse_throttled",
    "parse_version",
    "parse_volts",
    "throttle_summary",
]


class VcgencmdError(ValueError):
    """vcgencmd output that is an error reply or not in the expected format."""


@dataclass(frozen=True)
class ThrottleFlag:
    bit: int
    now: bool  # True for the "currently" bits 0-3, False for the sticky "since boot" bits
    words: str


# raspberry-pi.yaml: vcgencmd.get_throttled.bits (0-3 = now, 16-19 = since boot, sticky)
_THROTTLE_WORDS = {
    0: "under-voltage detected now",
    1: "Arm frequency capped now",
    2: "throttled now",
    3: "soft temperature limit active now",
    16: "under-voltage has occurred since boot",
    17: "Arm frequency capped has occurred since boot",
    18: "throttling has occurred since boot",
    19: "soft temperature limit has occurred since boot",
}

# raspberry-pi.yaml: vcgencmd.basics (error=1 error_msg="Command not registered"); the other
# two are what vcgencmd prints when the mailbox call fails or the reply buffer is too small.
_ERROR_PATTERNS = (
    re.compile(r'error=-?\d+\s+error_msg="[^"]*"'),
    re.compile(r"vc_gencmd_read_response returned -?\d+"),
    re.compile(r"ioctl_set_msg failed:\s*-?\d+"),
    re.compile(r"VCHI initiali[sz]ation failed"),
    re.compile(r"Can't open device file: \S+"),
)

_NUMBER = r"(-?\d{1,20}(?:\.\d{1,20})?)"
# raspberry-pi.yaml: vcgencmd.measure_clock.output: the bracketed id differs per SoC (0 on Pi 5)
_CLOCK = re.compile(r"frequency\(\d+\)=(\d{1,20})")  # bounded: int() refuses >4300 digits
# raspberry-pi.yaml: vcgencmd.measure_temp.output
_TEMP = re.compile(r"temp=" + _NUMBER + r"'C")
# raspberry-pi.yaml: vcgencmd.measure_volts.output; pmic_read_adc lines carry "volt(N)="
_VOLTS = re.compile(r"(?:\S+\s+)?volt(?:\(\d+\))?=" + _NUMBER + r"V")
# raspberry-pi.yaml: vcgencmd.get_throttled.output
_THROTTLED = re.compile(r"throttled=0x([0-9a-fA-F]{1,8})")
# raspberry-pi.yaml: vcgencmd.get_config (names may carry ":N"; values may be empty or hex)
_CONFIG_LINE = re.compile(r"([A-Za-z0-9_.]+(?::\d+)?)=(.*)")
_VERSION_LINE = re.compile(r"version\s+([0-9A-Za-z]+)((?:\s*\([^)]*\))*)")
_DATE_FORMATS = ("%b %d %Y %H:%M:%S", "%Y/%m/%d %H:%M:%S")


def parse_clock(text: str) -> int:
    """``frequency(48)=1500345728`` -> 1500345728 (Hz)."""
    return int(_match_line(_CLOCK, text, "measure_clock").group(1))


def parse_temp(text: str) -> float:
    """``temp=48.3'C`` -> 48.3 (degrees Celsius)."""
    return _finite(_match_line(_TEMP, text, "measure_temp").group(1))


def parse_volts(text: str) -> float:
    """``volt=0.8700V`` -> 0.87 (volts)."""
    return _finite(_match_line(_VOLTS, text, "measure_volts").group(1))


def parse_throttled(text: str) -> int:
    """``throttled=0x50000`` -> 0x50000."""
    return int(_match_line(_THROTTLED, text, "get_throttled").group(1), 16)


def decode_throttled(value: int) -> list[ThrottleFlag]:
    """Every set bit of a get_throttled value, lowest first; unknown bits are kept, not dropped."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise VcgencmdError(f"throttled value must be a 32-bit unsigned int, got {value!r:.40}")
    flags = []
    for bit in range(32):
        if value & (1 << bit):
            words = _THROTTLE_WORDS.get(bit, f"unknown throttle flag bit {bit}")
            flags.append(ThrottleFlag(bit=bit, now=bit < 16, words=words))
    return flags


def throttle_summary(value: int) -> str:
    """ "OK" when nothing is or was throttled, else the flags in words joined by "; "."""
    flags = decode_throttled(value)
    if not flags:
        return "OK"
    return "; ".join(flag.words for flag in flags)


def parse_get_config(text: str) -> dict[str, str]:
    """Output of ``get_config int``, ``get_config str`` or ``get_config NAME`` -> {name: value}.

    Values stay strings as printed (decimal, ``0x`` hex or empty): some options are strings and
    only the caller knows which. A repeated name keeps its last value.
    """
    text = _checked_text(text, "get_config")
    result: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = _CONFIG_LINE.fullmatch(line)
        if match is None:
            raise VcgencmdError(f"vcgencmd get_config: not a name=value line: {line[:80]!r}")
        result[match.group(1)] = match.group(2).strip()
    if not result:
        raise VcgencmdError("vcgencmd get_config: no name=value lines in the output")
    return result


def parse_version(text: str) -> dict:
    """``vcgencmd version`` -> {"date", "datetime", "version", "flags", "copyright"}.

    Loose on purpose (raspberry-pi.yaml: vcgencmd.version): Pi 4 and older print a
    "Mar 17 2023 10:52:00" date and a 40-hex version, Pi 5 "2024/11/12 16:10:44" and 8 hex;
    very old firmware printed a decimal build number. Only the version line is required.
    """
    text = _checked_text(text, "version")
    result: dict = {"date": None, "datetime": None, "version": None, "flags": [], "copyright": None}
    for raw in text.splitlines():
        line = " ".join(raw.split())  # "Oct  4 2016" has two spaces before a one-digit day
        if not line:
            continue
        version = _VERSION_LINE.fullmatch(line)
        if version and result["version"] is None:
            result["version"] = version.group(1)
            result["flags"] = re.findall(r"\(([^)]*)\)", version.group(2))
        elif line.lower().startswith("copyright"):
            result["copyright"] = line
        elif result["date"] is None:
            result["date"] = line
            result["datetime"] = _parse_date(line)
    if result["version"] is None:
        raise VcgencmdError(f"vcgencmd version: no 'version ...' line in {text[:80]!r}")
    return result


def _parse_date(line: str) -> str | None:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(line, fmt).isoformat()
        except ValueError:
            continue
    return None


def _checked_text(text: object, command: str) -> str:
    """Coerce to str and turn vcgencmd's own error replies into VcgencmdError."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise VcgencmdError(f"vcgencmd {command}: expected text, got {type(text).__name__}")
    for pattern in _ERROR_PATTERNS:
        match = pattern.search(text)
        if match:
            raise VcgencmdError(f"vcgencmd {command}: error reply {match.group(0)!r}")
    return text


def _match_line(pattern: re.Pattern[str], text: object, command: str) -> re.Match[str]:
    text = _checked_text(text, command).strip()
    match = pattern.fullmatch(text)
    if match is None:
        shown = text[:80] if text else "empty output"
        raise VcgencmdError(f"vcgencmd {command}: unexpected output {shown!r}")
    return match


def _finite(number: str) -> float:
    # The regexes let through only short plain decimals, so float() can neither raise nor
    # overflow to inf here.
    return float(number)
