"""Does a simulated Pi's CPU speed follow its booted arm_freq? sha1sum at 600, 1000, 1500 MHz.

    .venv/bin/python bench/sim_clock_scaling.py [--profile pi4b-bookworm] [--size-mb 256]

Starts one simulated Pi (pisim, 10.213.4.0/24) and boots it at each arm_freq in turn (config.txt
plus `arm_freq=<MHz>`, power cycle, governor performance). Each time it runs one sha1sum per node
CPU over a sparse file in the node's /tmp, timed inside the node, best of --rounds; prints the
throughput, the throughput relative to 1000 MHz and the clock ratio the CPU quota should give.
Simulated: the quota is a share of this machine's CPUs (pisim.nodecpu), not an Arm core, so
only the ratios mean anything. Needs root (pisim). Prints figures; asserts nothing.
"""

import argparse
import time

import benchenv  # noqa: I001 - first: it puts the project on sys.path

from pisim import Farm
from pisim.nodecpu import REFERENCE_MHZ

BENCH_SUBNET_INDEX = 4
CLOCKS_MHZ = (600, 1000, 1500)
GOVERNOR = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
SHA1SUM_LOOP = """truncate -s "$1"M /tmp/sparse && start=$(date +%s%N) && i=0
while [ "$i" -lt "$2" ]; do sha1sum /tmp/sparse >/dev/null & i=$((i + 1)); done
wait && echo $(( $(date +%s%N) - start ))"""


def boot_at(node, config: bytes, mhz: int) -> None:
    """config.txt plus arm_freq=mhz, a power cycle, then the performance governor."""
    node.write_file(node.profile.config_path, config + f"\n[all]\narm_freq={mhz}\n".encode())
    before = node.boot_id
    node.power_cycle()
    deadline = time.monotonic() + 30
    while node.boot_id == before or node.state != "up":
        if time.monotonic() > deadline:
            raise SystemExit(f"{node.name} did not boot at arm_freq {mhz}")
        time.sleep(0.05)
    node.wait_ssh()
    node.run_as_root(["sh", "-c", 'echo performance > "$1"', "sh", GOVERNOR], check=True)
    while node.cpu_quota.get("mhz") != mhz:  # PID 1 applies it within a clock sample
        if time.monotonic() > deadline:
            raise SystemExit(f"{node.name}: the clock did not reach {mhz} MHz")
        time.sleep(0.05)


def sha1sum_mb_per_s(node, size_mb: int) -> float:
    ncpu = node.booted["ncpu"]
    command = ["timeout", "60", "sh", "-c", SHA1SUM_LOOP, "sh", str(size_mb), str(ncpu)]
    done = node.run_as_root(command, timeout=70, check=True)
    return ncpu * size_mb / (int(done.stdout) / 1e9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="pi4b-bookworm")
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with Farm("clk", BENCH_SUBNET_INDEX, downtime=0.5) as farm:
        node = farm.add_node("pi", profile=args.profile)
        quota = node.cpu_quota
        print(f"{args.profile}, {node.booted['ncpu']} CPU(s), CPU quota {quota.get('mode')}")
        print(f"simulated: a core at X MHz gets X/{REFERENCE_MHZ} of a host CPU")
        if quota.get("mode") == "none":
            print(f"no quota ({quota.get('note')}): the figures will not follow the clock")
        config = node.read_file(node.profile.config_path)
        rates = {}
        for mhz in CLOCKS_MHZ:
            boot_at(node, config, mhz)
            rates[mhz] = max(sha1sum_mb_per_s(node, args.size_mb) for _ in range(args.rounds))
        print(f"{'arm_freq':>8}  {'sha1sum MB/s':>12}  {'vs 1000':>7}  {'clock ratio':>11}")
        for mhz, rate in rates.items():
            print(f"{mhz:>8}  {rate:>12.1f}  {rate / rates[1000]:>7.3f}  {mhz / 1000:>11.3f}")
    benchenv.cleanup()


if __name__ == "__main__":
    main()
