"""Is a 32-bit simulated Pi's code really 32-bit? sha1sum on a 64-bit and a 32-bit node.

    .venv/bin/python bench/sim_32bit.py [--size-mb 512] [--rounds 5]

Starts two simulated Pis (pisim, 10.213.5.0/24) of the same board, pi4b-bookworm (64-bit
userland) and pi4b-bookworm-32 (the i386 root of pisim.rootfs), both with the performance
governor so that both get the same CPU quota. On each, in turn, it runs one sha1sum over the
same sparse file in the node's /tmp, timed inside the node, best of --rounds, and prints both
throughputs and their ratio. The same host CPU runs both: what differs is the code, i386 or
amd64 (on a Pi, armhf or arm64). Needs root (pisim). Prints figures; asserts nothing.
"""

import argparse
import time

import benchenv  # noqa: I001 - first: it puts the project on sys.path

from pisim import Farm

BENCH_SUBNET_INDEX = 5
NODES = {"n64": "pi4b-bookworm", "n32": "pi4b-bookworm-32"}
GOVERNOR = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
SHA1SUM_ONCE = """truncate -s "$1"M /tmp/sparse && start=$(date +%s%N) &&
sha1sum /tmp/sparse >/dev/null && echo $(( $(date +%s%N) - start ))"""


def at_full_clock(node) -> None:
    node.run_as_root(["sh", "-c", 'echo performance > "$1"', "sh", GOVERNOR], check=True)
    arm_freq = node.booted_config["arm_freq"]
    deadline = time.monotonic() + 10
    while node.cpu_quota.get("mhz") != arm_freq:  # PID 1 applies it within a clock sample
        if time.monotonic() > deadline:
            raise SystemExit(f"{node.name}: the clock did not reach {arm_freq} MHz")
        time.sleep(0.05)


def sha1sum_mb_per_s(node, size_mb: int) -> float:
    command = ["timeout", "120", "sh", "-c", SHA1SUM_ONCE, "sh", str(size_mb)]
    done = node.run_as_root(command, timeout=130, check=True)
    return size_mb / (int(done.stdout) / 1e9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
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
        rates = {name: 0.0 for name in nodes}
        for _ in range(args.rounds):  # alternately: a busier moment of the host hits both
            for name, node in nodes.items():
                rates[name] = max(rates[name], sha1sum_mb_per_s(node, args.size_mb))
        print(f"sha1sum of a {args.size_mb} MB sparse file, best of {args.rounds}:")
        for name, rate in rates.items():
            print(f"  {NODES[name]:<18} {rate:8.1f} MB/s")
        ratio = rates["n32"] / rates["n64"]
        print(f"32-bit / 64-bit: {ratio:.3f} (the 32-bit node {100 * (1 - ratio):.1f} % slower)")
    benchenv.cleanup()


if __name__ == "__main__":
    main()
