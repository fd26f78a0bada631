"""Which limit a network result hit: the link's ceiling, the peer's CPU or the board's.

The rule, in order (the first that holds is the limit):
1. the link: the mean throughput is at least AT_CEILING of the TCP goodput ceiling over the
   link (benchmarks.network_link): no faster CPU could show there;
2. the CPU of both ends: a process on the peer and one on the board each used at least
   BUSY_PCT of one core;
3. the peer: a process on the peer used at least BUSY_PCT of one core (one core is all a
   single-threaded tunnel or iperf3 can use);
4. the board: a process on the board used at least BUSY_PCT of one core, or one of its cores
   was that busy (kernel work, a NIC's interrupts, no process to name);
5. the peer, maybe: a process on the peer used at least HALF_CORE_PCT of a core and more
   than PEER_BUSIER_RATIO times the board's busiest process, with neither at BUSY_PCT: the
   peer worked much harder, yet nothing is saturated (two ends at 8 and 9 % say nothing).
Otherwise no limit is named. CPU figures are the means over the trials' telemetry, 100 % = one
core, as top shows them. No Django: the answer (benchmarks.answers) gathers the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks import network_link

AT_CEILING = 0.95  # of the TCP goodput ceiling: at it, give or take the link's own overheads
BUSY_PCT = 90.0  # of one core: that process (or core) had no more to give
HALF_CORE_PCT = 50.0
PEER_BUSIER_RATIO = 2.0

LINK, BOTH, PEER, BOARD, PEER_BUSIER = "link", "both", "peer", "board", "peer busier"


@dataclass(frozen=True)
class Ends:
    """What each end's CPU did over a group's trials, and where they ran (for the words)."""

    board_procs: Mapping[str, float]  # process name: mean CPU % of one core
    peer_procs: Mapping[str, float]
    board_cores: Sequence[float] = ()  # each core's mean busy %
    board: str = "the board"  # e.g. "pi4a"
    peer: str = "the peer"  # e.g. "the controller", "pi4b"


@dataclass(frozen=True)
class Limit:
    kind: str  # LINK, BOTH, PEER, BOARD or PEER_BUSIER
    words: str


def at_ceiling(mean: float, ceiling: float | None) -> bool:
    return ceiling is not None and ceiling > 0 and mean >= AT_CEILING * ceiling


def limit(mean: float, unit: str, ceiling: float | None, ends: Ends | None) -> Limit | None:
    """The limit a group's mean throughput (in unit; ceiling in the same unit) hit, in words,
    or None when none is clear (see the module's rule)."""
    if at_ceiling(mean, ceiling):
        return Limit(
            LINK,
            f"at the link's ceiling ({mean:.1f} of {ceiling:.1f} {unit}): a "
            "faster CPU cannot show here",
        )
    if ends is None:
        return None
    peer_name, peer_pct = _busiest(ends.peer_procs)
    board_name, board_pct = _busiest(ends.board_procs)
    core_pct = max(ends.board_cores, default=0.0)
    if peer_pct >= BUSY_PCT and board_pct >= BUSY_PCT:
        return Limit(
            BOTH,
            f"limited by the CPU of both ends: {peer_name} used {peer_pct:.0f} % of a core on "
            f"{ends.peer}, {board_name} {board_pct:.0f} % on {ends.board}",
        )
    if peer_pct >= BUSY_PCT:
        return Limit(
            PEER, f"limited by the peer: {peer_name} used {peer_pct:.0f} % of a core on {ends.peer}"
        )
    if board_pct >= BUSY_PCT:
        return Limit(
            BOARD,
            f"limited by the board: {board_name} used {board_pct:.0f} % of a core on {ends.board}",
        )
    if core_pct >= BUSY_PCT:
        return Limit(
            BOARD, f"limited by the board: a core of {ends.board} was {core_pct:.0f} % busy"
        )
    if peer_pct >= HALF_CORE_PCT and peer_pct > PEER_BUSIER_RATIO * board_pct:
        board_words = f"{board_name} {board_pct:.0f} %" if board_name else "no process seen"
        return Limit(
            PEER_BUSIER,
            f"the peer may be the limit: {peer_name} used {peer_pct:.0f} % of a core on "
            f"{ends.peer}, the busiest on {ends.board} {board_words}",
        )
    return None


def _busiest(procs: Mapping[str, float]) -> tuple[str, float]:
    """The name and CPU % of the busiest process ("", 0 when none was seen)."""
    if not procs:
        return "", 0.0
    name = max(sorted(procs), key=lambda key: procs[key])
    return name, procs[name]


def link_use(value: float, unit: str, found: Mapping, mtu: int | None = None) -> dict | None:
    """A trial's throughput against its link's line rate and TCP goodput ceiling (the run's
    own MTU, a tunnel's say, else the link's), all in Mbit/s; None when the metric is not a
    throughput or the link's rate was not read."""
    line_mbit = network_link.recorded(found.get("mbit"))
    if unit not in network_link.UNITS_IN_MBIT or line_mbit is None:
        return None
    mtu = network_link.recorded(mtu, *network_link.MTU_RANGE) or network_link.recorded(
        found.get("mtu"), *network_link.MTU_RANGE
    )
    ceiling = network_link.tcp_goodput_mbit(line_mbit, mtu or network_link.DEFAULT_MTU)
    mbit = value * network_link.UNITS_IN_MBIT[unit]
    return {
        "mbit": round(mbit, 2),
        "line_mbit": line_mbit,
        "ceiling_mbit": round(ceiling, 2),
        "of_ceiling": round(mbit / ceiling, 3),
    }
