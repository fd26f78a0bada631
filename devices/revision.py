"""Decode Raspberry Pi board revision codes (the ``Revision`` line of /proc/cpuinfo).

Pure functions, no Django and no I/O. Facts come from the project reference file
shared/reference/raspberry-pi.yaml (keys cited inline) and the official
revision-codes.adoc in raspberrypi/documentation (its old-style table).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BoardRevision", "RevisionError", "decode_revision"]


class RevisionError(ValueError):
    """The text is not a revision code we can decode."""


@dataclass(frozen=True)
class BoardRevision:
    code: str  # normalised: lower-case hex, no 0x, at least 4 digits ("c03114", "000e")
    new_style: bool
    board_type: str  # "4B", "3B+", "Zero 2 W", "400", "CM4", "5", "B", "A+", ...
    board_type_id: int | None  # the TTTTTTTT field; None for old-style codes
    memory_mb: int  # 0 when the code says "other" (MMM=7, size only known to the firmware)
    soc: str
    manufacturer: str
    board_revision: str  # "1.4"
    warranty_voided: bool
    overvoltage_disallowed: bool
    otp_program_disallowed: bool
    otp_read_disallowed: bool
    family: str  # firmware-defaults key of raspberry-pi.yaml overclocking.options
    config_filters: tuple[str, ...]  # config.txt [filters] this board matches

    def describe(self) -> str:
        """Human summary, e.g. "Raspberry Pi 4 Model B rev 1.4, 4 GB, BCM2711, Sony UK"."""
        parts = [
            f"{_LONG_NAMES.get(self.board_type, self.board_type)} rev {self.board_revision}",
            _format_memory(self.memory_mb),
            self.soc,
            self.manufacturer,
        ]
        if self.warranty_voided:
            parts.append("warranty voided")
        return ", ".join(parts)


# raspberry-pi.yaml: board_identification.new_style_revision_code.fields.TTTTTTTT_4_11
# (0x05 Alpha, 0x0f and 0x16 "internal use only" in REV are deliberately absent: not real boards).
_BOARD_TYPES: dict[int, str] = {
    0x00: "A", 0x01: "B", 0x02: "A+", 0x03: "B+", 0x04: "2B", 0x06: "CM1", 0x08: "3B",
    0x09: "Zero", 0x0A: "CM3", 0x0C: "Zero W", 0x0D: "3B+", 0x0E: "3A+", 0x10: "CM3+",
    0x11: "4B", 0x12: "Zero 2 W", 0x13: "400", 0x14: "CM4", 0x15: "CM4S", 0x17: "5",
    0x18: "CM5", 0x19: "500", 0x1A: "CM5 Lite", 0x1B: "CM0",
}  # fmt: skip

_LONG_NAMES: dict[str, str] = {
    "A": "Raspberry Pi Model A", "B": "Raspberry Pi Model B", "A+": "Raspberry Pi Model A+",
    "B+": "Raspberry Pi Model B+", "2B": "Raspberry Pi 2 Model B",
    "CM1": "Raspberry Pi Compute Module 1", "3B": "Raspberry Pi 3 Model B",
    "Zero": "Raspberry Pi Zero", "CM3": "Raspberry Pi Compute Module 3",
    "Zero W": "Raspberry Pi Zero W", "3B+": "Raspberry Pi 3 Model B+",
    "3A+": "Raspberry Pi 3 Model A+", "CM3+": "Raspberry Pi Compute Module 3+",
    "4B": "Raspberry Pi 4 Model B", "Zero 2 W": "Raspberry Pi Zero 2 W",
    "400": "Raspberry Pi 400", "CM4": "Raspberry Pi Compute Module 4",
    "CM4S": "Raspberry Pi Compute Module 4S", "5": "Raspberry Pi 5",
    "CM5": "Raspberry Pi Compute Module 5", "500": "Raspberry Pi 500",
    "CM5 Lite": "Raspberry Pi Compute Module 5 Lite", "CM0": "Raspberry Pi Compute Module 0",
}  # fmt: skip

# raspberry-pi.yaml: board_identification.new_style_revision_code.fields.MMM_20_22
# (7 = "other" per REV: the size is only in the firmware's rpi-sdram-size-gbit; we report 0).
_MEMORY_MB = {0: 256, 1: 512, 2: 1024, 3: 2048, 4: 4096, 5: 8192, 6: 16384, 7: 0}

# raspberry-pi.yaml: board_identification.new_style_revision_code.fields.CCCC_16_19
_MANUFACTURERS = {
    0: "Sony UK", 1: "Egoman", 2: "Embest", 3: "Sony Japan", 4: "Embest", 5: "Stadium",
}  # fmt: skip

# raspberry-pi.yaml: board_identification.new_style_revision_code.fields.PPPP_12_15
_SOCS = {0: "BCM2835", 1: "BCM2836", 2: "BCM2837", 3: "BCM2711", 4: "BCM2712"}

# Board type -> (family, model filters). Families are the defaults keys of raspberry-pi.yaml
# overclocking.options (pi4_r14 is chosen below by board revision); filters follow
# config_txt_syntax.conditional_filters.models. CM3+ runs at 3B clocks and does not match [pi3+],
# so it is pi3. CM0 (Zero 2 W silicon) is not in the filter table: family pi02 is an inference.
_FAMILY_AND_FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "A": ("pi1", ("pi1",)), "B": ("pi1", ("pi1",)), "A+": ("pi1", ("pi1",)),
    "B+": ("pi1", ("pi1",)), "CM1": ("pi1", ("pi1",)),
    "2B": ("pi2", ("pi2",)),
    "3B": ("pi3", ("pi3",)), "CM3": ("pi3", ("pi3",)), "CM3+": ("pi3", ("pi3",)),
    "3B+": ("pi3p", ("pi3", "pi3+")), "3A+": ("pi3p", ("pi3", "pi3+")),
    "Zero": ("pi0", ("pi0",)), "Zero W": ("pi0", ("pi0", "pi0w")),
    "Zero 2 W": ("pi02", ("pi0", "pi0w", "pi02")), "CM0": ("pi02", ()),
    "4B": ("pi4", ("pi4",)), "CM4": ("pi4", ("pi4", "cm4")), "CM4S": ("pi4", ("pi4",)),
    "400": ("pi400", ("pi4", "pi400")),
    "5": ("pi5", ("pi5",)), "500": ("pi5", ("pi5", "pi500")),
    "CM5": ("pi5", ("pi5", "cm5")), "CM5 Lite": ("pi5", ("pi5", "cm5")),
}  # fmt: skip

# Old-style sequential codes, from REV's table (the yaml's board_identification.old_style_codes
# lists a subset). code -> (type, board revision, MB, manufacturer). 0015 shipped with 256 or
# 512 MB; the code cannot tell, so we report the smaller.
_OLD_STYLE: dict[int, tuple[str, str, int, str]] = {
    0x02: ("B", "1.0", 256, "Egoman"), 0x03: ("B", "1.0", 256, "Egoman"),
    0x04: ("B", "2.0", 256, "Sony UK"), 0x05: ("B", "2.0", 256, "Qisda"),
    0x06: ("B", "2.0", 256, "Egoman"), 0x07: ("A", "2.0", 256, "Egoman"),
    0x08: ("A", "2.0", 256, "Sony UK"), 0x09: ("A", "2.0", 256, "Qisda"),
    0x0D: ("B", "2.0", 512, "Egoman"), 0x0E: ("B", "2.0", 512, "Sony UK"),
    0x0F: ("B", "2.0", 512, "Egoman"), 0x10: ("B+", "1.2", 512, "Sony UK"),
    0x11: ("CM1", "1.0", 512, "Sony UK"), 0x12: ("A+", "1.1", 256, "Sony UK"),
    0x13: ("B+", "1.2", 512, "Embest"), 0x14: ("CM1", "1.0", 512, "Embest"),
    0x15: ("A+", "1.1", 256, "Embest"),
}  # fmt: skip

# Old-style boards whose owner overclocked with over_voltage report 0x1000000 | code ("1000002").
_OLD_WARRANTY_BIT = 1 << 24
# raspberry-pi.yaml: board_identification.new_style_revision_code.fields (N_31 ... F_23)
_NEW_FLAG = 1 << 23
_WARRANTY_BIT = 1 << 25
_OVERVOLTAGE_BIT, _OTP_PROGRAM_BIT, _OTP_READ_BIT = 1 << 31, 1 << 30, 1 << 29

_HEX = re.compile(r"[0-9a-f]{1,8}")


def decode_revision(code: str) -> BoardRevision:
    """Decode "c03114", "0xC03114", " c03114\\n", "000e" or "1000002" into a BoardRevision.

    Raises RevisionError (a ValueError) for anything that is not a known revision code.
    """
    value = _parse_hex(code)
    # raspberry-pi.yaml: board_identification.new_style_revision_code.fields.F_23 says to check
    # the new-style flag first: every other field only means something when it is set.
    if value & _NEW_FLAG:
        return _decode_new_style(value)
    return _decode_old_style(value)


def _parse_hex(code: object) -> int:
    if not isinstance(code, str):
        raise RevisionError(f"revision code must be a string, not {type(code).__name__}")
    text = code.strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    # A strict pattern rather than int(x, 16) alone: int() also takes "_", signs and spaces.
    if not _HEX.fullmatch(text):
        raise RevisionError(f"not a revision code (expected up to 8 hex digits): {code[:40]!r}")
    return int(text, 16)


def _decode_new_style(value: int) -> BoardRevision:
    # raspberry-pi.yaml: board_identification.new_style_revision_code.decode_as_integer
    type_id = (value >> 4) & 0xFF
    board_type = _BOARD_TYPES.get(type_id)
    if board_type is None:
        raise RevisionError(f"revision code {value:x}: unknown board type 0x{type_id:02x}")
    proc = (value >> 12) & 0xF
    if proc not in _SOCS:
        raise RevisionError(f"revision code {value:x}: unknown processor {proc}")
    mfr = (value >> 16) & 0xF
    rev = value & 0xF
    family, filters = _FAMILY_AND_FILTERS[board_type]
    # raspberry-pi.yaml: overclocking.options family keys: pi4_r14 is "4B rev 1.4"; rev 1.5
    # boards also default to 1.8 GHz with arm_boost, so every later 4B revision is pi4_r14 too.
    if board_type == "4B" and rev >= 4:
        family = "pi4_r14"
    return BoardRevision(
        code=f"{value:04x}",
        new_style=True,
        board_type=board_type,
        board_type_id=type_id,
        memory_mb=_MEMORY_MB[(value >> 20) & 0x7],
        soc=_SOCS[proc],
        manufacturer=_MANUFACTURERS.get(mfr, f"unknown manufacturer {mfr}"),
        board_revision=f"1.{rev}",
        warranty_voided=bool(value & _WARRANTY_BIT),
        overvoltage_disallowed=bool(value & _OVERVOLTAGE_BIT),
        otp_program_disallowed=bool(value & _OTP_PROGRAM_BIT),
        otp_read_disallowed=bool(value & _OTP_READ_BIT),
        family=family,
        # raspberry-pi.yaml: conditional_filters.models "[board-type=0xNN]"
        config_filters=(*filters, f"board-type=0x{type_id:x}"),
    )


def _decode_old_style(value: int) -> BoardRevision:
    entry = _OLD_STYLE.get(value & ~_OLD_WARRANTY_BIT)
    if entry is None:
        raise RevisionError(f"unknown old-style revision code {value:04x}")
    board_type, board_rev, memory_mb, manufacturer = entry
    family, filters = _FAMILY_AND_FILTERS[board_type]
    return BoardRevision(
        code=f"{value:04x}",
        new_style=False,
        board_type=board_type,
        board_type_id=None,  # old-style codes carry no type field to match [board-type=]
        memory_mb=memory_mb,
        soc="BCM2835",  # every old-style board is a Pi 1 generation board
        manufacturer=manufacturer,
        board_revision=board_rev,
        warranty_voided=bool(value & _OLD_WARRANTY_BIT),
        overvoltage_disallowed=False,
        otp_program_disallowed=False,
        otp_read_disallowed=False,
        family=family,
        config_filters=filters,
    )


def _format_memory(memory_mb: int) -> str:
    if memory_mb <= 0:
        return "memory size unknown"
    if memory_mb < 1024:
        return f"{memory_mb} MB"
    return f"{memory_mb // 1024} GB"
