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
import os
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Campaign, Comparison, Lane, Measurement, Run
from devices import presets, roles
from devices.models import Board, FactSnapshot, Preset

MEASUREMENTS = 50_000
BOARDS = 5
TARGET_MS = 150.0
UNCONTACTED = "10.213.9.{}"  # a bench subnet with no farm on it
TRIAL_LOG = "warm-up 1 s\nmeasure 4.2 s\n" * 8  # what a run's environment carries besides


def lab(measurements: int = MEASUREMENTS) -> Campaign:
    """A campaign of `measurements` runs on BOARDS boards, each run with one value."""
    campaign = Campaign.objects.create(name="comparison bench", spec={})
    versions = [None] + [
        presets.new_version(Preset.objects.create(name=f"oc-{mhz}"), options={"arm_freq": mhz})
        for mhz in ("1800", "2000")
    ]
    runs = []
    for i in range(BOARDS):
        board = Board(name=f"cmp-{i + 1}", host=UNCONTACTED.format(11 + i))
        board.set_credential(Board.AuthMethod.PASSWORD, "bench-only")
        board.save()
        snapshot = FactSnapshot.objects.create(
            board=board, model="Raspberry Pi 4 Model B Rev 1.5", kernel_bits=64,
            userland_bits=32 if i % 2 else 64, os_name="Debian GNU/Linux 12 (bookworm)",
            facts={"kernel_release": "6.6.51-v8+", "governor": "performance",
                   "firmware_version": {"version": "d2f7a1b"}},
        )  # fmt: skip
        lane = Lane.objects.create(campaign=campaign, board=board)
        runs += [
            Run(campaign=campaign, lane=lane, board=board, sequence=n * 10, benchmark="sha1sum",
                definition_version=1, params={"size": "16M"}, repetition=n + 1, state="done",
                preset_version=versions[n % 3], snapshot=snapshot, suspect=n % 50 == 0,
                details={"tool_version": "sha1sum (GNU coreutils) 9.1"},
                tool_version="sha1sum (GNU coreutils) 9.1", clock_mhz=1500.0 + 250 * (n % 3),
                environment={"telemetry": {"n": 5, "arm_mhz_under_load": {
                    "min": 1500.0, "median": 1500.0 + 250 * (n % 3), "max": 2000.0}},
                    "trial_log": TRIAL_LOG})
            for n in range(measurements // BOARDS)
        ]  # fmt: skip
    Run.objects.bulk_create(runs, batch_size=2000)
    values = [
        Measurement(run_id=run_id, metric="throughput", value=400.0 + (run_id % 17),
                    unit="MB/s", higher_is_better=True)
        for run_id in Run.objects.values_list("pk", flat=True)
    ]  # fmt: skip
    Measurement.objects.bulk_create(values, batch_size=5000)
    return campaign


def timed(client: Client, url: str, rounds: int) -> tuple[list[float], int]:
    """Milliseconds of each request, and the SQL queries of one."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = client.get(url, HTTP_HOST="127.0.0.1")
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200 or b"means-chart" not in response.content:
            raise SystemExit(f"{url}: {response.status_code} {response.content[:300]!r}")
    with CaptureQueriesContext(connection) as captured:
        client.get(url, HTTP_HOST="127.0.0.1")
    return samples, len(captured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--measurements", type=int, default=MEASUREMENTS)
    args = parser.parse_args()

    benchenv.pages_without_collectstatic()
    call_command("migrate", verbosity=0)
    try:
        campaign = lab(args.measurements)
        viewer = get_user_model().objects.create_user("bench-viewer")
        roles.assign(viewer, roles.VIEWER)
        client = Client()
        client.force_login(viewer)
        cases = {}
        for name, group_by, suspects in (("by preset", "preset", False),
                                         ("by board, suspects in", "board", True)):  # fmt: skip
            comparison = Comparison.objects.create(
                owner=viewer, name=name, benchmark="sha1sum", metric="throughput",
                group_by=group_by, include_suspects=suspects,
            )  # fmt: skip
            comparison.campaigns.set([campaign])
            cases[name] = comparison.get_absolute_url()
        timed(client, cases["by preset"], 2)  # warm-up: imports, templates, the connection
        figures = {name: timed(client, url, args.rounds) for name, url in cases.items()}

        print(f"\n{Measurement.objects.count():,} measurements, {Run.objects.count():,} runs, "
              f"{BOARDS} boards, {os.cpu_count()} cores, {connection.vendor}")  # fmt: skip
        print(f"load seen: {benchenv.load_average()}\n")
        met = True
        for name, (samples, queries) in figures.items():
            median = benchenv.report(f"comparison page, {name}", samples, unit="ms", digits=1)
            print(f"{'  SQL queries of one request':<44} {queries:9d}")
            met &= benchenv.verdict("  median (ms), target", median, TARGET_MS)
        Run.objects.filter(sequence__gte=args.measurements // BOARDS // 2 * 10).delete()
        _, fewer = timed(client, cases["by preset"], 1)
        print(f"{'SQL queries with half the runs':<44} {fewer:9d}")
        met &= benchenv.verdict(
            "queries that grew with the data", figures["by preset"][1] - fewer, 0
        )
    finally:
        benchenv.cleanup()
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
