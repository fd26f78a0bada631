"""The link a network benchmark ran over, and the reference lines a comparison draws from it.

At run time the engine reads what the board's kernel says of the device it routes its peer's
address through (`/sys/class/net/<device>/speed` in Mbit/s, and its `mtu`) and keeps it in
run.environment["link"]. A comparison of a network throughput then draws the link's line rate
and the TCP goodput ceiling over it: what no tuning of the board can beat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

READ_TIMEOUT_S = 15
DEFAULT_MTU = 1500  # Ethernet's, where a run recorded none
# What a link's MTU can be: IPv4's least (RFC 791) to loopback's; a board may print anything,
# and an MTU under the headers' 52 bytes would draw a negative ceiling.
MTU_RANGE = (68, 65536)
# The units of network throughputs, in Mbit/s: MB/s (scp) are 10^6 bytes a second.
UNITS_IN_MBIT = {"Mbit/s": 1.0, "MB/s": 8.0}
NETWORK_CATEGORIES = ("network", "tunnel")
LINE_RATE, CEILING = "line rate", "TCP goodput ceiling"
# The route's device, its speed and its MTU; nothing when there is no route. A speed the
# driver cannot tell reads as an error (EINVAL) or -1: parse() keeps neither.
READ = r"""
dev=$(ip -o route get "$1" | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$dev" ] || exit 0
echo "device $dev"
echo "speed $(cat "/sys/class/net/$dev/speed" 2>/dev/null)"
echo "mtu $(cat "/sys/class/net/$dev/mtu" 2>/dev/null)"
"""
_NUMBER = re.compile(r"[1-9]\d{0,6}")  # bounded: a board may print anything


def read(end, other_address: str) -> dict:
    """What end's kernel says of its link towards other_address (ssh.SSHError if it cannot
    be asked): {"device", "mbit", "mtu"}, None where it says nothing."""
    result = end.run(["sh", "-c", READ, "pifarm-link", other_address], READ_TIMEOUT_S)
    return parse(result.text)


def parse(text: str) -> dict:
    found = {"device": None, "mbit": None, "mtu": None}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        value = value.strip()
        if key == "device" and value:
            found["device"] = value[:20]
        elif key == "speed" and _NUMBER.fullmatch(value):
            found["mbit"] = int(value)
        elif (
            key == "mtu" and _NUMBER.fullmatch(value) and MTU_RANGE[0] <= int(value) <= MTU_RANGE[1]
        ):
            found["mtu"] = int(value)
    return found


def recorded(value, low: int = 1, high: int = 10**7) -> int | float | None:
    """A line rate or MTU as a run recorded it, if it is a number from low to high; None for
    anything else. parse() wrote it, but a run's JSON may hold another version's words or a
    hand's edit, and a list or a string there must not take a comparison's page down."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if low <= value <= high else None


def tcp_goodput_mbit(line_mbit: float, mtu: int = DEFAULT_MTU) -> float:
    """The most TCP payload an Ethernet link of line_mbit carries at this MTU.

    Each full frame carries MTU - 52 bytes of payload (IPv4 header 20, TCP header 20, and the
    12 of the timestamps option Linux sends) and takes MTU + 38 bytes of the wire's time
    (Ethernet header 14, FCS 4, preamble and start-of-frame 8, inter-frame gap 12). At
    100 Mbit/s and MTU 1500: 100 x 1448 / 1538 = 94.1 Mbit/s.
    """
    return line_mbit * (mtu - 40 - 12) / (mtu + 38)


@dataclass(frozen=True)
class References:
    """The reference lines of a means chart, in the metric's unit."""

    unit: str
    line_rate_mbit: float | None = None  # None: unknown, or the groups' links differ
    ceilings: dict[str, float] = field(default_factory=dict)  # by group, when they differ
    ceiling: float | None = None  # one for every group
    reason: str = ""  # why no line is drawn, in words
    several_mtus: tuple[str, ...] = ()  # groups of runs at several MTUs: no ceiling of theirs

    @property
    def note(self) -> str:
        """What the chart leaves out and why, in words."""
        if not self.several_mtus:
            return self.reason
        return f"{', '.join(self.several_mtus)}: runs of several MTUs, no ceiling drawn"

    def renamed(self, name: Callable[[str], str]) -> References:
        """The same lines for the groups named as name(key) names them (a share page's)."""
        return replace(
            self,
            ceilings={name(key): value for key, value in self.ceilings.items()},
            several_mtus=tuple(name(key) for key in self.several_mtus),
        )

    @property
    def line_rate(self) -> float | None:
        if self.line_rate_mbit is None:
            return None
        return self.line_rate_mbit / UNITS_IN_MBIT[self.unit]

    def label(self, what: str, value: float) -> str:
        """ "line rate 100 Mbit/s", "TCP goodput ceiling 11.8 MB/s"; a line rate in MB/s
        says its Mbit/s too, as links are named."""
        words = f"{what} {figure(value)} {self.unit}"
        if what == LINE_RATE and self.unit != "Mbit/s":
            words += f" ({figure(self.line_rate_mbit)} Mbit/s)"
        return words


def figure(value: float) -> str:
    """One decimal, none when it is 0: 94.1, 100, 12.5 (never plotly's "1e+03")."""
    return f"{value:.1f}".removesuffix(".0")


def references(unit: str, links: Mapping[str, Iterable[tuple]]) -> References | None:
    """The line rate and TCP goodput ceiling of each group's links, or None for a metric that
    is not a throughput. links: by group key, the (line rate, MTU) pairs of its runs (either
    may be None: not recorded; the MTU is the run's own parameter when it has one)."""
    if unit not in UNITS_IN_MBIT:
        return None
    links = {key: set(pairs) for key, pairs in links.items()}
    rates = {mbit for pairs in links.values() for mbit, _ in pairs if mbit}
    if not rates:
        return References(unit, reason="the runs recorded no line rate of their link")
    if len(rates) > 1:
        spoken = " and ".join(f"{rate:g}" for rate in sorted(rates))
        return References(
            unit,
            reason=f"the runs' links have different line rates ({spoken} Mbit/s), so "
            "no line rate or goodput ceiling is drawn",
        )
    (rate,) = rates
    ceilings = {}
    for key, pairs in links.items():
        mtus = {mtu or DEFAULT_MTU for _, mtu in pairs}
        if len(mtus) == 1:
            ceilings[key] = tcp_goodput_mbit(rate, mtus.pop()) / UNITS_IN_MBIT[unit]
    unknown = tuple(sorted(set(links) - set(ceilings)))
    if len(set(ceilings.values())) == 1:
        return References(unit, rate, ceiling=next(iter(ceilings.values())), several_mtus=unknown)
    return References(unit, rate, ceilings=ceilings, several_mtus=unknown)
