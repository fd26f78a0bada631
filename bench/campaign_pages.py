"""What a viewer's requests for a 20,000-run campaign cost: its page, its status, its CSV.

    .venv/bin/python bench/campaign_pages.py [--runs 20000] [--rounds 3]

No simulated Pi and no worker: 4 boards on addresses nobody contacts, one campaign of --runs
done runs with two values each (bulk_create), in a throw-away data directory. A viewer logged
in through Django's test client (the whole stack) asks --rounds times for the campaign's page,
its status with a since long ago (it may ask for every run) and the CSV, read to its end as it
streams. Python's peak memory while one CSV is made and read (tracemalloc) is measured against
the same for a campaign of a tenth of the runs. Targets: the page and the status under 1 s
and 200 kB whatever the runs; the CSV complete, under 1 ms a run, and its peak memory under
twice the small campaign's. Exits 1 if one is missed.
"""

import os
import time
import tracemalloc

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from benchmarks.models import Campaign
from devices.models import Board

BOARDS = 4
PAGE_TARGET_S = 1.0
PAGE_TARGET_BYTES = 200_000
CSV_TARGET_S_PER_RUN = 0.001


def campaign_of(runs: int, boards: list[Board]) -> Campaign:
    """A campaign of runs done runs over boards, each run with two values, just ended."""
    campaign = Campaign.objects.create(name=f"{runs} runs", spec={}, finished=None)
    ended = timezone.now()  # after the since asked for: every run has changed since
    benchenv.sha1sum_runs(campaign, boards, runs // len(boards), measure_s=0.5, finished=ended)
    return campaign


def timed(client: Client, path: str, params: dict, rounds: int) -> tuple[list[float], int]:
    """Seconds of each request, read to its end, and the bytes of one."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = client.get(path, params)
        body = b"".join(response)
        samples.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise SystemExit(f"{path}: {response.status_code} {body[:200]!r}")
    return samples, len(body)


def csv_peak(client: Client, campaign: Campaign) -> tuple[int, int]:
    """Python's peak memory while the CSV is made and read, and its lines."""
    tracemalloc.start()
    try:
        response = client.get(reverse("benchmarks:runs_csv", args=[campaign.code]))
        lines = sum(chunk.count(b"\n") for chunk in response)
        return tracemalloc.get_traced_memory()[1], lines
    finally:
        tracemalloc.stop()


def main() -> None:
    args = benchenv.options(__doc__, runs=20_000, rounds=3)

    with benchenv.page_lab():
        boards = benchenv.uncontacted_boards("pages", BOARDS, first=51)
        large, small = campaign_of(args.runs, boards), campaign_of(args.runs // 10, boards)
        _, client = benchenv.viewer_client()
        status = reverse("benchmarks:campaign_status", args=[large.code])
        sheet = reverse("benchmarks:runs_csv", args=[large.code])
        timed(client, large.get_absolute_url(), {}, 1)  # warm-up: imports, templates
        page, page_bytes = timed(client, large.get_absolute_url(), {}, args.rounds)
        since = {"since": "2000-01-01T00:00:00+00:00"}
        answer, answer_bytes = timed(client, status, since, args.rounds)
        table, table_bytes = timed(client, sheet, {}, args.rounds)
        (small_peak, _), (large_peak, lines) = csv_peak(client, small), csv_peak(client, large)

        print(
            f"\n{large.runs.count():,} runs with 2 values each, {os.cpu_count()} cores, "
            f"{connection.vendor}"
        )
        print(f"load seen: {benchenv.load_average()}\n")
        met = True
        for name, samples, size in (
            ("campaign page", page, page_bytes),
            ("status, since 2000", answer, answer_bytes),
        ):
            median = benchenv.report(f"GET {name}", samples)
            met &= benchenv.verdict(f"  {name}, median (s)", median, PAGE_TARGET_S)
            met &= benchenv.verdict(f"  {name}, bytes", size, PAGE_TARGET_BYTES)
        median = benchenv.report(f"GET the CSV ({table_bytes / 1e6:.1f} MB)", table)
        met &= benchenv.verdict(
            "  CSV, median ms a run", median * 1000 / args.runs, CSV_TARGET_S_PER_RUN * 1000
        )
        met &= benchenv.verdict("  CSV lines, minus runs + header", lines - args.runs - 1, 0)
        print(
            f"{'  CSV peak memory, MB: small, large':<44} {small_peak / 1e6:9.1f}, "
            f"{large_peak / 1e6:.1f}"
        )
        met &= benchenv.verdict("  CSV peak memory, large / small", large_peak / small_peak, 2)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
