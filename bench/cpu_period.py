"""What does pisim's 10 ms CPU quota period buy, and what does it cost the host?

    .venv/bin/python bench/cpu_period.py [--runs 10] [--periods 100000,10000,5000]

Starts one simulated Pi 1 B (pisim, 10.213.11.0/24; one core at 700 MHz, so its quota is
700/3000 of a host CPU and binds a single thread), then for each quota period (the same share
of each period: only the granularity changes) runs --runs sha1sums of a sparse file inside
the node's cgroup, timed inside the node as the catalog's sha1sum times them:
  short   16 MiB: a sub-second run, where the period decides how much of the run is a whole
          number of periods
  long    the catalog's minimum trial length, about 3 s of hashing
and prints, per period and size, the mean MB/s and the relative SD of the runs, then the host's
cost: the host's system CPU seconds per second of the long runs (the kernel's throttling and
unthrottling runs as system time). pisim sets PERIOD_US (pisim/nodecpu.py) to 10 ms; the
kernel's default is 100 ms. The host should be otherwise idle. Needs root (pisim).
"""

import argparse
import os
import statistics
import time
from pathlib import Path

import benchenv  # noqa: F401 - first: it sets up Django on a throw-away data directory

from pisim import Farm
from pisim.nodecpu import PERIOD_US

BENCH_SUBNET_INDEX = 11
SPARSE = "/tmp/cpu-period-sparse"  # noqa: S108 - the node's own /tmp
TIMED = """truncate -s "$1" "$2" && start=$(date +%s%N) && sha1sum "$2" > /dev/null &&
echo $(( $(date +%s%N) - start ))"""


def set_period(node, period_us: int) -> None:
    """The node's group gets the same share of each period_us (v2 cpu.max, or v1's files)."""
    info = node.cpu_quota
    group = Path(info["cgroup"])
    quota = max(1000, round(info["quota_us"] * period_us / info["period_us"]))
    if (group / "cpu.max").exists():
        (group / "cpu.max").write_text(f"{quota} {period_us}")
    else:  # v1: a quota that fits the old period first, then the period, then the quota
        (group / "cpu.cfs_quota_us").write_text("-1")
        (group / "cpu.cfs_period_us").write_text(str(period_us))
        (group / "cpu.cfs_quota_us").write_text(str(quota))


def host_system_s() -> float:
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[3]) / os.sysconf("SC_CLK_TCK")  # user nice system: the third


def hash_rates(node, size: int, runs: int) -> tuple[list[float], float, float]:
    """(MB/s of each run, host system seconds, wall seconds) of runs sha1sums of size bytes."""
    rates, system, started = [], host_system_s(), time.perf_counter()
    for _ in range(runs):
        done = node.run_as_root(
            ["sh", "-c", TIMED, "timed", str(size), SPARSE], timeout=120, check=True
        )
        rates.append(size / (int(done.stdout.decode().split()[-1]) / 1e9) / 1e6)
    return rates, host_system_s() - system, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--periods",
        default=f"100000,{PERIOD_US},5000",
        help="quota periods to compare, in microseconds",
    )
    args = parser.parse_args()
    periods = [int(period) for period in args.periods.split(",")]

    farm = Farm("cpp", BENCH_SUBNET_INDEX, downtime=1.0)
    try:
        node = farm.add_node("p1", profile="pi1b-legacy-32")
        farm.start()
        if node.cpu_quota.get("mode") not in ("v1", "v2"):
            raise SystemExit(f"no CPU quota on this machine: {node.cpu_quota.get('note')}")
        # the long size: about 3 s of hashing at this node's speed, found with one probe run
        probe, _, _ = hash_rates(node, 64 * 1024**2, 1)
        long_size = int(probe[0] * 1e6 * 3) // 1024**2 * 1024**2
        print(
            f"node: {node.booted.get('model', 'pi1b')}, quota {node.cpu_quota['quota_us']} us "
            f"per {node.cpu_quota['period_us']} us; {os.cpu_count()} host cores; "
            f"{benchenv.load_average()}\n"
        )
        print(f"{'period':>9} {'size':>8} {'mean MB/s':>10} {'rel SD':>8} {'host sys s/s':>13}")
        for period in periods:
            set_period(node, period)
            for name, size in (("16 MiB", 16 * 1024**2), (f"{long_size >> 20} MiB", long_size)):
                rates, system_s, wall_s = hash_rates(node, size, args.runs)
                rsd = statistics.stdev(rates) / statistics.fmean(rates) * 100
                cost = f"{system_s / wall_s:13.4f}" if size == long_size else f"{'':>13}"
                print(
                    f"{period / 1000:>6g} ms {name:>8} {statistics.fmean(rates):10.2f} "
                    f"{rsd:6.2f} % {cost}",
                    flush=True,
                )
        set_period(node, PERIOD_US)
        print(f"\n{benchenv.load_average()}")
    finally:
        farm.stop()
        benchenv.cleanup()


if __name__ == "__main__":
    main()
