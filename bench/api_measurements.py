"""How long does one page of the API's measurement list take, with 50,000 measurements?

    .venv/bin/python bench/api_measurements.py [--rounds 20]

No simulated Pi and no worker: 5 boards on addresses nobody contacts, one campaign of 25,000
runs with 2 values each (bulk_create), in a throw-away data directory. A viewer's token reads
GET /api/v1/measurements/ through Django's test client (the whole stack: middleware, token
authentication, permissions, filters, the page and its count) --rounds times for each of: the
first page, a page deep in the list, and a page filtered by campaign, board and metric; the
SQL queries of one request are counted with CaptureQueriesContext. Target: each median under
100 ms, with as many queries for one page as for another. Exits 1 if one is missed.
"""

import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.api import tokens
from benchmarks.models import Campaign

MEASUREMENTS = 50_000
BOARDS = 5
TARGET_MS = 100.0


def lab() -> Campaign:
    """A campaign of MEASUREMENTS / 2 runs on BOARDS boards, each run with two values."""
    campaign = Campaign.objects.create(name="api bench", spec={})
    boards = benchenv.uncontacted_boards("api", BOARDS)
    benchenv.sha1sum_runs(campaign, boards, MEASUREMENTS // 2 // BOARDS)
    return campaign


def timed(client: Client, headers: dict, params: dict, rounds: int) -> tuple[list[float], int]:
    """Milliseconds of each request, and the SQL queries of one."""
    path = reverse("api:measurement-list")
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = client.get(path, params, **headers)
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200 or len(response.json()["results"]) != 100:
            raise SystemExit(f"{params}: {response.status_code} {response.content[:200]!r}")
    with CaptureQueriesContext(connection) as captured:
        client.get(path, params, **headers)
    return samples, len(captured)


def main() -> None:
    args = benchenv.options(__doc__, rounds=20)

    with benchenv.page_lab():
        campaign = lab()
        viewer = benchenv.bench_viewer()
        _, token = tokens.issue(viewer, "bench")
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_HOST": "127.0.0.1"}
        client = Client()
        cases = {
            "first page": {},
            "page 400 of 500": {"page": 400},
            "campaign+board+metric": {
                "campaign": str(campaign.code),
                "board": "api-3",
                "metric": "throughput",
            },
        }
        timed(client, headers, {}, 3)  # warm-up: imports, the first connection
        figures = {
            name: timed(client, headers, params, args.rounds) for name, params in cases.items()
        }

        benchenv.print_lab(BOARDS)
        met = True
        for name, (samples, queries) in figures.items():
            met &= benchenv.page_verdict(f"GET measurements, {name}", samples, queries, TARGET_MS)
        counts = {queries for _, queries in figures.values()}
        met &= benchenv.verdict("query counts that differ between pages", len(counts) - 1, 0)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
