"""How long does Retry take on a cancelled 12,000-run campaign, and how long does another lane's
write wait meanwhile?

    .venv/bin/python bench/retry_large.py [--runs 12000]

No simulated Pi and no worker: boards on addresses nobody contacts (one per 1,000 runs), and
the embedded Redis of a throw-away data directory. A campaign of --runs sha1sum runs is
started and cancelled (its runs all end cancelled) and its lanes marked ended, as a worker
leaves them; then campaigns.retry_failed() makes a queued run for each, while a thread writes
another campaign's lane heartbeat every 20 ms on its own connection, as a running lane's
worker does. A write that waits for the database's lock longer than SQLite's timeout (20 s)
fails "database is locked". Targets: no write of the other lane waiting over 1 s (it waited
20 s and failed when the retry was one transaction of a query or two per run); at most 1 s
per 1,000 runs retried; as many queries a batch of campaigns.RETRY_BATCH runs as for 100
runs, but for the INSERTs. Exits 1 if one is missed.
"""

import threading
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmarks import campaigns, specs
from benchmarks.models import Lane, Run
from devices.models import Board

TARGET_S_PER_1000 = 1.0
OTHER_WRITE_TARGET_S = 1.0
RUN_INSERT = f'INSERT INTO "{Run._meta.db_table}"'


def cancelled_campaign(boards: list[Board], runs: int):
    spec = {
        "name": f"{runs} runs",
        "boards": [board.name for board in boards],
        "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
        "repetitions": runs // len(boards),
        "quiet": False,
    }
    campaign = campaigns.start(spec)
    campaigns.cancel(campaign)
    campaign.lanes.update(state=Lane.State.DONE, finished=timezone.now())
    return campaign


class OtherLane(threading.Thread):
    """Writes the heartbeat of another campaign's lane, again and again, timing each write."""

    def __init__(self, lane_pk: int):
        super().__init__(daemon=True)
        self.lane_pk, self.waits, self.errors = lane_pk, [], []
        self.stop = threading.Event()

    def run(self):
        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    Lane.objects.filter(pk=self.lane_pk).update(heartbeat=timezone.now())
                except Exception as exc:  # noqa: BLE001 - what a worker would have died of
                    self.errors.append(repr(exc))
                self.waits.append(time.perf_counter() - started)
                time.sleep(0.02)
        finally:
            connection.close()


def main() -> None:
    args = benchenv.options(__doc__, runs=12_000)

    call_command("migrate", verbosity=0)
    try:
        lanes = -(-args.runs // specs.MAX_REPETITIONS)
        boards = benchenv.uncontacted_boards(
            "retry", lanes + 1, first=31, host_key=benchenv.BENCH_HOST_KEY
        )
        other = campaigns.start(
            {
                "name": "other",
                "boards": [boards[-1].name],
                "benchmarks": ["sha1sum"],
                "repetitions": 1,
                "quiet": False,
            }
        )
        large = cancelled_campaign(boards[:lanes], args.runs)
        cancelled = large.runs.count()
        writer = OtherLane(other.lanes.get().pk)
        writer.start()
        time.sleep(0.2)
        started = time.perf_counter()
        connection.queries_log.clear()  # it keeps the last 9,000 queries: room for the retry's
        with CaptureQueriesContext(connection) as captured:
            again = campaigns.retry_failed(large)
        seconds = time.perf_counter() - started
        time.sleep(0.2)
        writer.stop.set()
        writer.join()
        inserts = sum(q["sql"].startswith(RUN_INSERT) for q in captured.captured_queries)
        others = len(captured.captured_queries) - inserts
        small = cancelled_campaign(boards[:1], 100)
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as small_captured:
            campaigns.retry_failed(small)
        small_others = sum(
            not q["sql"].startswith(RUN_INSERT) for q in small_captured.captured_queries
        )

        print(f"\n{cancelled:,} cancelled runs on {lanes} boards, {connection.vendor}")
        print(f"load seen: {benchenv.load_average()}\n")
        print(f"{'runs queued again':<44} {again:9d}")
        print(f"{'SQL queries: inserting runs + every other':<44} {inserts:9d} + {others}")
        print(f"{'other lane writes, failed':<44} {len(writer.waits):9d}, {len(writer.errors)}")
        met = benchenv.verdict(
            "retry_failed(), s per 1,000 runs", seconds * 1000 / cancelled, TARGET_S_PER_1000
        )
        met &= benchenv.verdict(
            "other lane's longest write (s)", max(writer.waits), OTHER_WRITE_TARGET_S
        )
        batches = -(-cancelled // campaigns.RETRY_BATCH)
        met &= benchenv.verdict(
            f"other queries / {batches} batches, 100 runs: {small_others}",
            others / batches,
            small_others,
        )
        met &= again == cancelled and not writer.errors
    finally:
        benchenv.cleanup()
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
