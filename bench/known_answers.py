"""Does pifarm report what the tool says? openssl speed and sha1sum through pifarm vs by hand.

    make bench            # or: .venv/bin/python bench/known_answers.py [--rounds 5]

Starts one simulated Pi (pisim, 10.213.8.0/24; its CPU is this host's) and one real RQ worker,
then, interleaved over --rounds rounds, the same work through pifarm and by hand on the node
(as root inside its namespaces, not through SSH):
  openssl speed   -evp sha256 at 16,384-byte blocks for --seconds s: pifarm's stored MB/s vs
                  the +F line of `openssl speed -mr` by hand (bytes per second / 10^6)
  sha1sum         a sparse file of 2 GiB (the catalog's default) on the node's RAM disk,
                  hashed once both ways (its trial is longer than the minimum of 3 s): pifarm's
                  stored MB/s vs
                  the size over the wall time of `sha1sum FILE` by hand (nsenter's start
                  included, a few ms); both sums must be the SHA-1 of 2 GiB of zeros
  sha1sum, sampler  the same by hand while pifarm's telemetry sampler starts on the node, as it
                  does in a run (reported, not judged: it shows what the sampler costs)
The quiet wait is off: the by-hand runs do not wait either. Target: each pair of medians within
2 % (issue 21: the noise floor below the effects pifarm claims to see). Needs root (pisim).
Exits 1 if a target is missed or a sum is wrong.
"""

import hashlib
import os
import threading
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from benchmarks import campaigns
from benchmarks.models import Measurement
from benchmarks.telemetry.scripts import sampler_argv

BENCH_SUBNET_INDEX = 8
ALGORITHM, BLOCK = "sha256", "16384"
SIZE = 2 * 1024**3
SPARSE = "/dev/shm/known-answers-sparse"  # noqa: S108 - the node's own tmpfs
TARGET_WITHIN_PCT = 2.0
SAMPLER_S = 6  # about as long as the hash of 2 GiB on a simulated Pi 4


def zeros_sha1(size: int) -> str:
    digest, block = hashlib.sha1(), bytes(1024**2)  # noqa: S324 - the known answer, not security
    for _ in range(size // len(block)):
        digest.update(block)
    return digest.hexdigest()


def through_pifarm(board, seconds: int) -> tuple[float, float, str]:
    """(openssl MB/s, sha1sum MB/s, the sum pifarm kept) from one campaign of both."""
    campaign = campaigns.start(
        {
            "name": "known answers",
            "boards": [board.name],
            "quiet": False,
            "repetitions": 1,
            "order": "interleaved",
            "benchmarks": [
                {
                    "name": "openssl-speed",
                    "params": {"algorithm": ALGORITHM, "block_size": BLOCK, "seconds": seconds},
                },
                {"name": "sha1sum", "params": {"size": "2G"}},
            ],
        }
    )
    runs = {run.benchmark: run for run in benchenv.wait_for_campaign(campaign).runs.all()}
    openssl = Measurement.objects.get(run=runs["openssl-speed"], metric="throughput").value
    sha1sum = Measurement.objects.get(run=runs["sha1sum"], metric="throughput").value
    return openssl, sha1sum, runs["sha1sum"].details["sha1"]


def openssl_by_hand(node, seconds: int) -> float:
    argv = ["openssl", "speed", "-mr", "-seconds", str(seconds), "-bytes", BLOCK, "-evp", ALGORITHM]
    done = node.run_as_root(argv, timeout=seconds + 30, check=True)
    rows = [line for line in done.stdout.decode().splitlines() if line.startswith("+F:")]
    if len(rows) != 1:
        raise SystemExit(f"openssl speed by hand printed {len(rows)} +F lines")
    return float(rows[0].split(":")[-1]) / 1e6


def sha1sum_by_hand(node, *, with_sampler: bool = False) -> tuple[float, str]:
    node.run_as_root(["truncate", "-s", str(SIZE), "--", SPARSE], check=True)
    sampler = start_sampler(node) if with_sampler else None
    try:
        started = time.perf_counter()
        done = node.run_as_root(["sha1sum", "--", SPARSE], timeout=120, check=True)
        seconds = time.perf_counter() - started
    finally:
        if sampler is not None:
            sampler.join()
        node.run_as_root(["rm", "-f", "--", SPARSE])
    return SIZE / seconds / 1e6, done.stdout.decode().split()[0]


def start_sampler(node) -> threading.Thread:
    """pifarm's telemetry sampler on the node (1 s interval) for SAMPLER_S, as a run starts it
    just before its measurement."""
    argv = ["timeout", str(SAMPLER_S), *sampler_argv(1, ["sha1sum"])]
    sampler = threading.Thread(target=node.run_as_root, args=(argv,), daemon=True)
    sampler.start()
    return sampler


def compare(name: str, pifarm: list[float], hand: list[float]) -> bool:
    through = benchenv.report(f"{name} through pifarm", pifarm, "MB/s", 1)
    direct = benchenv.report(f"{name} by hand", hand, "MB/s", 1)
    pairs = [a / b for a, b in zip(pifarm, hand, strict=True)]
    benchenv.report("  pifarm / by hand, pair by pair", pairs, "x")
    return benchenv.verdict(
        f"  {name}, medians, % apart", abs(through / direct - 1) * 100, TARGET_WITHIN_PCT
    )


def main() -> None:
    args = benchenv.options(__doc__, rounds=5, seconds=(3, "of openssl speed"))

    with benchenv.one_board("known", BENCH_SUBNET_INDEX, "pi4b-bookworm") as (node, board):
        through_pifarm(board, 1)  # warm-up: the worker, the first handshake and probe

        figures = {
            name: []
            for name in (
                "openssl pifarm",
                "openssl hand",
                "sha1 pifarm",
                "sha1 hand",
                "sha1 sampler",
            )
        }
        sums = set()
        loads = [benchenv.load_average()]
        for _ in range(args.rounds):
            openssl, sha1, pifarm_sum = through_pifarm(board, args.seconds)
            figures["openssl pifarm"].append(openssl)
            figures["sha1 pifarm"].append(sha1)
            figures["openssl hand"].append(openssl_by_hand(node, args.seconds))
            sha1, hand_sum = sha1sum_by_hand(node)
            figures["sha1 hand"].append(sha1)
            sha1, sampler_sum = sha1sum_by_hand(node, with_sampler=True)
            figures["sha1 sampler"].append(sha1)
            sums |= {pifarm_sum, hand_sum, sampler_sum}
            loads.append(benchenv.load_average())

        print(f"\n1 board, {args.rounds} rounds interleaved, quiet off, {os.cpu_count()} cores")
        print("load seen: " + "; ".join(loads) + "\n")
        met = compare(
            f"openssl {ALGORITHM} {BLOCK} B {args.seconds} s",
            figures["openssl pifarm"],
            figures["openssl hand"],
        )
        met &= compare("sha1sum 2 GiB sparse", figures["sha1 pifarm"], figures["sha1 hand"])
        benchenv.report(
            "sha1sum by hand, the sampler starting too", figures["sha1 sampler"], "MB/s", 1
        )
        known = zeros_sha1(SIZE)
        right = sums == {known}
        print(f"{'sha1 of 2 GiB of zeros, both ways':<44} {'right' if right else sorted(sums)}")
        met &= right
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
