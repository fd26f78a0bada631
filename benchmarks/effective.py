"""What a run ran with: the board's effective state, from the probe taken for it.

A preset's name says what pifarm meant to set; this says what the board ran: config.txt's
digest and pifarm's managed block in it, the firmware's own view of the clocks
(`vcgencmd get_config int`, defaults included, raspberry-pi.yaml: vcgencmd.get_config), the
governor, the kernel, both bitnesses and the firmware's version. Two runs with the same
fingerprint ran the same configuration, whatever preset (or "as is") they were filed under.
"""

import base64
import binascii
import hashlib

from devices.configtxt import blocks

# The firmware's settings a result depends on, in the order they are shown.
FIRMWARE_KEYS = (
    "arm_freq",
    "arm_freq_min",
    "core_freq",
    "gpu_freq",
    "sdram_freq",
    "over_voltage",
    "force_turbo",
    "arm_64bit",
)
FINGERPRINT_CHARS = 12


def state(facts: dict) -> dict:
    """The effective state in a probe's facts (a FactSnapshot's `facts`)."""
    data = _config_bytes(facts)
    try:
        managed = blocks.managed_settings(data) if data is not None else {}
    except ValueError:  # damaged markers: the digest still tells the file apart
        managed = None
    firmware = facts.get("firmware_config") or {}
    version = facts.get("firmware_version") or {}
    return {
        "config_sha256": hashlib.sha256(data).hexdigest() if data is not None else None,
        "managed": managed,
        "firmware": {key: firmware[key] for key in FIRMWARE_KEYS if key in firmware},
        "governor": facts.get("governor"),
        "kernel": facts.get("kernel_release"),
        "kernel_bits": facts.get("kernel_bits"),
        "userland_bits": facts.get("userland_bits"),
        "firmware_version": version.get("version") if isinstance(version, dict) else None,
    }


def fingerprint(effective: dict) -> str:
    """A short name for what ran: config.txt's bytes and the governor (what a preset sets), and
    the kernel and userland they ran under (two boards of one config.txt may run two OSes).
    Empty when config.txt was not read."""
    if not effective.get("config_sha256"):
        return ""
    parts = ("config_sha256", "governor", "kernel", "kernel_bits", "userland_bits")
    joined = " ".join(str(effective.get(part) or "") for part in parts)
    return hashlib.sha256(joined.encode()).hexdigest()[:FINGERPRINT_CHARS]


def words(effective: dict) -> str:
    """e.g. "arm_freq 1500, core_freq 500, governor ondemand, 64-bit userland; config.txt
    4a0bdccd (pifarm's block: arm_freq=1500)"."""
    parts = [f"{key} {value}" for key, value in (effective.get("firmware") or {}).items()]
    if effective.get("governor"):
        parts.append(f"governor {effective['governor']}")
    if effective.get("userland_bits"):
        parts.append(f"{effective['userland_bits']}-bit userland")
    described = ", ".join(parts) or "the firmware's clocks were not read"
    digest = effective.get("config_sha256")
    if not digest:
        return f"{described}; config.txt not read"
    managed = effective.get("managed")
    if managed is None:
        block = "pifarm's block damaged"
    elif managed:
        block = "pifarm's block: " + " ".join(f"{k}={v}" for k, v in managed.items())
    else:
        block = "no pifarm block"
    return f"{described}; config.txt {digest[:8]} ({block})"


def _config_bytes(facts: dict) -> bytes | None:
    raw = facts.get("config_txt_raw_b64")
    if raw:
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            return None
    text = facts.get("config_txt")
    return text.encode("utf-8") if isinstance(text, str) else None


def short(effective: dict, fingerprint: str) -> str:
    """A configuration's name for a group: "arm_freq 900, ondemand, 32-bit [0cb5e00c]"."""
    firmware = effective.get("firmware") or {}
    parts = [f"arm_freq {firmware['arm_freq']}"] if "arm_freq" in firmware else []
    parts += [str(effective[key]) for key in ("governor",) if effective.get(key)]
    if effective.get("userland_bits"):
        parts.append(f"{effective['userland_bits']}-bit")
    return f"{', '.join(parts) or 'unknown'} [{fingerprint[:8]}]"
