"""benchmarks.limits: which limit a network result hit, by the module's rule."""

import pytest

from benchmarks import limits
from benchmarks.limits import Ends, limit, link_use

CEILING = 94.1  # Mbit/s: TCP's goodput over 100 Mbit/s Ethernet at MTU 1500


def ends(board=None, peer=None, cores=()):
    return Ends(board or {}, peer or {}, cores, board="pi4a", peer="the controller")


def test_a_throughput_at_95_percent_of_the_ceiling_is_at_the_link_s_ceiling():
    found = limit(94.0, "Mbit/s", CEILING, ends(peer={"openvpn": 99.0}))
    assert found == limits.Limit(
        limits.LINK, "at the link's ceiling (94.0 of 94.1 Mbit/s): a faster CPU cannot show here"
    )
    just_below = 0.95 * CEILING - 0.01
    assert limit(just_below, "Mbit/s", CEILING, None) is None
    assert limit(0.95 * CEILING, "Mbit/s", CEILING, None).kind == limits.LINK


def test_no_ceiling_known_is_never_at_it():
    assert limit(94.0, "Mbit/s", None, None) is None


@pytest.mark.parametrize(
    "board, peer, cores, kind, words",
    [
        ({"openvpn": 28.0}, {"openvpn": 93.0}, (), limits.PEER,
         "limited by the peer: openvpn used 93 % of a core on the controller"),
        ({"openvpn": 95.0}, {"openvpn": 40.0}, (), limits.BOARD,
         "limited by the board: openvpn used 95 % of a core on pi4a"),
        ({"iperf3": 20.0}, {"iperf3": 10.0}, (97.0, 5.0), limits.BOARD,
         "limited by the board: a core of pi4a was 97 % busy"),
        ({"openvpn": 91.0}, {"openvpn": 92.0}, (), limits.BOTH,
         "limited by the CPU of both ends: openvpn used 92 % of a core on the controller, "
         "openvpn 91 % on pi4a"),
        ({"openvpn": 28.0, "sshd": 5.0}, {"openvpn": 83.0}, (), limits.PEER_BUSIER,
         "the peer may be the limit: openvpn used 83 % of a core on the controller, the "
         "busiest on pi4a openvpn 28 %"),
        ({"openvpn": 50.0}, {"openvpn": 40.0}, (50.0, 3.0), None, None),
        ({"openvpn": 8.0}, {"openvpn": 9.0}, (), None, None),  # both ends idle, near enough
        ({"openvpn": 30.0}, {"openvpn": 55.0}, (), None, None),  # harder, not twice as hard
        ({}, {"openvpn": 60.0}, (), limits.PEER_BUSIER,
         "the peer may be the limit: openvpn used 60 % of a core on the controller, the "
         "busiest on pi4a no process seen"),
        ({}, {}, (), None, None),
    ],
)  # fmt: skip
def test_the_cpu_of_the_ends_names_the_limit_by_the_rule(board, peer, cores, kind, words):
    found = limit(50.0, "Mbit/s", CEILING, ends(board, peer, cores))
    assert (found.kind, found.words) == (kind, words) if kind else found is None


def test_ninety_percent_of_a_core_is_busy_and_a_hair_below_is_not():
    assert limit(1.0, "MB/s", None, ends(peer={"openvpn": 90.0})).kind == limits.PEER
    assert limit(1.0, "MB/s", None, ends(peer={"openvpn": 89.9})).kind == limits.PEER_BUSIER
    assert limit(1.0, "MB/s", None, ends(peer={"openvpn": 49.9})) is None


def test_a_trials_link_use_is_its_throughput_against_the_ceiling_of_its_mtu():
    assert link_use(94.0, "Mbit/s", {"mbit": 100, "mtu": 1500}) == {
        "mbit": 94.0,
        "line_mbit": 100,
        "ceiling_mbit": 94.15,
        "of_ceiling": 0.998,
    }
    # scp's MB/s in Mbit/s; a tunnel's own MTU over the link's
    use = link_use(11.0, "MB/s", {"mbit": 100, "mtu": 1500}, mtu=1400)
    assert use["mbit"] == 88.0 and use["ceiling_mbit"] == round(100 * 1348 / 1438, 2)
    assert link_use(5.0, "s", {"mbit": 100}) is None
    assert link_use(94.0, "Mbit/s", {"mbit": None}) is None
    assert link_use(94.0, "Mbit/s", {"mbit": "100"}) is None  # not a number a run wrote
