"""The 32-bit userland of the simulated 32-bit Pis: a Debian i386 root, built once and cached.

A real 32-bit Raspberry Pi OS runs armhf binaries; the closest this amd64 host can run natively
is Debian's i386 port, so a 32-bit node's sshd, and everything it starts, runs from this root
(pisim.boot chroots into it). Built with debootstrap from the machine's own apt sources, into a
cache outside the checkout (PISIM_CACHE_DIR, default /var/cache/pisim) that survives test
sessions: atomically (in a temporary directory, renamed when complete), under a lock (two test
sessions never build it at once), again when the package list below changes (its stamp file
records it), and with retries for a flaky mirror. `python -m pisim build-root` builds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .util import PisimError

CACHE_DIR = Path(os.environ.get("PISIM_CACHE_DIR", "/var/cache/pisim"))
ARCH = "i386"
SUITE = "bookworm"
# What a 32-bit node needs: sshd, sudo and python3 for pisim's emulators in /usr/local/bin, the
# tools pifarm's probe and campaigns run (the Makefile's APT_PACKAGES), and `file` to show
# what a binary is.
PACKAGES = (
    "openssh-server", "sudo", "python3", "procps", "iproute2", "coreutils", "util-linux",
    "mount", "file", "busybox", "iperf3", "openssl", "sysbench", "stress-ng", "7zip", "flac",
    "lame", "openvpn", "wireguard-tools", "wireguard-go", "ethtool", "nftables", "fio", "gcc",
    "libc6-dev", "make",
)  # fmt: skip
# What _configure() does to the root: a change to it bumps this, and the cached root is rebuilt.
RECIPE = 2
ATTEMPTS = 3  # a mirror that drops a download now and then
RETRY_PAUSE_S = 5.0
STEP_TIMEOUT_S = 1800
SOURCES = Path("/etc/apt/sources.list.d")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def root_dir(cache_dir: Path | None = None) -> Path:
    """Where the root lives once built (its stamp is next to it)."""
    return (cache_dir or CACHE_DIR) / f"{ARCH}-{SUITE}" / "root"


def stamp_for(packages: tuple[str, ...]) -> dict:
    return {"arch": ARCH, "suite": SUITE, "packages": sorted(packages), "recipe": RECIPE}


def is_built(cache_dir: Path | None = None, packages: tuple[str, ...] = PACKAGES) -> bool:
    final = root_dir(cache_dir).parent
    try:
        stamp = json.loads((final / "stamp.json").read_text())
    except (OSError, ValueError):
        return False
    expected = stamp_for(packages)
    return {k: stamp.get(k) for k in expected} == expected


def ensure_root(
    cache_dir: Path | None = None,
    packages: tuple[str, ...] = PACKAGES,
    mirror: str | None = None,
    attempts: int = ATTEMPTS,
    say=None,
) -> Path:
    """The i386 root directory, built first if there is none with this package list."""
    cache_dir = cache_dir or CACHE_DIR
    if is_built(cache_dir, packages):
        return root_dir(cache_dir)
    if os.geteuid() != 0:
        raise PisimError("building the i386 root for 32-bit nodes needs root (debootstrap)")
    if shutil.which("debootstrap") is None:
        raise PisimError(
            "the 32-bit nodes need an i386 root built by debootstrap, which is not installed "
            "(apt-get install debootstrap; `make setup` installs it)"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f"{ARCH}-{SUITE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session may be building it: wait for it
        if not is_built(cache_dir, packages):
            _build(cache_dir, packages, mirror, attempts, say or (lambda _msg: None))
    return root_dir(cache_dir)


def machine_sources() -> tuple[str, str, list[Path]]:
    """(mirror URI, keyring, source files) of this machine's Debian SUITE entry."""
    files = sorted(SOURCES.glob("*.sources"))
    for path in files:
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = dict(
                (m.group(1).lower(), m.group(2).strip())
                for m in re.finditer(r"^([A-Za-z-]+):(.*)$", stanza, re.MULTILINE)
            )
            if (
                "deb" in fields.get("types", "").split()
                and SUITE in fields.get("suites", "").split()
                and fields.get("enabled", "yes") != "no"
            ):
                uri = fields.get("uris", DEFAULT_MIRROR).split()[0]
                return uri, fields.get("signed-by", DEFAULT_KEYRING), files
    return DEFAULT_MIRROR, DEFAULT_KEYRING, files


def _build(cache_dir: Path, packages, mirror, attempts: int, say) -> None:
    final = root_dir(cache_dir).parent
    uri, keyring, source_files = machine_sources()
    mirror = mirror or uri
    debs = cache_dir / f"debs-{ARCH}-{SUITE}"  # downloads kept for a retry or a rebuild
    debs.mkdir(exist_ok=True)
    _remove_leftovers(cache_dir)
    work = cache_dir / f".{ARCH}-{SUITE}.build-{os.getpid()}"
    log = cache_dir / f"{ARCH}-{SUITE}.build.log"
    log.write_bytes(b"")  # this build's log only
    started = time.monotonic()
    last_error = ""
    for attempt in range(1, attempts + 1):
        _remove_tree(work)
        (work / "root").mkdir(parents=True)
        say(f"building the {ARCH} root from {mirror} (attempt {attempt} of {attempts})")
        try:
            _debootstrap(work / "root", packages, mirror, keyring, debs, log)
            not_updated = _configure(work / "root", source_files, log)
            break
        except PisimError as exc:
            last_error = str(exc)
            if attempt < attempts:
                time.sleep(RETRY_PAUSE_S)
    else:
        _remove_tree(work)
        raise PisimError(
            f"could not build the {ARCH} root for the 32-bit nodes from {mirror} "
            f"({attempts} attempts): {last_error} (log: {log})"
        )
    seconds = time.monotonic() - started
    stamp = {**stamp_for(packages), "mirror": mirror, "built_at": time.time(), "seconds": seconds}
    stamp["not_updated"] = not_updated
    (work / "stamp.json").write_text(json.dumps(stamp, indent=1) + "\n")
    if final.exists():  # a root of another package list, perhaps still in use
        final.rename(cache_dir / f".{ARCH}-{SUITE}.old-{os.getpid()}-{time.time_ns()}")
    work.rename(final)
    _remove_leftovers(cache_dir)
    say(f"{ARCH} root built in {seconds:.0f} s: {final / 'root'}")
    if not_updated:
        say(f"(brought up to date only from the apt indexes that arrived: {not_updated})")


def _remove_leftovers(cache_dir: Path) -> None:
    """Builds that died (we hold the lock: nobody else builds) and replaced roots that no node
    has mounted any more (running nodes of another session keep theirs until they stop)."""
    for path in cache_dir.glob(f".{ARCH}-{SUITE}.build-*"):
        _remove_tree(path)
    in_use = _mounted_sources()
    for path in cache_dir.glob(f".{ARCH}-{SUITE}.old-*"):
        device, inside = _filesystem_path(path)
        if not any(d == device and root.startswith(f"{inside}/") for d, root in in_use):
            _remove_tree(path)


def _filesystem_path(path: Path) -> tuple[str, str]:
    """(device, path inside that filesystem) of a directory, as mountinfo names mounts' roots."""
    best = ("", "/", "/")
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            device, root, mountpoint = line.split()[2:5]
            inside = f"{path}/".startswith(mountpoint.rstrip("/") + "/")
            if inside and len(mountpoint) >= len(best[2]):
                best = (device, root, mountpoint)
    device, root, mountpoint = best
    return device, root.rstrip("/") + str(path)[len(mountpoint.rstrip("/")) :]


def _mounted_sources() -> set[tuple[str, str]]:
    """(device, root) of every mount of every mount namespace on the machine: what each has
    mounted, as a path inside its filesystem (a renamed directory shows under its new name)."""
    seen, sources = set(), set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            namespace = os.readlink(f"/proc/{pid}/ns/mnt")
            if namespace in seen:
                continue
            seen.add(namespace)
            with open(f"/proc/{pid}/mountinfo") as mountinfo:
                sources.update((f[2], f[3].rstrip("/") + "/") for f in map(str.split, mountinfo))
        except OSError:
            continue  # gone meanwhile
    return sources


def _remove_tree(path: Path) -> None:
    """rm -r that never reaches into a mount: a debootstrap that died may have left /proc or
    /sys mounted inside its target; they are unmounted first (deepest first)."""
    if not path.exists():
        return
    prefix = f"{path}/"
    with open("/proc/self/mountinfo") as mountinfo:
        mounts = [line.split()[4] for line in mountinfo if line.split()[4].startswith(prefix)]
    for target in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", "--", target], check=False, timeout=30)
    shutil.rmtree(path, ignore_errors=True)


def _step(what: str, cmd: list[str], log: Path) -> None:
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        try:
            proc = subprocess.run(
                cmd, stdout=out, stderr=out, timeout=STEP_TIMEOUT_S, check=False, cwd="/"
            )
        except subprocess.TimeoutExpired:
            raise PisimError(f"{what} took longer than {STEP_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise PisimError(f"{what} failed (exit {proc.returncode}): {' | '.join(tail)}")


def _debootstrap(root: Path, packages, mirror: str, keyring: str, debs: Path, log: Path) -> None:
    cmd = [
        "debootstrap",
        f"--arch={ARCH}",
        "--variant=minbase",
        f"--include={','.join(packages)}",
        f"--cache-dir={debs}",
        f"--keyring={keyring}",
        SUITE,
        str(root),
        mirror,
    ]
    _step("debootstrap", cmd, log)


def _configure(root: Path, source_files: list[Path], log: Path) -> str:
    """The machine's own apt sources (its updates and security suites too), then the root is
    brought up to date from them, and left without host keys or downloaded packages.

    Returns why some index could not be read ("" when all were): a mirror caught in the middle
    of a sync serves an index that does not match its Release file (seen with bookworm-security
    for i386). apt keeps the indexes that did arrive, so the root is brought up to date from
    those: debootstrap already installed every package, and a security update missing from a
    simulated node's userland changes none of its benchmarks. The stamp keeps the reason."""
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    for path in source_files:
        shutil.copy2(path, root / "etc/apt/sources.list.d" / path.name)
    env = ["env", "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C.UTF-8"]
    chroot = ["chroot", str(root), *env]
    not_updated = ""
    try:
        _step("apt-get update in the i386 root", [*chroot, "apt-get", "update", "-qq"], log)
    except PisimError as exc:
        not_updated = str(exc)
    _step(
        "apt-get dist-upgrade in the i386 root",
        [*chroot, "apt-get", "dist-upgrade", "-y", "-qq"],
        log,
    )
    _step("apt-get clean in the i386 root", [*chroot, "apt-get", "clean"], log)
    for key in (root / "etc/ssh").glob("ssh_host_*"):
        key.unlink()  # each node has its own (pisim.nodefs); none is shared through the cache
    # Where pisim.boot mounts the node's own files and directories.
    for mountpoint in ("boot", "home", "usr/local/bin", "usr/local/sbin", "var/tmp"):
        (root / mountpoint).mkdir(parents=True, exist_ok=True)
    (root / "etc/hosts").touch()
    return not_updated
