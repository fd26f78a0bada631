"""How long does a saved comparison's page take, over 50,000 measurements?

    .venv/bin/python bench/comparison_page.py [--rounds 20] [--measurements 50000]

No simulated Pi and no worker: 5 boards on addresses nobody contacts, each probed once, one
campaign of 50,000 runs with one value each (bulk_create), as the board is and with two preset
versions, 2 % of them suspect; each run keeps what the engine writes (a telemetry summary with
its clock, a trial log, a tool version), so the page reads rows of a real size. A viewer reads
the comparison's page (grouped by preset), and the same grouped by board with the suspects
included, through Django's test client (the whole stack) --rounds times each; the SQL queries of
one request are counted with CaptureQueriesContext, and again with half the runs, to show that
they do not grow with the data. Target: each median under 150 ms. Exits 1 if one is missed.
"""

import argparse

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.test import Client

from benchmarks.models import Comparison, Run

MEASUREMENTS = benchenv.COMPARISON_MEASUREMENTS
BOARDS = benchenv.COMPARISON_BOARDS
TARGET_MS = 150.0


def timed(client: Client, url: str, rounds: int) -> tuple[list[float], int]:
    return benchenv.timed_get(client, url, rounds, must_hold=b"means-chart")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--measurements", type=int, default=MEASUREMENTS)
    args = parser.parse_args()

    with benchenv.page_lab():
        campaign = benchenv.comparison_lab(args.measurements)
        viewer, client = benchenv.viewer_client()
        cases = {}
        for name, group_by, suspects in (
            ("by preset", "preset", False),
            ("by board, suspects in", "board", True),
        ):
            comparison = Comparison.objects.create(
                owner=viewer,
                name=name,
                benchmark="sha1sum",
                metric="throughput",
                group_by=group_by,
                include_suspects=suspects,
            )
            comparison.campaigns.set([campaign])
            cases[name] = comparison.get_absolute_url()
        timed(client, cases["by preset"], 2)  # warm-up: imports, templates, the connection
        figures = {name: timed(client, url, args.rounds) for name, url in cases.items()}

        benchenv.print_lab(BOARDS)
        met = True
        for name, (samples, queries) in figures.items():
            met &= benchenv.page_verdict(f"comparison page, {name}", samples, queries, TARGET_MS)
        Run.objects.filter(sequence__gte=args.measurements // BOARDS // 2 * 10).delete()
        _, fewer = timed(client, cases["by preset"], 1)
        print(f"{'SQL queries with half the runs':<44} {fewer:9d}")
        met &= benchenv.verdict(
            "queries that grew with the data", figures["by preset"][1] - fewer, 0
        )
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
