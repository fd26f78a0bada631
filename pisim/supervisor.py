"""The farm supervisor: owns the network and the node processes of one farm.

Runs in the host namespaces as `python -m pisim supervise <rundir>`, single-threaded (node
processes get PR_SET_PDEATHSIG, so they must be spawned by a thread that lives as long as the
supervisor). Talks JSON lines on <rundir>/control.sock to pisim.Farm, and plain text lines on
each node's /run/pisim/ctl.sock to the reboot/shutdown emulators inside the node.
Each running node has a cgroup of its own (pisim.cgroup), made at power-on and removed at
power-off; the node's PID 1 joins it and sets its CPU quota.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

from . import cgroup, netns, procs
from .bootloader import firmware_boot
from .faults import Faults
from .profiles import PROFILES
from .util import PisimError, read_json, read_line, write_atomic, write_json

BOOT_PY = Path(__file__).with_name("boot.py")
REBOOT_DELAY = 0.3  # the reboot command returns, then the node goes down
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _die_with_parent() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} supervisor: {msg}", flush=True)


class NodeRuntime:
    def __init__(self, nodedir: Path):
        self.dir = nodedir
        self.info = read_json(nodedir / "node.json")
        self.name = self.info["name"]
        self.profile = PROFILES[self.info["profile"]]
        self.proc: subprocess.Popen | None = None
        self.init_pid: int | None = None
        self.epoch = 0  # bumped by every power event; stale timers check it
        self.unreachable = False
        self.link_up = True
        self.state = read_json(nodedir / "state.json")
        self.ctl: socket.socket | None = None
        self.cgroup: Path | None = None  # this boot's, while the node runs

    @property
    def faults(self) -> Faults:
        return Faults.from_dict(read_json(self.dir / "faults.json", {}))

    def set_state(self, state: str, apply_link, **changes) -> None:
        """Network first, then the state file: whoever sees the new state sees its effect."""
        self.state["state"] = state
        apply_link(self)
        self.save(**changes)

    def save(self, **changes) -> None:
        self.state.update(changes)
        write_json(self.dir / "state.json", self.state)


class Supervisor:
    def __init__(self, rundir: Path):
        self.rundir = rundir
        self.farm = read_json(rundir / "meta.json")
        self.nodes: dict[str, NodeRuntime] = {}
        self.sel = selectors.DefaultSelector()
        self.timers: list = []
        self.seq = itertools.count()
        self.running = True
        self.bridge_created = False
        self.cpu = cgroup.detect()

    # ---- timers -------------------------------------------------------------------------
    def later(self, delay: float, node: NodeRuntime, fn, *args) -> None:
        epoch = node.epoch
        heapq.heappush(
            self.timers,
            (
                time.monotonic() + delay,
                next(self.seq),
                lambda: fn(*args) if node.epoch == epoch else None,
            ),
        )

    # ---- power --------------------------------------------------------------------------
    def power_off(self, node: NodeRuntime) -> None:
        node.epoch += 1
        if node.proc and node.proc.poll() is None:
            node.proc.kill()  # unshare --kill-child takes PID 1, and with it the namespace
            try:
                node.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log(f"{node.name}: unshare did not die")
        if node.init_pid:
            procs.reap(node.init_pid)  # ours since unshare died: we are a child subreaper
        node.proc = None
        node.init_pid = None
        netns.kill_netns_processes(node.info["netns"])
        self.remove_cgroup(node)
        node.save(init_pid=None)

    def create_cgroup(self, node: NodeRuntime) -> int | None:
        """This boot's group, described in run/cpu.json for the node's PID 1 (and status);
        returns an O_PATH descriptor of it for PID 1, which cannot see /sys/fs/cgroup."""
        info = {"mode": self.cpu.mode, "note": self.cpu.note}
        fd = None
        if self.cpu.root is not None:
            try:
                node.cgroup = cgroup.create_node_group(self.cpu, self.farm["name"], node.name)
                fd = os.open(node.cgroup, os.O_PATH | os.O_DIRECTORY)
                info["cgroup"] = str(node.cgroup)
            except OSError as exc:
                info = {"mode": "none", "note": f"cannot create the node's cgroup: {exc}"}
        if info["mode"] == "none":
            log(f"{node.name}: no CPU quota ({info['note']}): runs unthrottled")
        write_json(node.dir / "run" / "cpu.json", info)
        return fd

    def remove_cgroup(self, node: NodeRuntime) -> None:
        """The group goes with the node's processes; so does the quota it reported."""
        (node.dir / "run" / "cpu.json").unlink(missing_ok=True)
        if node.cgroup is not None:
            try:
                cgroup.remove_group(node.cgroup)
            except PisimError as exc:  # the farm's clean-up tries again
                log(f"{node.name}: {exc}")
            node.cgroup = None

    def boot(self, node: NodeRuntime) -> None:
        """Firmware: read config.txt (or tryboot.txt once), then hang or start Linux."""
        faults = node.faults
        booted = firmware_boot(node.dir, node.info, node.profile, node.state, faults)
        boot_count, tryboot = booted["boot_count"], booted["tryboot"]
        cfg_file = booted["config_file"]
        # The one-shot flag is cleared by this boot, whatever happens next (yaml: tryboot).
        node.save(
            boot_count=boot_count,
            boot_id=booted["boot_id"],
            tryboot_flag=False,
            booted_tryboot=tryboot,
        )
        arm = booted["config"]["ints"]["arm_freq"]
        if faults.max_boot_arm_freq is not None and arm > faults.max_boot_arm_freq:
            log(f"{node.name}: hangs at boot (arm_freq {arm} > {faults.max_boot_arm_freq})")
            node.set_state("hung", self.apply_link)
            if tryboot and faults.watchdog:
                self.later(faults.watchdog_timeout, node, self.watchdog_reset, node)
            return
        self.spawn(node)
        node.set_state("up", self.apply_link, init_pid=node.init_pid)
        log(f"{node.name}: booted #{boot_count} from {cfg_file} (arm_freq {arm})")

    def spawn(self, node: NodeRuntime) -> None:
        cgroup_fd = self.create_cgroup(node)
        logf = open(node.dir / "log" / "node.log", "ab")  # noqa: SIM115 - handed to the child
        cmd = [
            "ip",
            "netns",
            "exec",
            node.info["netns"],
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--uts",
            "--propagation",
            "private",
            "--mount-proc",
            sys.executable,
            "-I",
            str(BOOT_PY),
            str(node.dir),
            *([str(cgroup_fd)] if cgroup_fd is not None else []),
        ]
        env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
        }
        node.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=logf,
            stderr=logf,
            env=env,
            preexec_fn=_die_with_parent,
            close_fds=True,
            pass_fds=() if cgroup_fd is None else (cgroup_fd,),
        )
        logf.close()
        if cgroup_fd is not None:
            os.close(cgroup_fd)
        node.init_pid = procs.wait_child(node.proc.pid)

    def watchdog_reset(self, node: NodeRuntime) -> None:
        log(f"{node.name}: watchdog reset")
        self.power_off(node)
        node.save(state="down")
        self.boot(node)

    def reboot(self, node: NodeRuntime, tryboot: bool) -> None:
        if tryboot:
            node.save(tryboot_flag=True)
        self.later(REBOOT_DELAY, node, self._go_down, node, True)

    def halt(self, node: NodeRuntime) -> None:
        self.later(REBOOT_DELAY, node, self._go_down, node, False)

    def _go_down(self, node: NodeRuntime, come_back: bool) -> None:
        self.power_off(node)
        node.set_state("down" if come_back else "halted", self.apply_link)
        if come_back:
            self.later(float(self.farm["downtime"]), node, self.boot, node)

    def power_cycle(self, node: NodeRuntime) -> None:
        """Hard reset: any reset clears the tryboot flag (yaml: tryboot.mechanism)."""
        self.power_off(node)
        node.set_state("down", self.apply_link, tryboot_flag=False)
        self.later(float(self.farm["downtime"]), node, self.boot, node)

    def apply_link(self, node: NodeRuntime) -> None:
        # A hung or halted board answers nothing: packets vanish (connect() times out);
        # a rebooting one still refuses connections (nothing listens in its netns).
        want_up = not node.unreachable and node.state.get("state") not in ("hung", "halted")
        if want_up != node.link_up:
            netns.set_link(node.info, want_up)
            node.link_up = want_up

    # ---- sshd faults --------------------------------------------------------------------
    def kill_sshd(self, node: NodeRuntime) -> None:
        if not node.init_pid:
            raise PisimError(f"{node.name} is not running")
        os.kill(node.init_pid, signal.SIGUSR1)
        deadline = time.monotonic() + 3
        while procs.sessions(node.init_pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.later(
            node.faults.sshd_restart_delay, node, procs.send_signal, node.init_pid, signal.SIGUSR2
        )

    # ---- requests -----------------------------------------------------------------------
    def add_node(self, name: str) -> NodeRuntime:
        if name in self.nodes:
            return self.nodes[name]
        node = NodeRuntime(self.rundir / "nodes" / name)
        netns.create_node_net(node.info, node.profile.eth_mbit)
        self.nodes[name] = node
        sock_path = node.dir / "run" / "ctl.sock"
        sock_path.unlink(missing_ok=True)
        node.ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        node.ctl.bind(str(sock_path))
        os.chmod(sock_path, 0o666)  # noqa: S103 - `reboot` works for user pi too
        node.ctl.listen(8)
        self.sel.register(node.ctl, selectors.EVENT_READ, ("node", name))
        self.boot(node)
        return node

    def node(self, name: str) -> NodeRuntime:
        if name not in self.nodes:
            raise PisimError(f"no node {name!r} in farm {self.farm['name']}")
        return self.nodes[name]

    def handle_control(self, req: dict) -> dict:
        op = req.get("op")
        if op == "ping":
            return {"pid": os.getpid()}
        if op == "status":
            return {
                "nodes": {
                    n: dict(
                        node.state,
                        unreachable=node.unreachable,
                        cpu_quota=read_json(node.dir / "run" / "cpu.json", {}).get("mode"),
                    )
                    for n, node in self.nodes.items()
                }
            }
        if op == "stop":
            self.running = False
            return {}
        node = self.node(req["node"]) if op != "add_node" else None
        if op == "add_node":
            node = self.add_node(req["node"])
        elif op == "power_cycle":
            self.power_cycle(node)
        elif op == "kill_sshd":
            self.kill_sshd(node)
        elif op == "restart_sshd":
            if node.init_pid:
                os.kill(node.init_pid, signal.SIGHUP)
        elif op == "set_unreachable":
            node.unreachable = bool(req["value"])
            self.apply_link(node)
        else:
            raise PisimError(f"unknown op {op!r}")
        return {"state": node.state}

    def handle_node_request(self, name: str, line: str) -> str:
        node = self.nodes[name]
        if node.state.get("state") != "up":
            return "node is not up"
        words = line.split()
        if words[:1] == ["reboot"]:
            self.reboot(node, tryboot="tryboot" in words)
        elif words[:1] == ["halt"]:
            self.halt(node)
        else:
            return f"unknown request {line!r}"
        log(f"{name}: {line} requested from inside the node")
        return "ok"

    # ---- main loop ----------------------------------------------------------------------
    def serve_conn(self, listener: socket.socket, kind: str, name: str | None) -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(2)
            try:
                buf = read_line(conn)
                if kind == "node":
                    reply = self.handle_node_request(name, buf.decode(errors="replace").strip())
                    conn.sendall(reply.encode() + b"\n")
                    return
                try:
                    result = {"ok": True, **self.handle_control(json.loads(buf))}
                except Exception as exc:  # noqa: BLE001 - reported to the client
                    log(traceback.format_exc())
                    result = {"ok": False, "error": str(exc)}
                conn.sendall(json.dumps(result).encode() + b"\n")
            except OSError as exc:
                log(f"connection error: {exc}")

    def run(self, owner_pid: int | None) -> int:
        # Orphaned node processes come to us, not to the host's init, and are reaped here.
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: setattr(self, "running", False))
        try:
            netns.create_bridge(self.farm["name"], int(self.farm["subnet_index"]))
            self.bridge_created = True
            nodes_dir = self.rundir / "nodes"
            for d in sorted(
                nodes_dir.iterdir() if nodes_dir.exists() else [],
                key=lambda p: read_json(p / "node.json")["index"],
            ):
                self.add_node(d.name)
            ctl_path = self.rundir / "control.sock"
            ctl_path.unlink(missing_ok=True)
            control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            control.bind(str(ctl_path))
            os.chmod(ctl_path, 0o600)
            control.listen(16)
            self.sel.register(control, selectors.EVENT_READ, ("control", None))
        except Exception:
            log(traceback.format_exc())
            self.teardown()
            return 1
        write_atomic(self.rundir / "supervisor.pid", f"{os.getpid()}\n")
        log(f"farm {self.farm['name']} up, {len(self.nodes)} node(s), CPU quota: {self.cpu.mode}")
        next_owner_check = 0.0
        while self.running:
            now = time.monotonic()
            timeout = 0.25
            if self.timers:
                timeout = max(0.0, min(timeout, self.timers[0][0] - now))
            for key, _ in self.sel.select(timeout):
                kind, name = key.data
                self.serve_conn(key.fileobj, kind, name)
            while self.timers and self.timers[0][0] <= time.monotonic():
                _, _, fn = heapq.heappop(self.timers)
                try:
                    fn()
                except Exception:  # noqa: BLE001 - one node's trouble must not stop the farm
                    log(traceback.format_exc())
            for node in self.nodes.values():
                if node.proc and node.proc.poll() is not None:
                    log(f"{node.name}: node process exited ({node.proc.returncode})")
                    node.proc = None
                    node.init_pid = None
                    self.remove_cgroup(node)
                    node.save(state="crashed", init_pid=None)
            procs.reap_orphans({n.proc.pid for n in self.nodes.values() if n.proc})
            if owner_pid and now >= next_owner_check:
                next_owner_check = now + 0.5
                if not procs.exists(owner_pid):
                    log(f"owner {owner_pid} is gone: tearing down")
                    break
        self.teardown()
        return 0

    def teardown(self) -> None:
        for node in list(self.nodes.values()):
            try:
                self.power_off(node)
            except Exception:  # noqa: BLE001
                log(traceback.format_exc())
            netns.delete_node_net(node.info)
            node.save(state="off")
        if self.bridge_created:
            netns.delete_link(netns.bridge_name(int(self.farm["subnet_index"])))
        try:
            cgroup.remove_farm(self.farm["name"])
        except PisimError as exc:  # teardown_farm() tries again
            log(str(exc))
        (self.rundir / "control.sock").unlink(missing_ok=True)
        (self.rundir / "supervisor.pid").unlink(missing_ok=True)
        if self.farm.get("owner_pid") and not procs.exists(self.farm["owner_pid"]):
            shutil.rmtree(self.rundir, ignore_errors=True)  # nobody is left to do it
        log("teardown done")


def main(rundir: str, owner_pid: int | None) -> int:
    return Supervisor(Path(rundir)).run(owner_pid)
