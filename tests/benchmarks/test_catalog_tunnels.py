"""The tunnel benchmarks (OpenVPN, WireGuard): per-trial keys, parsers, parameters, and real
tunnels between a simulated Pi and this host, cleaned up after success, failure and cancel."""

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import trial
from benchmarks.catalog import lookup
from benchmarks.catalog.spec import ParamError, ParseError
from benchmarks.endpoints import ControllerEndpoint
from tests.benchmarks import contexts
from tests.benchmarks.ends import board_end

FIXTURES = Path(__file__).parent.parent / "fixtures" / "benchmarks"
TUNNELS = ("openvpn", "openvpn-scp", "wireguard")


def wireguard_outputs(mode: str = "userspace") -> dict:
    measure = (FIXTURES / "iperf3/tcp_wireguard_pi3_to_controller.json").read_text()
    return {"measure": measure, "wireguard_board": f"{mode}\n", "wireguard_peer": f"{mode}\n"}


def plan_for(name: str, ctx, **params):
    benchmark = lookup(name)
    cleaned = benchmark.clean_params(params)
    return benchmark.plan(cleaned, ctx), cleaned


def run_on_controller(node, ctx, plan, hooks=None):
    with board_end(node) as board:
        return trial.run(plan, {"board": board, "peer": ControllerEndpoint()}, ctx, hooks)


def nothing_left(node, ctx, peer_node=None) -> bool:
    peer = contexts.left_on_node(peer_node, ctx) if peer_node else contexts.left_on_controller(ctx)
    assert contexts.left_on_node(node, ctx) == peer == []
    return True


def kernel_has_wireguard() -> bool:
    probe = ["ip", "link", "add", "pifarm-probe", "type", "wireguard"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        return False
    subprocess.run(["ip", "link", "delete", "pifarm-probe"], check=True)
    return True


# ---- keys and plans --------------------------------------------------------------------


def test_each_end_gets_only_its_own_private_key():
    ctx = contexts.on_paper()
    for name in TUNNELS:
        plan, _ = plan_for(name, ctx)
        keys = {
            on: [c.stdin for c in plan.setup if c.on == on and c.stdin] for on in ("board", "peer")
        }
        assert keys["board"] and keys["peer"]
        assert not set(keys["board"]) & set(keys["peer"])
        for command in (*plan.setup, *plan.servers, plan.measure):
            assert not any(b"PRIVATE KEY" in arg.encode() for arg in command.argv)


@pytest.mark.slow
def test_openvpn_pins_the_sha256_fingerprint_of_the_other_ends_certificate(tmp_path):
    plan, _ = plan_for("openvpn", contexts.on_paper())
    board_server, peer_server = plan.servers[:2]
    peer_certificate = next(
        c.stdin for c in plan.setup if c.on == "peer" and c.argv[-1].endswith(".crt")
    )
    (tmp_path / "peer.crt").write_bytes(peer_certificate)
    openssl = ["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", tmp_path / "peer.crt"]
    fingerprint = subprocess.run(openssl, capture_output=True, text=True, check=True).stdout
    pinned = board_server.argv[board_server.argv.index("--peer-fingerprint") + 1]
    assert fingerprint.strip().endswith("=" + pinned)
    assert peer_server.argv[peer_server.argv.index("--peer-fingerprint") + 1] != pinned


@pytest.mark.slow
def test_wireguard_keys_are_what_wg_derives_from_the_private_ones():
    plan, _ = plan_for("wireguard", contexts.on_paper())
    board_key = next(c.stdin for c in plan.setup if c.on == "board")
    derived = subprocess.run(["wg", "pubkey"], input=board_key, capture_output=True, check=True)
    peer_server = plan.servers[1]
    assert derived.stdout.decode().strip() in peer_server.argv


# ---- parsers and parameters ------------------------------------------------------------


def test_wireguard_records_which_wireguard_each_end_ran():
    benchmark = lookup("wireguard")
    parsed = benchmark.parse(wireguard_outputs("kernel"), benchmark.clean_params({}))
    assert parsed.details["wireguard_board"] == parsed.details["wireguard_peer"] == "kernel"
    assert parsed.values["throughput"] > 0


def test_wireguard_without_the_mode_of_an_end_is_a_parse_error():
    outputs = {**wireguard_outputs(), "wireguard_peer": ""}
    with pytest.raises(ParseError, match="peer"):
        lookup("wireguard").parse(outputs, {})


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(TUNNELS), text=st.text(max_size=300), mode=st.text(max_size=20))
def test_garbage_from_a_tunnel_run_is_a_parse_error_never_a_crash(name, text, mode):
    outputs = {"measure": text, "wireguard_board": mode, "wireguard_peer": mode}
    try:
        lookup(name).parse(outputs, {})
    except ParseError:
        pass


@pytest.mark.parametrize(
    "params",
    [{"cipher": "DES-CBC"}, {"cipher": "aes-128-gcm; reboot"}, {"compression": "zstd"},
     {"mtu": 100}, {"mtu": "1500 --up /bin/sh"}, {"duration": 301}],
)  # fmt: skip
def test_bad_openvpn_parameters_are_refused(params):
    with pytest.raises(ParamError, match="|".join(params)):
        lookup("openvpn").clean_params(params)


# ---- on the pisim farm -----------------------------------------------------------------


@pytest.mark.pisim
@pytest.mark.measures
def test_tunnels_carry_less_than_the_bare_link_and_leave_nothing_behind(pisim_farm):
    node = pisim_farm["pi3"]
    figures = {}
    for name in ("iperf3-tcp", "openvpn", "wireguard"):
        ctx = contexts.to_controller(node)
        plan, params = plan_for(name, ctx, duration=2)
        outcome = run_on_controller(node, ctx, plan)
        parsed = lookup(name).parse(outcome.outputs, params)
        figures[name] = parsed.values["throughput"]
        assert nothing_left(node, ctx)
    assert figures["openvpn"] < figures["iperf3-tcp"]
    assert figures["wireguard"] < figures["iperf3-tcp"]
    mode = "kernel" if kernel_has_wireguard() else "userspace"
    assert parsed.details["wireguard_board"] == parsed.details["wireguard_peer"] == mode


@pytest.mark.pisim
def test_openvpn_with_blowfish_runs_where_the_build_still_allows_it(pisim_farm):
    node = pisim_farm["pi3"]
    ctx = contexts.to_controller(node)
    plan, params = plan_for(
        "openvpn", ctx, duration=1, cipher="BF-CBC", compression="lzo", mtu=1400
    )
    outcome = run_on_controller(node, ctx, plan)
    assert lookup("openvpn").parse(outcome.outputs, params).values["throughput"] > 0
    assert nothing_left(node, ctx)


@pytest.mark.pisim
def test_a_cipher_the_build_lacks_fails_in_setup_with_the_reason(pisim_farm):
    node = pisim_farm["pi3"]
    ctx = contexts.to_controller(node)
    plan, _ = plan_for("openvpn", ctx, duration=1)
    check = replace(plan.setup[0], argv=(*plan.setup[0].argv[:4], "NO-SUCH-CIPHER"))
    with pytest.raises(trial.TrialFailed, match="NO-SUCH-CIPHER is not available"):
        run_on_controller(node, ctx, replace(plan, setup=(check, *plan.setup[1:])))
    assert nothing_left(node, ctx)


@pytest.mark.pisim
def test_a_tunnel_that_fails_after_one_end_started_is_gone_from_both_ends(pisim_farm):
    node = pisim_farm["pi3"]
    ctx = contexts.to_controller(node)
    plan, _ = plan_for("openvpn", ctx, duration=1)
    board_server, peer_server = plan.servers[:2]
    broken = tuple("NO-SUCH-CIPHER" if arg == "AES-128-GCM" else arg for arg in peer_server.argv)
    servers = (board_server, replace(peer_server, argv=broken), *plan.servers[2:])
    with pytest.raises(trial.TrialFailed, match="openvpn on the peer stopped"):
        run_on_controller(node, ctx, replace(plan, servers=servers))
    assert nothing_left(node, ctx)


@pytest.mark.pisim
def test_a_cancelled_tunnel_measurement_stops_and_leaves_nothing(pisim_farm):
    node = pisim_farm["pi3"]
    ctx = contexts.to_controller(node)
    plan, _ = plan_for("wireguard", ctx, duration=60)
    with pytest.raises(trial.Cancelled):  # not the 60 s measurement's end
        run_on_controller(node, ctx, plan, trial.Hooks(cancelled=lambda: True))
    assert nothing_left(node, ctx)


@pytest.mark.pisim
def test_scp_through_openvpn_between_two_boards(pisim_farm):
    board, peer = pisim_farm["pi3"], pisim_farm["pi4"]
    ctx = contexts.to_node(board, peer)
    plan, params = plan_for("openvpn-scp", ctx, size="4M")
    with board_end(board) as board_, board_end(peer) as peer_:
        outcome = trial.run(plan, {"board": board_, "peer": peer_}, ctx)
    parsed = lookup("openvpn-scp").parse(outcome.outputs, params)
    assert parsed.details["bytes"] == 4 * 1024**2
    assert 0 < parsed.values["throughput"] < board.profile.eth_mbit / 8
    assert nothing_left(board, ctx, peer)
