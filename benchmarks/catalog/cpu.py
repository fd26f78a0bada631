"""CPU and hashing benchmarks."""

import re

from benchmarks.catalog.spec import (
    Benchmark,
    Command,
    Context,
    Metric,
    Param,
    Parsed,
    ParseError,
    Plan,
    parse_size,
)

# $1 file, $2 size. Times the tool on the board itself (no SSH round trip in the figure).
_TIMED_SHA1SUM = r"""
set -eu
start=$(date +%s%N)
sum=$(sha1sum -- "$1")
end=$(date +%s%N)
echo "bytes=$2 ns=$((end - start)) sum=${sum%% *}"
"""
_SHA1SUM_LINE = re.compile(r"bytes=(\d+) ns=(\d+) sum=([0-9a-f]{40})")


def _sha1sum_plan(params: dict, ctx: Context) -> Plan:
    path = f"{ctx.workdir}/sparse"
    size = parse_size(params["size"])
    return Plan(
        setup=(Command("board", ("truncate", "-s", str(size), "--", path)),),
        measure=Command(
            "board", ("sh", "-c", _TIMED_SHA1SUM, "sha1sum", path, str(size)), timeout_s=600
        ),  # fmt: skip
        teardown=(Command("board", ("rm", "-f", "--", path)),),
    )


def _sha1sum_parse(outputs, params) -> Parsed:
    match = _SHA1SUM_LINE.search(outputs.get("measure", ""))
    if not match:
        raise ParseError("no 'bytes=… ns=… sum=…' line in the output of the timed sha1sum")
    size, nanoseconds = int(match.group(1)), int(match.group(2))
    if nanoseconds <= 0:
        raise ParseError(f"sha1sum took {nanoseconds} ns, which cannot be")
    seconds = nanoseconds / 1e9
    return Parsed(
        values={"throughput": size / seconds / 1e6, "seconds": seconds},
        details={"sha1": match.group(3), "bytes": size},
    )


SHA1SUM = Benchmark(
    name="sha1sum",
    title="sha1sum of a sparse file",
    description="Hashes a sparse file of the given size (zeros, never read from storage): "
    "a single-core CPU and memory-bus figure.",
    version=1,
    category="cpu",
    params=(Param("size", "size", "2G", "file size (K, M or G)", min=1, max=64 * 1024**3),),
    metrics=(
        Metric("throughput", "MB/s", True, "hashing speed"),
        Metric("seconds", "s", False, "time to hash the file"),
    ),
    plan=_sha1sum_plan,
    parse=_sha1sum_parse,
    tools=("sha1sum", "truncate"),
    packages=("coreutils",),
    repetitions=3,
    timeout_s=600,
    typical_s=8,
)

BENCHMARKS = (SHA1SUM,)
