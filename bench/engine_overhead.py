"""What does the engine add to a run? A campaign of a fixed 2-second command against ssh by hand.

    make bench            # or: .venv/bin/python bench/engine_overhead.py [--runs 10] [--rounds 3]

Starts one simulated Pi (pisim, 10.213.5.0/24) and one real RQ worker, defines a custom
benchmark whose command is `sleep 2` (CPU-free, so the board's load does not change it), then
times, interleaved over --rounds rounds:
  pifarm, quiet off   a campaign of --runs runs, quiet wait off: campaign start (its row) to
                      campaign end (its last run ended), from the database's timestamps
  ssh by hand         the same --runs commands with OpenSSH, one connection per command, as a
                      person would type `ssh pi@board sleep 2` in a loop
  pifarm, quiet on    the same campaign with the default quiet wait (load below 2, CPU below
                      25 %, up to 30 s a run: on a host that others load it can wait longer)
Every run still records all its telemetry (a sampler on the board) and its validity.
Targets, pair by pair: pifarm (quiet off) / ssh by hand <= 1.05, pifarm (quiet on) / ssh by
hand <= 1.3. Where the time goes is printed too: a run's length (claimed to ended), its
measurement, the gap between two runs, and the quiet waits. Needs root (pisim). Exits 1 if a
target is missed.
"""

import os
import subprocess
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from benchmarks import campaigns

BENCH_SUBNET_INDEX = 5
SECONDS = 2
TARGET = 1.05
TARGET_QUIET = 1.3


def pifarm_campaign(board, benchmark: str, runs: int, quiet: bool):
    spec = {
        "name": "overhead",
        "boards": [board.name],
        "repetitions": runs,
        "benchmarks": [{"name": benchmark}],
    }
    if not quiet:
        spec["quiet"] = False
    return benchenv.wait_for_campaign(campaigns.start(spec))


def by_hand(node, known_hosts, runs: int) -> float:
    """runs × `ssh board sleep 2`, one connection each, in sequence; the loop's wall time."""
    argv = [*benchenv.ssh_argv(node, known_hosts), "sleep", str(SECONDS)]
    started = time.perf_counter()
    for _ in range(runs):
        done = subprocess.run(argv, capture_output=True, timeout=SECONDS + 30)
        if done.returncode != 0:
            raise SystemExit(f"ssh by hand failed: {done.stderr.decode()[-300:]}")
    return time.perf_counter() - started


def where_the_time_goes(campaign) -> dict[str, list[float]]:
    runs = list(campaign.runs.order_by("sequence"))
    return {
        "run, claimed to ended": [(r.finished - r.started).total_seconds() for r in runs],
        "  of which measuring": [r.measure_s for r in runs],
        "gap to the next run": [
            (after.started - before.finished).total_seconds()
            for before, after in zip(runs, runs[1:], strict=False)
        ],
        "first run claimed after start": [(runs[0].started - campaign.created).total_seconds()],
        "campaign ended after its last run": [
            (campaign.finished - runs[-1].finished).total_seconds()
        ],
    }


def main() -> None:
    args = benchenv.options(__doc__, runs=10, rounds=3)

    with benchenv.one_board("ovhd", BENCH_SUBNET_INDEX, "pi4b-bookworm") as (node, board):
        known_hosts = benchenv.DATA_DIR / "known_hosts"
        known_hosts.write_text(node.known_hosts_line + "\n")
        benchmark = benchenv.fixed_command_benchmark(SECONDS)
        pifarm_campaign(board, benchmark, 1, quiet=False)  # warm-up: the worker, the handshake
        by_hand(node, known_hosts, 1)

        off, on, hand, breakdown, breakdown_quiet, waits = [], [], [], {}, {}, []
        loads = [benchenv.load_average()]
        for _ in range(args.rounds):
            campaign = pifarm_campaign(board, benchmark, args.runs, quiet=False)
            off.append(benchenv.campaign_wall_s(campaign))
            for name, values in where_the_time_goes(campaign).items():
                breakdown.setdefault(name, []).extend(values)
            hand.append(by_hand(node, known_hosts, args.runs))
            quiet = pifarm_campaign(board, benchmark, args.runs, quiet=True)
            on.append(benchenv.campaign_wall_s(quiet))
            for name, values in where_the_time_goes(quiet).items():
                breakdown_quiet.setdefault(name, []).extend(values)
            waits += [run.environment["quiet"] for run in quiet.runs.order_by("sequence")]
            loads.append(benchenv.load_average())
        sampled = sum(bool(run.telemetry) for run in campaign.runs.all())

        print(
            f"\n1 board, {args.runs} runs of `sleep {SECONDS}` each, {args.rounds} rounds "
            f"interleaved, {os.cpu_count()} cores"
        )
        print("load seen: " + "; ".join(loads) + "\n")
        benchenv.report("pifarm campaign, quiet off", off)
        benchenv.report("ssh by hand, one connection per command", hand)
        for name, values in breakdown.items():
            benchenv.report(f"  {name}", values)
        pairs = [a / b for a, b in zip(off, hand, strict=True)]
        ratio = benchenv.report("pifarm (quiet off) / by hand, pair by pair", pairs, "x")
        met = benchenv.verdict("pifarm (quiet off) / by hand", ratio, TARGET)
        benchenv.report("pifarm campaign, quiet on (default)", on)
        pairs = [a / b for a, b in zip(on, hand, strict=True)]
        ratio = benchenv.report("pifarm (quiet on) / by hand, pair by pair", pairs, "x")
        met &= benchenv.verdict("pifarm (quiet on) / by hand", ratio, TARGET_QUIET)
        for name, values in breakdown_quiet.items():
            benchenv.report(f"  {name}", values)
        benchenv.report("    of which the quiet wait", [wait["waited_s"] for wait in waits])
        reached = sum(wait["reached"] for wait in waits)
        print(f"  quiet reached in {reached} of {len(waits)} runs; the last: {waits[-1]['words']}")
        print(f"  runs of the last campaign with the board's telemetry: {sampled} of {args.runs}")
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
