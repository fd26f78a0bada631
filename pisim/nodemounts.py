"""What a simulated Pi's PID 1 mounts in its mount namespace: the firmware's and the CPU's
trees, /proc and /sys as a Pi shows them, the node's own files, a 32-bit node's userland root,
and the tools a fault hides.

Standard library only: pisim/boot.py runs as a script and imports it from this directory.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
from pathlib import Path

from nodelog import log

MS_BIND = 0x1000
MS_REC = 0x4000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GOVERNORS = "conservative ondemand userspace powersave performance schedutil"  # yaml: governor
_libc = ctypes.CDLL(None, use_errno=True)


def mount(
    src: str | None, target: str, fstype: str | None = None, flags: int = 0, data: str | None = None
) -> None:
    rc = _libc.mount(
        src.encode() if src else None,
        target.encode(),
        fstype.encode() if fstype else None,
        ctypes.c_ulong(flags),
        data.encode() if data else None,
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} on {target}: {os.strerror(err)}")


def write(path: str, data: str | bytes, mode: int = 0o444) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode)


def tmpfs(target: str, mode: str = "755", size: str | None = None) -> None:
    opts = f"mode={mode}" + (f",size={size}" if size else "")
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts)


def setup_firmware_tree(booted: dict, model: bytes) -> None:
    """/sys/firmware/devicetree/base, as the firmware hands it to Linux."""
    tmpfs("/sys/firmware")
    base = "/sys/firmware/devicetree/base"
    write(f"{base}/model", model + b"\0")  # trailing NUL like a real Pi (yaml)
    write(f"{base}/serial-number", booted["serial"] + "\0")
    write(f"{base}/compatible", booted["compatible"])
    # yaml: tryboot.detect: 4 bytes big-endian, 1 during a trial boot.
    write(f"{base}/chosen/bootloader/tryboot", int(booted["tryboot"]).to_bytes(4, "big"))
    write(f"{base}/chosen/bootloader/boot-mode", (1).to_bytes(4, "big"))


def setup_cpu_tree(booted: dict) -> None:
    """Simulated cpufreq sysfs: one policy shared by all cores, like a Pi."""
    tmpfs("/sys/devices/system/cpu")
    root = "/sys/devices/system/cpu"
    n = booted["ncpu"]
    cpus = f"0-{n - 1}" if n > 1 else "0"
    for name in ("online", "possible", "present"):
        write(f"{root}/{name}", cpus + "\n")
    write(f"{root}/offline", "\n")
    ints = booted["config"]["ints"]
    fmax, fmin = ints["arm_freq"] * 1000, ints["arm_freq_min"] * 1000
    pol = f"{root}/cpufreq/policy0"
    steps = sorted({fmin, *range(fmin, fmax, 100000), fmax})
    files = {
        "affected_cpus": " ".join(map(str, range(n))),
        "related_cpus": " ".join(map(str, range(n))),
        "cpuinfo_max_freq": fmax,
        "cpuinfo_min_freq": fmin,
        "cpuinfo_transition_latency": 355000,
        "scaling_available_governors": GOVERNORS + " ",
        "scaling_driver": "cpufreq-dt",
        "scaling_available_frequencies": " ".join(map(str, steps)) + " ",
        "scaling_max_freq": fmax,
        "scaling_min_freq": fmin,
        "scaling_cur_freq": fmin,
        "scaling_setspeed": "<unsupported>",
    }
    for name, value in files.items():
        write(f"{pol}/{name}", f"{value}\n")
    write(f"{pol}/scaling_governor", booted["governor"] + "\n", 0o644)  # root may change it
    for cpu in range(n):
        os.makedirs(f"{root}/cpu{cpu}", exist_ok=True)
        os.symlink("../cpufreq/policy0", f"{root}/cpu{cpu}/cpufreq")
        if cpu:
            write(f"{root}/cpu{cpu}/online", "1\n", 0o644)
    tmpfs("/sys/class/thermal")
    write("/sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
    write("/sys/class/thermal/thermal_zone0/temp", "40000\n")


def show_line_rate(booted: dict) -> None:
    """eth0's sysfs speed says the profile's line rate, as a Pi's NIC reports its link (100 on
    a Pi 3's smsc95xx, 1000 on a Pi 4): a veth would say 10000 and a USB NIC's TAP 10. Called
    once eth0 exists; a node with a userland root gets the same file there, where its /sys is
    already bound."""
    source = "/run/pisim/eth0-speed"  # the node's own run dir, mounted by setup_mounts
    write(source, f"{booted['profile']['eth_mbit']}\n")
    userland = booted.get("userland")
    for root in ("", *([userland["root"]] if userland else [])):
        mount(source, f"{root}/sys/class/net/eth0/speed", flags=MS_BIND)


def bind_own_files(node: Path, root: str) -> None:
    """What a node has of its own in /etc (its users, names, sudoers, sshd keys), /boot and
    /home, bound over root ("" for the host's root, or a userland root)."""
    etc = node / "etc"
    for name in ("passwd", "shadow", "group", "gshadow", "hostname", "hosts", "os-release"):
        if (etc / name).exists():
            # /etc/os-release is a symlink on Debian: the bind lands on its target, which is
            # what readers of either path should see.
            mount(str(etc / name), f"{root}/etc/{name}", flags=MS_BIND)
    for name in ("sudoers.d", "default", "ssh"):
        mount(str(etc / name), f"{root}/etc/{name}", flags=MS_BIND)
    mount(str(node / "boot"), f"{root}/boot", flags=MS_BIND)
    mount(str(node / "home"), f"{root}/home", flags=MS_BIND)


def setup_mounts(node: Path, booted: dict) -> int:
    """All of the node's private mounts; returns an O_PATH fd of the node's run dir."""
    for name in ("cpuinfo", "meminfo", "uptime", "stat", "loadavg"):
        mount(str(node / "proc" / name), f"/proc/{name}", flags=MS_BIND)
    mount(str(node / "proc" / "boot_id"), "/proc/sys/kernel/random/boot_id", flags=MS_BIND)
    setup_firmware_tree(booted, (node / "proc" / "model").read_bytes())
    setup_cpu_tree(booted)
    bind_own_files(node, "")
    for sub in ("bin", "sbin"):
        target = f"/usr/local/{sub}"
        try:  # read-only overlay keeps what the host has in /usr/local/bin usable
            mount("overlay", target, "overlay", MS_RDONLY, f"lowerdir={node / sub}:{target}")
        except OSError as exc:
            log(f"overlay on {target} failed ({exc}); plain bind")
            mount(str(node / sub), target, flags=MS_BIND)
    userland = booted.get("userland")
    if userland:  # while the node directory is still in reach: /run is covered below
        setup_userland_root(node, userland["root"], booted.get("missing_tools", []))
    else:
        hide_missing_tools(node, booted.get("missing_tools", []))
    tmpfs("/tmp", "1777")  # noqa: S108 - the node's own, empty /tmp
    tmpfs("/dev/shm", "1777")  # noqa: S108
    tmpfs("/var/log", "755", "64m")
    run_fd = os.open(node / "run", os.O_PATH | os.O_DIRECTORY)
    tmpfs("/run", "755")  # hides the host's /run, including every farm's directory
    for d, mode in (
        ("/run/sshd", 0o755),
        ("/run/lock", 0o1777),
        ("/run/pisim", 0o755),
        ("/run/user", 0o755),
    ):
        os.mkdir(d)
        os.chmod(d, mode)
    mount(f"/proc/self/fd/{run_fd}", "/run/pisim", flags=MS_BIND)
    if not booted.get("usb_nic"):  # a USB NIC's eth0 comes with its relay (UsbNic.start)
        show_line_rate({**booted, "userland": None})  # the userland's /sys is bound below
    if userland:
        # The node's /proc (its pid namespace, Pi-shaped files), /sys (its netns, cpufreq and
        # device tree), /dev (with its /dev/shm), /run (with /run/pisim), /tmp and /var/log:
        # the very mounts set up above, with everything mounted under them.
        for path in ("/proc", "/sys", "/dev", "/run", "/tmp", "/var/log"):  # noqa: S108
            mount(path, f"{userland['root']}{path}", flags=MS_BIND | MS_REC)
    return run_fd


def setup_userland_root(node: Path, root: str, missing_tools: list[str]) -> None:
    """A 32-bit node: the i386 root of pisim.rootfs (read-only: every node shares it) made into
    the node's filesystem, with what the node has of its own mounted in it as on the host side
    (setup_mounts then adds the node's /proc, /sys, /dev, /run, /tmp and /var/log).

    PID 1 stays in the host's root (its Python is the host's); sshd, and with it every session,
    is chrooted here (userland_argv), and so is Node.run_as_root."""
    mount(root, root, flags=MS_BIND)
    mount(None, root, flags=MS_BIND | MS_REMOUNT | MS_RDONLY)
    bind_own_files(node, root)
    for sub in ("bin", "sbin"):  # the emulators, over the root's own (empty) /usr/local
        target = f"{root}/usr/local/{sub}"
        mount("overlay", target, "overlay", MS_RDONLY, f"lowerdir={node / sub}:{target}")
    hide_missing_tools(node, missing_tools, root)
    tmpfs(f"{root}/var/tmp", "1777")  # noqa: S108 - the node's own, empty /var/tmp
    log(f"userland: {root} (read-only; the node's own files mounted in it)")


def userland_argv(booted: dict, argv: list[str]) -> list[str]:
    """argv run from the node's userland: chrooted into a 32-bit node's root, with the 32-bit
    personality where its profile has one (inherited by every child)."""
    userland = booted.get("userland")
    if not userland:
        return argv
    personality = ["/usr/bin/setarch", userland["personality"]] if userland["personality"] else []
    return ["/usr/sbin/chroot", userland["root"], *personality, *argv]


def hide_missing_tools(node: Path, tools: list[str], root: str = "") -> None:
    """Faults.missing_tools: each tool's name vanishes from every directory of the node's PATH.

    A read-only overlay over the directory, whose top layer holds an overlayfs whiteout (a 0:0
    character device) per hidden name: the name is then absent, so every shell's `command -v`
    says so (something mounted over the file would still exist, and bash names a file that
    exists even when it may not run). The simulated apt-get rebuilds these overlays without
    the tools of what it installs (listed in run/apt-installed.json, kept across boots); it
    learns which directory hides what from run/hidden-tools.json. root: the node's userland
    root (a 32-bit node's), whose PATH directories these are; the file names them as the
    node sees them.
    """
    installed = set(_read_json(node / "run" / "apt-installed.json", []))
    hidden: dict[str, list[str]] = {}
    for index, directory in enumerate(
        dict.fromkeys(os.path.realpath(root + d) for d in NODE_PATH.split(":"))
    ):
        names = [t for t in tools if t not in installed and os.path.lexists(f"{directory}/{t}")]
        if not names:
            continue
        layer = node / "run" / "whiteouts" / f"{index}-boot"
        shutil.rmtree(layer, ignore_errors=True)
        layer.mkdir(parents=True)
        for name in names:
            os.mknod(layer / name, 0o600 | stat.S_IFCHR, os.makedev(0, 0))
        mount("overlay", directory, "overlay", MS_RDONLY, f"lowerdir={layer}:{directory}")
        hidden[directory.removeprefix(root)] = names
    write(str(node / "run" / "hidden-tools.json"), json.dumps(hidden), 0o644)
    if hidden:
        log(f"tools hidden (Faults.missing_tools): {hidden}")


def _read_json(path: Path, default):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default
