"""benchmarks.network_link: the link a run recorded, and the reference lines drawn from it."""

import pytest

from benchmarks import network_link


def test_tcp_over_100_mbit_ethernet_at_mtu_1500_carries_at_most_94_1_mbit():
    # 100 x (1500 - 52) / (1500 + 38), as worked by hand
    assert network_link.tcp_goodput_mbit(100) == pytest.approx(94.148, abs=0.001)
    assert network_link.tcp_goodput_mbit(1000, 9000) == pytest.approx(1000 * 8948 / 9038)


def test_one_line_rate_gives_its_line_and_the_ceiling_labelled_in_mbit():
    found = network_link.references("Mbit/s", {"as is": {(100, None)}, "fast": {(100, 1500)}})
    assert found.line_rate == 100
    assert found.ceiling == pytest.approx(94.148, abs=0.001)
    assert found.label(network_link.LINE_RATE, found.line_rate) == "line rate 100 Mbit/s"
    assert found.label(network_link.CEILING, found.ceiling) == "TCP goodput ceiling 94.1 Mbit/s"
    assert found.note == ""


def test_a_metric_in_megabytes_gets_its_lines_in_megabytes():
    found = network_link.references("MB/s", {"as is": {(100, 1500)}})
    assert found.line_rate == 12.5
    assert found.ceiling == pytest.approx(94.148 / 8, abs=0.001)
    assert (
        found.label(network_link.LINE_RATE, found.line_rate) == "line rate 12.5 MB/s (100 Mbit/s)"
    )
    assert found.label(network_link.CEILING, found.ceiling) == "TCP goodput ceiling 11.8 MB/s"


def test_groups_on_links_of_different_line_rates_get_no_line_but_the_reason():
    found = network_link.references("Mbit/s", {"pi3": {(100, 1500)}, "pi4": {(1000, 1500)}})
    assert found.line_rate is None and found.ceiling is None and not found.ceilings
    assert "different line rates (100 and 1000 Mbit/s)" in found.note


def test_a_parameter_mtu_per_group_gives_each_group_its_own_ceiling():
    found = network_link.references("Mbit/s", {"1400": {(100, 1400)}, "1500": {(100, 1500)}})
    assert found.line_rate == 100 and found.ceiling is None
    assert found.ceilings == {
        "1400": pytest.approx(100 * 1348 / 1438),
        "1500": pytest.approx(100 * 1448 / 1538),
    }


def test_no_recorded_line_rate_is_said_and_other_units_have_no_lines():
    assert "no line rate" in network_link.references("Mbit/s", {"as is": {(None, None)}}).note
    assert network_link.references("packets/s", {"as is": {(100, 1500)}}) is None


def test_what_a_board_prints_of_its_link_is_read_only_in_its_form():
    assert network_link.parse("device eth0\nspeed 100\nmtu 1500\n") == {
        "device": "eth0",
        "mbit": 100,
        "mtu": 1500,
    }
    # no carrier (EINVAL) and "unknown" (-1) are no speed; junk is nothing
    assert network_link.parse("device eth0\nspeed \nmtu 1500")["mbit"] is None
    assert network_link.parse("device wlan0\nspeed -1\nmtu 99999999999")["mbit"] is None
    assert network_link.parse("")["device"] is None


def test_an_mtu_no_link_can_have_is_not_read():
    # Under the headers' 52 bytes the ceiling would be negative (a board may print anything).
    assert network_link.parse("device eth0\nspeed 100\nmtu 1\n")["mtu"] is None
    assert network_link.parse("device eth0\nspeed 100\nmtu 52\n")["mtu"] is None
    assert network_link.parse("device eth0\nspeed 100\nmtu 68\n")["mtu"] == 68
    assert network_link.parse("device lo\nspeed 100\nmtu 65536\n")["mtu"] == 65536
