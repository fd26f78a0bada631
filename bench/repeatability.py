"""How repeatable is each catalog benchmark? --trials trials of each, at its defaults, on one node.

    .venv/bin/python bench/repeatability.py [--trials 10] [--only sha1sum,intloop] [--json F]

Starts one simulated Pi 4 (pisim, 10.213.10.0/24; its CPU is a share of this host's) and one
real RQ worker, then runs every built-in benchmark (or --only those) as its own campaign of
--trials repetitions at its default parameters, the quiet wait off, the controller as the peer
of those that need one. Prints, per benchmark: its primary metric's mean, the relative SD
(sample SD / mean) of the trials, the median trial length (the measurement's wall time) and
the target for its category:
  cpu, memory, crypto, media   <= 1 %
  network, tunnel              <= 1 %  (at the link's ceiling; a pisim node has no shaped link)
  storage                      <= 3 %
A benchmark that misses is named with what its trials show (their length, a failed run).
With --host, each benchmark that needs no peer also runs --trials times on this host itself,
outside pisim and pifarm's engine (the same plan, run by the controller's own shell): the
spread of the same command with no simulated board, sampler or SSH in between, so a miss
says how much of it the host alone shows. The host must be otherwise idle: the node's CPU is
this host's, and anything else running on it shows as noise. Needs root (pisim). Exits 1 if
a target is missed or a run failed.
"""

import argparse
import json
import os
import statistics
import time
import uuid

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory

from benchmarks import campaigns, trial
from benchmarks.catalog import BUILT_IN
from benchmarks.catalog.spec import Context
from benchmarks.endpoints import ControllerEndpoint
from benchmarks.models import Measurement
from benchmarks.runner import RAM_DISK

BENCH_SUBNET_INDEX = 10
TARGET_PCT = {
    "cpu": 1.0,
    "memory": 1.0,
    "crypto": 1.0,
    "media": 1.0,
    "network": 1.0,
    "tunnel": 1.0,
    "storage": 3.0,
}
CAMPAIGN_DEADLINE_S = 3600


def run_campaign(board, benchmark, trials: int) -> dict:
    """One campaign of `trials` repetitions of benchmark at its defaults: its figures."""
    spec = {
        "name": f"repeatability {benchmark.name}",
        "boards": [board.name],
        "quiet": False,
        "repetitions": trials,
        "benchmarks": [{"name": benchmark.name}],
    }
    if benchmark.needs_peer:
        spec["peer"] = "controller"
    campaign = campaigns.start(spec)
    deadline = time.monotonic() + CAMPAIGN_DEADLINE_S
    while campaign.finished is None and time.monotonic() < deadline:
        time.sleep(0.5)
        campaign.refresh_from_db()
    runs = list(campaign.runs.order_by("sequence"))
    metric = benchmark.metrics[0]
    values = dict(
        Measurement.objects.filter(run__in=runs, metric=metric.name).values_list("run", "value")
    )
    done = [run for run in runs if run.state == "done" and run.pk in values]
    failed = [f"{run.state}: {run.reason}" for run in runs if run not in done]
    figures = [values[run.pk] for run in done]
    lengths = [run.measure_s for run in done if run.measure_s is not None]
    mean = statistics.fmean(figures) if figures else float("nan")
    rsd = statistics.stdev(figures) / mean * 100 if len(figures) > 1 else float("nan")
    return {
        "benchmark": benchmark.name,
        "category": benchmark.category,
        "metric": metric.name,
        "unit": metric.unit,
        "n": len(figures),
        "mean": mean,
        "rsd_pct": rsd,
        "trial_s": statistics.median(lengths) if lengths else float("nan"),
        "values": figures,
        "failed": failed,
        "target_pct": TARGET_PCT.get(benchmark.category),
        "suspect": sum(run.suspect for run in done),
        "noise_floor_s": benchmark.noise_floor_s,
        "load": os.getloadavg()[0],
        "params": done[0].params if done else {},
    }


def on_this_host(benchmark, params: dict, trials: int) -> float:
    """The relative SD (%) of trials runs of benchmark's plan on this host, no board between."""
    values = []
    for _ in range(trials):
        ctx = Context(workdir=f"{RAM_DISK}/pifarm-repeatability-{uuid.uuid4().hex[:12]}")
        outcome = trial.run(benchmark.plan(params, ctx), {"board": ControllerEndpoint()}, ctx)
        values.append(benchmark.parse(outcome.outputs, params).values[benchmark.metrics[0].name])
    return statistics.stdev(values) / statistics.fmean(values) * 100


def verdict(row: dict) -> str:
    if row["failed"]:
        return f"FAILED ({len(row['failed'])} runs): {row['failed'][0][:120]}"
    if row["target_pct"] is None:
        return "no target"
    if row["rsd_pct"] <= row["target_pct"]:
        return "met"
    why = [f"trials of {row['trial_s']:.2f} s"]
    if row["trial_s"] < row["noise_floor_s"]:
        why.append(f"under the {row['noise_floor_s']:g} s noise floor")
    if row["suspect"]:
        why.append(f"{row['suspect']} suspect")
    if row.get("host_rsd_pct") is not None:
        why.append(f"this host alone {row['host_rsd_pct']:.2f} %")
    return f"MISSED: {', '.join(why)}; host load {row['load']:.1f} at its end"


def print_table(rows: list[dict]) -> None:
    print(
        f"\n{'benchmark':<18} {'metric':<22} {'n':>3} {'mean':>12} {'rel SD':>8} "
        f"{'trial':>8} {'target':>7}  verdict"
    )
    for row in rows:
        target = f"<={row['target_pct']:g} %" if row["target_pct"] is not None else "-"
        print(
            f"{row['benchmark']:<18} {row['metric'] + ' (' + row['unit'] + ')':<22} "
            f"{row['n']:>3} {row['mean']:>12.4g} {row['rsd_pct']:>6.2f} % "
            f"{row['trial_s']:>6.2f} s {target:>7}  {verdict(row)}"
        )
        print(f"{'':<18} ran with {row['params']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--profile", default="pi4b-bookworm", help="the node's pisim profile")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    alone = "also run each benchmark with no peer on this host, outside pisim"
    parser.add_argument("--host", action="store_true", help=alone)
    args = parser.parse_args()
    names = [name for name in args.only.split(",") if name] or list(BUILT_IN)
    unknown = sorted(set(names) - set(BUILT_IN))
    if unknown:
        raise SystemExit(f"no built-in benchmark {', '.join(unknown)}")

    rows = []
    with benchenv.one_board("rpt", BENCH_SUBNET_INDEX, args.profile) as (node, board):
        loads = [benchenv.load_average()]
        for name in names:
            row = run_campaign(board, BUILT_IN[name], args.trials)
            if args.host and not BUILT_IN[name].needs_peer and row["n"]:
                row["host_rsd_pct"] = on_this_host(BUILT_IN[name], row["params"], args.trials)
            rows.append(row)
            loads.append(benchenv.load_average())
            print(
                f"{name}: n={row['n']} rel SD {row['rsd_pct']:.2f} % "
                f"trial {row['trial_s']:.2f} s  {verdict(row)}",
                flush=True,
            )
    print(
        f"\n1 node ({args.profile}), {args.trials} trials each, quiet off, "
        f"{os.cpu_count()} host cores; load seen: {loads[0]} ... {loads[-1]}"
    )
    print_table(rows)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    raise SystemExit(0 if all(verdict(row) in ("met", "no target") for row in rows) else 1)


if __name__ == "__main__":
    main()
