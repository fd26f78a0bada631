"""Network benchmarks between a board and its peer: iperf3 TCP and small-packet UDP, the
board's firewall drop rate, and scp from the board's RAM disk.

Servers always bind to the address the other end uses (never to every interface) and listen
on the trial's own port; everything a plan starts or changes is undone by its teardown, which
does nothing when setup never ran.
"""

from __future__ import annotations

import json
import re

from benchmarks.catalog import iperf3, keys, offloads, spec

DIRECTION = spec.Param(
    "direction", "choice", "board-to-peer", "who sends",
    choices=("board-to-peer", "peer-to-board"),
)  # fmt: skip
# 64 bytes of payload make 110-byte Ethernet frames; 18 would make the 64-byte minimum frame.
PAYLOAD = spec.Param("payload", "int", 64, "UDP payload in bytes", min=16, max=1472)
BITRATE = spec.Param(
    "bitrate", "text", "0", "target bitrate, e.g. 50M (0: as fast as it can)",
    pattern=r"0|[1-9][0-9]{0,9}[KMG]?",
)  # fmt: skip


# ---- iperf3 TCP ------------------------------------------------------------------------


def _tcp_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    options = ["-P", str(params["streams"])]
    if params["direction"] == "peer-to-board":
        options.append("-R")
    setup, collect, teardown = offloads.commands(ctx) if params["offloads"] == "off" else ((),) * 3
    return spec.Plan(
        setup=setup,
        servers=(iperf3.server("peer", ctx.peer_address, ctx.port, params["duration"]),),
        measure=spec.Command(
            "board",
            iperf3.client(ctx.peer_address, ctx.port, params["duration"], *options),
            timeout_s=params["duration"] + iperf3.SERVER_SLACK_S,
        ),
        collect=collect,
        teardown=teardown,
    )


def _tcp_parse(outputs, params) -> spec.Parsed:
    values, details = iperf3.tcp_figures(outputs.get("measure", ""))
    for end in ("board", "peer"):
        if f"offloads_{end}" in outputs:
            details[f"offloads_before_{end}"] = offloads.parse_state(outputs[f"offloads_{end}"])
    return spec.Parsed(values, details)


IPERF3_TCP = spec.Benchmark(
    name="iperf3-tcp",
    title="iperf3 TCP throughput",
    description="TCP throughput between the board and its peer (iperf3 -J), in either "
    "direction, with parallel streams; NIC offloads optionally off on both ends (their state "
    "before is recorded, and restored afterwards).",
    version=1,
    category="network",
    params=(
        DIRECTION,
        spec.Param("streams", "int", 1, "parallel TCP streams", min=1, max=16),
        iperf3.DURATION,
        spec.Param(
            "offloads",
            "choice",
            "unchanged",
            "NIC offloads (tx, rx, tso, gro, gso)",
            choices=("unchanged", "off"),
        ),
    ),
    metrics=(
        spec.Metric("throughput", "Mbit/s", True, "TCP throughput received"),
        spec.Metric(
            "retransmits", "segments", False, "TCP retransmits of the sender", optional=True
        ),
    ),
    plan=_tcp_plan,
    parse=_tcp_parse,
    tools=("iperf3", "ethtool", "ip"),
    peer_tools=("iperf3", "ethtool", "ip"),
    packages=("iperf3", "ethtool", "iproute2"),
    needs_peer=True,
    repetitions=3,
    timeout_s=iperf3.DURATION.max + iperf3.SERVER_SLACK_S,
    length_param="duration",
    min_trial_s=5,
)


# ---- iperf3 UDP, small packets ---------------------------------------------------------


def _udp_options(params: dict) -> tuple[str, ...]:
    return ("-u", "-l", str(params["payload"]), "-b", params["bitrate"])


def _udp_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    options = list(_udp_options(params))
    if params["direction"] == "peer-to-board":
        options.append("-R")
    return spec.Plan(
        servers=(iperf3.server("peer", ctx.peer_address, ctx.port, params["duration"]),),
        measure=spec.Command(
            "board",
            iperf3.client(ctx.peer_address, ctx.port, params["duration"], *options),
            timeout_s=params["duration"] + iperf3.SERVER_SLACK_S,
        ),
    )


def _udp_parse(outputs, params) -> spec.Parsed:
    data = iperf3.report(outputs.get("measure", ""))
    received = ("end", "sum_received")
    seconds = iperf3.seconds_of(data, "sum_received")
    packets = iperf3.number(data, *received, "packets")
    lost = iperf3.number(data, *received, "lost_packets")
    values = {
        "packet_rate": max(packets - lost, 0) / seconds,
        "loss": iperf3.number(data, *received, "lost_percent"),
        "jitter": iperf3.number(data, *received, "jitter_ms"),
    }
    details = iperf3.version_and_cpu(data)
    details.update(packets_sent=packets, packets_lost=lost, seconds=seconds)
    return spec.Parsed(values, details)


IPERF3_UDP = spec.Benchmark(
    name="iperf3-udp-small",
    title="iperf3 UDP small packets",
    description="Packet rate of small UDP datagrams (64-byte payload by default) between the "
    "board and its peer, with loss and jitter as the receiver saw them.",
    version=1,
    category="network",
    params=(DIRECTION, PAYLOAD, BITRATE, iperf3.DURATION),
    metrics=(
        spec.Metric("packet_rate", "packets/s", True, "packets received per second"),
        spec.Metric("loss", "%", False, "packets lost"),
        spec.Metric("jitter", "ms", False, "jitter"),
    ),
    plan=_udp_plan,
    parse=_udp_parse,
    tools=("iperf3",),
    peer_tools=("iperf3",),
    packages=("iperf3",),
    needs_peer=True,
    repetitions=3,
    timeout_s=iperf3.DURATION.max + iperf3.SERVER_SLACK_S,
    length_param="duration",
    min_trial_s=5,
)


# ---- firewall drop rate ----------------------------------------------------------------

UDP_HEADER = 8
# $1 table. Deleting a table that is not there is not an error here: teardown runs also
# when setup never did, and setup starts with it in case a crashed trial left the table.
_DROP_TABLE = r"""
nft list table inet "$1" > /dev/null 2>&1 || exit 0
nft delete table inet "$1"
"""


def _firewall_table(ctx: spec.Context) -> str:
    return f"pifarm_fw{ctx.port}"


def _firewall_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    table = _firewall_table(ctx)
    drop_table = spec.Command(
        "board", ("sh", "-c", _DROP_TABLE, "pifarm-nft-drop", table), timeout_s=15, sudo=True
    )
    # Only the flood's own datagrams (this port, this length) are counted and dropped:
    # iperf3's TCP control connection and its 4-byte UDP hello must pass.
    chain = "{ type filter hook input priority -10 ; policy accept ; }"
    rule = ("udp", "dport", str(ctx.port), "udp", "length", str(params["payload"] + UDP_HEADER))
    nft = ("nft",)
    setup = (
        drop_table,
        spec.Command("board", (*nft, "add", "table", "inet", table), timeout_s=15, sudo=True),
        spec.Command("board", (*nft, "add", "chain", "inet", table, "flood", chain), sudo=True),
        spec.Command(
            "board",
            (*nft, "add", "rule", "inet", table, "flood", *rule, "counter", "drop"),
            sudo=True,
        ),
    )
    return spec.Plan(
        setup=setup,
        servers=(iperf3.server("board", ctx.board_address, ctx.port, params["duration"]),),
        measure=spec.Command(
            "peer",
            iperf3.client(ctx.board_address, ctx.port, params["duration"], *_udp_options(params)),
            timeout_s=params["duration"] + iperf3.SERVER_SLACK_S,
        ),
        collect=(
            spec.Command(
                "board", (*nft, "-j", "list", "table", "inet", table), name="nft", sudo=True
            ),
        ),
        teardown=(drop_table,),
    )


def _dropped_packets(text: str) -> float:
    try:
        items = json.loads(text)["nftables"]
        counters = [
            expr["counter"]["packets"]
            for item in items
            if "rule" in item
            for expr in item["rule"]["expr"]
            if isinstance(expr, dict) and "counter" in expr
        ]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise spec.ParseError(
            "the board's nft table listing is not the JSON nft -j prints"
        ) from None
    if len(counters) != 1 or isinstance(counters[0], bool) or not isinstance(counters[0], int):
        raise spec.ParseError(
            f"expected one packet counter in the board's table, found {counters!r}"
        )
    return float(counters[0])


def _firewall_parse(outputs, params) -> spec.Parsed:
    data = iperf3.report(outputs.get("measure", ""))
    seconds = iperf3.seconds_of(data, "sum_sent")
    packets = iperf3.number(data, "end", "sum_sent", "packets")
    dropped = _dropped_packets(outputs.get("nft", ""))
    details = iperf3.version_and_cpu(data)
    details.update(packets_sent=packets, packets_dropped=dropped, seconds=seconds)
    return spec.Parsed({"drop_rate": dropped / seconds, "send_rate": packets / seconds}, details)


FIREWALL_DROP = spec.Benchmark(
    name="firewall-drop",
    title="Firewall drop rate, small UDP frames",
    description="The peer floods the board with small UDP datagrams (iperf3); an nftables rule "
    "in a table of pifarm's own on the board counts and drops them. How many packets a second "
    "the board's firewall drops, against how many the peer sent.",
    version=1,
    category="network",
    params=(PAYLOAD, BITRATE, iperf3.DURATION),
    metrics=(
        spec.Metric("drop_rate", "packets/s", True, "packets dropped by the board's firewall"),
        spec.Metric("send_rate", "packets/s", True, "packets sent by the peer"),
    ),
    plan=_firewall_plan,
    parse=_firewall_parse,
    tools=("iperf3", "nft"),
    peer_tools=("iperf3",),
    packages=("iperf3", "nftables"),
    needs_peer=True,
    repetitions=3,
    timeout_s=iperf3.DURATION.max + iperf3.SERVER_SLACK_S,
    length_param="duration",
    min_trial_s=5,
)


# ---- scp -------------------------------------------------------------------------------

SSH_CIPHERS = (
    "chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
    "aes128-ctr", "aes192-ctr", "aes256-ctr",
)  # fmt: skip
SSH_CIPHER = spec.Param("cipher", "choice", SSH_CIPHERS[0], "SSH cipher", choices=SSH_CIPHERS)
FILE_SIZE = spec.Param("size", "size", "50M", "file size (K, M or G)", min=1, max=1024**3)
SSHD = "/usr/sbin/sshd"  # sshd re-executes itself, so it needs its absolute path
SCP_SLACK_S = 30

# $1 path; the content comes on stdin, readable by its owner only (keys).
_WRITE_PRIVATE = 'umask 077 && cat > "$1"'

# Run on the peer: $1 source (user@board:path), $2 bytes, $3 cipher, $4 port, $5 identity,
# $6 known_hosts, $7 where the copy goes, $8 seconds at least: it copies again until then.
# The time covers scp's whole runs, their SSH handshakes included (a few ms against seconds).
_TIMED_SCP = r"""
set -eu
min_ns=$(($8 * 1000000000)) rounds=0
start=$(date +%s%N)
while :; do
  scp -B -F /dev/null -c "$3" -P "$4" -i "$5" -o IdentitiesOnly=yes \
    -o UserKnownHostsFile="$6" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes \
    -o ConnectTimeout=5 -o Compression=no -- "$1" "$7"
  rounds=$((rounds + 1))
  end=$(date +%s%N)
  [ $((end - start)) -lt "$min_ns" ] || break
done
echo "bytes=$2 ns=$((end - start)) cipher=$3 rounds=$rounds"
"""
# Before scp version 3 (openvpn-scp 3) it copied once and printed no rounds.
_SCP_LINE = re.compile(r"bytes=(\d+) ns=(\d+) cipher=(\S+?)(?: rounds=(\d{1,9}))?(?:\s|$)")


def write_private(on, path: str, content: bytes) -> spec.Command:
    return spec.Command(on, ("sh", "-c", _WRITE_PRIVATE, "pifarm-write", path), stdin=content)


def scp_plan(
    size: str, cipher: str, ctx: spec.Context, board_address: str, seconds: float, at_least: int
) -> spec.Plan:
    """The peer copies a file of random bytes off the board's RAM disk with scp, from a
    throwaway sshd on the board (the trial's port, bound to board_address), and times it.

    The data goes from the board to the peer; the credential goes the other way: the peer
    holds the per-trial client key and the board only the sshd's, so nothing on the board can
    log in to the peer. That sshd runs as the board's own login user (no root), knows that one
    key, and its per-trial host key is pinned on the peer (StrictHostKeyChecking stays on)."""
    if not ctx.board_user:
        raise spec.ParamError("scp needs the board's user name (the engine gives it as board_user)")
    board, peer, size_bytes = ctx.workdir, ctx.peer_workdir, spec.parse_size(size)
    source = f"{ctx.board_user}@{board_address}:{board}/sent"
    fill = (
        "sh",
        "-c",
        'head -c "$2" /dev/urandom > "$1"',
        "pifarm-fill",
        f"{board}/sent",
        str(size_bytes),
    )
    timed = (
        "sh",
        "-c",
        _TIMED_SCP,
        "pifarm-scp",
        source,
        str(size_bytes),
        cipher,
        str(ctx.port),
        f"{peer}/id_scp",
        f"{peer}/known_hosts",
        f"{peer}/received",
        str(at_least),
    )
    return spec.Plan(
        setup=(spec.Command("board", fill, timeout_s=seconds), *_scp_keys(ctx, board_address)),
        servers=(
            spec.Command(
                "board", _sshd(ctx, board_address), timeout_s=seconds + at_least + SCP_SLACK_S
            ),
        ),
        measure=spec.Command("peer", timed, timeout_s=seconds + at_least + SCP_SLACK_S),
    )


def _scp_keys(ctx: spec.Context, board_address: str) -> tuple[spec.Command, ...]:
    """The peer gets the client key and the pinned host key; the board the other halves."""
    client, host = keys.ssh_ed25519(), keys.ssh_ed25519()
    board, peer = ctx.workdir, ctx.peer_workdir
    known_host = f"[{board_address}]:{ctx.port} {host.public}\n"
    authorized = f"restrict {client.public}\n"
    return (
        write_private("peer", f"{peer}/id_scp", client.private),
        write_private("peer", f"{peer}/known_hosts", known_host.encode()),
        write_private("board", f"{board}/ssh_host_key", host.private),
        write_private("board", f"{board}/authorized_keys", authorized.encode()),
    )


def _sshd(ctx: spec.Context, address: str) -> tuple[str, ...]:
    board = ctx.workdir
    return (
        SSHD,
        "-D",
        "-e",
        "-f",
        "/dev/null",
        "-p",
        str(ctx.port),
        "-o",
        f"ListenAddress={address}",
        "-h",
        f"{board}/ssh_host_key",
        "-o",
        f"AuthorizedKeysFile={board}/authorized_keys",
        "-o",
        "PidFile=none",
        "-o",
        "StrictModes=no",
        "-o",
        "PasswordAuthentication=no",
        "-o",
        "KbdInteractiveAuthentication=no",
        "-o",
        f"AllowUsers={ctx.board_user}",
        "-o",
        "Subsystem=sftp internal-sftp",  # scp speaks SFTP since OpenSSH 9.0
    )


def scp_figures(text: str) -> tuple[dict[str, float], dict]:
    match = _SCP_LINE.search(text)
    if not match:
        raise spec.ParseError("no 'bytes=… ns=… cipher=…' line in the output of the timed scp")
    size, nanoseconds, rounds = int(match.group(1)), int(match.group(2)), int(match.group(4) or 1)
    if nanoseconds <= 0 or size <= 0 or rounds <= 0:
        raise spec.ParseError(
            f"scp sent {size} bytes {rounds} times in {nanoseconds} ns, which cannot be"
        )
    seconds = nanoseconds / 1e9
    values = {"throughput": size * rounds / seconds / 1e6, "seconds": seconds / rounds}
    return values, {"bytes": size, "rounds": rounds, "cipher": match.group(3)[:60]}


def _scp_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    return scp_plan(
        params["size"],
        params["cipher"],
        ctx,
        ctx.board_address,
        SCP.timeout_s,
        params["min_seconds"],
    )


def _scp_parse(outputs, params) -> spec.Parsed:
    return spec.Parsed(*scp_figures(outputs.get("measure", "")))


SCP_METRICS = (
    spec.Metric("throughput", "MB/s", True, "scp speed"),
    spec.Metric("seconds", "s", False, "time to copy the file once"),
)
SCP = spec.Benchmark(
    name="scp",
    title="scp from the RAM disk",
    description="Copies a file of random bytes from the board's RAM disk to the peer with scp "
    "and the chosen cipher: the peer fetches it from a throwaway sshd on the board (per-trial "
    "keys; the board holds no key to the peer) and times the copy, again until min_seconds "
    "have passed.",
    version=3,
    category="network",
    params=(FILE_SIZE, SSH_CIPHER, spec.repeat_param()),
    metrics=SCP_METRICS,
    plan=_scp_plan,
    parse=_scp_parse,
    tools=(SSHD, "head"),
    peer_tools=("scp",),
    packages=("openssh-client", "openssh-server", "coreutils"),
    needs_peer=True,
    repetitions=3,
    timeout_s=300,
    length_param="min_seconds",
)

BENCHMARKS = (IPERF3_TCP, IPERF3_UDP, FIREWALL_DROP, SCP)
