"""How long does a shared comparison's page take, over 50,000 measurements?

    .venv/bin/python bench/share_page.py [--rounds 20]

The lab of bench/comparison_page.py (benchenv.comparison_lab: 5 boards nobody contacts, one
campaign of 50,000 runs with one value each). A comparison grouped by board (the grouping
whose names the share page replaces: "board 1"...), with the suspects included, is shared;
a visitor without a login reads /s/<token>/ through Django's test client (the whole stack,
redaction included) --rounds times, and one request's SQL queries are counted, again with half
the runs, to show that they do not grow with the data. Target: the median under 150 ms. Exits
1 if it is missed.
"""

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.test import Client

from benchmarks import sharing
from benchmarks.models import Comparison, Measurement, Run

TARGET_MS = 150.0
RUNS_A_BOARD = benchenv.COMPARISON_MEASUREMENTS // benchenv.COMPARISON_BOARDS


def main() -> None:
    args = benchenv.options(__doc__, rounds=20)

    with benchenv.page_lab():
        campaign = benchenv.comparison_lab()
        owner = benchenv.bench_viewer()
        comparison = Comparison.objects.create(
            owner=owner,
            name="shared bench",
            benchmark="sha1sum",
            metric="throughput",
            group_by="board",
            include_suspects=True,
        )
        comparison.campaigns.set([campaign])
        url = sharing.create(comparison, owner).get_absolute_url()
        visitor = Client()  # no login
        benchenv.timed_get(visitor, url, 2, must_hold=b"board 5")  # warm-up
        samples, queries = benchenv.timed_get(visitor, url, args.rounds, must_hold=b"board 5")

        benchenv.print_lab(benchenv.COMPARISON_BOARDS)
        met = benchenv.page_verdict(
            "share page, by board, suspects in", samples, queries, TARGET_MS
        )
        Run.objects.filter(sequence__gte=RUNS_A_BOARD // 2 * 10).delete()
        _, fewer = benchenv.timed_get(visitor, url, 1, must_hold=b"board 5")
        print(f"{'SQL queries with half the runs':<44} {fewer:9d}")
        print(f"{'  measurements then':<44} {Measurement.objects.count():9,d}")
        met &= benchenv.verdict("queries that grew with the data", queries - fewer, 0)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
