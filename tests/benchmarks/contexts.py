"""Contexts for network trials in tests, filled the way the engine fills them.

A board on the pisim farm, its peer the controller (this host, on the node's farm bridge) or
another node; a free port pair and, for tunnels, inner addresses of a /30 in the project's
tunnel range (10.213.100.0-10.213.199.255) and an interface name, all unique per call.
"""

from __future__ import annotations

import getpass
import itertools
import os
import socket
import subprocess
import uuid

from benchmarks.catalog.spec import Context
from tests.benchmarks.ends import bridge_address

_tunnels = itertools.count((os.getpid() % 1000) * 16)


def free_port_pair(address: str) -> int:
    """A port p such that p and p + 1 are free for TCP and UDP on address."""
    while True:
        with socket.socket() as probe:
            probe.bind((address, 0))
            port = probe.getsockname()[1]
        if port < 65535 and all(_free(address, port + offset) for offset in (0, 1)):
            return port


def _free(address: str, port: int) -> bool:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            try:
                probe.bind((address, port))
            except OSError:
                return False
    return True


def tunnel(port: int) -> dict[str, str]:
    """A /30 of 10.213.100.0-10.213.199.255 and an interface name of <= 15 characters."""
    index = next(_tunnels) % (100 * 64)
    third, fourth = 100 + index // 64, (index % 64) * 4
    return {
        "board_ip": f"10.213.{third}.{fourth + 1}",
        "peer_ip": f"10.213.{third}.{fourth + 2}",
        "prefix": "30",
        "ifname": f"pft{uuid.uuid4().hex[:8]}",
        "port": str(port + 1),
    }


def to_controller(node) -> Context:
    """The node as the board, the controller as its peer."""
    peer = bridge_address(node)
    port = free_port_pair(peer)
    trial = uuid.uuid4().hex[:12]
    return Context(
        workdir=f"/dev/shm/pifarm-{trial}",
        board_address=node.host,
        peer_address=peer,
        peer_workdir=f"/dev/shm/pifarm-peer-{trial}",
        peer_is_controller=True,
        peer_user=getpass.getuser(),
        board_user=node.user,
        tunnel=tunnel(port),
        port=port,
    )


def on_paper() -> Context:
    """A context for looking at plans only: nothing listens at these addresses."""
    return Context(
        workdir="/dev/shm/pifarm-board",
        board_address="10.213.1.11",
        peer_address="10.213.1.1",
        peer_workdir="/dev/shm/pifarm-peer",
        peer_user="pi",
        board_user="pi",
        tunnel=tunnel(40000),
        port=40000,
    )


def to_node(board, peer) -> Context:
    """One node as the board, another node of the same farm as its peer."""
    port = free_port_pair("127.0.0.1")  # nodes have their own ports; any number will do
    trial = uuid.uuid4().hex[:12]
    return Context(
        workdir=f"/dev/shm/pifarm-{trial}",
        board_address=board.host,
        peer_address=peer.host,
        peer_workdir=f"/dev/shm/pifarm-peer-{trial}",
        peer_user=peer.user,
        board_user=board.user,
        tunnel=tunnel(port),
        port=port,
    )


def left_on_node(node, ctx: Context) -> list[str]:
    """What this trial left on a node: its processes, tunnel interface or nft table."""
    return _left(node.run_as_root, ctx)


def left_on_controller(ctx: Context) -> list[str]:
    """The same on this host; processes are told apart by the trial's own port or interface."""
    return _left(lambda argv: subprocess.run(argv, capture_output=True, check=False), ctx)


def _left(run, ctx: Context) -> list[str]:
    ifname, port = ctx.tunnel["ifname"], str(ctx.port)
    patterns = (
        f"openvpn.*{ifname}",
        f"wireguard-go.*{ifname}",
        f"iperf3.* -p {port}",
        f"sshd.* -p {port}",
    )
    left = []
    for pattern in patterns:
        found = run(["pgrep", "-a", "-f", pattern]).stdout
        left += [line for line in _lines(found) if "pgrep" not in line]
    if run(["ip", "link", "show", "dev", ifname]).returncode == 0:
        left.append(f"interface {ifname}")
    if run(["nft", "list", "table", "inet", f"pifarm_fw{port}"]).returncode == 0:
        left.append(f"nft table pifarm_fw{port}")
    return left


def _lines(output) -> list[str]:
    text = output.decode(errors="replace") if isinstance(output, bytes) else output
    return [line for line in text.splitlines() if line.strip()]
