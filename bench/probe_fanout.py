"""How long does probing 8 boards take? pifarm against OpenSSH by hand and against ansible.

    make bench            # or: .venv/bin/python bench/probe_fanout.py [--boards 8] [--rounds 5]

Starts 8 simulated Pis (pisim, 10.213.3.0/24), then times, each over several rounds:
  pifarm x1     one probe job through a real RQ worker, enqueue to result stored
  pifarm x8     8 probe jobs on 8 RQ worker processes, enqueue to the last result stored
  ssh x8        the same probe script sent with OpenSSH's `ssh ... sh -s`, 8 in parallel
  ansible x8    `ansible all -m setup -f 8` on the same hosts (needs ansible-core)
The boards share this machine's cores with the client, so ssh and ansible are the yardsticks.
Needs root (pisim). Prints figures; asserts nothing.
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.core.management import call_command

from devices import tasks
from devices.models import Board, BoardTask
from devices.probe import PROBE_SCRIPT
from pisim import Farm

BENCH_SUBNET_INDEX = 3


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def pifarm_probe(boards: list[Board]) -> None:
    started = [tasks.start(board, BoardTask.Kind.PROBE).pk for board in boards]
    pending = set(started)
    deadline = time.monotonic() + 120
    while pending and time.monotonic() < deadline:
        finished = BoardTask.objects.filter(
            pk__in=pending, state__in=[BoardTask.State.DONE, BoardTask.State.FAILED]
        ).values_list("pk", "state", "reason")
        for pk, state, error in finished:
            if state == BoardTask.State.FAILED:
                raise SystemExit(f"a probe failed: {error}")
            pending.discard(pk)
        time.sleep(0.005)
    if pending:
        raise SystemExit("probes did not finish within 120 s")


def ssh_probe(nodes, known_hosts: Path) -> None:
    processes = [
        subprocess.Popen(
            [*benchenv.ssh_argv(node, known_hosts), "sh", "-s"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for node in nodes
    ]
    for process in processes:
        out, err = process.communicate(PROBE_SCRIPT.encode(), timeout=60)
        if process.returncode != 0 or b"pifarm-probe-end" not in out:
            raise SystemExit(f"ssh probe failed: {err.decode()[-300:]}")


def ansible_setup(nodes, known_hosts: Path, workdir: Path) -> None:
    inventory = workdir / "inventory.ini"
    inventory.write_text(
        "".join(
            f"{node.name} ansible_host={node.host} ansible_port={node.port} "
            f"ansible_user={node.user} ansible_ssh_private_key_file={node.private_key_path} "
            "ansible_python_interpreter=/usr/bin/python3\n"
            for node in nodes
        )
    )
    env = {
        **os.environ,
        "ANSIBLE_SSH_ARGS": f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes",
        "ANSIBLE_LOCAL_TEMP": str(workdir / "tmp"),
    }
    ansible = Path(sys.executable).with_name("ansible")
    done = subprocess.run(
        [str(ansible), "all", "-i", str(inventory), "-m", "setup", "-f", str(len(nodes))],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"ansible failed: {done.stdout[-500:]} {done.stderr[-500:]}")


def report(name: str, samples: list[float], reference: float | None = None) -> float:
    median = statistics.median(samples)
    spread = f"min {min(samples):.3f} max {max(samples):.3f}"
    ratio = f"  = {median / reference:.2f}x pifarm x8" if reference else ""
    print(f"{name:<28} median {median:7.3f} s  ({spread}, n={len(samples)}){ratio}")
    return median


def main() -> None:
    args = benchenv.options(__doc__, boards=8, rounds=5)
    has_ansible = Path(sys.executable).with_name("ansible").exists()

    call_command("migrate", verbosity=0)
    workdir = benchenv.DATA_DIR / "work"
    workdir.mkdir()
    farm = Farm("bench", BENCH_SUBNET_INDEX, downtime=1.0)
    workers = []
    try:
        for i in range(args.boards):
            farm.add_node(f"b{i + 1}", profile=("pi4b-bookworm", "pi3b-legacy")[i % 2])
        farm.start()
        nodes = list(farm.nodes.values())
        known_hosts = workdir / "known_hosts"
        known_hosts.write_text("".join(node.known_hosts_line + "\n" for node in nodes))
        boards = []
        for node in nodes:
            board = Board(name=node.name, host=node.host, port=node.port, username=node.user)
            board.set_credential("key", node.private_key_pem)
            board.host_key = node.host_key_public
            board.save()
            boards.append(board)
        workers = benchenv.start_workers(args.boards)
        pifarm_probe(boards)  # warm-up: imports in each worker, first SSH handshakes

        print(f"{args.boards} simulated boards, {args.rounds} rounds, {os.cpu_count()} cores\n")
        one = [timed(lambda: pifarm_probe(boards[:1])) for _ in range(args.rounds)]
        fan = [timed(lambda: pifarm_probe(boards)) for _ in range(args.rounds)]
        ssh = [timed(lambda: ssh_probe(nodes, known_hosts)) for _ in range(args.rounds)]
        report("(a) pifarm, 1 board", one)
        pifarm_fan = report(f"pifarm, {args.boards} boards", fan)
        ssh_median = report(f"(b) ssh by hand, {args.boards}", ssh, pifarm_fan)
        print(f"    pifarm / ssh = {pifarm_fan / ssh_median:.3f} (target <= 1.3)")
        if has_ansible:
            runs = [timed(lambda: ansible_setup(nodes, known_hosts, workdir)) for _ in range(3)]
            ansible_median = report(f"(c) ansible -m setup, {args.boards}", runs, pifarm_fan)
            print(f"    pifarm / ansible = {pifarm_fan / ansible_median:.3f} (target <= 0.2)")
        else:
            print("(c) ansible not installed: pip install -r requirements-bench.txt")
    finally:
        benchenv.stop_workers(workers, timeout=20)
        farm.stop()
        benchenv.cleanup()


if __name__ == "__main__":
    main()
