"""A campaign's runs as a results table: the page's rows and the CSV's, with the same columns.

Board output (an OS name, a reason, a tool's version line) is untrusted text: the page escapes
it, and the CSV defuses a cell that a spreadsheet would read as a formula. No column holds a
secret: credentials live on Board, which only the board's name comes from.
"""

import csv
import json
import uuid
from collections import defaultdict
from collections.abc import Iterator
from itertools import islice

from django.db.models import Prefetch, Q
from django.utils.text import slugify

from benchmarks.models import Campaign, Measurement, Run

CSV_COLUMNS = [
    "run", "board", "preset", "benchmark", "definition_version", "params", "repetition",
    "state", "reason", "suspect", "suspect_reasons", "kernel_bits", "userland_bits", "os",
    "tool_version", "peer", "measure_s", "started", "finished",
]  # fmt: skip
# The table's order, the same on every page: each lane's runs in the order they run. A
# campaign's lanes never share a board name: its boards were all in service when it started.
TABLE_ORDER = ("board__name", "sequence")
# Runs the CSV reads at a time, and their values in one query more.
CSV_CHUNK = 500
# The keys of a run's details where parsers keep a tool's version line: a tool's own, iperf3's,
# and for the C benchmarks built on the board (intloop, membw) the compiler's. Comparisons
# read the same keys (comparisons._TOOL_VERSION).
TOOL_VERSION_KEYS = ("tool_version", "iperf3_version", "compiler")
# What a spreadsheet starts a formula with (OWASP's list for CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


# What a run keeps that no row shows: its output (up to 256 KiB), a sample a second from each
# end, and the whole probe of the board; read for each row, they would make a campaign of
# thousands of runs slow to show and to download.
_NOT_IN_A_ROW = ("raw_output", "telemetry", "peer_telemetry", "environment", "snapshot__facts")


def runs_of(campaign: Campaign):
    """Every run with what its row shows, in the order the lanes run them."""
    return (
        campaign.runs.select_related("board", "preset_version__preset", "snapshot")
        .defer(*_NOT_IN_A_ROW)
        .prefetch_related(Prefetch("measurements", queryset=Measurement.objects.order_by("metric")))
        .order_by(*TABLE_ORDER)
    )


def position_of(run: Run) -> int:
    """How many rows come before run's in its campaign's table."""
    name = run.board.name
    return run.campaign.runs.filter(
        Q(board__name__lt=name) | Q(board__name=name, sequence__lt=run.sequence)
    ).count()


def params_text(params: dict) -> str:
    return ", ".join(f"{key}={value_text(value)}" for key, value in sorted(params.items()))


def value_text(value) -> str:
    """A parameter's value as the pages write it: lists joined with +, booleans on/off."""
    if isinstance(value, list):
        return "+".join(str(item) for item in value)
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def main_tool_version(details: dict) -> str:
    """The version line of the run's tool, for Run.tool_version ("" when none was kept)."""
    found = next((str(details[key]) for key in TOOL_VERSION_KEYS if details.get(key)), "")
    return found[: Run.VERSION_CHARS]


def clock_under_load(summary: dict) -> float | None:
    """The median Arm clock under load of a telemetry summary (telemetry.summarize), for
    Run.clock_mhz; None when it was never read under load."""
    return (summary.get("arm_mhz_under_load") or {}).get("median")


def tool_version(run: Run) -> str:
    """The version lines a parser kept (under TOOL_VERSION_KEYS), joined."""
    found = [str(run.details[key]) for key in TOOL_VERSION_KEYS if run.details.get(key)]
    return "; ".join(found)


def bits(run: Run) -> tuple[int | None, int | None]:
    snapshot = run.snapshot
    return (snapshot.kernel_bits, snapshot.userland_bits) if snapshot else (None, None)


def metric_columns(campaign: Campaign) -> list[tuple[str, str]]:
    """(metric, unit) of every value measured in the campaign, by name."""
    rows = Measurement.objects.filter(run__campaign=campaign).values_list("metric", "unit")
    return sorted(set(rows))


def csv_filename(campaign: Campaign) -> str:
    """Letters, digits and dashes only: the name is the user's, the header must stay one."""
    name = slugify(campaign.name)[:60] or "campaign"
    return f"{name}-{str(campaign.code)[:8]}-runs.csv"


class _Echo:
    """A file whose write() returns what it was given: csv.writer then makes one line a call."""

    def write(self, text: str) -> str:
        return text


def csv_lines(campaign: Campaign) -> Iterator[str]:
    """The CSV, a line at a time: a campaign's 20,000 runs are never all in memory. Runs are
    read CSV_CHUNK at a time, their values with them as plain tuples (prefetched measurements
    and their runs refer to each other, and such cycles stay in memory until a full garbage
    collection, chunk after chunk)."""
    metrics = metric_columns(campaign)
    writer = csv_writer(_Echo())
    header = CSV_COLUMNS + [f"{metric} [{unit}]" for metric, unit in metrics]
    yield writer.writerow([defused(cell) for cell in header])  # units and metrics: admins' words
    runs = runs_of(campaign).prefetch_related(None).iterator(chunk_size=CSV_CHUNK)
    while chunk := list(islice(runs, CSV_CHUNK)):
        values = defaultdict(dict)
        measured = Measurement.objects.filter(run__in=[run.pk for run in chunk]).values_list(
            "run_id", "metric", "unit", "value"
        )
        for run_id, metric, unit, value in measured:
            values[run_id][metric, unit] = value
        for run in chunk:
            row = _csv_cells(run) + [values[run.pk].get(column, "") for column in metrics]
            yield writer.writerow([defused(cell) for cell in row])


def as_json(campaign: Campaign) -> list[dict]:
    """The same table for scripts: the CSV's columns, and "values" {metric: {value, unit}}."""
    table = []
    for run in runs_of(campaign):
        row = dict(zip(CSV_COLUMNS, _csv_cells(run), strict=True))
        row["run"] = str(row["run"])
        row["params"] = run.params
        row["suspect_reasons"] = run.suspect_reasons
        row["values"] = {
            m.metric: {"value": m.value, "unit": m.unit} for m in run.measurements.all()
        }
        table.append(row)
    return table


def _csv_cells(run: Run) -> list:
    kernel_bits, userland_bits = bits(run)
    return [
        run.code,
        run.board.name,
        run.preset_label,
        run.benchmark,
        run.definition_version,
        json.dumps(run.params, sort_keys=True),
        run.repetition,
        run.state,
        run.reason,
        run.suspect,
        "; ".join(run.suspect_reasons),
        kernel_bits or "",
        userland_bits or "",
        run.snapshot.os_name if run.snapshot else "",
        tool_version(run),
        run.peer,
        "" if run.measure_s is None else run.measure_s,
        run.started.isoformat() if run.started else "",
        run.finished.isoformat() if run.finished else "",
    ]


def csv_writer(out):
    """How pifarm writes every CSV: each text cell quoted, so that a spreadsheet splitting on
    ";" or a tab keeps it one cell, and numbers bare; cells go through defused() first."""
    return csv.writer(out, quoting=csv.QUOTE_NONNUMERIC)


def defused(cell):
    """Text that a spreadsheet would run as a formula gets a leading quote; numbers stay.
    A bool is written as JSON writes it, quoted: bare, Python's "True" is taken for a number
    by a reader that converts unquoted cells (csv.QUOTE_NONNUMERIC) and fails there."""
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, uuid.UUID):  # text: the writer would take it for a number (__int__)
        cell = str(cell)
    if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS):
        return "'" + cell
    return cell
