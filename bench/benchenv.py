"""What every bench/ script starts with: pifarm's Django on a throw-away data directory.

    import benchenv  # first: the environment must be set before Django loads its settings

SQLite and the embedded Redis in a new temporary directory, whatever the shell exports, so a
bench run never touches the demo's or a team server's data. `cleanup()` stops that Redis and
removes the directory; it also runs at exit, so a script that fails before its own clean-up
(a farm's subnet taken by another session) leaves no Redis behind. The helpers below register
simulated Pis as boards, wait for a campaign, and print a figure the same way in every script.
"""

import argparse
import atexit
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA_DIR = Path(tempfile.mkdtemp(prefix="pifarm-bench-"))
os.environ["PIFARM_DATA_DIR"] = str(DATA_DIR)
# PIFARM_BENCH_DATABASE_URL: a PostgreSQL database instead of SQLite, for the figures of a
# team's server. The database is the bench's own: a script fills it and empties it at the end.
BENCH_DATABASE_URL = os.environ.get("PIFARM_BENCH_DATABASE_URL", "")
if BENCH_DATABASE_URL:
    os.environ["DATABASE_URL"] = BENCH_DATABASE_URL
else:
    os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pifarm.settings")

import django  # noqa: E402 - settings must see the environment above

django.setup()


def options(doc: str, **defaults):
    """The script's options, from their defaults: --name for each (of its default's type), the
    default alone or (default, help); the first line of doc describes the script."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, given in defaults.items():
        default, words = given if isinstance(given, tuple) else (given, None)
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=type(default), default=default, help=words
        )
    return parser.parse_args()


@contextlib.contextmanager
def page_lab():
    """The bench database migrated, pages rendered as the test suite renders them (static files
    named as they are, no collectstatic manifest, and the directory whitenoise looks in
    present); all removed after, whatever happens."""
    from django.conf import settings
    from django.core.management import call_command

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)
    call_command("migrate", verbosity=0)
    try:
        yield
    finally:
        cleanup()


def print_lab(boards: int) -> None:
    """What a page bench measured on: the rows, the boards, the cores, the database, the load."""
    from django.db import connection

    from benchmarks.models import Measurement, Run

    print(
        f"\n{Measurement.objects.count():,} measurements, {Run.objects.count():,} runs, "
        f"{boards} boards, {os.cpu_count()} cores, {connection.vendor}"
    )
    print(f"load seen: {load_average()}\n")


def page_verdict(name: str, samples: list[float], queries: int, target_ms: float) -> bool:
    """A page's median (ms) against its target, with the SQL queries of one request."""
    median = report(name, samples, unit="ms", digits=1)
    print(f"{'  SQL queries of one request':<44} {queries:9d}")
    return verdict("  median (ms), target", median, target_ms)


COMPARISON_MEASUREMENTS = 50_000
COMPARISON_BOARDS = 5
UNCONTACTED = "10.213.9.{}"  # a bench subnet with no farm on it: no worker runs, nothing dials
BENCH_HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchOnlyNotARealKeyAtAll bench"
TRIAL_LOG = "warm-up 1 s\nmeasure 4.2 s\n" * 8  # what a run's environment carries besides


def uncontacted_boards(prefix: str, count: int, first: int = 11, host_key: str = "") -> list:
    """count boards, prefix-1 on, at UNCONTACTED addresses from .first (with host_key pinned,
    for the scripts that start campaigns on them)."""
    from devices.models import Board

    boards = []
    for i in range(count):
        board = Board(name=f"{prefix}-{i + 1}", host=UNCONTACTED.format(first + i))
        board.host_key = host_key
        board.set_credential(Board.AuthMethod.PASSWORD, "bench-only")
        board.save()
        boards.append(board)
    return boards


def bench_viewer():
    """A user with the viewer role."""
    from django.contrib.auth import get_user_model

    from devices import roles

    viewer = get_user_model().objects.create_user("bench-viewer")
    roles.assign(viewer, roles.VIEWER)
    return viewer


def viewer_client():
    """A user with the viewer role, and a test client logged in as them."""
    from django.test import Client

    viewer, client = bench_viewer(), Client(HTTP_HOST="127.0.0.1")
    client.force_login(viewer)
    return viewer, client


def comparison_lab(measurements: int = COMPARISON_MEASUREMENTS, boards: int = COMPARISON_BOARDS):
    """A campaign of `measurements` sha1sum runs with one value each (bulk_create) on `boards`
    boards probed once, as the board is and with two preset versions, 2 % of them suspect;
    each run keeps what the engine writes (a telemetry summary with its clock, a trial log, a
    tool version), so a comparison's page reads rows of a real size."""
    from benchmarks import tallies
    from benchmarks.models import Campaign, Lane, Measurement, Run
    from devices import presets
    from devices.models import FactSnapshot, Preset

    campaign = Campaign.objects.create(name="comparison bench", spec={})
    versions = [None] + [
        presets.new_version(Preset.objects.create(name=f"oc-{mhz}"), options={"arm_freq": mhz})
        for mhz in ("1800", "2000")
    ]
    runs = []
    for i, board in enumerate(uncontacted_boards("cmp", boards)):
        snapshot = FactSnapshot.objects.create(
            board=board,
            model="Raspberry Pi 4 Model B Rev 1.5",
            kernel_bits=64,
            userland_bits=32 if i % 2 else 64,
            os_name="Debian GNU/Linux 12 (bookworm)",
            facts={
                "kernel_release": "6.6.51-v8+",
                "governor": "performance",
                "firmware_version": {"version": "d2f7a1b"},
            },
        )
        lane = Lane.objects.create(campaign=campaign, board=board)
        runs += [
            _sha1sum_run(
                lane,
                n,
                preset_version=versions[n % 3],
                snapshot=snapshot,
                suspect=n % 50 == 0,
                details={"tool_version": "sha1sum (GNU coreutils) 9.1"},
                tool_version="sha1sum (GNU coreutils) 9.1",
                clock_mhz=1500.0 + 250 * (n % 3),
                environment={
                    "telemetry": {
                        "n": 5,
                        "arm_mhz_under_load": {
                            "min": 1500.0,
                            "median": 1500.0 + 250 * (n % 3),
                            "max": 2000.0,
                        },
                    },
                    "trial_log": TRIAL_LOG,
                },
            )
            for n in range(measurements // boards)
        ]
    Run.objects.bulk_create(runs, batch_size=2000)
    values = [
        Measurement(
            run_id=run_id,
            metric="throughput",
            value=400.0 + (run_id % 17),
            unit="MB/s",
            higher_is_better=True,
        )
        for run_id in Run.objects.values_list("pk", flat=True)
    ]
    Measurement.objects.bulk_create(values, batch_size=5000)
    # As the health check's round does for runs written other than by the engine: their
    # campaign's tallies (benchmarks.tallies), which the pages read.
    tallies.catch_up()
    planner_statistics()
    return campaign


def _sha1sum_run(lane, n: int, **fields):
    """The n-th done sha1sum run of lane (not saved: the callers bulk-create)."""
    from benchmarks.models import Run

    return Run(
        campaign=lane.campaign,
        lane=lane,
        board=lane.board,
        sequence=n * 10,
        benchmark="sha1sum",
        definition_version=1,
        params={"size": "16M"},
        repetition=n + 1,
        state="done",
        **fields,
    )


def sha1sum_runs(campaign, boards, per_board: int, **fields) -> None:
    """per_board done sha1sum runs on each board (a lane each), bulk-created with fields, each
    with two values (a throughput and the seconds); then the planner's statistics."""
    from benchmarks.models import Lane, Measurement, Run

    made = []
    for board in boards:
        lane = Lane.objects.create(campaign=campaign, board=board)
        made += [_sha1sum_run(lane, n, **fields) for n in range(per_board)]
    Run.objects.bulk_create(made, batch_size=2000)
    values = [
        Measurement(run_id=run_id, metric=metric, value=value, unit=unit, higher_is_better=better)
        for run_id in campaign.runs.values_list("pk", flat=True)
        for metric, value, unit, better in (
            ("throughput", 412.5, "MB/s", True),
            ("seconds", 0.04, "s", False),
        )
    ]
    Measurement.objects.bulk_create(values, batch_size=5000)
    planner_statistics()


def planner_statistics() -> None:
    """After a bulk load, the statistics PostgreSQL's autovacuum gathers within a minute or
    so (and the visibility map that lets it read an index alone): without them its planner
    takes the tables for empty and measures a state no server stays in. SQLite gathers none
    by itself and pifarm asks it for none, so it is measured as it runs."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")


def timed_get(client, url: str, rounds: int, must_hold: bytes) -> tuple[list[float], int]:
    """Milliseconds of each GET of url through the test client (the whole stack), and the SQL
    queries of one; SystemExit if an answer is not a 200 holding must_hold."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        response = client.get(url, HTTP_HOST="127.0.0.1")
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200 or must_hold not in response.content:
            raise SystemExit(f"{url}: {response.status_code} {response.content[:300]!r}")
    with CaptureQueriesContext(connection) as captured:
        client.get(url, HTTP_HOST="127.0.0.1")
    return samples, len(captured)


def register_board(node, name: str | None = None):
    """node (a pisim Node) as a board with its key and confirmed host key, as the pages do."""
    from devices.models import Board

    board = Board(name=name or node.name, host=node.host, port=node.port, username=node.user)
    board.set_credential("key", node.private_key_pem)
    board.host_key = node.host_key_public
    board.save()
    return board


def fixed_command_benchmark(seconds: int = 2) -> str:
    """A custom benchmark whose command sleeps `seconds` (CPU-free: the host's load does not
    change it); its name."""
    from benchmarks.models import CustomBenchmark

    name = f"fixed-{seconds}s"
    CustomBenchmark.objects.create(
        name=name,
        title=f"a fixed {seconds}-second command",
        command=f"sleep {seconds} && echo slept={seconds}",
        pattern=r"slept=(?P<value>\d+)",
        unit="s",
        higher_is_better=False,
        timeout_s=seconds + 30,
    )
    return name


def wait_for_campaign(campaign, deadline_s: float = 600):
    """The campaign once finished, every run done (SystemExit naming the first that was not)."""
    deadline = time.monotonic() + deadline_s
    while campaign.finished is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"campaign {campaign} did not finish within {deadline_s:g} s")
        time.sleep(0.05)
        campaign.refresh_from_db()
    failed = campaign.runs.exclude(state="done").first()
    if failed is not None:
        raise SystemExit(f"{failed} ended {failed.state}: {failed.reason}")
    return campaign


def campaign_wall_s(campaign) -> float:
    """Campaign start (its row written) to campaign end (its last run ended), from the rows."""
    return (campaign.finished - campaign.created).total_seconds()


def ssh_argv(node, known_hosts) -> list[str]:
    """ssh to a pisim node as a person would, one connection per command (the by-hand side
    of the engine's figures), its host key checked against known_hosts."""
    return [
        "ssh",
        "-i",
        node.private_key_path,
        "-o",
        f"UserKnownHostsFile={known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
        "-p",
        str(node.port),
        f"{node.user}@{node.host}",
    ]


def report(name: str, samples: list[float], unit: str = "s", digits: int = 3) -> float:
    """Print the median with its spread and n; return the median."""
    median = statistics.median(samples)
    spread = f"min {min(samples):.{digits}f} max {max(samples):.{digits}f}"
    print(f"{name:<44} median {median:9.{digits}f} {unit}  ({spread}, n={len(samples)})")
    return median


def verdict(name: str, value: float, limit: float, *, at_least: bool = False) -> bool:
    """Print a figure next to its target (at most limit, or at least); return whether met."""
    met = value >= limit if at_least else value <= limit
    target = f"{'>=' if at_least else '<='} {limit:g}"
    print(f"{name:<44} {value:9.3f}    target {target}: {'met' if met else 'MISSED'}")
    return met


def host_cpu() -> tuple[float, float]:
    """(busy, all) CPU seconds of this host since boot, every process of every session."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    idle = fields[3] + fields[4]  # idle, iowait
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - idle) / tick, sum(fields) / tick


def children_cpu_s() -> float:
    """CPU seconds of this process's children that ended (workers and their work horses)."""
    times = os.times()
    return times.children_user + times.children_system


def load_average() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


@contextlib.contextmanager
def one_board(name: str, subnet_index: int, profile: str):
    """The bench database migrated, one simulated Pi of `profile` registered as a board and one
    real RQ worker: yields (node, board); all stopped and removed after, whatever happens."""
    from django.core.management import call_command

    from pisim import Farm

    call_command("migrate", verbosity=0)
    farm = Farm(name, subnet_index, downtime=1.0)
    workers = []
    try:
        node = farm.add_node("b1", profile=profile)
        farm.start()
        board = register_board(node)
        workers = start_workers(1)
        yield node, board
    finally:
        stop_workers(workers)
        farm.stop()
        cleanup()


def start_workers(count: int, *options: str) -> list[subprocess.Popen]:
    """count real `manage.py rqworker default` processes on this data directory."""
    command = [sys.executable, "manage.py", "rqworker", "default", *options]
    workers = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]
    time.sleep(3)  # let every worker connect and block on the queue
    return workers


def stop_workers(workers: list[subprocess.Popen], timeout: float = 60) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=timeout)


def cleanup() -> None:
    """Stop the embedded Redis (if one started), remove the data directory, and empty the
    bench's PostgreSQL database if it was given one: a next lab starts from nothing."""
    if BENCH_DATABASE_URL and DATA_DIR.exists():
        from django.core.management import call_command

        call_command("flush", interactive=False, verbosity=0)
    socket_path = DATA_DIR / "redis.sock"
    if socket_path.exists():
        import redis

        redis.Redis(unix_socket_path=str(socket_path)).shutdown(nosave=True)
    from django.db import connections

    connections.close_all()  # a next lab opens a new database, not the removed one
    shutil.rmtree(DATA_DIR, ignore_errors=True)


atexit.register(cleanup)
