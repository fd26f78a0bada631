"""Do sha1sum and intloop repeat within 1 % over 6 trials, through `manage.py campaign start`?

    .venv/bin/python bench/campaign_repeat.py [--trials 6] [--only sha1sum,intloop]

Starts one quiet simulated Pi 4 (pisim, 10.213.12.0/24), registers it, starts one worker, then
for each benchmark writes a spec (the benchmark at its defaults, --trials repetitions, quiet
wait off, no other setting) and runs it as a user would: `manage.py campaign start SPEC
--follow --json`, in a process of its own. Prints the figures, their relative SD and what the
command said it lengthened; target 1 %. The host should be otherwise idle. Needs root (pisim).
Exits 1 if a target is missed or a run failed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from benchmarks.catalog import BUILT_IN

BENCH_SUBNET_INDEX = 12
TARGET_PCT = 1.0


def through_the_command(board, name: str, trials: int) -> tuple[list[float], list[str], str]:
    """The first metric's figures of every done run, the runs that were not, and stderr."""
    spec = {
        "name": f"repeat {name}",
        "boards": [board.name],
        "quiet": False,
        "repetitions": trials,
        "benchmarks": [{"name": name}],
    }
    path = benchenv.DATA_DIR / f"{name}.json"
    path.write_text(json.dumps(spec))
    command = [sys.executable, "manage.py", "campaign", "start", str(path), "--follow", "--json"]
    done = subprocess.run(
        command, cwd=benchenv.ROOT, env=os.environ, capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"campaign start refused {name}: {done.stderr.strip()}")
    metric = BUILT_IN[name].metrics[0].name
    rows = json.loads(done.stdout)
    values = [row["values"][metric]["value"] for row in rows if row["state"] == "done"]
    others = [f"{row['state']}: {row['reason']}" for row in rows if row["state"] != "done"]
    return values, others, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--only", default="sha1sum,intloop", help="comma-separated benchmarks")
    args = parser.parse_args()
    met = True
    with benchenv.one_board("crp", BENCH_SUBNET_INDEX, "pi4b-bookworm") as (node, board):
        for name in args.only.split(","):
            values, others, said = through_the_command(board, name, args.trials)
            lengthened = [line for line in said.splitlines() if line.startswith("lengthened:")]
            print(f"{name}: {', '.join(f'{value:.4g}' for value in values)}")
            print(f"  {'; '.join(lengthened) or 'not lengthened'}")
            if others or len(values) < 2:
                print(f"  FAILED: {len(others)} runs not done: {others[:1]}")
                met = False
                continue
            rsd = statistics.stdev(values) / statistics.fmean(values) * 100
            ok = rsd <= TARGET_PCT
            met &= ok
            print(
                f"  n={len(values)} mean {statistics.fmean(values):.4g} "
                f"{BUILT_IN[name].metrics[0].unit}, rel SD {rsd:.2f} % "
                f"(target <= {TARGET_PCT:g} %): {'met' if ok else 'MISSED'}"
            )
    print(f"1 node (pi4b-bookworm), {os.cpu_count()} host cores; {benchenv.load_average()}")
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
