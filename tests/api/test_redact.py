"""The Redactor's forms of an address, a serial and a user name: written another way (zero
padded, short, in another case), each is hidden as the plain one is."""

import pytest

from benchmarks.api.redact import HIDDEN, Redactor
from devices.models import FactSnapshot
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


def test_a_zero_padded_ipv4_address_is_hidden():
    found = Redactor().text("from 010.213.009.020:22 and 10.213.9.20, not 1.2.3.400 at 12:30:45")
    assert found == f"from {HIDDEN} and {HIDDEN}, not 1.2.3.400 at 12:30:45"


def test_a_serial_is_hidden_short_and_in_any_case_too():
    board = make_board("bench-a")
    FactSnapshot.objects.create(board=board, facts={"serial": "10000000aaaa0003"})
    found = Redactor().text("10000000AAAA0003 aaaa0003 0xAAAA0003 (OTP 28: AAAA0003), 0aaaa0003")
    assert found == f"{HIDDEN} {HIDDEN} {HIDDEN} (OTP 28: {HIDDEN}), 0aaaa0003"


def test_user_names_alone_are_hidden_in_any_case_when_asked():
    make_board("bench-a", username="labuser")
    make_board("bench-b")  # its user is pi
    text = "LABUSER in /home/labuser, Labuser@x; PI in /home/pi on a Raspberry Pi 4, pi-gen"
    assert Redactor(users_alone=True).text(text) == (
        f"{HIDDEN} in /home/{HIDDEN}, {HIDDEN}@x; {HIDDEN} in /home/{HIDDEN} on a Raspberry Pi 4, "
        "pi-gen"
    )
    assert Redactor().text(text) == text  # the API hides them as user@host only


def test_a_user_name_that_is_also_a_pis_product_name_is_left_in_the_product_name():
    """The usual user is "pi": a share page titled "scp on Pi 3" read "scp on [hidden] 3"."""
    make_board("pi3")  # its user is pi
    text = "scp on Pi 3 and a Pi 400, a PI 5, a Pi Zero 2 W, on Pi OS; /home/pi, pi alone"
    assert Redactor(users_alone=True).text(text) == (
        f"scp on Pi 3 and a Pi 400, a PI 5, a Pi Zero 2 W, on Pi OS; /home/{HIDDEN}, {HIDDEN} alone"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("inet addr:10.213.7.1 Bcast", f"inet addr:{HIDDEN} Bcast"),
        ("via ::ffff:10.213.7.1", f"via ::ffff:{HIDDEN}"),
        ("peer_10.213.7.1 up", f"peer_{HIDDEN} up"),
        ("eth0=10.213.7.1, gw-10.213.7.254", f"eth0={HIDDEN}, gw-{HIDDEN}"),
        ("ssh@10.213.7.1 and x@fe80::1", f"{HIDDEN} and {HIDDEN}"),
    ],
)
def test_an_address_glued_to_the_text_before_it_is_hidden_too(text, expected):
    """After a colon, an underscore, a letter, a sign: ifconfig's "addr:", a mapped IPv6
    address, a name glued to it."""
    assert Redactor().text(text) == expected


def test_numbers_that_are_not_addresses_stay():
    text = "kernel 6.6.51-v8+, 1.2.3.4.5, 110.213.7.1000, 12:30:45, build 2024.11.30"
    assert Redactor().text(text) == text
