"""Does a campaign scale with the fleet? The same campaign on 8 boards with 8 workers vs 1 and 1.

    make bench            # or: .venv/bin/python bench/fleet_scaling.py [--boards 8] [--runs 10]

Starts 8 simulated Pis (pisim, 10.213.6.0/24; pi4b-bookworm and pi3b-legacy in turn) and a
custom benchmark whose command is `sleep 2` (CPU-free), then, interleaved over --rounds rounds:
  1 board, 1 worker     a campaign of --runs runs on one board, one `manage.py rqworker`
  8 boards, 8 workers   the same campaign on every board (one lane each), 8 workers
each timed from campaign start (its row) to campaign end (its last run ended), quiet wait off.
The workers are started afresh for each campaign (not timed). Target: 8 / 1 <= 1.3. Also
printed: each lane's length, the gap between two runs of a lane, the workers' CPU seconds per
run (work horses and the workers' start-up included) and how busy this host's CPUs were: the
simulated boards' sshd and shells share those CPUs with the workers (and with whatever else
runs here), which real boards would not. Needs root (pisim).
Exits 1 if the target is missed.
"""

import os

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.core.management import call_command

from benchmarks import campaigns
from pisim import Farm

BENCH_SUBNET_INDEX = 6
SECONDS = 2
TARGET = 1.3


def timed_campaign(boards, benchmark: str, runs: int):
    """The campaign on boards, with as many workers as boards: its wall time, the campaign,
    the workers' CPU seconds (work horses included) and how busy the host's CPUs were (%)."""
    cpu_before = benchenv.children_cpu_s()
    workers = benchenv.start_workers(len(boards))
    try:
        busy_before, all_before = benchenv.host_cpu()
        campaign = campaigns.start(
            {
                "name": f"fleet of {len(boards)}",
                "boards": [board.name for board in boards],
                "benchmarks": [{"name": benchmark}],
                "repetitions": runs,
                "quiet": False,
            }
        )
        campaign = benchenv.wait_for_campaign(campaign)
        busy_after, all_after = benchenv.host_cpu()
    finally:
        benchenv.stop_workers(workers)
    busy_pct = 100 * (busy_after - busy_before) / (all_after - all_before)
    return (
        benchenv.campaign_wall_s(campaign),
        campaign,
        benchenv.children_cpu_s() - cpu_before,
        busy_pct,
    )


def lane_figures(campaign) -> dict[str, list[float]]:
    figures = {"lane, first run claimed to last ended": [], "gap between two runs of a lane": []}
    for lane in campaign.lanes.all():
        runs = list(lane.runs.order_by("sequence"))
        figures["lane, first run claimed to last ended"].append(
            (runs[-1].finished - runs[0].started).total_seconds()
        )
        figures["gap between two runs of a lane"].extend(
            (after.started - before.finished).total_seconds()
            for before, after in zip(runs, runs[1:], strict=False)
        )
    return figures


def main() -> None:
    args = benchenv.options(__doc__, boards=8, runs=10, rounds=3)

    call_command("migrate", verbosity=0)
    farm = Farm("fleet", BENCH_SUBNET_INDEX, downtime=1.0)
    try:
        for i in range(args.boards):
            farm.add_node(f"b{i + 1}", profile=("pi4b-bookworm", "pi3b-legacy")[i % 2])
        farm.start()
        boards = [benchenv.register_board(node) for node in farm.nodes.values()]
        benchmark = benchenv.fixed_command_benchmark(SECONDS)
        timed_campaign(boards, benchmark, 1)  # warm-up: every board's first handshake, probe

        one, fleet, lanes = [], [], {}
        cpu = {"1 board": [], "fleet": []}
        busy = {"1 board": [], "fleet": []}
        loads = [benchenv.load_average()]
        for _ in range(args.rounds):
            wall, _, worker_cpu, busy_pct = timed_campaign(boards[:1], benchmark, args.runs)
            one.append(wall)
            cpu["1 board"].append(worker_cpu / args.runs)
            busy["1 board"].append(busy_pct)
            wall, campaign, worker_cpu, busy_pct = timed_campaign(boards, benchmark, args.runs)
            fleet.append(wall)
            cpu["fleet"].append(worker_cpu / args.runs / len(boards))
            busy["fleet"].append(busy_pct)
            for name, values in lane_figures(campaign).items():
                lanes.setdefault(name, []).extend(values)
            loads.append(benchenv.load_average())

        print(
            f"\n{args.runs} runs of `sleep {SECONDS}` per board, quiet off, {args.rounds} rounds "
            f"interleaved, {os.cpu_count()} cores"
        )
        print("load seen: " + "; ".join(loads) + "\n")
        single = benchenv.report("1 board, 1 worker", one)
        many = benchenv.report(f"{args.boards} boards, {args.boards} workers", fleet)
        for name, values in lanes.items():
            benchenv.report(f"  {name}", values)
        benchenv.report("workers' CPU per run, 1 board", cpu["1 board"])
        benchenv.report(f"workers' CPU per run, {args.boards} boards", cpu["fleet"])
        benchenv.report("host CPUs busy (all sessions), 1 board", busy["1 board"], "%", 1)
        benchenv.report(
            f"host CPUs busy (all sessions), {args.boards} boards", busy["fleet"], "%", 1
        )
        pairs = [b / a for a, b in zip(one, fleet, strict=True)]
        benchenv.report(f"{args.boards} / 1, pair by pair", pairs, "x")
        met = benchenv.verdict(f"{args.boards} boards / 1 board", many / single, TARGET)
    finally:
        farm.stop()
        benchenv.cleanup()
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
