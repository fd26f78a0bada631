"""A tunnel's far end on a second board (Pi to Pi), through the engine on simulated Pis: the
run is measured between the two boards, both ends' CPU is kept, and the limit is named with
the peer board's name, not the controller's."""

import pytest

from benchmarks import limits
from benchmarks.models import Run
from tests.benchmarks.factories import quick_campaign
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def test_openvpn_between_two_boards_keeps_both_ends_cpu_and_the_link_s_use(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi3"])
    peer = register_node(pisim_farm.nodes["pi4"])
    campaign = quick_campaign([board], "openvpn", {"duration": 3}, name="pi to pi", peer=peer.name)
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason
    assert run.peer == peer.name
    assert run.environment["peer_identity"] == {
        "name": peer.name,
        "host": peer.host,
        "address": peer.host,
    }
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


@pytest.mark.measures  # the Pi 1's core saturates only when the node gets its CPU share
def test_openvpn_from_a_pi_1_to_a_pi_4_is_limited_by_the_pi_1(pisim_node_factory, run_jobs):
    """A Pi 1 B's one core at 700 MHz saturates under a tunnel long before a Pi 4's does (a
    whole simulated core: 23 % of a host CPU), and the answer says so. Most of that core is
    its USB Ethernet's frames (the usbnic relay, a Pi's smsc95xx driver), openvpn the rest:
    the core is named, not a process. 10 s: the tunnel's start is a small part of the mean
    (over 6 s a CI run saw the core 89.4 % busy on average, under the 90 % that says so)."""
    board = register_node(pisim_node_factory(profile="pi1b-legacy-32"))
    peer = register_node(pisim_node_factory(profile="pi4b-bookworm"))
    campaign = quick_campaign(
        [board], "openvpn", {"duration": 10}, name="pi 1 to pi 4", peer=peer.name
    )
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason
    board_telemetry = run.environment["telemetry"]
    peer_cpu = run.environment["peer_telemetry"]["procs_mean_pct"]
    throughput = run.measurements.get(metric="throughput").value
    print("board", board_telemetry["procs_mean_pct"], board_telemetry["cores_busy_mean_pct"])
    print("peer", peer_cpu, "throughput", throughput, "link use", run.environment["link_use"])
    ends = limits.Ends(
        board_telemetry["procs_mean_pct"],
        peer_cpu,
        board_telemetry["cores_busy_mean_pct"],
        board=board.name,
        peer=peer.name,
    )
    found = limits.limit(throughput, "Mbit/s", run.environment["link_use"]["ceiling_mbit"], ends)
    print("limit", found)
    assert found is not None and found.kind == limits.BOARD, found
    assert board.name in found.words.split(), found.words
