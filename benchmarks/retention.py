"""Keeping what matters for as long as it matters: finished campaigns archived or deleted by an
admin, and old runs' raw telemetry removed after PIFARM_TELEMETRY_DAYS (their measurements,
raw output and what they ran with stay).

An archived campaign leaves the lists and comparisons keep it; a share of a comparison that
shows one answers 410 until it is restored. A deleted campaign takes its lanes, runs and
measurements with it (the admin lists them before it asks); comparisons that showed it are
marked withdrawn, and their share links answer 410 for good.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone

from benchmarks.models import Campaign, Comparison, Run

REMOVE_BATCH = 500  # runs a pass empties in one UPDATE


def archive(campaigns) -> int:
    """Archive the finished ones; how many."""
    return campaigns.filter(finished__isnull=False, archived__isnull=True).update(
        archived=timezone.now()
    )


def restore(campaigns) -> int:
    return campaigns.filter(archived__isnull=False).update(archived=None)


def comparisons_showing(campaigns):
    """The saved comparisons that show any of campaigns (chosen whole, or runs of them)."""
    return Comparison.objects.filter(
        Q(campaigns__in=campaigns) | Q(runs__campaign__in=campaigns)
    ).distinct()


@receiver(pre_delete, sender=Campaign, dispatch_uid="benchmarks.retention.withdraw")
def withdraw_comparisons(sender, instance: Campaign, **kwargs) -> None:
    """Before a campaign goes, every comparison that showed it is marked withdrawn."""
    # No name: the words reach a share page, whose reader sees no campaign's name.
    why = f"a campaign it showed was deleted on {timezone.localtime():%Y-%m-%d %H:%M}"
    showing = comparisons_showing([instance]).values("pk")
    Comparison.objects.filter(pk__in=showing).update(withdrawn=why)


def gone_why(comparison: Comparison) -> str:
    """Why a share of comparison answers 410 for what it shows, or "" when it may be shown;
    without the campaign's name (a share page's reader is told no names)."""
    if comparison.withdrawn:
        return f"This comparison's data is gone: {comparison.withdrawn}."
    archived = (
        Campaign.objects.filter(archived__isnull=False)
        .filter(Q(pk__in=comparison.campaigns.values("pk")) | Q(runs__in=comparison.runs.all()))
        .first()
    )
    if archived is not None:
        when = timezone.localtime(archived.archived)
        return (
            f"A campaign this comparison shows was archived on {when:%Y-%m-%d %H:%M}: it is "
            "not shared while archived."
        )
    return ""


def remove_old_telemetry(now: datetime | None = None) -> int:
    """Empty the telemetry of runs that finished more than PIFARM_TELEMETRY_DAYS ago (0: keep
    it all); how many runs. A batch at a time, so no pass holds a long lock."""
    days = settings.PIFARM_TELEMETRY_DAYS
    if not days:
        return 0
    now = now or timezone.now()
    old = Run.objects.filter(
        finished__lt=now - timedelta(days=days), telemetry_removed__isnull=True
    )
    removed = 0
    while batch := list(old.values_list("pk", flat=True)[:REMOVE_BATCH]):
        removed += Run.objects.filter(pk__in=batch).update(
            telemetry=[], peer_telemetry=[], telemetry_removed=now
        )
    return removed
