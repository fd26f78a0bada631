"""PID 1 of a simulated Pi: sets up the node's mount namespace, then runs and watches sshd.

Started by the supervisor as
    ip netns exec pisim-<farm>-<node> unshare --pid --fork --kill-child --mount --uts
        --propagation private --mount-proc <python> -I pisim/boot.py <nodedir> [<cgroup fd>]
Killing that unshare process powers the node off: every process of the node dies with us.

Signals from the supervisor: SIGUSR1 = kill sshd and every session now, keep sshd down;
SIGUSR2 = start sshd again; SIGHUP = restart the sshd listener (new host key).
With a banner fault (pisim.faults) port 22 is SshGate, a relay in front of sshd on loopback.
PID 1 joins the node's cgroup first (pisim/nodecpu.py) and sets its CPU quota from the
emulated Arm clock, which it re-evaluates every CLOCK_SAMPLE_S from the governor and the load;
the same scan of the node's processes rewrites the node's own /proc/stat and /proc/loadavg
(pisim/procstat.py), as /proc/uptime is rewritten every loop turn.
A node with a USB NIC gets its eth0 from a relay (pisim/usbnic.py) that PID 1 starts before
sshd and restarts when it dies; killing "every process" for SIGUSR1 spares it (it is the
board's Ethernet, not a session). A 32-bit node's sshd runs chrooted into the i386 root of
pisim.rootfs, where PID 1 mounts the node's own files (setup_userland_root).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import sys
import threading
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))  # python -I leaves our directory out
import nodecpu  # noqa: E402 - standard library only, from this directory
import procstat  # noqa: E402 - likewise
import usbnic  # noqa: E402 - likewise

MS_BIND = 0x1000
MS_REC = 0x4000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
SSHD = "/usr/sbin/sshd"
SSHD_CONFIG = "/etc/ssh/sshd_config"
GATED_SSHD_CONFIG = "/run/sshd_config.gated"  # this boot's sshd config behind SshGate
LOOPBACK_SSHD = ("127.0.0.1", 22)
SSHD_START_WAIT_S = 3.0  # how long the banner gate waits for sshd to listen after a boot
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GOVERNORS = "conservative ondemand userspace powersave performance schedutil"  # yaml: governor
# How often the emulated clock (and with it the CPU quota) follows the load: often enough that
# a job is not held at arm_freq_min for long, like ondemand's own sampling.
CLOCK_SAMPLE_S = 0.2
# ondemand's up_threshold: busier than this, the cores run at arm_freq. Half of what the quota
# allows tells a busy core (measured ~1.0) from logins and probes (up to ~0.4 of a sample).
ONDEMAND_BUSY_LOAD = 0.5
POLICY = "/sys/devices/system/cpu/cpufreq/policy0"  # one cpufreq policy for all cores
USBNIC_READY_WAIT_S = 10.0
USBNIC_RESTART_DELAY_S = 1.0  # a relay that cannot start (no /dev/net/tun?) is not respawned hot
_libc = ctypes.CDLL(None, use_errno=True)
_log_fd = 2


def log(msg: str) -> None:
    os.write(_log_fd, f"{time.strftime('%H:%M:%S')} boot: {msg}\n".encode())


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


def setup_mounts(node: Path, booted: dict) -> int:
    """All of the node's private mounts; returns an O_PATH fd of the node's run dir."""
    for name in ("cpuinfo", "meminfo", "uptime", "stat", "loadavg"):
        mount(str(node / "proc" / name), f"/proc/{name}", flags=MS_BIND)
    mount(str(node / "proc" / "boot_id"), "/proc/sys/kernel/random/boot_id", flags=MS_BIND)
    setup_firmware_tree(booted, (node / "proc" / "model").read_bytes())
    setup_cpu_tree(booted)
    etc = node / "etc"
    for name in ("passwd", "shadow", "group", "gshadow", "hostname", "hosts", "os-release"):
        if (etc / name).exists():
            # /etc/os-release is a symlink on Debian: the bind lands on its target, which is
            # what readers of either path should see.
            mount(str(etc / name), f"/etc/{name}", flags=MS_BIND)
    for name in ("sudoers.d", "default", "ssh"):
        mount(str(etc / name), f"/etc/{name}", flags=MS_BIND)
    mount(str(node / "boot"), "/boot", flags=MS_BIND)
    mount(str(node / "home"), "/home", flags=MS_BIND)
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
    etc = node / "etc"
    for name in ("passwd", "shadow", "group", "gshadow", "hostname", "hosts", "os-release"):
        if (etc / name).exists():
            mount(str(etc / name), f"{root}/etc/{name}", flags=MS_BIND)
    for name in ("sudoers.d", "default", "ssh"):
        mount(str(etc / name), f"{root}/etc/{name}", flags=MS_BIND)
    mount(str(node / "boot"), f"{root}/boot", flags=MS_BIND)
    mount(str(node / "home"), f"{root}/home", flags=MS_BIND)
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


class SshGate:
    """Port 22 of a node with a banner fault: a relay to sshd on the node's loopback.

    A connection is accepted at once and held in silence until banner_delay s after the
    boot; in the close_after_banner s after that it gets sshd's banner and is closed;
    later ones are relayed both ways, byte for byte.
    """

    def __init__(self, booted_at: float, banner_delay: float, close_after_banner: float):
        self.release_at = booted_at + banner_delay
        self.open_at = self.release_at + close_after_banner

    def start(self) -> None:
        """Moves sshd to loopback (a config for this boot only) and listens where it was."""
        text = Path(SSHD_CONFIG).read_text()
        public = re.search(r"^ListenAddress (\S+):(\d+)$", text, re.MULTILINE)
        write(GATED_SSHD_CONFIG, text.replace(public.group(0), "ListenAddress 127.0.0.1:22"))
        listener = socket.create_server((public.group(1), int(public.group(2))))
        threading.Thread(target=self.accept, args=(listener,), daemon=True).start()
        log(f"port 22 gated: silent {self.release_at - time.monotonic():.1f} s")

    def accept(self, listener: socket.socket) -> None:
        while True:
            client, _ = listener.accept()
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    def serve(self, client: socket.socket) -> None:
        with client:
            time.sleep(max(0.0, self.release_at - time.monotonic()))
            upstream = _connect_sshd(time.monotonic() + SSHD_START_WAIT_S)
            if upstream is None:
                return  # sshd is down (killed, restarting): the client sees the door close
            with upstream:
                if time.monotonic() >= self.open_at:
                    upstream.settimeout(None)
                    inbound = threading.Thread(target=_copy, args=(client, upstream), daemon=True)
                    inbound.start()
                    _copy(upstream, client)
                    _shut(client)  # wakes the inbound copy if it still waits in recv()
                    inbound.join()
                    return
                try:
                    client.sendall(upstream.makefile("rb").readline(256))
                except OSError:
                    return  # no banner from sshd, or the client left: nothing to pass on
                _hang_up(client)


def _kill_all_but(keep: int | None) -> None:
    """SIGKILL every process of the namespace but PID 1 and `keep`, until none is alive
    (one that forks meanwhile leaves a child for the next round; the dead wait for reap())."""
    while True:
        victims = [pid for pid in _living_pids() if pid not in (1, keep)]
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _living_pids() -> list[int]:
    pids = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # not a process, or gone meanwhile
        if state not in (b"Z", b"X"):
            pids.append(int(entry))
    return pids


def _connect_sshd(deadline: float) -> socket.socket | None:
    """sshd behind the gate, waited for while it starts: right after a boot the gate listens
    before sshd does, and a connection then must still get the fault it was set up for."""
    while True:
        try:
            return socket.create_connection(LOOPBACK_SSHD, timeout=5)
        except OSError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the other side went away: the connection is over


def _shut(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already gone


def _hang_up(conn: socket.socket) -> None:
    """FIN, not RST: read what the client sent, so the banner is not lost in a reset."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(1.0)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


class UsbNic:
    """The node's USB Ethernet relay (pisim/usbnic.py), a child of PID 1 in the node's cgroup."""

    def __init__(self, usb_nic: dict, booted: dict):
        self.booted = booted
        self.address = usb_nic["address"]
        self.cost_ns = nodecpu.frame_cost_ns(usb_nic["cycles"], booted["ncpu"])
        self.pid: int | None = None
        self.down_since = 0.0

    def exited(self, status: int) -> None:
        log(f"usbnic relay exited (status {status}): eth0 is gone until it is back")
        self.pid = None
        self.down_since = time.monotonic()

    def restart_due(self, now: float) -> bool:
        return self.pid is None and now - self.down_since > USBNIC_RESTART_DELAY_S

    def start(self) -> None:
        """Returns once eth0 has the node's address (sshd listens on it), or after a wait."""
        ready_r, ready_w = os.pipe()
        argv = [usbnic.WIRE, usbnic.TAP, self.address, str(self.cost_ns)]
        # A fork, not a new interpreter: the node's /tmp is a tmpfs of its own, so the
        # project's interpreter may not be reachable from here (a checkout under /tmp).
        self.pid = os.fork()
        if self.pid == 0:
            status = 1
            try:
                for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)  # PID 1's own, not the relay's
                os.close(ready_r)
                os.dup2(ready_w, 1)
                os.dup2(_log_fd, 2)
                os.environ.update(PATH="/usr/sbin:/usr/bin:/sbin:/bin", LANG="C.UTF-8")
                status = usbnic.main(argv)
            except BaseException as exc:  # noqa: BLE001 - say why in the node's log, then die
                os.write(2, f"usbnic relay failed: {exc!r}\n".encode())
            finally:
                os._exit(status)
        os.close(ready_w)
        try:
            ready, _, _ = select.select([ready_r], [], [], USBNIC_READY_WAIT_S)
            said = os.read(ready_r, 64) if ready else b""
        finally:
            os.close(ready_r)
        log(
            f"usbnic relay (pid {self.pid}, {self.cost_ns} ns of host CPU a frame): "
            + ("eth0 ready" if said.startswith(b"ready") else "eth0 NOT ready")
        )
        if said.startswith(b"ready"):
            try:
                show_line_rate(self.booted)  # a new TAP each start: a new sysfs file
            except OSError as exc:
                log(f"eth0's speed not shown: {exc}")


class Init:
    def __init__(self, booted: dict, cpu: nodecpu.CpuShare):
        self.booted = booted
        self.cpu = cpu
        usb_nic = booted.get("usb_nic")
        self.usb_nic = UsbNic(usb_nic, booted) if usb_nic else None
        self.sshd_pid: int | None = None
        self.sshd_config = SSHD_CONFIG
        self.sshd_down_since = 0.0
        self.hold = False
        self.generation = 0
        self.pending: list[str] = []
        ints = booted["config"]["ints"]
        self.fmax, self.fmin = ints["arm_freq"], ints["arm_freq_min"]
        self.temp = 0.0
        self.booted_at = time.monotonic()
        self.uptime_fd = os.open("/proc/uptime", os.O_RDWR)  # our bind-mounted file
        # The cgroup's CPU accounting is the node's only if PID 1 joined it (a quota is set).
        cgroup_fd = cpu.dir_fd if cpu.throttled else None
        self.stat = procstat.NodeStat(booted["ncpu"], self.booted_at, cgroup_fd, cpu.host_cpus, log)
        processes = procstat.scan()
        self.stat.refresh(processes)  # before anything of the node's can read it
        self.last_ticks = processes.clock_ticks
        self.last_sample = time.monotonic()

    def on_signal(self, signum, _frame) -> None:
        if signum == signal.SIGUSR1:
            # Takes effect now, inside the handler: "sshd dies in the middle of a command".
            self.hold = True
            if self.usb_nic:
                _kill_all_but(self.usb_nic.pid)
            else:
                os.kill(-1, signal.SIGKILL)  # from PID 1: every other process of the namespace
            log("sshd and all sessions killed")
        else:
            self.pending.append({signal.SIGUSR2: "release", signal.SIGHUP: "restart"}[signum])

    def status(self) -> None:
        data = {"generation": self.generation, "pid": self.sshd_pid, "held": self.hold}
        tmp = "/run/pisim/.sshd.json.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, "/run/pisim/sshd.json")

    def start_sshd(self) -> None:
        argv = userland_argv(self.booted, [SSHD, "-D", "-e", "-f", self.sshd_config])
        self.sshd_pid = os.posix_spawn(
            argv[0],
            argv,
            {
                "PATH": NODE_PATH,
                "LANG": "C.UTF-8",
            },
            file_actions=[(os.POSIX_SPAWN_DUP2, _log_fd, 1), (os.POSIX_SPAWN_DUP2, _log_fd, 2)],
            setsid=True,
        )
        self.generation += 1
        log(f"sshd started (pid {self.sshd_pid}, generation {self.generation})")
        self.status()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.sshd_pid:
                log(f"sshd exited (status {status})")
                self.sshd_pid = None
                self.sshd_down_since = time.monotonic()
                self.status()
            elif self.usb_nic and pid == self.usb_nic.pid:
                self.usb_nic.exited(status)

    def handle(self, what: str) -> None:
        if what == "release":
            self.hold = False
            if self.sshd_pid is None:
                self.start_sshd()
        elif what == "restart" and not self.hold:
            if self.sshd_pid:
                os.kill(self.sshd_pid, signal.SIGTERM)
                os.waitpid(self.sshd_pid, 0)
                self.sshd_pid = None
            self.start_sshd()
        self.status()

    def refresh_sysfs(self, processes: procstat.Scan) -> None:
        """Simulated clock, CPU quota and SoC temperature from governor and node load."""
        now = time.monotonic()
        ticks = processes.clock_ticks
        elapsed = max(now - self.last_sample, 0.01)
        # Load as the Pi sees it: of the CPU time its cores could have had at their clock.
        used = max(0, ticks - self.last_ticks) / (elapsed * 100)
        load = used / self.cpu.host_cpus()
        self.last_ticks, self.last_sample = ticks, now
        mhz = self.arm_mhz(load)
        self.cpu.set_mhz(mhz)  # the quota first: whoever reads the clock sees its effect
        write(f"{POLICY}/scaling_cur_freq", f"{mhz * 1000}\n")
        ints = self.booted["config"]["ints"]
        target = 38 + 6 * mhz / 1000 + 14 * min(load, 1.0) + 0.5 * ints.get("over_voltage", 0)
        smoothing = 1 - 0.8**elapsed  # the SoC warms and cools over seconds
        self.temp = target if not self.temp else self.temp + (target - self.temp) * smoothing
        write("/sys/class/thermal/thermal_zone0/temp", f"{int(self.temp * 1000)}\n")

    def arm_mhz(self, load: float) -> int:
        """yaml: overclocking.general: busy cores at arm_freq, idle ones at arm_freq_min."""
        try:
            with open(f"{POLICY}/scaling_governor") as f:
                governor = f.read().strip()
        except OSError:
            governor = "ondemand"
        if governor == "performance" or self.booted["config"]["ints"].get("force_turbo"):
            return self.fmax
        if governor in ("powersave", "userspace"):
            return self.fmin
        return self.fmax if load > ONDEMAND_BUSY_LOAD else self.fmin

    def refresh_uptime(self) -> None:
        """/proc/uptime counts from this simulated boot (rewritten in place: bind-mounted)."""
        up = time.monotonic() - self.booted_at
        data = f"{up:.2f} {up * self.booted['ncpu'] * 0.9:.2f}\n".encode()
        os.pwrite(self.uptime_fd, data, 0)
        os.ftruncate(self.uptime_fd, len(data))

    def loop(self) -> None:
        next_refresh = 0.0
        restart_delay = float(self.booted.get("sshd_restart_delay", 1.0))
        while True:
            self.reap()
            while self.pending:
                self.handle(self.pending.pop(0))
            now = time.monotonic()
            if (
                self.sshd_pid is None
                and not self.hold
                and now - self.sshd_down_since > (restart_delay if self.generation else 0)
            ):
                self.start_sshd()
            if self.usb_nic and self.usb_nic.restart_due(now):
                self.usb_nic.start()
            self.refresh_uptime()
            if now >= next_refresh:
                processes = procstat.scan()  # one pass over /proc for the clock and /proc/stat
                self.refresh_sysfs(processes)
                next_refresh = now + CLOCK_SAMPLE_S
            # Every turn, as the kernel's counters move on between two scans: a reading taken
            # a tenth of a second after another (a short trial's telemetry) sees time pass.
            self.stat.refresh(processes)
            time.sleep(0.05)


def read_cpu_info(node: Path) -> dict:
    """What the supervisor made of this boot's cgroup (pisim.cgroup)."""
    try:
        return json.loads((node / "run" / "cpu.json").read_text())
    except (OSError, ValueError) as exc:
        return {"mode": "none", "note": f"no cgroup from the supervisor ({exc})"}


def main(argv: list[str]) -> int:
    global _log_fd
    node = Path(argv[0])
    _log_fd = os.open(node / "log" / "node.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    booted = json.loads((node / "run" / "booted.json").read_text())
    cgroup_fd = int(argv[1]) if len(argv) > 1 else None
    cpu = nodecpu.CpuShare(read_cpu_info(node), booted["ncpu"], log, cgroup_fd)
    try:
        hostname = (node / "proc" / "hostname").read_bytes()  # before /run is covered
        setup_mounts(node, booted)
        socket.sethostname(hostname)
    except Exception as exc:  # noqa: BLE001 - log why the node failed to boot, then die
        log(f"boot failed: {exc!r}")
        return 1
    os.chdir("/")
    init = Init(booted, cpu)
    if init.usb_nic:
        init.usb_nic.start()  # eth0 and its address first: sshd and SshGate listen on it
    if booted.get("banner_delay") or booted.get("close_after_banner"):
        # "After the boot": from the firmware's boot that booted.json records, as the node's
        # users see it (node.booted), not from when this PID 1 got to run on a loaded host.
        since_boot = max(0.0, time.time() - booted["booted_at"])
        booted_at = time.monotonic() - since_boot
        gate = SshGate(booted_at, booted["banner_delay"], booted["close_after_banner"])
        gate.start()
        init.sshd_config = GATED_SSHD_CONFIG
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
        signal.signal(sig, init.on_signal)
    log(f"booted (boot_count {booted['boot_count']}, tryboot {booted['tryboot']})")
    init.loop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
