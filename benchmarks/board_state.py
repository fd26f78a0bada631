"""A board's state around a campaign's lane: what it ran before the lane's first run, putting
it back at the lane's end (unless the spec says "keep"), and applying a preset with the lane's
lock held, through the one application path (devices.apply)."""

import logging

from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks.models import Lane
from devices import apply, presets, work
from devices.board_tasks import clean_for_db
from devices.models import Application, PresetVersion

log = logging.getLogger(__name__)


def note_before(lane: Lane) -> None:
    """At the lane's first run, whatever its preset: what the board ran until then."""
    if lane.before:
        return
    last = lane.board.current_application
    probe = lane.board.latest_snapshot
    lane.before = {
        "version_id": last.version_id if last else None,
        "words": str(last.version) if last else "no preset of pifarm's: its own config.txt",
        "governor": probe.facts.get("governor") if probe else None,
    }
    Lane.objects.filter(pk=lane.pk).update(before=lane.before)


def before(lane: Lane) -> PresetVersion | None:
    """The version to apply so that the board is back in its state before the campaign: the
    one it had verified, or stock (no managed block: the board's own config.txt) when it had
    none. None when it is in that state as far as its applications tell (since the lane began,
    another campaign's may have changed it)."""
    if not lane.before:
        return None
    wanted = lane.before.get("version_id")
    last = lane.board.current_application
    now = last.version_id if last else None
    if now == wanted:
        return None
    if wanted is not None:
        return PresetVersion.objects.select_related("preset").get(pk=wanted)
    stock = presets.stock_version()
    return None if now == stock.pk else stock


def apply_version(lane: Lane, version: PresetVersion, hold: work.Hold) -> Application | None:
    """Apply version to the lane's board with the lane's lock held, through the one
    application path (devices.apply). IntegrityError: someone's own application waits."""
    with transaction.atomic():
        application = Application.objects.create(
            board=lane.board,
            version=version,
            mode=lane.campaign.spec.get("apply_mode", Application.Mode.TRIAL),
            requested_by=lane.campaign.created_by,
        )
    with hold.longer(work.lock_ttl(apply.longest_step_s())):  # a reboot goes long
        return apply.apply_holding(application, hold)


def leave_as_found(lane: Lane, hold: work.Hold) -> None:
    """At the lane's end (done, cancelled or failed): the board gets back its state before
    the campaign, unless the spec says "keep". What happened is kept in the lane's `left`."""
    if not lane.before:  # no run of the lane began: nothing of it touched the board
        return
    if lane.campaign.spec.get("keep"):
        last = lane.board.current_application
        kept = last.version if last else "no preset of pifarm's"
        left = f"kept as the campaign left it (keep): {kept}"
    elif (version := before(lane)) is None:
        left = f"as before the campaign: {lane.before['words']}"
    else:
        words = f"putting back {version} (the state before the campaign)"
        log.info("lane %s: %s", lane.pk, words)
        Lane.objects.filter(pk=lane.pk).update(step=words, heartbeat=timezone.now())
        try:
            application = apply_version(lane, version, hold)
        except IntegrityError:
            application = None
            left = "not put back: an application someone queued for the board goes first"
        else:
            if application is not None and application.state == Application.State.VERIFIED:
                left = f"put back as before the campaign: {version}"
                governor = lane.before.get("governor")
                if version.governor and governor and governor != version.governor:
                    # A board of no preset of pifarm's gets stock, whose governor is ondemand:
                    # one set by hand before is not pifarm's to know how to set again.
                    left += (
                        f", but its governor was {governor} before the campaign and is "
                        f"{version.governor} now"
                    )
            else:
                outcome = application.reason if application else "it was not started"
                left = f"could not be put back to {version}: {outcome}"
    Lane.objects.filter(pk=lane.pk).update(step="", left=clean_for_db(left))
