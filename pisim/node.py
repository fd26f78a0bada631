"""Client-side handle of one simulated Pi (what tests and the demo use)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from . import hostile
from .faults import Faults
from .nodefs import write_host_key
from .profiles import PROFILES, Profile
from .util import PisimError, fingerprint, read_json, write_atomic, write_json

if TYPE_CHECKING:
    from .farm import Farm

NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
JOIN_THEN_EXEC = 'echo "$$" > "$1" && shift && exec "$@"'
# Node directories that are host directories bind-mounted into the node (see pisim.boot).
_BIND_DIRS = {
    "/boot": "boot",
    "/home": "home",
    "/etc/default": "etc/default",
    "/etc/ssh": "etc/ssh",
    "/etc/sudoers.d": "etc/sudoers.d",
}


class _Fact:
    """One of a node's facts from its node.json (written when the farm made it), read as an
    attribute: node.host is node.info["ip"]."""

    def __init__(self, key: str):
        self.key = key

    def __get__(self, node, owner=None) -> str:
        return node.info[self.key]


class Node:
    port = 22

    def __init__(self, farm: Farm, nodedir: Path):
        self.farm = farm
        self.dir = Path(nodedir)
        self.info = read_json(self.dir / "node.json")

    def __repr__(self) -> str:
        return f"<pisim.Node {self.name} {self.info['profile']} {self.host}>"

    # ---- identity -----------------------------------------------------------------------
    name = _Fact("name")
    host = _Fact("ip")
    user = _Fact("user")
    password = _Fact("password")
    serial = _Fact("serial")

    @property
    def profile(self) -> Profile:
        return PROFILES[self.info["profile"]]

    @property
    def private_key_path(self) -> str:
        return str(self.dir / "key" / "id_ed25519")

    @property
    def private_key_pem(self) -> str:
        return Path(self.private_key_path).read_text()

    @property
    def host_key_public(self) -> str:
        """'ssh-ed25519 AAAA...' of the host key sshd currently uses (no comment)."""
        line = (self.dir / "etc" / "ssh" / "ssh_host_ed25519_key.pub").read_text()
        return " ".join(line.split()[:2])

    @property
    def host_key_fingerprint(self) -> str:
        return fingerprint(self.host_key_public)

    @property
    def known_hosts_line(self) -> str:
        return f"{self.host} {self.host_key_public}"

    # ---- state --------------------------------------------------------------------------
    @property
    def _state(self) -> dict:
        return read_json(self.dir / "state.json", {})

    @property
    def state(self) -> str:
        """off, up, down (rebooting), hung, halted or crashed."""
        return self._state.get("state", "off")

    @property
    def boot_count(self) -> int:
        return int(self._state.get("boot_count", 0))

    @property
    def boot_id(self) -> str | None:
        return self._state.get("boot_id")

    @property
    def booted(self) -> dict:
        """Everything the last simulated boot decided (what vcgencmd reads)."""
        return read_json(self.dir / "run" / "booted.json", {})

    @property
    def booted_config(self) -> dict:
        """Effective config.txt values read at the last boot: name -> int or str, plus
        'dtoverlay' and 'dtparam' lists."""
        cfg = self.booted.get("config")
        if not cfg:
            return {}
        flat = {**cfg["ints"], **cfg["strs"]}
        flat["dtoverlay"], flat["dtparam"] = cfg["dtoverlays"], cfg["dtparams"]
        return flat

    @property
    def faults(self) -> Faults:
        return Faults.from_dict(read_json(self.dir / "faults.json", {}))

    @property
    def cpu_quota(self) -> dict:
        """This boot's simulated CPU share (pisim.nodecpu): mode (v1, v2 or none), cgroup,
        mhz and quota_us per period_us, or a note saying why there is none."""
        return read_json(self.dir / "run" / "cpu.json", {})

    # ---- waiting ------------------------------------------------------------------------
    def accepts_tcp(self, timeout: float = 0.5) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout):
                return True
        except OSError:
            return False

    def wait_ssh(self, timeout: float = 10) -> None:
        """Until sshd accepts TCP connections; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            if self.accepts_tcp(min(0.5, max(0.05, deadline - time.monotonic()))):
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{self.name} ({self.host}): sshd not reachable after "
                    f"{timeout} s (state {self.state})"
                )
            time.sleep(0.05)

    def wait_state(self, *states: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while (state := self.state) not in states:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: state {state}, wanted {states}")
            time.sleep(0.05)
        return state

    # ---- faults and power ---------------------------------------------------------------
    def _request(self, op: str, **kw) -> dict:
        return self.farm._request(op, node=self.name, **kw)

    def set_faults(self, faults: Faults) -> None:
        """Boot-time faults apply from the next boot; sshd_restart_delay at once."""
        write_json(self.dir / "faults.json", faults.to_dict())

    def kill_sshd(self) -> None:
        """sshd and every session die now; sshd is back after faults.sshd_restart_delay."""
        self._request("kill_sshd")

    def change_host_key(self) -> str:
        """New host key; sshd restarted with it. Returns the new public key line."""
        before = self._sshd_generation()
        write_host_key(self.dir / "etc" / "ssh", self.name)
        if self.state == "up":
            self._request("restart_sshd")
            deadline = time.monotonic() + 10
            while self._sshd_generation() == before and time.monotonic() < deadline:
                time.sleep(0.02)
            self.wait_ssh()
        return self.host_key_public

    def set_unreachable(self, unreachable: bool = True) -> None:
        """Packets to and from the node silently dropped: connect() times out."""
        self._request("set_unreachable", value=bool(unreachable))

    def power_cycle(self) -> None:
        """Hard reset: down now, boots config.txt after the farm's downtime."""
        self._request("power_cycle")

    def _sshd_generation(self) -> int:
        return int(read_json(self.dir / "run" / "sshd.json", {}).get("generation", 0))

    # ---- files and commands -------------------------------------------------------------
    def _host_path(self, path: str) -> Path | None:
        if not path.startswith("/") or ".." in Path(path).parts:
            raise ValueError(f"need an absolute node path without '..': {path!r}")
        for prefix, sub in _BIND_DIRS.items():
            if path == prefix or path.startswith(prefix + "/"):
                return self.dir / sub / path[len(prefix) :].lstrip("/")
        return None

    def _init_pid(self) -> int:
        pid = self._state.get("init_pid")
        if not pid or self.state != "up":
            raise PisimError(f"{self.name} is not running (state {self.state})")
        return int(pid)

    def run_as_root(
        self,
        cmd: list[str],
        input: bytes | str | None = None,  # noqa: A002
        timeout: float = 30,
        check: bool = False,
    ) -> subprocess.CompletedProcess:
        """Run cmd as root inside the node's namespaces and cgroup (not through SSH), from the
        node's userland (a 32-bit node's root and personality, as its sessions have them)."""
        argv = ["nsenter", "-t", str(self._init_pid()), "-m", "-u", "-n", "-p", "--"]
        userland = self.info.get("userland")
        if userland:
            argv += ["chroot", userland["root"]]
            if userland["personality"]:
                argv += ["/usr/bin/setarch", userland["personality"]]
        argv += cmd
        quota = self.cpu_quota
        if quota.get("mode") in ("v1", "v2"):  # the shell joins the node's group, then is nsenter
            argv = ["sh", "-c", JOIN_THEN_EXEC, "sh", f"{quota['cgroup']}/cgroup.procs", *argv]
        return subprocess.run(
            argv,
            input=input,
            capture_output=True,
            timeout=timeout,
            check=check,
            cwd="/",
            text=isinstance(input, str),
            env={"PATH": NODE_PATH, "HOME": "/root", "LANG": "C.UTF-8"},
        )

    def commands_run(self) -> list[str]:
        """The commands a hostile node's login shell was given, in order."""
        try:
            log = self.read_file(hostile.COMMAND_LOG)
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in log.decode().splitlines()]

    def read_file(self, path: str) -> bytes:
        host = self._host_path(path)
        if host is not None:
            return host.read_bytes()
        proc = self.run_as_root(["cat", "--", path])
        if proc.returncode != 0:
            raise FileNotFoundError(proc.stderr.decode(errors="replace").strip())
        return proc.stdout

    def write_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        host = self._host_path(path)
        if host is not None:
            if not host.parent.is_dir():
                raise FileNotFoundError(f"{self.name}: no directory {os.path.dirname(path)}")
            write_atomic(host, data, mode)
            if path.startswith("/home/"):
                uid = self.info["uid"]
                os.chown(host, uid, uid)
            return
        raw = data.encode() if isinstance(data, str) else data
        proc = self.run_as_root(
            ["sh", "-c", 'cat > "$1" && chmod "$2" "$1"', "sh", path, f"{mode:o}"], input=raw
        )
        if proc.returncode != 0:
            raise OSError(proc.stderr.decode(errors="replace").strip())
