"""A simulated Pi's eth0 says its profile's line rate, as a Pi's NIC does, and pifarm's link
reading (benchmarks.network_link, run by the engine for network benchmarks) finds it."""

import pytest

from benchmarks import network_link
from pisim import SMSC95XX_CYCLES_PER_FRAME, Faults
from tests.benchmarks.ends import board_end, bridge_address

from .sshutil import out

pytestmark = pytest.mark.pisim


@pytest.mark.parametrize(("name", "mbit"), [("pi3", 100), ("pi4", 1000)])
def test_the_link_reading_finds_the_profiles_line_rate(pisim_farm, name, mbit):
    node = pisim_farm.nodes[name]
    assert node.profile.eth_mbit == mbit
    with board_end(node) as end:
        found = network_link.read(end, bridge_address(node))
    assert found == {"device": "eth0", "mbit": mbit, "mtu": 1500}


def test_a_usb_nic_and_a_32_bit_userland_say_the_line_rate_too(pisim_node_factory):
    # A USB NIC's eth0 is a TAP its relay makes (a TAP says 10 Mbit/s), and a 32-bit node
    # reads /sys through its own root: both must still say 100, as a Pi 3's smsc95xx does.
    node = pisim_node_factory(
        profile="pi3b-legacy-32", faults=Faults(usb_nic_cycles=SMSC95XX_CYCLES_PER_FRAME)
    )
    assert out(node, "cat /sys/class/net/eth0/speed").strip() == "100"
