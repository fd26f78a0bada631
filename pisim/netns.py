"""Network plumbing of a farm: one bridge on the host, one veth pair and netns per node.

Only 10.213.<subnet_index>.0/24 is used; nodes get no default route, nothing is forwarded or
NATed, and only interfaces that pisim created (named psbr*/psv*, alias "pisim:<farm>...") are
ever touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .usbnic import WIRE as USB_WIRE  # the node side of the veth of a node with a USB NIC
from .util import NETNS_PREFIX, SUBNET_PREFIX, PisimError, kill_until_gone, run

USB_WIRE_NFT = f"""table netdev pisim_usbnic {{
    chain wire_in {{ type filter hook ingress device "{USB_WIRE}" priority 0; policy drop; }}
}}
"""


def bridge_name(subnet_index: int) -> str:
    return f"psbr{subnet_index}"


def list_links() -> list[dict]:
    out = run(["ip", "-j", "link", "show"]).stdout
    return json.loads(out or "[]")


def list_netns() -> list[str]:
    return [
        line.split()[0] for line in run(["ip", "netns", "list"]).stdout.splitlines() if line.strip()
    ]


def netns_pids(ns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def create_bridge(farm: str, subnet_index: int) -> None:
    br = bridge_name(subnet_index)
    if Path(f"/sys/class/net/{br}").exists():
        raise PisimError(
            f"subnet index {subnet_index} is in use: {br} exists "
            f"(another farm? `python -m pisim status`)"
        )
    run(["ip", "link", "add", br, "type", "bridge"])
    run(["ip", "link", "set", br, "alias", f"pisim:{farm}"])
    run(["ip", "addr", "add", f"{SUBNET_PREFIX}.{subnet_index}.1/24", "dev", br])
    run(["ip", "link", "set", br, "up"])


# What a full Ethernet frame takes of a wire, in bytes, against what tc counts of it: tc
# counts the frame as the kernel holds it (header 14 + MTU 1500, each segment of a TSO/GSO
# packet too), the wire also carries the FCS (4), preamble and start of frame (8) and the
# inter-frame gap (12). A veth has no wire, so the bucket runs that much slower than the line
# rate, and TCP over it tops out where it would on a real 100 Mbit/s port: 94.1 Mbit/s of
# payload (benchmarks.network_link.tcp_goodput_mbit), not 95.6.
COUNTED_FRAME, WIRE_FRAME = 14 + 1500, 14 + 1500 + 4 + 8 + 12


def shape_args(mbit: int) -> list[str]:
    # Token bucket at the board's Ethernet line rate. Its burst, 2 ms of the rate, is small:
    # the bucket starts full and a port has none to give, so a short run got its burst on
    # top (10 ms of it put a 5-second iperf3 above the goodput ceiling); tbf's timers are
    # high-resolution, so it still reaches the rate. (It cuts a GSO packet larger than the
    # burst into frames.)
    burst = max(mbit * 1_000_000 // 8 // 500, 16_000)
    kbit = mbit * 1000 * COUNTED_FRAME // WIRE_FRAME
    return ["root", "tbf", "rate", f"{kbit}kbit", "burst", str(burst), "latency", "50ms"]


def create_node_net(info: dict, mbit: int) -> None:
    """netns + veth pair, node side renamed eth0, shaped with tc in both directions.

    With a USB NIC (info["usb_nic_cycles"]) the node side is USB_WIRE instead, without an
    address: the node's PID 1 puts a relay and a TAP eth0 in front of it (pisim/usbnic.py)."""
    ns, host, peer = info["netns"], info["host_veth"], info["peer_veth"]
    br = bridge_name(info["subnet_index"])
    node_side = USB_WIRE if info.get("usb_nic_cycles") else "eth0"
    if ns in list_netns():
        raise PisimError(f"network namespace {ns} already exists")
    run(["ip", "netns", "add", ns])
    run(["ip", "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns])
    run(["ip", "link", "set", host, "alias", f"pisim:{info['farm']}:{info['name']}"])
    run(["ip", "-n", ns, "link", "set", peer, "name", node_side])
    if node_side == "eth0":
        run(["ip", "-n", ns, "addr", "add", f"{info['ip']}/24", "dev", "eth0"])
    else:
        make_usb_wire(ns, host)
    run(["ip", "-n", ns, "link", "set", "lo", "up"])
    run(["ip", "-n", ns, "link", "set", node_side, "up"])
    run(["ip", "link", "set", host, "master", br, "up"])
    run(["tc", "qdisc", "replace", "dev", host, *shape_args(mbit)])
    run(["tc", "-n", ns, "qdisc", "replace", "dev", node_side, *shape_args(mbit)])
    # A permanent neighbour entry: when the node is "unreachable" (its port down) the host
    # still sends, and the frames vanish: connect() times out instead of failing on ARP.
    # (A USB NIC's TAP takes this same MAC.)
    link = json.loads(run(["ip", "-n", ns, "-j", "link", "show", node_side]).stdout)
    mac = link[0]["address"]
    run(["ip", "neigh", "replace", info["ip"], "lladdr", mac, "dev", br, "nud", "permanent"])


def make_usb_wire(ns: str, host: str) -> None:
    """The cable of a USB NIC: only the relay's packet socket reads it (taps see a frame
    before the ingress hook drops it for the node's kernel), the kernel sends nothing of its
    own on it, and the host hands it whole, checksummed frames (a packet socket gets no
    offload metadata, so a TAP would get a GSO frame or a TCP checksum left to hardware)."""
    run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=USB_WIRE_NFT)
    run(
        [
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-q",
            "-w",
            f"net.ipv6.conf.{USB_WIRE}.disable_ipv6=1",
        ]
    )
    run(["ethtool", "-K", host, "tx", "off", "tso", "off", "gso", "off"])


def set_link(info: dict, up: bool) -> None:
    """Host side of the node's cable: down = every packet silently dropped."""
    run(["ip", "link", "set", info["host_veth"], "up" if up else "down"])


def delete_node_net(info: dict) -> None:
    ns = info["netns"]
    kill_netns_processes(ns)
    run(["ip", "link", "del", info["host_veth"]], check=False)
    run(["ip", "netns", "del", ns], check=False)


def kill_netns_processes(ns: str) -> None:
    kill_until_gone(
        lambda: [pid for pid in netns_pids(ns) if pid != os.getpid()], pause_s=0.05, tries=50
    )


def delete_link(name: str) -> None:
    run(["ip", "link", "del", name], check=False)


def farm_links(farm: str | None) -> list[str]:
    """Interfaces pisim created (for `farm`, or for any farm when None)."""
    names = []
    for link in list_links():
        alias = link.get("ifalias", "")
        if not alias.startswith("pisim:"):
            continue
        if farm is None or alias == f"pisim:{farm}" or alias.startswith(f"pisim:{farm}:"):
            names.append(link["ifname"])
    return names


def farm_netns(farm: str | None) -> list[str]:
    prefix = NETNS_PREFIX + (f"{farm}-" if farm else "")
    return [ns for ns in list_netns() if ns.startswith(prefix)]
