#!/usr/bin/python3
"""apt-get -- SIMULATED by pisim (nothing is downloaded or installed).

Installed as /usr/local/sbin/apt-get and /usr/local/bin/apt-get inside each simulated Raspberry
Pi, ahead of the host's apt-get: the nodes share the host's root filesystem, so a real install
would change the host. Takes `update` and `install [-y] PKG...` (other options are accepted and
ignored), needs root like the real one, prints apt-like progress over a couple of seconds, and
"installs" a package by rebuilding the overlays that Faults.missing_tools put over PATH
directories to hide its commands, without them (which directory hides what is in
/run/pisim/hidden-tools.json; what it installed is kept in
/run/pisim/apt-installed.json, so a reboot does not hide it again). A package it does not know
is "Unable to locate package", exit 100, as apt says it.
Standalone on purpose: only the standard library, no pisim import.
"""

import json
import os
import stat
import subprocess
import sys
import time

HIDDEN = "/run/pisim/hidden-tools.json"
INSTALLED = "/run/pisim/apt-installed.json"
WHITEOUTS = "/run/pisim/whiteouts"
MIRROR = "http://deb.debian.org/debian"
STEP_S = 0.15  # between two progress lines: a couple of seconds for an install of a few
# The packages pifarm's catalog names, and the commands each provides.
PACKAGES = {
    "7zip": ("7zz",),
    "p7zip-full": ("7z", "7za"),
    "coreutils": ("sha1sum", "truncate", "dd", "head", "timeout"),
    "gawk": ("awk", "gawk"),
    "mawk": ("awk", "mawk"),
    "gcc": ("gcc", "cc"),
    "libc6-dev": (),
    "sysbench": ("sysbench",),
    "stress-ng": ("stress-ng",),
    "openssl": ("openssl",),
    "flac": ("flac",),
    "lame": ("lame",),
    "fio": ("fio",),
    "iperf3": ("iperf3",),
    "ethtool": ("ethtool",),
    "iproute2": ("ip", "tc"),
    "nftables": ("nft",),
    "openssh-client": ("ssh", "scp"),
    "openssh-server": ("sshd",),
    "openvpn": ("openvpn",),
    "wireguard-tools": ("wg", "wg-quick"),
    "wireguard-go": ("wireguard-go",),
    "iputils-ping": ("ping",),
}
NOT_ROOT = {
    "update": (
        "E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\n"
        "E: Unable to lock directory /var/lib/apt/lists/\n"
    ),
    "install": (
        "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\n"
        "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), "
        "are you root?\n"
    ),
}
USAGE = """\
apt 2.6.1 (SIMULATED by pisim)
Usage: apt-get [options] command
Commands: update, install [-y] PKG...
"""


def say(line: str) -> None:
    print(line, flush=True)
    time.sleep(STEP_S)


def read_json(path: str, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def write_json(path: str, value) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


def update() -> int:
    for number, suite in enumerate(("bookworm", "bookworm-updates", "bookworm-security"), 1):
        say(f"Hit:{number} {MIRROR} {suite} InRelease")
    say("Reading package lists...")
    print("N: SIMULATED by pisim: nothing was downloaded", flush=True)
    return 0


def reading_lists() -> None:
    say("Reading package lists...")
    say("Building dependency tree...")
    say("Reading state information...")


def install(names: list[str], assume_yes: bool) -> int:
    reading_lists()
    unknown = [name for name in names if name not in PACKAGES]
    if unknown:
        for name in unknown:
            print(f"E: Unable to locate package {name}", file=sys.stderr, flush=True)
        return 100
    hidden = read_json(HIDDEN, {})
    missing = {name for names_there in hidden.values() for name in names_there}
    new = [name for name in dict.fromkeys(names) if missing.intersection(PACKAGES[name])]
    for name in names:
        if name not in new:
            say(f"{name} is already the newest version (simulated).")
    if not new:
        say("0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.")
        return 0
    say("The following NEW packages will be installed:")
    say("  " + " ".join(new))
    say(f"0 upgraded, {len(new)} newly installed, 0 to remove and 0 not upgraded.")
    if not assume_yes:
        print("Do you want to continue? [Y/n] Abort.", flush=True)
        return 1
    for number, name in enumerate(new, 1):
        say(f"Get:{number} {MIRROR} bookworm/main {name} (simulated)")
    for name in new:
        say(f"Selecting previously unselected package {name}.")
        say(f"Unpacking {name} (simulated) ...")
        say(f"Setting up {name} (simulated) ...")
        uncover(PACKAGES[name], hidden)
    print("N: SIMULATED by pisim: the commands of these packages were uncovered", flush=True)
    return 0


def uncover(commands: tuple[str, ...], hidden: dict) -> None:
    """Rebuild each overlay that hides one of the commands, without it; remember it installed."""
    for directory, names in list(hidden.items()):
        remaining = [name for name in names if name not in commands]
        if remaining == names:
            continue
        # Lazily: a program running from the directory keeps it; new lookups see the new one.
        subprocess.run(["umount", "-l", "--", directory], check=True, timeout=10)
        if remaining:
            cover(directory, remaining)
            hidden[directory] = remaining
        else:
            del hidden[directory]
    installed = read_json(INSTALLED, [])
    write_json(INSTALLED, installed + [c for c in commands if c not in installed])
    write_json(HIDDEN, hidden)


def cover(directory: str, names: list[str]) -> None:
    """A read-only overlay over directory whose top layer whites the names out (as at boot)."""
    layer = f"{WHITEOUTS}/{time.time_ns()}"
    os.makedirs(layer)
    for name in names:
        os.mknod(f"{layer}/{name}", 0o600 | stat.S_IFCHR, os.makedev(0, 0))
    options = f"ro,lowerdir={layer}:{directory}"
    subprocess.run(
        ["mount", "-t", "overlay", "-o", options, "overlay", directory], check=True, timeout=10
    )


def main(argv: list[str]) -> int:
    words = [word for word in argv if not word.startswith("-")]
    options = [word for word in argv if word.startswith("-")]
    if "-o" in options:  # "-o Name=value": its value is not a word of the command
        words = [w for w in words if "=" not in w]
    if not words or words[0] not in ("update", "install"):
        sys.stdout.write(USAGE)
        return 0 if not words else 100
    command, names = words[0], words[1:]
    if os.geteuid() != 0:
        sys.stderr.write(NOT_ROOT[command])
        return 100
    if command == "update":
        return update()
    return install(names, any(o in ("-y", "--yes", "--assume-yes") for o in options))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
