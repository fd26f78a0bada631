"""A tunnel's far end on a second board (Pi to Pi), through the engine on simulated Pis: the
run is measured between the two boards, both ends' CPU is kept, and the limit is named with
the peer board's name, not the controller's."""

import pytest

from benchmarks import campaigns, limits
from benchmarks.models import Run
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def test_openvpn_between_two_boards_keeps_both_ends_cpu_and_the_link_s_use(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi3"])
    peer = register_node(pisim_farm.nodes["pi4"])
    campaign = campaigns.start(
        {
            "name": "pi to pi",
            "boards": [board.name],
            "peer": peer.name,
            "quiet": False,
            "repetitions": 1,
            "benchmarks": [{"name": "openvpn", "params": {"duration": 3}}],
        }  # fmt: skip
    )
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason
    assert run.peer == peer.name
    assert run.environment["peer_identity"] == {
        "name": peer.name, "host": peer.host, "address": peer.host,
    }  # fmt: skip
    board_cpu = run.environment["telemetry"]["procs_mean_pct"]
    peer_cpu = run.environment["peer_telemetry"]["procs_mean_pct"]
    print("board", board_cpu, run.environment["telemetry"]["cores_busy_mean_pct"])
    print("peer", peer_cpu, "link use", run.environment["link_use"])
    assert board_cpu["openvpn"] > 0 and peer_cpu["openvpn"] > 0  # each end's own openvpn
    assert run.environment["telemetry"]["cores_busy_mean_pct"]  # each of the board's cores
    throughput = run.measurements.get(metric="throughput").value
    use = run.environment["link_use"]
    assert use["line_mbit"] == 100 and use["mbit"] == pytest.approx(throughput, abs=0.01)
    ends = limits.Ends(board_cpu, peer_cpu, board=board.name, peer=peer.name)
    found = limits.limit(throughput, "Mbit/s", use["ceiling_mbit"], ends)
    print("limit", found)
    # Whatever it hit, it is said of these two boards: never of the controller.
    assert (
        found is None
        or found.kind == limits.LINK
        or {board.name, peer.name} & set(found.words.replace(",", " ").split())
    )
