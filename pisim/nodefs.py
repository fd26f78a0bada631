"""The host-side directory of one simulated Pi: its identity, keys, /etc, /boot and /home.

Everything a node mounts comes from here (pisim.boot does the mounts inside the node's
mount namespace); nothing of the host's /etc is modified.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from . import hostile, rootfs
from .faults import Faults
from .profiles import BOOKWORM_STUB_CONFIG_TXT, CMDLINE_TXT, PROFILES, Profile
from .util import SUBNET_PREFIX, PisimError, write_atomic, write_json

NODEBIN = Path(__file__).parent / "nodebin"
USER = "pi"
# Pi OS groups of the first user, where the host has them.
EXTRA_GROUPS = (
    "adm",
    "dialout",
    "cdrom",
    "sudo",
    "audio",
    "video",
    "plugdev",
    "games",
    "users",
    "input",
    "netdev",
)


def node_ip(subnet_index: int, index: int) -> str:
    return f"{SUBNET_PREFIX}.{subnet_index}.{11 + index}"


def pick_uid(start: int = 4242) -> int:
    """A uid/gid unused on the host for user pi (1000 is often taken)."""
    used_uids = {int(line.split(":")[2]) for line in _lines("/etc/passwd")}
    used_gids = {int(line.split(":")[2]) for line in _lines("/etc/group")}
    uid = start
    while uid in used_uids or uid in used_gids:
        uid += 1
    return uid


def _lines(path: str) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.count(":") >= 2]


def new_keypair(comment: str) -> tuple[str, str]:
    """(OpenSSH private key PEM, public key line) of a fresh ed25519 key."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    pub = (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    return pem, f"{pub} {comment}"


def hash_password(password: str) -> str:
    proc = subprocess.run(
        ["openssl", "passwd", "-6", "-stdin"],
        input=password,
        text=True,
        capture_output=True,
        check=True,
        timeout=10,
    )
    return proc.stdout.strip()


def write_host_key(etc_ssh: Path, name: str) -> str:
    pem, pub = new_keypair(f"root@{name}")
    write_atomic(etc_ssh / "ssh_host_ed25519_key", pem, 0o600)
    write_atomic(etc_ssh / "ssh_host_ed25519_key.pub", pub + "\n", 0o644)
    return pub


def sshd_config(ip: str) -> str:
    return f"""\
# simulated Raspberry Pi (pisim): sshd of this node only
ListenAddress {ip}:22
HostKey /etc/ssh/ssh_host_ed25519_key
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication yes
KbdInteractiveAuthentication no
PermitRootLogin no
UsePAM no
StrictModes no
PidFile none
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 100:30:200
MaxSessions 50
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def _etc_files(etc: Path, name: str, uid: int, pw_hash: str, profile: Profile, info: dict) -> None:
    shell = hostile.SHELL if hostile.is_hostile(info) else "/bin/bash"
    passwd = Path("/etc/passwd").read_text().rstrip("\n").splitlines()
    passwd.append(f"{USER}:x:{uid}:{uid}:,,,:/home/{USER}:{shell}")
    write_atomic(etc / "passwd", "\n".join(passwd) + "\n")
    shadow = Path("/etc/shadow").read_text().rstrip("\n").splitlines()
    shadow.append(f"{USER}:{pw_hash}:19700:0:99999:7:::")
    write_atomic(etc / "shadow", "\n".join(shadow) + "\n", 0o640)
    for fname in ("group", "gshadow"):
        src = Path("/etc") / fname
        if not src.exists():
            continue
        out = []
        for line in src.read_text().rstrip("\n").splitlines():
            parts = line.split(":")
            if parts[0] in EXTRA_GROUPS and len(parts) >= 4:
                members = [m for m in parts[-1].split(",") if m] + [USER]
                parts[-1] = ",".join(members)
                line = ":".join(parts)
            out.append(line)
        out.append(f"{USER}:x:{uid}:" if fname == "group" else f"{USER}:!::")
        write_atomic(etc / fname, "\n".join(out) + "\n", 0o644 if fname == "group" else 0o640)
    write_atomic(etc / "hostname", name + "\n")
    write_atomic(
        etc / "hosts",
        f"127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost "
        f"ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n\n"
        f"127.0.1.1\t{name}\n",
    )
    write_atomic(etc / "os-release", hostile.os_release(profile, info["hostile"]))
    # Per-node copies of whole directories, so that the node may write to them.
    for dname in ("sudoers.d", "default", "ssh"):
        src = Path("/etc") / dname
        dst = etc / dname
        if src.is_dir():
            shutil.copytree(
                src,
                dst,
                symlinks=True,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("ssh_host_*", "sshd_config*"),
            )
        dst.mkdir(exist_ok=True)
    write_atomic(etc / "sudoers.d" / "010_pi-nopasswd", f"{USER} ALL=(ALL) NOPASSWD: ALL\n", 0o440)


def _install_bin(node: Path, info: dict) -> None:
    """Emulators on PATH: /usr/local/bin for pi, /usr/local/sbin first in sudo's secure_path."""
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    programs = {name: "powerctl.py" for name in ("reboot", "shutdown", "poweroff", "halt")}
    programs["vcgencmd"] = "vcgencmd.sh"  # the sampler's readings; the rest by pisim-vcgencmd
    programs["pisim-vcgencmd"] = "vcgencmd.py"
    programs["apt-get"] = "apt_get.py"  # the host's would install on the host (shared root fs)
    if hostile.is_hostile(info):
        programs.update({"uname": "uname.py", "pisim-shell": "hostile_shell.py"})
    for sub in ("bin", "sbin"):
        (node / sub).mkdir(exist_ok=True)
        for cmd, source in programs.items():
            text = (NODEBIN / source).read_text()
            if source.endswith(".py"):
                # -IS: no site packages to import; the real vcgencmd is a small C program, and
                # the emulator's start-up should not weigh on what runs on the node.
                text = f"#!{python} -IS\n" + text.split("\n", 1)[1]  # replace the shebang
            write_atomic(node / sub / cmd, text, 0o755)


def prepare_node(
    node: Path,
    *,
    farm: str,
    subnet_index: int,
    name: str,
    index: int,
    profile_key: str,
    faults: Faults,
    uid: int,
) -> dict:
    """Create the node directory; returns the node's static description (node.json)."""
    if profile_key not in PROFILES:
        raise PisimError(f"unknown profile {profile_key!r}; known: {', '.join(PROFILES)}")
    try:
        hostile.check_traits(faults.hostile)
    except ValueError as exc:
        raise PisimError(str(exc)) from None
    profile = PROFILES[profile_key]
    userland = None
    if profile.userland:  # built (or found in the cache) before anything of the node exists
        if profile.userland != rootfs.ARCH:
            raise PisimError(
                f"profile {profile_key}: no {profile.userland} root, only {rootfs.ARCH}"
            )
        userland = {
            "arch": profile.userland,
            "root": str(rootfs.ensure_root()),
            "personality": profile.personality or None,
        }
    node.mkdir(parents=True, mode=0o700)
    for sub in ("key", "etc", "boot", "home", "run", "proc", "log"):
        (node / sub).mkdir(mode=0o755)
    (node / "key").chmod(0o700)
    ip = node_ip(subnet_index, index)
    serial = profile.serial_prefix + secrets.token_hex(8 if not profile.serial_prefix else 4)
    password = secrets.token_urlsafe(12)
    info = {
        "name": name,
        "farm": farm,
        "profile": profile_key,
        "index": index,
        "ip": ip,
        "subnet_index": subnet_index,
        "serial": serial,
        "password": password,
        "uid": uid,
        "user": USER,
        "netns": f"pisim-{farm}-{name}",
        "host_veth": f"psv{subnet_index}-{11 + index}",
        "peer_veth": f"psp{subnet_index}-{11 + index}",
        # Hostile traits are part of what the node is, fixed when it is made (pisim.hostile).
        "hostile": list(faults.hostile),
        "reported_config_path": faults.reported_config_path,
        # So is a USB NIC: the node's veth end is made for it (pisim.netns).
        "usb_nic_cycles": faults.usb_nic_cycles or profile.usb_nic_cycles,
        # A 32-bit node's processes run from this root (pisim.rootfs, pisim.boot).
        "userland": userland,
    }

    pem, pub = new_keypair(f"pisim@{farm}-{name}")
    write_atomic(node / "key" / "id_ed25519", pem, 0o600)
    write_atomic(node / "key" / "id_ed25519.pub", pub + "\n", 0o644)

    etc = node / "etc"
    _etc_files(etc, name, uid, hash_password(password), profile, info)
    write_atomic(etc / "ssh" / "sshd_config", sshd_config(ip))
    write_host_key(etc / "ssh", name)

    boot = node / "boot"
    fw = boot / "firmware" if profile.config_dir == "/boot/firmware" else boot
    fw.mkdir(exist_ok=True)
    write_atomic(fw / "config.txt", hostile.config_txt(profile, info["hostile"]), 0o755)
    write_atomic(fw / "cmdline.txt", CMDLINE_TXT.format(partuuid=secrets.token_hex(4)), 0o755)
    if profile.stub_config:
        write_atomic(boot / "config.txt", BOOKWORM_STUB_CONFIG_TXT, 0o644)

    home = node / "home" / USER
    skel = Path("/etc/skel")
    if skel.is_dir():
        shutil.copytree(skel, home, symlinks=True)
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    write_atomic(home / ".ssh" / "authorized_keys", pub + "\n", 0o600)
    for dirpath, _dirs, files in os.walk(home):
        os.chown(dirpath, uid, uid)
        for f in files:
            os.lchown(os.path.join(dirpath, f), uid, uid)
    home.chmod(0o755)
    (home / ".ssh").chmod(0o700)

    _install_bin(node, info)
    write_json(node / "node.json", info, 0o600)
    write_json(node / "faults.json", faults.to_dict())
    write_json(
        node / "state.json",
        {"boot_count": 0, "boot_id": None, "state": "off", "tryboot_flag": False, "init_pid": None},
    )
    return info
