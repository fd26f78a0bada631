"""Each campaign's values summed up as its runs end, so that a comparison's cost does not grow
with its trials.

A Tally row holds the values of one metric of a campaign's done runs that share everything a
comparison groups or filters by (benchmark, parameters, board, suspect or not, probe, preset
version, tool version, configuration, link): their count, their sums around a reference value
(benchmarks.summaries), their least and greatest, the runs' clocks, and a uniform sample of up
to KEPT of them (reservoir sampling) for the charts. A run adds itself in the transaction that
records it (benchmarks.runner), and says so (Run.tallied). Runs written another way (an import,
a bulk load) are summed up by `catch_up`, and until then a comparison sums them up itself
(benchmarks.comparisons).
"""

import hashlib
import json
import random

from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks.models import Measurement, Run, Tally

KEPT = 300  # the trials a tally keeps for the charts: comparisons.POINTS_PER_GROUP

# What a run's values share in a tally, as Tally's fields, and where a run's row holds each.
CELL = {
    "campaign_id": "run__campaign_id",
    "benchmark": "run__benchmark",
    "params": "run__params",
    "metric": "metric",
    "unit": "unit",
    "higher_is_better": "higher_is_better",
    "board_id": "run__board_id",
    "suspect": "run__suspect",
    "snapshot_id": "run__snapshot_id",
    "preset_version_id": "run__preset_version_id",
    "tool_version": "run__tool_version",
    "config_fingerprint": "run__config_fingerprint",
    "link": "run__environment__link",
}
_EACH = ("value", "run__clock_mhz", "run_id")


def cell_of(shared: dict) -> str:
    """The cell a run's value falls in, from what it shares (CELL's fields), as a digest."""
    return hashlib.sha256(json.dumps(shared, sort_keys=True, default=str).encode()).hexdigest()


def add(run_id: int) -> None:
    """Add a done run's values to its campaign's tallies (inside the transaction that records
    it: both land, or neither)."""
    with transaction.atomic():
        _add([run_id])


def catch_up(runs=None) -> int:
    """Add the done runs that are in no tally yet (of runs, a Run queryset, or all): after
    an import or a bulk load. How many were added."""
    pending = (runs if runs is not None else Run.objects).filter(
        state=Run.State.DONE, tallied__isnull=True
    )
    added = 0
    while ids := list(pending.order_by("pk").values_list("pk", flat=True)[:2000]):
        with transaction.atomic():
            added += _add(ids)
    return added


def _add(run_ids: list[int]) -> int:
    """Count the runs' values into their tallies, each run once: a run is claimed (tallied set,
    where it was not and the run is done) before its values are read, so that two catch-ups, or
    a catch-up and a record, never count one run twice. How many were claimed."""
    now = timezone.now()
    claimed = [
        pk
        for pk in run_ids
        if Run.objects.filter(pk=pk, state=Run.State.DONE, tallied__isnull=True).update(tallied=now)
    ]
    measurements = Measurement.objects.filter(run_id__in=claimed).order_by()
    cells: dict[str, dict] = {}
    for row in measurements.values_list(*CELL.values(), *_EACH):
        shared = dict(zip(CELL, row[: len(CELL)], strict=True))
        shared["params"] = _decoded(shared["params"])
        shared["link"] = _decoded(shared["link"])
        value, clock, run = row[len(CELL) :]
        cells.setdefault(cell_of(shared), {"shared": shared, "trials": []})["trials"].append(
            (value, clock, run)
        )
    for cell, found in cells.items():
        tally = _locked(cell, found)
        for value, clock, run in found["trials"]:
            _count(tally, value, clock, run)
        tally.save()
    return len(claimed)


def _locked(cell: str, found: dict) -> Tally:
    """The cell's tally, locked for this transaction; made (empty) where there is none yet."""
    tally = Tally.objects.select_for_update().filter(cell=cell).first()
    if tally is not None:
        return tally
    first = found["trials"][0]
    try:
        with transaction.atomic():  # another transaction may make it first: then that one
            return Tally.objects.create(
                cell=cell,
                **found["shared"],
                n=0,
                reference=first[0],
                shifted=0.0,
                squares=0.0,
                low=first[0],
                high=first[0],
                first_run=first[2],
            )
    except IntegrityError:
        return Tally.objects.select_for_update().get(cell=cell)


def _count(tally: Tally, value: float, clock: float | None, run: int) -> None:
    tally.n += 1
    tally.shifted += value - tally.reference
    tally.squares += (value - tally.reference) ** 2
    tally.low, tally.high = min(tally.low, value), max(tally.high, value)
    tally.first_run = min(tally.first_run, run)
    if clock is not None:
        tally.clocks += 1
        tally.clock_low = clock if tally.clock_low is None else min(tally.clock_low, clock)
        tally.clock_high = clock if tally.clock_high is None else max(tally.clock_high, clock)
    # Algorithm R: the n-th trial takes a random one's place with probability KEPT / n.
    if len(tally.drawn) < KEPT:
        tally.drawn.append([value, clock, run])
    elif (slot := random.randrange(tally.n)) < KEPT:  # noqa: S311 - a sample, not a secret
        tally.drawn[slot] = [value, clock, run]


def _decoded(raw):
    """A JSON value as a raw row may hold it (its text, on some databases)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw
