"""What the API hides from a token that may not see board addresses.

Fields that name a board's address (host, port, user name, serial, its own host name) are left
out by the serializers. Free text is another matter: a reason such as "could not connect to
bench-1: 192.0.2.40:22 refused the connection", a tool's output in a lane's log tail, a
version line holding `uname -a`. Text that comes from boards or from SSH goes through
Redactor.text, which replaces every IP address, and every board's host, user@host, and the
host name and serial its latest probe found, with HIDDEN, in any case; an IPv4 address zero
padded too (010.213.009.020), and a serial's short form, its last 8 digits (aaaa0003,
0xAAAA0003), as the firmware and the OTP print it. (A host name a board had before its latest
probe is not looked for: text seldom holds one, and reading every probe ever made is too
slow for each request.) A share page asks for the boards' user names alone too.
"""

import ipaddress
import re
from functools import cached_property

from django.db.models import OuterRef, Subquery
from django.db.models.fields.json import KT

from devices.models import Board, FactSnapshot

HIDDEN = "[hidden]"
# Put before a pattern of names: no match at the "Pi" of a Pi's product name ("Raspberry Pi",
# "Pi 3", "Pi 400", "Pi Zero", "Pi OS"), where a user or a board is named "pi".
NOT_A_PI_PRODUCT = r"(?<!Raspberry )(?!pi\s+(?:\d|(?:zero|os|compute|cm\d?)\b))"
SHORT_SERIAL = 8  # hex digits: a Pi's serial as the OTP holds it, 10000000aaaa0003's aaaa0003
# An optional "user@" and ":port" go with the address they belong to.
_USER = r"(?:[a-z_][a-z0-9_-]{0,31}@)?"
_PORT = r"(?::\d{1,5})?"
# Candidates only: each match is checked with ipaddress, so "12:30:45" or "1.2.3" stay.
_IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"
_IPV6 = r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?"
# Whatever comes before an address ("addr:10.1.2.3", "::ffff:10.1.2.3", "peer_10.1.2.3"):
# only a digit or a dot may not, so that no address is read out of a longer number.
_ADDRESS = re.compile(
    rf"(?<![\d.])(?P<user>{_USER})(?P<ip>{_IPV4}|{_IPV6})(?P<port>{_PORT})(?![\w.:-]*\w)",
    re.IGNORECASE,
)


class Redactor:
    """Built per request; reads the boards' names to hide once, when first needed.

    users_alone: hide the boards' SSH user names as words of their own too, in any case
    ("/home/pi", "LABUSER"), but for the "Pi" of "Raspberry Pi" or "Pi 4" (pi is the usual
    user)."""

    def __init__(self, users_alone: bool = False):
        self.users_alone = users_alone

    def text(self, value: str) -> str:
        if not value:
            return value
        value = _ADDRESS.sub(_hide_address, value)
        for known in (self._known, self._users):
            value = known.sub(HIDDEN, value) if known else value
        return value

    def data(self, value):
        """text() over every string of a JSON-like value (dict keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(key)): self.data(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value

    @cached_property
    def _known(self) -> re.Pattern | None:
        words = set(Board.objects.values_list("host", flat=True))
        # The host name and serial of each board's latest probe: reading those of every probe
        # ever made took a quarter of a second with a few thousand snapshots, on each request.
        latest = FactSnapshot.objects.filter(board=OuterRef("pk")).order_by("-taken_at")
        probes = Board.objects.annotate(probe=Subquery(latest.values("pk")[:1])).values("probe")
        facts = FactSnapshot.objects.filter(pk__in=probes)
        for hostname, serial in facts.values_list(KT("facts__hostname"), KT("facts__serial")):
            words.update(word for word in (hostname, serial) if word)
            if serial and len(serial) > SHORT_SERIAL:
                words.update((serial[-SHORT_SERIAL:], f"0x{serial[-SHORT_SERIAL:]}"))
        words = sorted((word for word in words if word.strip()), key=len, reverse=True)
        if not words:
            return None
        names = "|".join(re.escape(word) for word in words)
        return re.compile(rf"(?<![\w.@-]){_USER}(?:{names}){_PORT}(?![\w-])", re.IGNORECASE)

    @cached_property
    def _users(self) -> re.Pattern | None:
        users = set(Board.objects.values_list("username", flat=True)) if self.users_alone else ()
        if not users:
            return None
        names = "|".join(map(re.escape, sorted(users, key=len, reverse=True)))
        # "-", "_" and "." are part of a name: "pi" is not in "pi-gen".
        return re.compile(rf"(?<![\w.-]){NOT_A_PI_PRODUCT}(?:{names})(?![\w-]|\.\w)", re.IGNORECASE)


class ShowAll(Redactor):
    """For a token made to see addresses: nothing is hidden."""

    def text(self, value: str) -> str:
        return value


def _hide_address(match: re.Match) -> str:
    return HIDDEN if _is_address(match["ip"]) else match[0]


def _is_address(candidate: str) -> bool:
    """An IP address; an IPv4 one zero padded too (010.213.009.020): ipaddress refuses it, a
    reader reads the address."""
    if "." in candidate and ":" not in candidate:
        return all(int(part) <= 255 for part in candidate.split("."))
    try:
        ipaddress.ip_address(candidate.split("%")[0])
    except ValueError:
        return False
    return True
