"""Storage: dd (sequential write with fdatasync, then read back) and a short fio job, against
a directory given as a parameter (default: the trial's directory on the RAM disk; in a lab,
an SD card, a USB disk or an NFS mount)."""

import json
import posixpath
import re

from benchmarks.catalog import spec
from benchmarks.catalog.parsing import finite, first_line, positive

# An absolute directory, of plain name characters only, with no "." or ".." component; "" is
# the trial's own directory. No quoting can go wrong with it, and fio (which splits file
# names at ":") and dd read it as the one path it looks like.
DIRECTORY_PATTERN = r"|/|(?:/(?!\.\.?(?:/|$))[A-Za-z0-9._+-]+)+/?"
_DIRECTORY = spec.Param(
    "directory",
    "text",
    "",
    "absolute directory to test in (empty: the RAM disk)",
    pattern=DIRECTORY_PATTERN,
)


def _test_file(params: dict, ctx: spec.Context, suffix: str) -> str:
    """A file of this trial's own in the chosen directory: a shared NFS mount may hold
    files of other boards' trials at the same time."""
    chosen = params["directory"]
    directory = chosen.rstrip("/") if chosen else ctx.workdir
    return f"{directory}/pifarm-{posixpath.basename(ctx.workdir)}.{suffix}"


# $1 file, $2 block size, $3 count, $4 directory for dd's own reports (on stderr if dd fails),
# $5 seconds at least. Timed on the board; between write and read the file leaves the page
# cache (iflag=nocache), so the read comes from the device, not from RAM (on a RAM disk it is
# RAM either way). Write and read again until $5 seconds have passed; the times are summed.
_TIMED_DD = r"""
set -eu
export LC_ALL=C
file=$1 bs=$2 count=$3 logs=$4 min_ns=$(($5 * 1000000000))
write_ns=0 read_ns=0 rounds=0 began=$(date +%s%N)
while :; do
  start=$(date +%s%N)
  dd if=/dev/zero of="$file" bs="$bs" count="$count" conv=fdatasync 2> "$logs/dd-write.log" ||
    { cat -- "$logs/dd-write.log" >&2; exit 1; }
  middle=$(date +%s%N)
  dd if="$file" iflag=nocache count=0 2> /dev/null || echo "cache=kept"
  middle2=$(date +%s%N)
  dd if="$file" of=/dev/null bs="$bs" 2> "$logs/dd-read.log" ||
    { cat -- "$logs/dd-read.log" >&2; exit 1; }
  end=$(date +%s%N)
  write_ns=$((write_ns + middle - start)) read_ns=$((read_ns + end - middle2))
  rounds=$((rounds + 1))
  [ $((end - began)) -lt "$min_ns" ] || break
done
echo "bytes=$(wc -c < "$file") write_ns=$write_ns read_ns=$read_ns rounds=$rounds"
echo "write: $(tail -n 1 "$logs/dd-write.log")"
echo "read: $(tail -n 1 "$logs/dd-read.log")"
dd --version | head -n 1
"""
# Version 1 wrote and read once and printed no rounds.
_DD_LINE = re.compile(
    r"bytes=(\d{1,20}) write_ns=(\d{1,20}) read_ns=(\d{1,20})(?: rounds=(\d{1,9}))?"
)


def _dd_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    path = _test_file(params, ctx, "dd")
    block = spec.parse_size(params["block_size"])
    script = (
        "sh",
        "-c",
        _TIMED_DD,
        "dd",
        path,
        str(block),
        str(params["count"]),
        ctx.workdir,
        str(params["min_seconds"]),
    )
    return spec.Plan(
        measure=spec.Command("board", script, timeout_s=600 + params["min_seconds"]),
        teardown=(spec.Command("board", ("rm", "-f", "--", path)),),
    )


def _dd_parse(outputs, params) -> spec.Parsed:
    text = outputs.get("measure", "")
    match = _DD_LINE.search(text)
    if not match:
        raise spec.ParseError("no 'bytes=… write_ns=… read_ns=…' line in the timed dd output")
    size, write_ns, read_ns = map(int, match.groups()[:3])
    rounds = positive(int(match.group(4) or 1), "rounds")
    megabytes = positive(size * rounds / 1e6, "bytes written")
    reports = dict(re.findall(r"^(write|read): (.*)$", text, re.MULTILINE))
    return spec.Parsed(
        values={
            "write": megabytes / positive(write_ns / 1e9, "write time"),
            "read": megabytes / positive(read_ns / 1e9, "read time"),
        },
        details={
            "bytes": size,
            "rounds": rounds,
            "page_cache_dropped": "cache=kept" not in text,
            "dd_write": reports.get("write", ""),
            "dd_read": reports.get("read", ""),
            "tool_version": first_line(text, r"^dd \(.*$"),
        },
    )


DD = spec.Benchmark(
    name="dd",
    title="dd sequential write and read",
    description="Writes zeros with dd (conv=fdatasync: the time includes reaching the device), "
    "drops the file from the page cache, reads it back, again until min_seconds have passed; "
    "MB/s (10^6 bytes) each way. Zeros: "
    "a compressing file system would flatter the figures.",
    version=2,
    category="storage",
    params=(
        _DIRECTORY,
        spec.Param("block_size", "size", "1M", "dd bs", min=512, max=64 * 1024**2),
        spec.Param("count", "int", 128, "blocks to write", min=1, max=1_000_000),
        spec.repeat_param(),
    ),
    metrics=(
        spec.Metric("write", "MB/s", True, "sequential write"),
        spec.Metric("read", "MB/s", True, "sequential read"),
    ),
    plan=_dd_plan,
    parse=_dd_parse,
    tools=("dd",),
    packages=("coreutils",),
    repetitions=3,
    timeout_s=600,
    length_param="min_seconds",
)

FIO_PATTERNS = ("read", "write", "randread", "randwrite")


def _fio_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    path = _test_file(params, ctx, "fio")
    job = (
        "fio",
        "--name=pifarm",
        f"--filename={path}",
        f"--rw={params['pattern']}",
        f"--bs={spec.parse_size(params['block_size'])}",
        f"--size={spec.parse_size(params['size'])}",
        f"--runtime={params['seconds']}",
        "--time_based",
        "--ioengine=psync",
        f"--direct={int(params['direct'])}",
        "--invalidate=1",
        "--end_fsync=1",
        "--output-format=json",
    )
    return spec.Plan(
        # laying the file out before a read job takes time too: be generous
        measure=spec.Command("board", job, timeout_s=params["seconds"] + 300),
        teardown=(spec.Command("board", ("rm", "-f", "--", path)),),
    )


def _fio_report(text: str) -> dict:
    """fio's JSON report; anything it printed before it (notes, warnings) is skipped."""
    start = text.find("{")
    try:
        report, _ = json.JSONDecoder().raw_decode(text, max(start, 0))
    except (ValueError, RecursionError):
        raise spec.ParseError("no JSON report in fio's output") from None
    if not isinstance(report, dict):
        raise spec.ParseError("fio's JSON report is not an object")
    return report


def _fio_parse(outputs, params) -> spec.Parsed:
    report = _fio_report(outputs.get("measure", ""))
    jobs = report.get("jobs")
    if not isinstance(jobs, list) or not jobs or not isinstance(jobs[0], dict):
        raise spec.ParseError("fio's report has no job")
    job = jobs[0]
    side = job.get("write" if "write" in params["pattern"] else "read")
    if not isinstance(side, dict):
        raise spec.ParseError(f"fio's job has no {params['pattern']} figures")
    if job.get("error"):
        raise spec.ParseError(f"fio's job ended with error {job.get('error')!r}")
    bandwidth = finite(side.get("bw_bytes"), "fio's bw_bytes")
    iops = finite(side.get("iops"), "fio's iops")
    return spec.Parsed(
        values={
            "throughput": positive(bandwidth / 1e6, "fio throughput"),
            "iops": positive(iops, "fio IOPS"),
        },
        details={
            "tool_version": str(report.get("fio version", "")),
            "io_bytes": side.get("io_bytes"),
            "runtime_ms": side.get("runtime"),
        },
    )


FIO = spec.Benchmark(
    name="fio",
    title="fio",
    description="A short fio job (psync engine, one file of its own): sequential or random, "
    "read or write, buffered or direct; MB/s (10^6 bytes) and IOPS. The page cache is "
    "dropped for the file before the job, and writes end with an fsync.",
    version=1,
    category="storage",
    params=(
        _DIRECTORY,
        spec.Param("pattern", "choice", "randread", "access pattern", choices=FIO_PATTERNS),
        spec.Param("block_size", "size", "4K", "block size", min=512, max=64 * 1024**2),
        spec.Param("size", "size", "64M", "file size", min=1024**2, max=64 * 1024**3),
        spec.Param("seconds", "int", 10, "run time (s)", min=1, max=600),
        spec.Param("direct", "bool", False, "O_DIRECT (not on a RAM disk: tmpfs refuses it)"),
    ),
    metrics=(
        spec.Metric("throughput", "MB/s", True, "throughput"),
        spec.Metric("iops", "IOPS", True, "operations per second"),
    ),
    plan=_fio_plan,
    parse=_fio_parse,
    tools=("fio",),
    packages=("fio",),
    timeout_s=900,
    length_param="seconds",
)

BENCHMARKS = (DD, FIO)
