"""Is a 32-bit simulated Pi's code really 32-bit? sha1sum on a 64-bit and a 32-bit node.

    .venv/bin/python bench/sim_32bit.py [--size-mb 512] [--rounds 5]

Starts two simulated Pis (pisim, 10.213.5.0/24) of the same board, pi4b-bookworm (64-bit
userland) and pi4b-bookworm-32 (the i386 root of pisim.rootfs), both with the performance
governor so that both get the same CPU quota. On each, in turn, it runs one sha1sum over the
same sparse file in the node's /tmp, timed inside the node (bash's `time`), --rounds times,
and prints both throughputs and their ratio: the best by the clock, the best by the CPU time
sha1sum used (user plus system; other work on a busy host stretches the first more than the
second) and the median by the clock. The same host
CPU runs both: what differs is the code, i386 or amd64 (on a Pi, armhf or arm64). Needs root
(pisim). Prints figures; asserts nothing.
"""

import statistics
import time

import benchenv  # noqa: I001 - first: it puts the project on sys.path

from pisim import Farm

BENCH_SUBNET_INDEX = 5
NODES = {"n64": "pi4b-bookworm", "n32": "pi4b-bookworm-32"}
GOVERNOR = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
# Prints "<wall s> <user s> <system s>" of one sha1sum.
SHA1SUM_ONCE = """truncate -s "$1"M /tmp/sparse && TIMEFORMAT='%3R %3U %3S' &&
{ time sha1sum /tmp/sparse >/dev/null; } 2>&1"""


def at_full_clock(node) -> None:
    node.run_as_root(["sh", "-c", 'echo performance > "$1"', "sh", GOVERNOR], check=True)
    arm_freq = node.booted_config["arm_freq"]
    deadline = time.monotonic() + 10
    while node.cpu_quota.get("mhz") != arm_freq:  # PID 1 applies it within a clock sample
        if time.monotonic() > deadline:
            raise SystemExit(f"{node.name}: the clock did not reach {arm_freq} MHz")
        time.sleep(0.05)


def sha1sum_mb_per_s(node, size_mb: int) -> tuple[float, float]:
    """(MB/s by the clock, MB/s of CPU time) of one sha1sum of a size_mb sparse file."""
    command = ["timeout", "120", "bash", "-c", SHA1SUM_ONCE, "bash", str(size_mb)]
    done = node.run_as_root(command, timeout=130, check=True)
    wall, user, system = (float(word) for word in done.stdout.split())
    return size_mb / wall, size_mb / (user + system)


def main() -> None:
    args = benchenv.options(__doc__, size_mb=512, rounds=5)
    with Farm("b32", BENCH_SUBNET_INDEX, downtime=0.5) as farm:
        nodes = {name: farm.add_node(name, profile=profile) for name, profile in NODES.items()}
        for node in nodes.values():
            at_full_clock(node)
            bits = node.run_as_root(["getconf", "LONG_BIT"], check=True).stdout.decode().strip()
            print(
                f"{node.name}: {node.info['profile']}, {bits}-bit userland, "
                f"{node.booted['ncpu']} CPU(s), quota {node.cpu_quota.get('mode')} "
                f"at {node.cpu_quota.get('mhz')} MHz"
            )
        runs = {name: [] for name in nodes}
        for _ in range(args.rounds):  # alternately: a busier moment of the host hits both
            for name, node in nodes.items():
                runs[name].append(sha1sum_mb_per_s(node, args.size_mb))
        print(f"sha1sum of a {args.size_mb} MB sparse file, {args.rounds} runs each:")
        print(f"  {'MB/s':<18} {'best clock':>10} {'best CPU':>10} {'median clock':>12}")
        figures = {}  # name: (best by the clock, best by CPU time, median by the clock)
        for name, rates in runs.items():
            walls, cpus = zip(*rates, strict=True)
            figures[name] = (max(walls), max(cpus), statistics.median(walls))
            print(
                f"  {NODES[name]:<18} {figures[name][0]:10.1f} {figures[name][1]:10.1f} "
                f"{figures[name][2]:12.1f}"
            )
        for index, what in enumerate(("best by the clock", "best by CPU time", "median")):
            ratio = figures["n32"][index] / figures["n64"][index]
            print(
                f"32-bit / 64-bit, {what}: {ratio:.3f} "
                f"(the 32-bit node {100 * (1 - ratio):.1f} % slower)"
            )
    benchenv.cleanup()


if __name__ == "__main__":
    main()
