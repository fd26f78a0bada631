"""Memory bandwidth: our own probe in C (mlock, write then read a buffer) and sysbench memory."""

import re

from benchmarks.catalog import native, spec
from benchmarks.catalog.cpu import sysbench_plan
from benchmarks.catalog.parsing import first_line, number, positive

_MEMBW = native.source("membw")
_MEMBW_LINE = re.compile(
    r"bytes=(\d{1,20}) passes=(\d{1,9}) write_ns=(\d{1,20}) read_ns=(\d{1,20}) "
    r"best_write_ns=(\d{1,20}) best_read_ns=(\d{1,20}) mlock=(ok|refused:[A-Z]+) sum=([0-9a-f]+)"
)


def _membw_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    binary = f"{ctx.workdir}/membw"
    size, passes, at_least = (
        spec.parse_size(params["size"]),
        params["passes"],
        params["min_seconds"],
    )
    run = (binary, str(size), str(passes), "1" if params["require_mlock"] else "0", str(at_least))
    return spec.Plan(
        setup=(native.compile_command(_MEMBW, binary),),
        measure=spec.Command("board", run, timeout_s=60 + at_least + passes * size / 50e6),
        collect=(native.compiler_version_command(),),
    )


def _membw_parse(outputs, params) -> spec.Parsed:
    match = _MEMBW_LINE.search(outputs.get("measure", ""))
    if not match:
        raise spec.ParseError(
            "no 'bytes=… passes=… write_ns=… read_ns=…' line in the probe's output"
        )
    size, passes, write_ns, read_ns, best_write_ns, best_read_ns = map(int, match.groups()[:6])
    moved = size * passes / 1e6  # MB written (and then read) over all passes

    def rate(megabytes: float, nanoseconds: int, what: str) -> float:
        return positive(megabytes / positive(nanoseconds / 1e9, f"{what} time"), what)

    return spec.Parsed(
        values={
            "write": rate(moved, write_ns, "write bandwidth"),
            "read": rate(moved, read_ns, "read bandwidth"),
        },
        details={
            # "ok", or why the buffer was not locked (the probe then went on unlocked)
            "mlock": match.group(7),
            "best_pass_write_mb_s": rate(size / 1e6, best_write_ns, "best write pass"),
            "best_pass_read_mb_s": rate(size / 1e6, best_read_ns, "best read pass"),
            "bytes": size,
            "passes": passes,
            "sum": match.group(8),
            "compiler": native.compiler_version(outputs),
        },
    )


MEMBW = spec.Benchmark(
    name="membw",
    title="Memory bandwidth probe (ours)",
    description="Our own C probe, compiled on the board: allocates a buffer, locks it in RAM "
    "(mlock; where RLIMIT_MEMLOCK refuses, it goes on unlocked and says so, or fails if "
    "locking is required), then writes and reads it the given passes, and more until "
    "min_seconds have passed; MB/s (10^6 bytes) each way.",
    version=2,
    category="memory",
    params=(
        spec.Param("size", "size", "64M", "buffer size (K, M or G)", min=1024**2, max=4 * 1024**3),
        spec.Param("passes", "int", 4, "write+read passes (at least)", min=1, max=100),
        spec.Param("require_mlock", "bool", False, "fail if the buffer cannot be locked"),
        spec.repeat_param(),
    ),
    metrics=(
        spec.Metric("write", "MB/s", True, "write bandwidth"),
        spec.Metric("read", "MB/s", True, "read bandwidth"),
    ),
    plan=_membw_plan,
    parse=_membw_parse,
    tools=native.COMPILER_TOOLS,
    packages=native.COMPILER_PACKAGES,
    timeout_s=600,
    length_param="min_seconds",
)


def _sysbench_memory_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    return sysbench_plan(
        "memory",
        params,
        f"--memory-block-size={spec.parse_size(params['block_size'])}",
        f"--memory-total-size={spec.parse_size(params['total_size'])}",
        f"--memory-oper={params['operation']}",
    )


def _sysbench_memory_parse(outputs, params) -> spec.Parsed:
    text = outputs.get("measure", "")
    rate = number(r"MiB transferred \(([0-9.]+) MiB/sec\)", text, "'MiB transferred' line")
    return spec.Parsed(
        values={"throughput": positive(rate, "memory throughput")},
        details={
            "tool_version": first_line(text, r"^sysbench \S+"),
            "operations": int(number(r"Total operations:\s*(\d{1,20})", text, "operation count")),
            "seconds": number(r"total time:\s*([0-9.]+)s", text, "total time"),
        },
    )


SYSBENCH_MEMORY = spec.Benchmark(
    name="sysbench-memory",
    title="sysbench memory",
    description="sysbench's memory test: reads or writes blocks of a buffer until the total "
    "size is moved or the time is up; MiB/s (2^20 bytes per second, as sysbench reports).",
    # 2: 100G at most (sysbench's own default), so that the time, not 10G, ends a trial
    version=2,
    category="memory",
    params=(
        spec.Param("block_size", "size", "1K", "block size (K, M)", min=1024, max=1024**3),
        spec.Param("total_size", "size", "100G", "data to move at most", min=1024**2, max=1024**4),
        spec.Param("operation", "choice", "write", "read or write", choices=("read", "write")),
        spec.Param("threads", "int", 1, "worker threads", min=1, max=64),
        spec.Param("seconds", "int", 10, "run time at most (s)", min=1, max=600),
    ),
    metrics=(spec.Metric("throughput", "MiB/s", True, "memory throughput"),),
    plan=_sysbench_memory_plan,
    parse=_sysbench_memory_parse,
    tools=("sysbench",),
    packages=("sysbench",),
    timeout_s=630,
    length_param="seconds",
)

BENCHMARKS = (MEMBW, SYSBENCH_MEMORY)
