"""CPU and hashing benchmarks."""

import re

from benchmarks.catalog import native, spec
from benchmarks.catalog.parsing import finite, first_line, number, positive

# $1 file, $2 size, $3 seconds at least. Times the tool on the board itself (no SSH round trip
# in the figure), hashing the file again until $3 seconds have passed.
_TIMED_SHA1SUM = r"""
set -eu
min_ns=$(($3 * 1000000000)) rounds=0
start=$(date +%s%N)
while :; do
  sum=$(sha1sum -- "$1")
  rounds=$((rounds + 1))
  end=$(date +%s%N)
  [ $((end - start)) -lt "$min_ns" ] || break
done
echo "bytes=$2 ns=$((end - start)) sum=${sum%% *} rounds=$rounds"
"""
# Version 1 hashed once and printed no rounds.
_SHA1SUM_LINE = re.compile(
    r"bytes=(\d{1,20}) ns=(\d{1,20}) sum=([0-9a-f]{40})(?: rounds=(\d{1,9}))?"
)


def _sha1sum_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    path = f"{ctx.workdir}/sparse"
    size = spec.parse_size(params["size"])
    return spec.Plan(
        setup=(spec.Command("board", ("truncate", "-s", str(size), "--", path)),),
        measure=spec.Command(
            "board",
            ("sh", "-c", _TIMED_SHA1SUM, "sha1sum", path, str(size), str(params["min_seconds"])),
            timeout_s=600 + params["min_seconds"],
        ),
        teardown=(spec.Command("board", ("rm", "-f", "--", path)),),
    )


def _sha1sum_parse(outputs, params) -> spec.Parsed:
    match = _SHA1SUM_LINE.search(outputs.get("measure", ""))
    if not match:
        raise spec.ParseError("no 'bytes=… ns=… sum=…' line in the output of the timed sha1sum")
    size, nanoseconds = int(match.group(1)), int(match.group(2))
    rounds = int(match.group(4) or 1)
    if nanoseconds <= 0 or rounds <= 0:
        raise spec.ParseError(f"sha1sum hashed {rounds} times in {nanoseconds} ns, which cannot be")
    seconds = nanoseconds / 1e9
    return spec.Parsed(
        values={"throughput": size * rounds / seconds / 1e6, "seconds": seconds / rounds},
        details={"sha1": match.group(3), "bytes": size, "rounds": rounds},
    )


SHA1SUM = spec.Benchmark(
    name="sha1sum",
    title="sha1sum of a sparse file",
    description="Hashes a sparse file of the given size (zeros, never read from storage), "
    "again until min_seconds have passed: a single-core CPU and memory-bus figure.",
    version=2,
    category="cpu",
    params=(
        spec.Param("size", "size", "2G", "file size (K, M or G)", min=1, max=64 * 1024**3),
        spec.repeat_param(),
    ),
    metrics=(
        spec.Metric("throughput", "MB/s", True, "hashing speed"),
        spec.Metric("seconds", "s", False, "time to hash the file once"),
    ),
    plan=_sha1sum_plan,
    parse=_sha1sum_parse,
    tools=("sha1sum", "truncate"),
    packages=("coreutils",),
    repetitions=3,
    timeout_s=600,
    typical_s=8,
    length_param="min_seconds",
)


def sysbench_plan(test: str, params: dict, *options: str) -> spec.Plan:
    """sysbench <test> with options, on params' threads, for params' seconds at most."""
    threads, seconds = params["threads"], params["seconds"]
    argv = ("sysbench", test, *options, f"--threads={threads}", f"--time={seconds}", "run")
    return spec.Plan(measure=spec.Command("board", argv, timeout_s=seconds + 30))


def _sysbench_cpu_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    return sysbench_plan("cpu", params, f"--cpu-max-prime={params['max_prime']}", "--events=0")


def _sysbench_cpu_parse(outputs, params) -> spec.Parsed:
    text = outputs.get("measure", "")
    rate = number(r"events per second:\s*([0-9.]+)", text, "'events per second' line")
    return spec.Parsed(
        values={"events_per_second": positive(rate, "events per second")},
        details={
            "tool_version": first_line(text, r"^sysbench \S+"),
            "events": int(number(r"total number of events:\s*(\d+)", text, "event count")),
            "latency_avg_ms": number(r"avg:\s*([0-9.]+)", text, "average latency"),
        },
    )


SYSBENCH_CPU = spec.Benchmark(
    name="sysbench-cpu",
    title="sysbench cpu (primes)",
    description="sysbench's CPU test: finds the primes below a limit by trial division, "
    "over and over, on the given number of threads, for a fixed time.",
    version=1,
    category="cpu",
    params=(
        spec.Param("max_prime", "int", 10000, "primes below this", min=100, max=1_000_000),
        spec.Param("threads", "int", 1, "worker threads", min=1, max=64),
        spec.Param("seconds", "int", 10, "run time (s)", min=1, max=600),
    ),
    metrics=(spec.Metric("events_per_second", "events/s", True, "prime searches per second"),),
    plan=_sysbench_cpu_plan,
    parse=_sysbench_cpu_parse,
    tools=("sysbench",),
    packages=("sysbench",),
    timeout_s=630,
    length_param="seconds",
)

# Methods present in stress-ng since Debian 11 (0.12) as well as in bookworm's 0.15.
STRESS_NG_CPU_METHODS = (
    "int64",
    "int32",
    "bitops",
    "crc16",
    "fibonacci",
    "prime",
    "sqrt",
    "matrixprod",
    "fft",
    "double",
    "float",
    "queens",
    "ackermann",
)
_STRESS_NG_YAML = "stress-ng.yaml"
_BOGO_REAL = re.compile(r"bogo-ops-per-second-real-time:\s*(\S+)")
# --metrics-brief's table on stderr (what the man page and most write-ups show):
# "stress-ng: metrc: [7892] cpu   2965   1.00   1.00   0.00   2964.90   2967.24"
_METRICS_ROW = re.compile(
    r"(?:metrc|info):\s+\[\d+\]\s+cpu\s+(\d+)\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)"
)


def _stress_ng_cpu_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    report = f"{ctx.workdir}/{_STRESS_NG_YAML}"
    return spec.Plan(
        measure=spec.Command(
            "board",
            (
                "stress-ng",
                "--cpu",
                str(params["workers"]),
                "--cpu-method",
                params["method"],
                "--metrics-brief",
                "--timeout",
                f"{params['seconds']}s",
                "--yaml",
                report,
            ),
            timeout_s=params["seconds"] + 30,
        ),
        collect=(spec.Command("board", ("cat", "--", report), name="yaml"),),
    )


def _stress_ng_cpu_parse(outputs, params) -> spec.Parsed:
    """The --yaml report (collected), or else the --metrics-brief table if it was kept."""
    report = outputs.get("yaml", "")
    if _BOGO_REAL.search(report):
        rate = number(_BOGO_REAL, report, "bogo-ops-per-second-real-time")
        details = {
            "tool_version": first_line(report, r"(?<=stress-ng-version: )\S+"),
            "bogo_ops": number(r"bogo-ops:\s*(\S+)", report, "bogo-ops"),
        }
    else:
        row = _METRICS_ROW.search(outputs.get("measure", ""))
        if not row:
            raise spec.ParseError("no stress-ng YAML report and no cpu row of --metrics-brief")
        rate = finite(row.group(3), "bogo ops/s (real time)")
        details = {"bogo_ops": finite(row.group(1), "bogo ops")}
    return spec.Parsed(
        values={"bogo_ops_per_second": positive(rate, "bogo ops per second")},
        details={**details, "method": params.get("method", "")},
    )


STRESS_NG_CPU = spec.Benchmark(
    name="stress-ng-cpu",
    title="stress-ng cpu",
    description="stress-ng's CPU stressor with one chosen method, as a second opinion: "
    "bogo operations per second of real time (comparable only for the same method and "
    "stress-ng version).",
    version=1,
    category="cpu",
    params=(
        spec.Param("workers", "int", 1, "CPU workers (0: one per CPU)", min=0, max=64),
        spec.Param("method", "choice", "int64", "stressor method", choices=STRESS_NG_CPU_METHODS),
        spec.Param("seconds", "int", 10, "run time (s)", min=1, max=600),
    ),
    metrics=(spec.Metric("bogo_ops_per_second", "bogo ops/s", True, "bogo ops per second"),),
    plan=_stress_ng_cpu_plan,
    parse=_stress_ng_cpu_parse,
    tools=("stress-ng",),
    packages=("stress-ng",),
    timeout_s=630,
    length_param="seconds",
)

_INTLOOP = native.source("intloop")
_INTLOOP_LINE = re.compile(r"iterations=(\d{1,20}) ns=(\d{1,20}) checksum=([0-9a-f]{8})")


def _intloop_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    binary = f"{ctx.workdir}/intloop"
    return spec.Plan(
        setup=(native.compile_command(_INTLOOP, binary),),
        measure=spec.Command(
            "board", (binary, str(params["seconds"])), timeout_s=params["seconds"] + 30
        ),
        collect=(native.compiler_version_command(),),
    )


def _intloop_parse(outputs, params) -> spec.Parsed:
    match = _INTLOOP_LINE.search(outputs.get("measure", ""))
    if not match:
        raise spec.ParseError("no 'iterations=… ns=… checksum=…' line in the output of intloop")
    iterations, nanoseconds = int(match.group(1)), int(match.group(2))
    seconds = positive(nanoseconds / 1e9, "intloop's run time")
    return spec.Parsed(
        values={"iterations_per_second": positive(iterations / seconds, "iterations per second")},
        details={
            "iterations": iterations,
            "checksum": match.group(3),
            "compiler": native.compiler_version(outputs),
        },
    )


INTLOOP = spec.Benchmark(
    name="intloop",
    title="Integer loop (Dhrystone-like, ours)",
    description="Our own integer benchmark in the spirit of Dhrystone (string copies and "
    "compares, array walks, calls and branches, no floating point), compiled on the board "
    "with cc -O2 for its own userland; iterations per second on one core.",
    version=1,
    category="cpu",
    params=(spec.Param("seconds", "int", 10, "run time (s)", min=1, max=600),),
    metrics=(spec.Metric("iterations_per_second", "iter/s", True, "rounds per second"),),
    plan=_intloop_plan,
    parse=_intloop_parse,
    tools=native.COMPILER_TOOLS,
    packages=native.COMPILER_PACKAGES,
    timeout_s=630,
    length_param="seconds",
)

BENCHMARKS = (SHA1SUM, SYSBENCH_CPU, STRESS_NG_CPU, INTLOOP)
