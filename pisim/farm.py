"""A farm of simulated Pis: the client API (pisim.Farm) and the clean-up functions."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import cgroup, netns, procs
from .faults import Faults
from .node import Node
from .nodefs import pick_uid, prepare_node
from .util import RUN_ROOT, PisimError, pid_alive, read_json, read_line, write_json

FARM_NAME_RE = re.compile(r"[a-z0-9]{1,6}")
NODE_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,14}")
PKG_PARENT = Path(__file__).resolve().parent.parent


class Farm:
    """A bridge 10.213.<subnet_index>.1/24 on the host, and nodes .11, .12, ... behind it.

    Nothing happens on the host until add_node() or start(); stop() undoes everything."""

    def __init__(self, name: str = "pisim", subnet_index: int = 1, downtime: float = 1.5):
        if not FARM_NAME_RE.fullmatch(name):
            raise ValueError(f"farm name must match [a-z0-9]{{1,6}}: {name!r}")
        if not 1 <= int(subnet_index) <= 254:
            raise ValueError(f"subnet_index must be 1..254: {subnet_index!r}")
        self.name = name
        self.subnet_index = int(subnet_index)
        self.downtime = float(downtime)
        self.dir = RUN_ROOT / name
        self.nodes: dict[str, Node] = {}
        self._proc: subprocess.Popen | None = None
        self._claimed = False
        self._uid: int | None = None
        self.started = False

    def __repr__(self) -> str:
        return f"<pisim.Farm {self.name} 10.213.{self.subnet_index}.0/24 {list(self.nodes)}>"

    def __enter__(self) -> Farm:
        if not self.started:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __getitem__(self, name: str) -> Node:
        return self.nodes[name]

    def __iter__(self):
        return iter(list(self.nodes.values()))

    def __len__(self) -> int:
        return len(self.nodes)

    # ---- building -----------------------------------------------------------------------
    def _claim(self) -> None:
        if self._claimed:
            return
        if os.geteuid() != 0:
            raise PisimError("pisim needs root (network namespaces, mounts, sshd)")
        RUN_ROOT.mkdir(parents=True, exist_ok=True)
        try:
            self.dir.mkdir(mode=0o755)
        except FileExistsError:
            if farm_in_use(self.dir):
                raise PisimError(
                    f"farm {self.name!r} is in use ({self.dir}); stop it with "
                    f"`python -m pisim down --name {self.name}`"
                ) from None
            teardown_farm(self.name)
            self.dir.mkdir(mode=0o755)
        (self.dir / "nodes").mkdir()
        self._write_meta(owner_pid=os.getpid())
        self._claimed = True

    def _write_meta(self, owner_pid: int | None) -> None:
        write_json(
            self.dir / "meta.json",
            {
                "name": self.name,
                "subnet_index": self.subnet_index,
                "downtime": self.downtime,
                "owner_pid": owner_pid,
                "created": time.time(),
            },
        )

    def add_node(
        self, name: str, profile: str = "pi4b-bookworm", faults: Faults | None = None
    ) -> Node:
        """Add a node (before or after start()); after start it is booted at once."""
        if not NODE_NAME_RE.fullmatch(name):
            raise ValueError(f"node name must match {NODE_NAME_RE.pattern}: {name!r}")
        if name in self.nodes:
            raise PisimError(f"farm {self.name} already has a node {name!r}")
        if len(self.nodes) >= 240:
            raise PisimError("a farm holds at most 240 nodes")
        self._claim()
        if self._uid is None:
            self._uid = pick_uid()
        prepare_node(
            self.dir / "nodes" / name,
            farm=self.name,
            subnet_index=self.subnet_index,
            name=name,
            index=len(self.nodes),
            profile_key=profile,
            faults=faults or Faults(),
            uid=self._uid,
        )
        node = Node(self, self.dir / "nodes" / name)
        self.nodes[name] = node
        if self.started:
            reply = self._request("add_node", node=name)
            if reply["state"].get("state") == "up":
                node.wait_ssh(20)
            self._write_farm_json()
        return node

    # ---- running ------------------------------------------------------------------------
    def start(self, timeout: float = 30, detach: bool = False) -> Farm:
        """Start the supervisor and every node; returns when each node's sshd accepts TCP
        (nodes that hang at boot by their faults are not waited for).

        detach=True: the supervisor outlives this process (the CLI's `up`); otherwise it
        tears the farm down by itself when this process dies."""
        if self.started:
            return self
        self._claim()
        self._write_meta(owner_pid=None if detach else os.getpid())
        log = open(self.dir / "supervisor.log", "ab")  # noqa: SIM115 - handed to the child
        cmd = [sys.executable, "-m", "pisim", "supervise", str(self.dir)]
        if not detach:
            cmd += ["--owner-pid", str(os.getpid())]
        env = dict(os.environ, PYTHONPATH=str(PKG_PARENT))
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=str(PKG_PARENT),
            env=env,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                tail = (self.dir / "supervisor.log").read_text(errors="replace")[-3000:]
                self.stop()
                raise PisimError(f"farm {self.name}: supervisor failed:\n{tail}")
            try:
                status = self._request("status", timeout=2)
                break
            except (OSError, PisimError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise PisimError(f"farm {self.name}: supervisor did not answer") from None
                time.sleep(0.05)
        self.started = True
        for name, state in status["nodes"].items():
            if state.get("state") == "up":
                self.nodes[name].wait_ssh(max(1.0, deadline - time.monotonic()))
        self._write_farm_json()
        return self

    def _request(self, op: str, timeout: float = 30, **kw) -> dict:
        return control_request(self.dir, {"op": op, **kw}, timeout)

    def status(self) -> dict:
        return self._request("status")["nodes"]

    def describe(self) -> dict:
        """The farm as a JSON-able document (what `pisim up --json` prints)."""
        return {
            "farm": self.name,
            "subnet_index": self.subnet_index,
            "rundir": str(self.dir),
            "nodes": [
                {
                    "name": n.name,
                    "profile": n.info["profile"],
                    "model": n.profile.model,
                    "host": n.host,
                    "port": n.port,
                    "user": n.user,
                    "password": n.password,
                    "private_key_path": n.private_key_path,
                    "host_key_public": n.host_key_public,
                    "host_key_fingerprint": n.host_key_fingerprint,
                    "cpu_quota": n.cpu_quota.get("mode"),  # v1, v2 or none (simulated)
                }
                for n in self.nodes.values()
            ],
        }

    def _write_farm_json(self) -> None:
        write_json(self.dir / "farm.json", self.describe(), 0o600)

    def stop(self) -> None:
        """Tear down everything of this farm: processes, netns, veths, bridge, rundir.
        Idempotent; a Farm that never claimed its directory touches nothing."""
        if self._claimed and self.dir.exists():
            stop_supervisor(self.dir, self._proc)
            teardown_farm(self.name)
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None
        self.started = False
        self._claimed = False

    @classmethod
    def attach(cls, name: str) -> Farm:
        """A handle on a farm that is already running (e.g. started by `pisim up`)."""
        rundir = RUN_ROOT / name
        meta = read_json(rundir / "meta.json", {})
        if not meta:
            raise PisimError(f"no farm {name!r} in {RUN_ROOT}")
        farm = cls(name, meta["subnet_index"], meta["downtime"])
        farm._claimed = True
        farm.started = pid_alive(_supervisor_pid(rundir), "supervise")
        nodes = (rundir / "nodes").iterdir()
        for d in sorted(nodes, key=lambda p: read_json(p / "node.json")["index"]):
            farm.nodes[d.name] = Node(farm, d)
        return farm


# ---- control channel and clean-up -------------------------------------------------------
def control_request(rundir: Path, req: dict, timeout: float = 30) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(rundir / "control.sock"))
        sock.sendall(json.dumps(req).encode() + b"\n")
        buf = read_line(sock)
    if not buf:
        raise PisimError(f"supervisor closed the connection ({req.get('op')})")
    reply = json.loads(buf)
    if not reply.get("ok"):
        raise PisimError(reply.get("error", "supervisor error"))
    return reply


def _supervisor_pid(rundir: Path) -> int | None:
    try:
        return int((rundir / "supervisor.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def farm_in_use(rundir: Path) -> bool:
    """A live supervisor, or a live owner still building the farm."""
    if pid_alive(_supervisor_pid(rundir), "supervise"):
        return True
    owner = read_json(rundir / "meta.json", {}).get("owner_pid")
    return bool(owner) and owner != os.getpid() and procs.exists(owner)


def stop_supervisor(rundir: Path, proc: subprocess.Popen | None = None) -> None:
    pid = _supervisor_pid(rundir) or (proc.pid if proc and proc.poll() is None else None)
    if not pid_alive(pid, "supervise"):
        return
    try:
        control_request(rundir, {"op": "stop"}, timeout=5)
    except (OSError, PisimError, ValueError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while pid_alive(pid, "supervise") and time.monotonic() < deadline:
        if proc is not None:
            proc.poll()
        time.sleep(0.05)
    if pid_alive(pid, "supervise"):
        os.kill(pid, signal.SIGKILL)


def teardown_farm(name: str) -> None:
    """Remove whatever is left of farm `name` (its supervisor must be gone already)."""
    for ns in netns.farm_netns(name):
        netns.kill_netns_processes(ns)
        netns.run(["ip", "netns", "del", ns], check=False)
    links = netns.farm_links(name)
    for link in sorted(links, key=lambda n: n.startswith("psbr")):  # veths first
        netns.delete_link(link)
    cgroup.remove_farm(name)
    shutil.rmtree(RUN_ROOT / name, ignore_errors=True)


def list_farms() -> list[str]:
    if not RUN_ROOT.is_dir():
        return []
    return sorted(
        d.name for d in RUN_ROOT.iterdir() if d.is_dir() and FARM_NAME_RE.fullmatch(d.name)
    )


def _cgroup_farms() -> set[str]:
    return {name for name in cgroup.farm_groups() if FARM_NAME_RE.fullmatch(name)}


def cleanup_stale() -> list[str]:
    """Remove farms whose supervisor and owner are gone, and orphaned pisim netns/links.
    Farms that are alive (another test session, a demo started with `up`) are left alone."""
    removed = []
    live = set()
    for name in list_farms():
        if farm_in_use(RUN_ROOT / name):
            live.add(name)
        else:
            teardown_farm(name)
            removed.append(name)
    orphans = {ns.split("-")[1] for ns in netns.farm_netns(None) if ns.count("-") >= 2}
    for link in netns.list_links():
        alias = link.get("ifalias", "")
        if alias.startswith("pisim:"):
            orphans.add(alias.split(":")[1])
    orphans.update(_cgroup_farms())
    for name in sorted(orphans - live):
        teardown_farm(name)
        removed.append(name)
    return sorted(set(removed))


def cleanup_all() -> list[str]:
    """Remove every pisim farm, namespace, veth, bridge, cgroup and process (crash recovery)."""
    names = set(list_farms()) | _cgroup_farms()
    for name in names:
        stop_supervisor(RUN_ROOT / name)
        teardown_farm(name)
    for ns in netns.farm_netns(None):
        netns.kill_netns_processes(ns)
        netns.run(["ip", "netns", "del", ns], check=False)
        names.add(ns.split("-")[1] if ns.count("-") >= 2 else ns)
    for link in netns.list_links():
        ifname = link["ifname"]
        if link.get("ifalias", "").startswith("pisim:") or re.fullmatch(
            r"psbr\d+|psv\d+-\d+", ifname
        ):
            netns.delete_link(ifname)
    return sorted(names)
