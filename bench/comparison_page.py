"""Does a saved comparison's page cost the same at 10,000 and at 100,000 measurements?

    .venv/bin/python bench/comparison_page.py [--rounds 20] [--measurements 100000] [--fewer 10000]

No simulated Pi and no worker: 5 boards on addresses nobody contacts, each probed once, one
campaign of --fewer, then (in a new database) of --measurements runs with one value each
(bulk_create), as the board is and with two preset versions, 2 % of them suspect; each run
keeps what the engine writes (a telemetry summary with its clock, a trial log, a tool
version), so the database holds rows of a real size. The runs are then summed up into their
campaign's tallies as the health check's round does for runs written other than by the engine
(benchmarks.tallies). A viewer reads the comparison's page (grouped by preset), and the same
grouped by board with the suspects included, through Django's test client (the whole stack)
--rounds times each; the SQL queries of one request are counted with CaptureQueriesContext.
Targets: each median under 150 ms, the time at --measurements at most 1.5 times the time at
--fewer, and the same number of queries at both. Exits 1 if one is missed. On PostgreSQL
with PIFARM_BENCH_DATABASE_URL (see benchenv).
"""

import os
import statistics

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.db import connection
from django.test import Client

from benchmarks.models import Comparison

BOARDS = benchenv.COMPARISON_BOARDS
TARGET_MS = 150.0
TARGET_RATIO = 1.5
CASES = (("by preset", "preset", False), ("by board, suspects in", "board", True))


def timed(client: Client, url: str, rounds: int) -> tuple[list[float], int]:
    return benchenv.timed_get(client, url, rounds, must_hold=b"means-chart")


def measured(measurements: int, rounds: int) -> dict[str, tuple[list[float], int]]:
    """Each case's page times (ms) and queries, over a campaign of `measurements` runs."""
    with benchenv.page_lab():
        campaign = benchenv.comparison_lab(measurements)
        viewer, client = benchenv.viewer_client()
        urls = {}
        for name, group_by, suspects in CASES:
            comparison = Comparison.objects.create(
                owner=viewer,
                name=name,
                benchmark="sha1sum",
                metric="throughput",
                group_by=group_by,
                include_suspects=suspects,
            )
            comparison.campaigns.set([campaign])
            urls[name] = comparison.get_absolute_url()
        timed(client, urls["by preset"], 2)  # warm-up: imports, templates, the connection
        return {name: timed(client, url, rounds) for name, url in urls.items()}


def main() -> None:
    args = benchenv.options(__doc__, rounds=20, measurements=100_000, fewer=10_000)
    fewer = measured(args.fewer, args.rounds)
    more = measured(args.measurements, args.rounds)

    print(
        f"\n{BOARDS} boards, {os.cpu_count()} cores, {connection.vendor}; "
        f"{args.rounds} requests a page; load seen: {benchenv.load_average()}\n"
    )
    met = True
    for name, _, _ in CASES:
        for size, figures in ((args.fewer, fewer), (args.measurements, more)):
            samples, queries = figures[name]
            met &= benchenv.page_verdict(
                f"comparison page, {name}, {size:,} measurements", samples, queries, TARGET_MS
            )
        ratio = statistics.median(more[name][0]) / statistics.median(fewer[name][0])
        met &= benchenv.verdict(
            f"  {args.measurements:,} against {args.fewer:,}", ratio, TARGET_RATIO
        )
        grew = more[name][1] - fewer[name][1]
        met &= benchenv.verdict("  queries that grew with the data", grew, 0)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
