"""Tunnel benchmarks: OpenVPN and WireGuard between the board and its peer, measured with
iperf3 (and scp for OpenVPN) through the tunnel's inner addresses.

Each end's tunnel process is one of the plan's servers (detached, always stopped); the keys are
drawn per trial (benchmarks.catalog.keys) and each end gets only its own private key. The
measurement first waits, with a deadline, until a ping crosses the tunnel. Teardown deletes the
tunnel interface on both ends whatever happened, and does nothing when there is none.

OpenVPN runs in peer-to-peer TLS mode with a self-signed certificate per end pinned by
--peer-fingerprint (2.6's replacement for the deprecated static-key mode, and the only p2p mode
that allows AEAD ciphers). WireGuard uses the kernel's module where `ip link add type wireguard`
works, else wireguard-go; which one ran is a detail of the result.
"""

from __future__ import annotations

from dataclasses import replace

from benchmarks.catalog import iperf3, keys, network, spec

TUNNEL_UP_S = 20  # a tunnel that passes no ping within this is a failed trial
SLACK_S = TUNNEL_UP_S + iperf3.SERVER_SLACK_S

OPENVPN_CIPHERS = ("AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305", "AES-256-CBC", "BF-CBC")
LEGACY_CIPHERS = ("BF-CBC",)  # OpenSSL 3 keeps them in its legacy provider
COMPRESSION = {
    "off": ("--allow-compression", "no"),
    "lzo": ("--allow-compression", "yes", "--compress", "lzo"),
    "lz4-v2": ("--allow-compression", "yes", "--compress", "lz4-v2"),
}
OPENVPN_PARAMS = (
    spec.Param("cipher", "choice", "AES-128-GCM", "data channel cipher", choices=OPENVPN_CIPHERS),
    spec.Param("compression", "choice", "off", "compression", choices=tuple(COMPRESSION)),
    spec.Param("mtu", "int", 1500, "tun-mtu", min=576, max=9000),
)

# $1 the peer's inner address, $2 seconds; the command follows. Waits until a ping crosses
# the tunnel (the first packets also start WireGuard's handshake), then runs the command.
_WHEN_TUNNEL_PASSES = r"""
peer=$1 limit=$2
shift 2
if command -v ping > /dev/null; then ping=ping; else ping="busybox ping"; fi
i=0
until $ping -c 1 -W 1 -q "$peer" > /dev/null 2>&1; do
  i=$((i + 1))
  [ $i -ge "$limit" ] && { echo "no ping crossed the tunnel to $peer within $limit s" >&2; exit 1; }
done
exec "$@"
"""

# $1 interface. Nothing to do when it is not there (setup never ran, or its process took it).
_DELETE_LINK = r"""
ip link show dev "$1" > /dev/null 2>&1 || exit 0
ip link delete dev "$1"
"""


def _through_tunnel(
    ctx: spec.Context, argv: tuple[str, ...], seconds: float, on: str = "board"
) -> spec.Command:
    """argv on `on`, once the tunnel passes a ping to the other end. Root: ping needs it
    where it has no capability of its own (and tunnels need root)."""
    other = ctx.tunnel["peer_ip"] if on == "board" else ctx.tunnel["board_ip"]
    wait = ("sh", "-c", _WHEN_TUNNEL_PASSES, "pifarm-when-tunnel", other)
    shown = spec.Command(on, argv).program
    argv = (*wait, str(TUNNEL_UP_S), *argv)
    return spec.Command(on, argv, timeout_s=seconds + SLACK_S, sudo=True, shown=shown)


def _delete_links(ctx: spec.Context) -> tuple[spec.Command, ...]:
    script = ("sh", "-c", _DELETE_LINK, "pifarm-delete-link", ctx.tunnel["ifname"])
    return tuple(spec.Command(on, script, timeout_s=15, sudo=True) for on in ("board", "peer"))


def _iperf3_through(ctx: spec.Context, duration: int) -> tuple[spec.Command, spec.Command]:
    """(the peer's server on its inner address, the board's client): TCP, board to peer."""
    inner = ctx.tunnel["peer_ip"]
    server = iperf3.server("peer", inner, ctx.port, duration + TUNNEL_UP_S, wait_for_address=True)
    client = iperf3.client(inner, ctx.port, duration)
    return server, _through_tunnel(ctx, client, duration)


def _tunnel_parse(outputs, params) -> spec.Parsed:
    values, details = iperf3.tcp_figures(outputs.get("measure", ""))
    return spec.Parsed({"throughput": values["throughput"]}, details)


TUNNEL_METRICS = (spec.Metric("throughput", "Mbit/s", True, "TCP throughput through the tunnel"),)


# ---- OpenVPN ---------------------------------------------------------------------------

# $1 cipher; the openvpn options that pick the providers follow. Run as root: openvpn lives
# in /usr/sbin, which a user's PATH often lacks.
_CHECK_CIPHER = r"""
cipher=$1
shift
command -v openvpn > /dev/null || { echo "openvpn is not installed" >&2; exit 1; }
openvpn "$@" --show-ciphers 2>/dev/null |
  awk -v c="$cipher" '$1 == c { found = 1 } END { exit !found }' && exit 0
echo "$cipher is not available in this OpenVPN build ($(openvpn --version | head -n 1))" >&2
exit 1
"""


def _providers(cipher: str) -> tuple[str, ...]:
    return ("--providers", "legacy", "default") if cipher in LEGACY_CIPHERS else ()


def _openvpn(on: spec.Where, params: dict, ctx: spec.Context, workdir: str, other_fingerprint: str):
    tunnel, cipher = ctx.tunnel, params["cipher"]
    inner = (tunnel["board_ip"], tunnel["peer_ip"])
    local, remote = inner if on == "board" else reversed(inner)
    argv = (
        "openvpn",
        "--dev",
        tunnel["ifname"],
        "--dev-type",
        "tun",
        "--proto",
        "udp",
        "--ifconfig",
        local,
        remote,
        "--cert",
        f"{workdir}/tls.crt",
        "--key",
        f"{workdir}/tls.key",
        "--peer-fingerprint",
        other_fingerprint,
        "--data-ciphers",
        cipher,
        "--data-ciphers-fallback",
        cipher,
        *_providers(cipher),
        "--tun-mtu",
        str(params["mtu"]),
        *COMPRESSION[params["compression"]],
        "--ping",
        "2",
        "--ping-exit",
        "30",
        "--verb",
        "3",
        "--suppress-timestamps",
    )
    if on == "board":
        return (*argv, "--tls-client", "--nobind", "--remote", ctx.peer_address, tunnel["port"])
    listen = ("--local", ctx.peer_address, "--lport", tunnel["port"])
    return (*argv, "--tls-server", "--dh", "none", *listen)


def _openvpn_ends(params: dict, ctx: spec.Context, seconds: float):
    """(setup, servers) of both ends: certificates, the cipher check, the two openvpn."""
    certificates = {on: keys.tls_self_signed(f"pifarm-{on}") for on in ("board", "peer")}
    workdirs = {"board": ctx.workdir, "peer": ctx.peer_workdir}
    setup, servers = [], []
    for on, other in (("board", "peer"), ("peer", "board")):
        mine, workdir = certificates[on], workdirs[on]
        check = ("sh", "-c", _CHECK_CIPHER, "pifarm-check-cipher", params["cipher"])
        setup += [
            spec.Command(on, (*check, *_providers(params["cipher"])), timeout_s=15, sudo=True),
            network.write_private(on, f"{workdir}/tls.key", mine.private),
            network.write_private(on, f"{workdir}/tls.crt", mine.certificate),
        ]
        argv = _openvpn(on, params, ctx, workdir, certificates[other].public)
        servers.append(spec.Command(on, argv, timeout_s=seconds + SLACK_S, sudo=True))
    return tuple(setup), tuple(servers)


def _openvpn_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    setup, tunnels = _openvpn_ends(params, ctx, params["duration"])
    server, measure = _iperf3_through(ctx, params["duration"])
    servers = (*tunnels, server)
    return spec.Plan(setup=setup, servers=servers, measure=measure, teardown=_delete_links(ctx))


def _openvpn_scp_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    at_least = params["min_seconds"]
    setup, tunnels = _openvpn_ends(params, ctx, OPENVPN_SCP.timeout_s + at_least)
    inner, seconds = ctx.tunnel["board_ip"], OPENVPN_SCP.timeout_s
    scp = network.scp_plan(params["size"], params["ssh_cipher"], ctx, inner, seconds, at_least)
    sshd = iperf3.when_local(scp.servers[0], inner)
    return spec.Plan(
        setup=(*setup, *scp.setup),
        servers=(*tunnels, sshd),
        measure=_through_tunnel(ctx, scp.measure.argv, seconds + at_least, on="peer"),
        teardown=_delete_links(ctx),
    )


OPENVPN_REQUIREMENTS = dict(
    tools=("openvpn", "iperf3", "ip"),
    peer_tools=("openvpn", "iperf3", "ip"),
    packages=("openvpn", "iperf3", "iproute2", "iputils-ping"),
    needs_peer=True,
    category="tunnel",
)
OPENVPN = spec.Benchmark(
    name="openvpn",
    title="OpenVPN tunnel throughput",
    description="TCP throughput (iperf3) through an OpenVPN tunnel between the board and its "
    "peer: peer-to-peer TLS with per-trial certificates, the chosen data cipher (BF-CBC where "
    "the build still allows it), compression and tun-mtu.",
    version=1,
    params=(*OPENVPN_PARAMS, iperf3.DURATION),
    metrics=TUNNEL_METRICS,
    plan=_openvpn_plan,
    parse=_tunnel_parse,
    repetitions=3,
    timeout_s=iperf3.DURATION.max + SLACK_S,
    **OPENVPN_REQUIREMENTS,
    length_param="duration",
    min_trial_s=5,
)


def _openvpn_scp_parse(outputs, params) -> spec.Parsed:
    return spec.Parsed(*network.scp_figures(outputs.get("measure", "")))


OPENVPN_SCP = spec.Benchmark(
    name="openvpn-scp",
    title="scp through an OpenVPN tunnel",
    description="scp of a file from the board's RAM disk to the peer through an OpenVPN "
    "tunnel (set up as for the openvpn benchmark): the peer fetches it from a throwaway sshd "
    "on the board and times the copy, again until min_seconds have passed.",
    version=3,
    params=(
        *OPENVPN_PARAMS,
        network.FILE_SIZE,
        replace(network.SSH_CIPHER, name="ssh_cipher"),
        spec.repeat_param(),
    ),
    metrics=network.SCP_METRICS,
    plan=_openvpn_scp_plan,
    parse=_openvpn_scp_parse,
    repetitions=3,
    timeout_s=300,
    **OPENVPN_REQUIREMENTS,
    length_param="min_seconds",
)


# ---- WireGuard -------------------------------------------------------------------------

MODE_FILE = "wireguard.mode"
# $1 interface, $2 private key file, $3 listen port, $4 own inner address/prefix, $5 the other
# end's public key, $6 its inner address, $7 its endpoint (host:port, or "" to learn it from
# the first handshake), $8 the mode file, $9 seconds to stay up at most. Stays in the
# foreground, so stopping it (its process group) ends wireguard-go too.
_WIREGUARD_UP = r"""
set -eu
dev=$1 key=$2 port=$3 address=$4 peer=$5 peer_ip=$6 endpoint=$7 mode=$8 limit=$9
if ip link add dev "$dev" type wireguard 2> /dev/null; then
  echo kernel > "$mode"
else
  WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 wireguard-go -f "$dev" &
  i=0
  until [ -S "/var/run/wireguard/$dev.sock" ]; do
    [ $i -ge 100 ] && { echo "wireguard-go did not start" >&2; exit 1; }
    sleep 0.1; i=$((i + 1))
  done
  echo userspace > "$mode"
fi
wg set "$dev" listen-port "$port" private-key "$key" peer "$peer" allowed-ips "$peer_ip/32"
[ -z "$endpoint" ] || wg set "$dev" peer "$peer" endpoint "$endpoint"
ip address add "$address" dev "$dev"
ip link set dev "$dev" up
echo "$dev up ($(cat "$mode"))"
if [ "$(cat "$mode")" = userspace ]; then wait; else sleep "$limit"; fi
"""


def _wireguard_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    tunnel, seconds = ctx.tunnel, params["duration"] + SLACK_S
    pairs = {"board": keys.wireguard(), "peer": keys.wireguard()}
    ends = {
        "board": (ctx.workdir, tunnel["board_ip"], f"{ctx.peer_address}:{tunnel['port']}"),
        "peer": (ctx.peer_workdir, tunnel["peer_ip"], ""),
    }
    setup, servers = [], []
    for on, other in (("board", "peer"), ("peer", "board")):
        workdir, inner, endpoint = ends[on]
        setup.append(network.write_private(on, f"{workdir}/wg.key", pairs[on].private))
        argv = (
            "sh",
            "-c",
            _WIREGUARD_UP,
            "pifarm-wireguard",
            tunnel["ifname"],
            f"{workdir}/wg.key",
            tunnel["port"],
            f"{inner}/{tunnel['prefix']}",
            pairs[other].public,
            ends[other][1],
            endpoint,
            f"{workdir}/{MODE_FILE}",
            str(int(seconds)),
        )
        servers.append(spec.Command(on, argv, timeout_s=seconds, sudo=True))
    server, measure = _iperf3_through(ctx, params["duration"])
    return spec.Plan(
        setup=tuple(setup),
        servers=(*servers, server),
        measure=measure,
        collect=tuple(
            spec.Command(on, ("cat", "--", f"{ends[on][0]}/{MODE_FILE}"), name=f"wireguard_{on}")
            for on in ("board", "peer")
        ),
        teardown=_delete_links(ctx),
    )


def _wireguard_parse(outputs, params) -> spec.Parsed:
    parsed = _tunnel_parse(outputs, params)
    for on in ("board", "peer"):
        mode = outputs.get(f"wireguard_{on}", "").strip()
        if mode not in ("kernel", "userspace"):
            raise spec.ParseError(f"the {on} did not say which WireGuard it ran: {mode[:40]!r}")
        parsed.details[f"wireguard_{on}"] = mode
    return parsed


WIREGUARD = spec.Benchmark(
    name="wireguard",
    title="WireGuard tunnel throughput",
    description="TCP throughput (iperf3) through a WireGuard tunnel between the board and its "
    "peer, with per-trial keys; the kernel's WireGuard where it has one, else wireguard-go.",
    version=1,
    category="tunnel",
    params=(iperf3.DURATION,),
    metrics=TUNNEL_METRICS,
    plan=_wireguard_plan,
    parse=_wireguard_parse,
    tools=("wg", "ip", "iperf3"),
    peer_tools=("wg", "ip", "iperf3"),
    packages=("wireguard-tools", "wireguard-go", "iproute2", "iperf3", "iputils-ping"),
    needs_peer=True,
    repetitions=3,
    timeout_s=iperf3.DURATION.max + SLACK_S,
    length_param="duration",
    min_trial_s=5,
)

BENCHMARKS = (OPENVPN, OPENVPN_SCP, WIREGUARD)
