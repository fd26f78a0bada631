"""7-Zip's built-in benchmark (LZMA compression and decompression ratings)."""

import re

from benchmarks.catalog import spec
from benchmarks.catalog.parsing import finite, positive

# $1 threads, $2 dictionary size (log2 bytes). Debian 12's 7zip package gives 7zz, the older
# p7zip-full gives 7z: the same benchmark, whichever the board has.
_SEVENZIP_BENCH = r"""
set -eu
if command -v 7zz > /dev/null; then tool=7zz; else tool=7z; fi
exec "$tool" b 1 "-mmt$1" "-md$2"
"""
# "7-Zip (z) 26.02 (x64) : …", "7-Zip [64] 16.02 : …", "7-Zip 22.01 (arm64) : …"
_VERSION = re.compile(r"^7-Zip\b[^:\n]*?(\d+\.\d+)", re.MULTILINE)
# "Avr:   8899   100   7960   7929  |   58254   100   4726   4711": the last figure of each
# half is the rating (MIPS); "Tot:   100   6343   6320": the last figure is the total rating.
_AVERAGE = re.compile(r"^Avr:([^|\n]*)\|([^\n]*)$", re.MULTILINE)
_TOTAL = re.compile(r"^Tot:([^\n]*)$", re.MULTILINE)


def _sevenzip_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    script = (
        "sh",
        "-c",
        _SEVENZIP_BENCH,
        "7zip-bench",
        str(params["threads"]),
        str(params["dictionary_log2"]),
    )
    return spec.Plan(measure=spec.Command("board", script, timeout_s=300))


def _last_figure(columns: str, what: str) -> float:
    figures = columns.split()
    if not figures:
        raise spec.ParseError(f"the {what} has no figures")
    return positive(finite(figures[-1], what), what)


def _sevenzip_parse(outputs, params) -> spec.Parsed:
    text = outputs.get("measure", "")
    average, total = _AVERAGE.search(text), _TOTAL.search(text)
    if not average or not total:
        raise spec.ParseError("no 'Avr:' and 'Tot:' lines in the output of 7-Zip's benchmark")
    version = _VERSION.search(text)
    return spec.Parsed(
        values={
            "compress_rating": _last_figure(average.group(1), "compressing rating"),
            "decompress_rating": _last_figure(average.group(2), "decompressing rating"),
            "total_rating": _last_figure(total.group(1), "total rating"),
        },
        # ratings are not comparable across 7-Zip versions: keep the version with the figures
        details={"tool_version": version.group(1) if version else ""},
    )


SEVENZIP = spec.Benchmark(
    name="7zip",
    title="7-Zip benchmark",
    description="7-Zip's built-in LZMA benchmark (7zz b, or 7z b where only p7zip is "
    "installed): compressing, decompressing and total ratings in MIPS. Ratings change "
    "between 7-Zip versions, so compare runs of one version.",
    version=1,
    category="cpu",
    params=(
        spec.Param("threads", "int", 1, "threads (-mmt)", min=1, max=64),
        spec.Param(
            "dictionary_log2", "int", 22, "dictionary size, log2 bytes (-md)", min=16, max=26
        ),
    ),
    metrics=(
        spec.Metric("compress_rating", "MIPS", True, "compressing rating"),
        spec.Metric("decompress_rating", "MIPS", True, "decompressing rating"),
        spec.Metric("total_rating", "MIPS", True, "total rating"),
    ),
    plan=_sevenzip_plan,
    parse=_sevenzip_parse,
    tools=("7zz|7z",),  # either 7-Zip: the Debian package 7zip, or p7zip-full
    packages=("7zip",),
    timeout_s=300,
)

BENCHMARKS = (SEVENZIP,)
