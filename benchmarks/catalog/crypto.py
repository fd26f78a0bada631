"""Crypto benchmarks: openssl speed on one algorithm, read from its machine-readable output."""

import re

from benchmarks.catalog import spec
from benchmarks.catalog.parsing import finite, first_line, positive

# Names as `openssl speed -evp` takes them (OpenSSL 1.1.1 and 3.x); all are block-size based,
# so one throughput figure describes each. Public-key speeds (rsa2048) count operations, not
# bytes: they would be a benchmark of their own.
OPENSSL_ALGORITHMS = (
    "aes-128-gcm",
    "aes-256-gcm",
    "aes-128-cbc",
    "aes-256-cbc",
    "chacha20-poly1305",
    "sha256",
    "sha512",
    "sha1",
    "md5",
)
OPENSSL_BLOCK_SIZES = ("16", "64", "256", "1024", "8192", "16384")

# -mr output on stdout: "+H:16:64:…" gives the block sizes, then one line per algorithm,
# "+F:<index>:<name>:<bytes per second at each size>…".
_HEADER = re.compile(r"^\+H((?::\d{1,9})+)\s*$", re.MULTILINE)
_ROW = re.compile(r"^\+F:\d{1,4}:([^:\n]+)((?::[^:\n]*)+)$", re.MULTILINE)


def _openssl_speed_plan(params: dict, ctx: spec.Context) -> spec.Plan:
    return spec.Plan(
        measure=spec.Command(
            "board",
            (
                "openssl",
                "speed",
                "-mr",
                "-seconds",
                str(params["seconds"]),
                "-bytes",
                params["block_size"],
                "-evp",
                params["algorithm"],
            ),
            timeout_s=params["seconds"] + 30,
        ),
        collect=(spec.Command("board", ("openssl", "version"), name="version"),),
    )


def mr_table(text: str) -> dict[str, dict[int, float]]:
    """Every +F row under its +H header: algorithm -> block size -> bytes per second."""
    header = _HEADER.search(text)
    if not header:
        raise spec.ParseError("no '+H:' line (block sizes) in openssl speed -mr output")
    sizes = [int(size) for size in header.group(1).split(":")[1:]]
    table = {}
    for row in _ROW.finditer(text, header.end()):
        rates = row.group(2).split(":")[1:]
        if len(rates) != len(sizes):
            raise spec.ParseError(
                f"the +F line of {row.group(1)} has {len(rates)} figures for "
                f"{len(sizes)} block sizes"
            )
        table[row.group(1)] = {
            size: finite(rate, f"{row.group(1)} at {size} bytes")
            for size, rate in zip(sizes, rates, strict=True)
        }
    return table


def _openssl_speed_parse(outputs, params) -> spec.Parsed:
    table = mr_table(outputs.get("measure", ""))
    algorithm, size = params["algorithm"], int(params["block_size"])
    # openssl prints its own spelling (AES-128-GCM, ChaCha20-Poly1305), so compare loosely
    rates = next((v for name, v in table.items() if name.lower() == algorithm.lower()), None)
    if rates is None:
        raise spec.ParseError(f"no +F line for {algorithm} (found: {', '.join(table) or 'none'})")
    if size not in rates:
        raise spec.ParseError(f"no figure for {size}-byte blocks (found: {sorted(rates)})")
    return spec.Parsed(
        values={"throughput": positive(rates[size] / 1e6, f"{algorithm} throughput")},
        details={
            "tool_version": first_line(outputs.get("version", ""), r"^\S+ \S+"),
            "table_bytes_per_second": {
                name: {str(k): v for k, v in row.items()} for name, row in table.items()
            },
        },
    )


OPENSSL_SPEED = spec.Benchmark(
    name="openssl-speed",
    title="openssl speed",
    description="OpenSSL's own benchmark (EVP interface, so hardware acceleration counts) "
    "for one cipher or digest at one block size, in MB/s (10^6 bytes per second).",
    version=1,
    category="crypto",
    params=(
        spec.Param(
            "algorithm", "choice", "aes-128-gcm", "cipher or digest", choices=OPENSSL_ALGORITHMS
        ),
        spec.Param(
            "block_size", "choice", "16384", "bytes per operation", choices=OPENSSL_BLOCK_SIZES
        ),
        spec.Param("seconds", "int", 3, "run time (s)", min=1, max=60),
    ),
    metrics=(spec.Metric("throughput", "MB/s", True, "bytes processed per second"),),
    plan=_openssl_speed_plan,
    parse=_openssl_speed_parse,
    tools=("openssl",),
    packages=("openssl",),
    timeout_s=90,
    length_param="seconds",
)

BENCHMARKS = (OPENSSL_SPEED,)
