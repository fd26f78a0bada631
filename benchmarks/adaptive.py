"""After each run: a suspect run done again once, and adaptive repetitions.

Adaptive repetitions add trials to a group (one board, preset version, benchmark and
parameters) until the 95 % confidence interval of its first metric is within target_pct of
the mean, or until it has the trials that a change of resolve_pct needs to be seen at its
relative SD (stats.trials_needed), never past the maximum, and never past the time budget:
the cap is a cap.
"""

import logging

from django.db import IntegrityError, transaction
from django.db.models import Max

from benchmarks.catalog.spec import Benchmark
from benchmarks.models import Campaign, Measurement, Run
from benchmarks.plans import GROUP_GAP, REPETITION_GAP
from benchmarks.stats import describe, trials_needed

log = logging.getLogger(__name__)


def after_run(run: Run, benchmark: Benchmark, *, suspect: bool) -> None:
    spec = run.campaign.spec
    repetitions = spec.get("repetitions")
    adaptive = isinstance(repetitions, dict)
    room = not adaptive or group(run).count() < repetitions["max"]
    if suspect and spec.get("rerun_suspect") and run.rerun_of_id is None and room:
        _add(run, sequence=run.sequence + 1, rerun_of=run)
    if adaptive:
        decided = _maybe_one_more(run, benchmark, repetitions)
        log.info("run %s, adaptive repetitions: %s", run.pk, decided)


def group(run: Run):
    return Run.objects.filter(
        lane_id=run.lane_id,
        preset_version_id=run.preset_version_id,
        benchmark=run.benchmark,
        params=run.params,
    )


def _maybe_one_more(run: Run, benchmark: Benchmark, repetitions: dict) -> str:
    """Add a trial if the group needs one; what was decided, in words."""
    runs = group(run)
    if runs.filter(state__in=Run.UNFINISHED).exclude(pk=run.pk).exists():
        return "more trials are queued"
    if runs.count() >= repetitions["max"]:
        return f"reached the maximum of {repetitions['max']} trials"
    values = list(
        Measurement.objects.filter(
            run__in=runs.filter(state=Run.State.DONE, suspect=False),
            metric=benchmark.metrics[0].name,
        ).values_list("value", flat=True)
    )
    if len(values) >= repetitions["min"]:
        found = describe(values)
        width, target = found.relative_half_width, repetitions.get("target_pct")
        if width is not None and target is not None and width * 100 <= target:
            return f"the 95 % CI is within {width * 100:.1f} % of the mean"
        resolve = repetitions.get("resolve_pct")
        needed = resolve and trials_needed(found.relative_sd, resolve / 100)
        if needed and len(values) >= needed:
            return (
                f"{len(values)} trials can see a change of {resolve:g} % at a relative SD of "
                f"{found.relative_sd * 100:.2f} % (about {needed} needed)"
            )
    budget = repetitions.get("budget_s")
    if budget:
        spent = sum(r.duration_s or 0 for r in runs.filter(state__in=Run.ENDED))
        one_more = spent / max(1, runs.filter(state__in=Run.ENDED).count())
        if spent + one_more > budget:
            return f"the time budget of {budget:g} s would be exceeded"
    preset_group = run.sequence // GROUP_GAP * GROUP_GAP
    last = Run.objects.filter(
        lane_id=run.lane_id, sequence__gte=preset_group, sequence__lt=preset_group + GROUP_GAP
    ).aggregate(last=Max("sequence"))["last"]
    repetition = runs.aggregate(r=Max("repetition"))["r"] + 1
    if not _add(run, sequence=last + REPETITION_GAP, repetition=repetition):
        return "the campaign was cancelled"
    return "added a trial"


def _add(run: Run, *, sequence: int, repetition: int | None = None, rerun_of=None) -> bool:
    """Queue a trial after run, unless its campaign is no longer running. False: not added."""
    try:
        with transaction.atomic():
            # Under the campaign's row lock, which cancel() takes too (its first write): a
            # cancel either comes first and is seen here, or waits and cancels this trial.
            state = (
                Campaign.objects.select_for_update()
                .values_list("state", flat=True)
                .get(pk=run.campaign_id)
            )
            if state != Campaign.State.RUNNING:
                return False
            Run.objects.create(
                campaign_id=run.campaign_id,
                lane_id=run.lane_id,
                board_id=run.board_id,
                sequence=sequence,
                preset_version_id=run.preset_version_id,
                benchmark=run.benchmark,
                definition_version=run.definition_version,
                params=run.params,
                repetition=repetition or run.repetition,
                rerun_of=rerun_of,
            )
    except IntegrityError:  # that place in the lane is taken (a retry came first): skip it
        pass
    return True
