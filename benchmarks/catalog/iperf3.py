"""iperf3 pieces shared by the network and tunnel benchmarks: the server, the client, the
parsers of its JSON report (`-J`, iperf 3.12 as Debian 12 ships it), and NIC offloads.

iperf3 figures come from its own end-of-test report: the receiver's side for throughput and
packet counts (what arrived), the sender's for TCP retransmits.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from benchmarks.catalog.parsing import bounded
from benchmarks.catalog.spec import Command, Param, ParseError, Where

CONNECT_TIMEOUT_MS = "5000"  # a peer that does not answer fails the trial in 5 s, not 2 min
SERVER_SLACK_S = 30  # the server outlives the client's duration by this much at most
ADDRESS_WAIT_S = 30  # how long a server waits for its tunnel's address

DURATION = Param("duration", "int", 10, "seconds of traffic", min=1, max=300)

# $1 address, $2 seconds at most; the command follows. Runs it once the address is one of
# this host's own, so a server can bind to a tunnel's inner address that its tunnel (started
# at the same time) has not configured yet.
_WHEN_LOCAL = r"""
addr=$1 limit=$2
shift 2
i=0
while [ -z "$(ip -o addr show to "$addr")" ]; do
  [ $i -ge $((limit * 10)) ] && { echo "$addr never appeared on this host" >&2; exit 1; }
  sleep 0.1; i=$((i + 1))
done
exec "$@"
"""


def when_local(command: Command, address: str) -> Command:
    """The same server, started once address is one of its host's own."""
    wait = ("sh", "-c", _WHEN_LOCAL, "pifarm-when-local", address, str(ADDRESS_WAIT_S))
    return replace(command, argv=(*wait, *command.argv), shown=command.program)


def server(on: Where, address: str, port: int, seconds: float, *, wait_for_address=False):
    """A one-off iperf3 server bound to address (never to every interface)."""
    argv = ("iperf3", "-s", "-1", "-p", str(port), "-B", address)
    command = Command(on, argv, timeout_s=seconds + SERVER_SLACK_S)
    return when_local(command, address) if wait_for_address else command


def client(address: str, port: int, seconds: int, *options: str) -> tuple[str, ...]:
    return (
        "iperf3",
        "-c",
        address,
        "-p",
        str(port),
        "-t",
        str(seconds),
        "-J",
        "--connect-timeout",
        CONNECT_TIMEOUT_MS,
        *options,
    )


def report(text: str) -> dict[str, Any]:
    """The JSON report, or ParseError saying what is wrong (iperf3's own error included)."""
    text = text.strip() if isinstance(text, str) else ""
    if not text.startswith("{"):
        raise ParseError("iperf3 printed no JSON report (was it run with -J?)")
    try:
        data, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):  # ValueError: JSON, or a 5000-digit int
        raise ParseError("iperf3's JSON report is cut short or not JSON") from None
    if text[end:].lstrip().startswith("{"):
        raise ParseError("the output holds two iperf3 reports, one after the other: one run, one")
    if text[end:].strip():
        raise ParseError("iperf3's JSON report is followed by other text")
    if not isinstance(data, dict):
        raise ParseError("iperf3's report is not a JSON object")
    if data.get("error"):
        raise ParseError(f"iperf3 reported an error: {str(data['error'])[:300]}")
    return data


def number(data: Any, *path: str) -> float:
    """data[path...] as a finite number, or ParseError naming the missing field."""
    value = data
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise ParseError(f"iperf3's report has no {'.'.join(path)}")
        value = value[key]
    found = _finite(value)
    if found is None:
        raise ParseError(f"iperf3's {'.'.join(path)} is not a number: {str(value)[:50]!r}")
    return bounded(found, f"iperf3's {'.'.join(path)}")


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def version_and_cpu(data: dict) -> dict[str, Any]:
    """Details every iperf3 benchmark keeps: the version and iperf3's own CPU figures."""
    start, end = _part(data, "start"), _part(data, "end")
    cpu = _part(end, "cpu_utilization_percent")
    return {
        "iperf3_version": str(start.get("version") or "unknown")[:40],
        "cpu_percent_host": _finite(cpu.get("host_total")),
        "cpu_percent_remote": _finite(cpu.get("remote_total")),
    }


def _part(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def seconds_of(data: dict, summary: str) -> float:
    """How long a summary of the report ("sum_received" by the receiver, "sum_sent" by the
    sender) says iperf3 measured: ParseError unless it is a positive time."""
    seconds = number(data, "end", summary, "seconds")
    if seconds <= 0:
        side = "received" if summary == "sum_received" else "sent"
        raise ParseError(f"iperf3 {side} for {seconds} s, which cannot be")
    return seconds


def tcp_figures(text: str) -> tuple[dict[str, float], dict[str, Any]]:
    """Throughput (Mbit/s, what the receiver got) and the sender's retransmits."""
    data = report(text)
    seconds = seconds_of(data, "sum_received")
    values = {"throughput": number(data, "end", "sum_received", "bits_per_second") / 1e6}
    details = version_and_cpu(data)
    if "retransmits" in _part(_part(data, "end"), "sum_sent"):
        values["retransmits"] = number(data, "end", "sum_sent", "retransmits")
    else:  # the sender's OS counts none (iperf3 leaves the field out): the throughput stands
        details["retransmits"] = "not reported by the sender"
    details["seconds"] = seconds
    details["bytes_received"] = number(data, "end", "sum_received", "bytes")
    return values, details
