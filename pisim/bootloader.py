"""The firmware half of a simulated boot: which file is read, what it means, what Linux sees.

Writes the node's per-boot files (Pi-shaped /proc files, boot_id, run/booted.json that
vcgencmd and pisim.boot read, run/vcgencmd.env for vcgencmd's quick readings); the supervisor
then decides whether Linux starts.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from . import hostile
from .faults import Faults
from .firmware import Board, effective_config, governor_from
from .profiles import Profile, render_meminfo
from .util import write_atomic, write_json


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _usb_nic(info: dict) -> dict | None:
    """What the node's PID 1 needs for its USB NIC relay (pisim/usbnic.py), if it has one."""
    if not info.get("usb_nic_cycles"):
        return None
    return {"cycles": info["usb_nic_cycles"], "address": f"{info['ip']}/24"}


def firmware_boot(nodedir: Path, info: dict, profile: Profile, state: dict, faults: Faults) -> dict:
    """Read config.txt, or tryboot.txt once when the tryboot flag is set; returns the
    booted description (also written to <nodedir>/run/booted.json)."""
    fw_dir = nodedir / "boot" / profile.config_dir.removeprefix("/boot").lstrip("/")
    tryboot = bool(state.get("tryboot_flag"))
    cfg_file = "config.txt"
    if tryboot and (fw_dir / "tryboot.txt").is_file():
        cfg_file = "tryboot.txt"  # yaml: tryboot.mechanism: loaded INSTEAD of config.txt

    def read_include(name: str) -> str | None:
        return _read(fw_dir / name) if "/" not in name else None

    board = Board(
        profile.family, profile.model_filters, profile.board_type, info["serial"], tryboot
    )
    cfg = effective_config(
        read_include(cfg_file) or "", board, profile.mem_mb, profile.gpu_mem, read_include
    )
    boot_id = str(uuid.uuid4())
    # yaml: governor.persistence: cmdline.txt next to config.txt, /etc/default/cpu_governor.
    governor = governor_from(
        read_include("cmdline.txt"),
        _read(nodedir / "etc" / "default" / "cpu_governor"),
        profile.default_governor,
    )
    # As many cores as the host really gives us, at most the board's (never pretend more).
    ncpu = max(1, min(profile.cores, len(os.sched_getaffinity(0))))
    booted = {
        "simulated": True,
        "hostname": info["name"],
        "boot_id": boot_id,
        "boot_count": int(state.get("boot_count", 0)) + 1,
        "tryboot": tryboot,
        "config_file": cfg_file,
        "config": cfg.to_dict(),
        "governor": governor,
        "ncpu": ncpu,
        "throttled": faults.throttled_after_boot or 0,
        "model": profile.model,
        "serial": info["serial"],
        "compatible": profile.compatible,
        "profile": profile.to_dict(),
        "sshd_restart_delay": faults.sshd_restart_delay,
        "hostile": info.get("hostile", []),
        "reported_config_path": info.get("reported_config_path"),
        "banner_delay": faults.banner_delay,
        "close_after_banner": faults.close_after_banner,
        "missing_tools": list(faults.missing_tools),
        "slower_after_s": faults.slower_after_s,
        "slower_share": faults.slower_share,
        "usb_nic": _usb_nic(info),
        "userland": info.get("userland"),
        "booted_at": time.time(),
    }
    proc_dir = nodedir / "proc"
    traits = info.get("hostile", [])
    write_atomic(proc_dir / "cpuinfo", hostile.cpuinfo(profile, info["serial"], ncpu, traits))
    # Bytes that JSON cannot carry (a hostile node's are not UTF-8); pisim.boot reads them.
    write_atomic(proc_dir / "model", hostile.model(profile, traits))
    write_atomic(proc_dir / "hostname", hostile.hostname(info["name"], traits))
    write_atomic(proc_dir / "meminfo", render_meminfo(profile))
    write_atomic(proc_dir / "boot_id", boot_id + "\n")
    write_atomic(proc_dir / "uptime", "0.00 0.00\n")
    for name in ("stat", "loadavg"):  # the node's own: its PID 1 writes them before sshd runs
        write_atomic(proc_dir / name, "")
    write_json(nodedir / "run" / "booted.json", booted)
    _write_vcgencmd_facts(nodedir / "run" / "vcgencmd.env", booted)
    return booted


PI5_REPORTED_ARM_LIMIT_MHZ = 3000  # yaml: arm_freq.reported_limits.pi5


def _write_vcgencmd_facts(path: Path, booted: dict) -> None:
    """What the sh vcgencmd (nodebin/vcgencmd.sh) needs for the sampler's three readings, as
    shell assignments. A hostile node gets none: its every answer comes from the emulator."""
    if booted["hostile"]:
        path.unlink(missing_ok=True)
        return
    ints = booted["config"]["ints"]
    profile = booted["profile"]
    facts = {
        "arm_freq": int(ints["arm_freq"]),
        "arm_freq_min": int(ints["arm_freq_min"]),
        "force_turbo": int(ints.get("force_turbo", 0)),
        "arm_limit_mhz": PI5_REPORTED_ARM_LIMIT_MHZ if profile["family"] == "pi5" else 0,
        "arm_clock_id": int(profile["clock_ids"].get("arm", 0)),
        "throttled": f"{int(booted['throttled']):#x}",
    }
    write_atomic(path, "".join(f"{key}={value}\n" for key, value in facts.items()))
