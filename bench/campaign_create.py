"""How long does it take to create and queue a 1,000-run campaign, and in how many SQL queries?

    make bench            # or: .venv/bin/python bench/campaign_create.py [--rounds 5]

No simulated Pi and no worker: --boards board rows (registered as the pages do, with a host
key) on addresses nobody contacts, and the embedded Redis of a throw-away data directory. Times
campaigns.start() (check, estimate, campaign, lanes, runs, one job per lane queued after the
commit) for a campaign of 1,000 runs (--boards boards x 1,000/--boards sha1sum repetitions),
over --rounds rounds, then counts its SQL queries with Django's CaptureQueriesContext for
100, 1,000 and 10,000 runs on the same boards: the INSERTs of the runs (bulk_create, in
batches as large as the database takes: 999 parameters on SQLite, so about 30 runs each) and
every other query, which must not grow with the runs. Targets: median under 2 s; as many other
queries for 10,000 runs as for 100; every lane's job queued. Exits 1 if one is missed.
"""

import os
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
import django_rq
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks import campaigns
from benchmarks.models import Campaign, Run
from devices.models import Board

RUNS = 1000
TARGET_S = 2.0
RUN_INSERT = f'INSERT INTO "{Run._meta.db_table}"'


def spec(boards: list[Board], runs: int) -> dict:
    return {
        "name": f"{runs} runs",
        "boards": [board.name for board in boards],
        "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
        "repetitions": runs // len(boards),
    }


def timed_start(boards: list[Board], runs: int) -> float:
    started = time.perf_counter()
    campaign = campaigns.start(spec(boards, runs))
    seconds = time.perf_counter() - started
    made = campaign.runs.count()
    if made != runs:
        raise SystemExit(f"the campaign has {made} runs, not {runs}")
    return seconds


def queries_of_start(boards: list[Board], runs: int) -> tuple[int, int]:
    """(queries inserting runs, every other query) of one campaigns.start()."""
    with CaptureQueriesContext(connection) as captured:
        campaigns.start(spec(boards, runs))
    inserts = sum(q["sql"].startswith(RUN_INSERT) for q in captured.captured_queries)
    return inserts, len(captured.captured_queries) - inserts


def main() -> None:
    args = benchenv.options(__doc__, boards=10, rounds=5)

    call_command("migrate", verbosity=0)
    try:
        boards = benchenv.uncontacted_boards(
            "create", args.boards, host_key=benchenv.BENCH_HOST_KEY
        )
        timed_start(boards, RUNS)  # warm-up: imports, the first connection to Redis
        seconds = [timed_start(boards, RUNS) for _ in range(args.rounds)]
        counts = {runs: queries_of_start(boards, runs) for runs in (100, 1000, 10_000)}
        queued = django_rq.get_queue("default").count
        lanes = Campaign.objects.count() * args.boards

        print(
            f"\n{args.boards} boards, {RUNS} runs a campaign, {args.rounds} rounds, "
            f"{os.cpu_count()} cores, {connection.vendor}"
        )
        print(f"load seen: {benchenv.load_average()}\n")
        median = benchenv.report(f"campaigns.start(), {RUNS} runs", seconds)
        print("SQL queries of campaigns.start(): inserting runs + every other query")
        for runs, (inserts, others) in counts.items():
            print(f"{f'  {runs:,} runs':<44} {inserts:9d} + {others}")
        print(f"{'lane jobs queued, no worker running':<44} {queued:9d} of {lanes} lanes")
        met = benchenv.verdict(f"campaigns.start(), {RUNS} runs, median (s)", median, TARGET_S)
        growth = counts[10_000][1] - counts[100][1]
        met &= benchenv.verdict("other queries, 10,000 runs minus 100 runs", growth, 0)
        met &= queued == lanes
    finally:
        benchenv.cleanup()
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
