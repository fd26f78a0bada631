"""How long does a probe of an idle board wait while another board is busy? Two RQ workers.

    make bench            # or: .venv/bin/python bench/busy_board_wait.py [--rounds 3]

Starts 2 simulated Pis (pisim, 10.213.4.0/24; a reboot takes --downtime s) and 2 real RQ
worker processes (with RQ's scheduler). Each round:
  1. a preset application (trial boot) starts on board "busy" and drives it (worker 1);
  2. then a probe of "busy" is queued (worker 2 picks it up and finds the board busy);
  3. then a probe of "idle" is queued: the figure is how long it takes, queued to stored.
If a job blocks its worker while it waits for a busy board, the idle board's probe waits
behind the whole application; if it gives the worker back, it runs at once.
Needs root (pisim). Prints figures; asserts nothing.
"""

import os
import statistics
import time

os.environ.setdefault("PIFARM_REBOOT_POLL", "1")  # before Django loads; the workers inherit it
import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from django.core.management import call_command

from devices import apply, presets, tasks
from devices.models import Application, Board, BoardTask, Preset
from pisim import Farm

BENCH_SUBNET_INDEX = 4
DEADLINE_S = 300


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not happen within {DEADLINE_S} s")
        time.sleep(0.005)


def refreshed(record):
    record.refresh_from_db()
    return record


def one_round(busy: Board, idle: Board, version) -> dict:
    application = presets.start_application(busy, version, Application.Mode.TRIAL)
    wait_for(lambda: refreshed(application).step not in ("", apply.WAITING), "the application")
    probe_busy = tasks.start(busy, BoardTask.Kind.PROBE)
    time.sleep(0.5)  # worker 2 has taken the busy board's probe
    queued = time.perf_counter()
    probe_idle = tasks.start(idle, BoardTask.Kind.PROBE)
    wait_for(lambda: refreshed(probe_idle).is_finished, "the idle board's probe")
    idle_s = time.perf_counter() - queued
    wait_for(lambda: refreshed(application).is_finished, "the application")
    wait_for(lambda: refreshed(probe_busy).is_finished, "the busy board's probe")
    wait_for(lambda: not busy.tasks.exclude(state__in=["done", "failed"]).exists(), "re-probe")
    for record, ok in ((application, "verified"), (probe_idle, "done"), (probe_busy, "done")):
        if record.state != ok:
            raise SystemExit(f"{record} ended {record.state}")
    return {
        "idle": idle_s,
        "application": (application.finished - application.started).total_seconds(),
        "busy after": (probe_busy.finished - application.finished).total_seconds(),
    }


def report(name: str, samples: list[float]) -> None:
    median = statistics.median(samples)
    spread = f"min {min(samples):.2f} max {max(samples):.2f}"
    print(f"{name:<50} median {median:6.2f} s  ({spread}, n={len(samples)})")


def main() -> None:
    args = benchenv.options(__doc__, rounds=3, downtime=(3.0, "simulated reboot, s"))

    call_command("migrate", verbosity=0)
    farm = Farm("busy", BENCH_SUBNET_INDEX, downtime=args.downtime)
    workers = []
    try:
        farm.add_node("busy", profile="pi4b-bookworm")
        farm.add_node("idle", profile="pi4b-bookworm")
        farm.start()
        boards = {}
        for node in farm.nodes.values():
            board = Board(name=node.name, host=node.host, port=node.port, username=node.user)
            board.set_credential("key", node.private_key_pem)
            board.host_key = node.host_key_public
            board.save()
            boards[node.name] = board
        preset = Preset.objects.create(name="mild overclock")
        versions = [
            presets.new_version(preset, options={"arm_freq": str(freq)}) for freq in (1700, 1600)
        ]
        workers = benchenv.start_workers(2, "--with-scheduler")
        alone = []
        for _ in range(args.rounds + 1):  # the first one warms up the workers
            started = time.perf_counter()
            task = tasks.start(boards["idle"], BoardTask.Kind.PROBE)
            wait_for(lambda task=task: refreshed(task).is_finished, "a probe")
            alone.append(time.perf_counter() - started)
        rounds = [
            one_round(boards["busy"], boards["idle"], versions[i % 2]) for i in range(args.rounds)
        ]

        print(f"2 workers, 2 simulated boards, reboot {args.downtime:g} s, {os.cpu_count()} cores")
        report("probe of the idle board, nothing else running", alone[1:])
        report("probe of the idle board while the other is busy", [r["idle"] for r in rounds])
        report("  (the busy board's application took)", [r["application"] for r in rounds])
        report("  (its probe ended after the application by)", [r["busy after"] for r in rounds])
    finally:
        benchenv.stop_workers(workers)
        farm.stop()
        benchenv.cleanup()


if __name__ == "__main__":
    main()
