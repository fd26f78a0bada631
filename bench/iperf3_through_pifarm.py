"""Does pifarm measure the link as iperf3 by hand does? iperf3-tcp to the controller, 100 Mbit/s.

    make bench            # or: .venv/bin/python bench/iperf3_through_pifarm.py [--rounds 5]

Starts one simulated Pi on the pi3b-legacy profile (100 Mbit/s Ethernet, shaped with tc;
pisim, 10.213.7.0/24) and one real RQ worker, then, interleaved over --rounds rounds:
  pifarm    a campaign of one iperf3-tcp run (board to peer, peer "controller", quiet off):
            the run's throughput as pifarm parsed and stored it
  by hand   `iperf3 -s -1` on the farm's bridge address (this host), `iperf3 -c ... -J` from
            inside the node (as root, not through SSH), the same duration: the receiver's
            end.sum_received.bits_per_second
Targets: pifarm's median within 1 % of the median by hand, and at least 94 Mbit/s. Needs root
(pisim). Exits 1 if a target is missed.
"""

import json
import os
import subprocess
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from benchmarks import campaigns
from benchmarks.models import Measurement

BENCH_SUBNET_INDEX = 7
BRIDGE = f"10.213.{BENCH_SUBNET_INDEX}.1"  # the farm's bridge: this host, as the node sees it
BY_HAND_PORT = 5290
TARGET_WITHIN_PCT = 1.0
TARGET_MBIT = 94.0


def through_pifarm(board, duration: int) -> float:
    campaign = campaigns.start(
        {
            "name": "iperf3 through pifarm",
            "boards": [board.name],
            "peer": "controller",
            "quiet": False,
            "repetitions": 1,
            "benchmarks": [{"name": "iperf3-tcp", "params": {"duration": duration}}],
        }
    )
    run = benchenv.wait_for_campaign(campaign).runs.get()
    return Measurement.objects.get(run=run, metric="throughput").value


def by_hand(node, duration: int) -> float:
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-p", str(BY_HAND_PORT), "-B", BRIDGE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)  # the server listens
        client = node.run_as_root(
            ["iperf3", "-c", BRIDGE, "-p", str(BY_HAND_PORT), "-t", str(duration), "-J"],
            timeout=duration + 30,
        )
        report = json.loads(client.stdout)
        if report.get("error"):
            raise SystemExit(f"iperf3 by hand: {report['error']}")
        return report["end"]["sum_received"]["bits_per_second"] / 1e6
    finally:
        server.wait(timeout=30)


def main() -> None:
    args = benchenv.options(__doc__, rounds=5, duration=(5, "seconds of traffic"))

    with benchenv.one_board("iperf", BENCH_SUBNET_INDEX, "pi3b-legacy") as (node, board):
        through_pifarm(board, 1)  # warm-up: the worker, the first handshake and probe

        pifarm, hand = [], []
        loads = [benchenv.load_average()]
        for _ in range(args.rounds):
            pifarm.append(through_pifarm(board, args.duration))
            hand.append(by_hand(node, args.duration))
            loads.append(benchenv.load_average())

        print(
            f"\n1 board (pi3b-legacy, 100 Mbit/s), board to controller, {args.duration} s each, "
            f"{args.rounds} rounds interleaved, {os.cpu_count()} cores"
        )
        print("load seen: " + "; ".join(loads) + "\n")
        through = benchenv.report("iperf3-tcp through pifarm", pifarm, "Mbit/s", 2)
        direct = benchenv.report("iperf3 by hand, same link", hand, "Mbit/s", 2)
        pairs = [a / b for a, b in zip(pifarm, hand, strict=True)]
        benchenv.report("pifarm / by hand, pair by pair", pairs, "x", 4)
        off_pct = abs(through / direct - 1) * 100
        met = benchenv.verdict("pifarm vs by hand, medians, % apart", off_pct, TARGET_WITHIN_PCT)
        met &= benchenv.verdict(
            "iperf3-tcp through pifarm, Mbit/s", through, TARGET_MBIT, at_least=True
        )
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
