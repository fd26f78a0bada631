"""Telling people: a campaign finished, a board needs attention or drifted, a canary failed.

Each admin-set NotificationTarget names the events it wants; apprise carries the message
(e-mail, webhooks, Matrix, Slack...). Each delivery is an RQ job of its own, retried with
backoff: a target that is down is logged (by its name: its URL may hold a token) and tried
again, and never fails what it tells of. A message holds names, figures and a link, with
addresses and user names taken out (the API's Redactor); never a secret.
"""

import logging

import apprise
import django_rq
from django.conf import settings
from django.db.models import Count
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Retry

from benchmarks import answers, canaries
from benchmarks.api.redact import Redactor
from benchmarks.models import Campaign, Drift, NotificationTarget, Run
from devices.models import Board

log = logging.getLogger(__name__)

Event = NotificationTarget.Event
QUEUE = "default"
RETRY_INTERVALS_S = [10, 60, 300, 900]  # then it is given up, and logged so
TITLE_CHARS = 120
BODY_CHARS = 2000


class Undelivered(Exception):
    """apprise could not deliver: RQ tries the job again (its Retry)."""


def tell(event: str, title: str, body: str, path: str = "") -> int:
    """Queue the message for each target that wants the event; how many. The text is
    redacted and cut here, before it goes anywhere; path (a page's) becomes a link."""
    redactor = Redactor(users_alone=True)
    title = redactor.text(title)[:TITLE_CHARS]
    body = redactor.text(body)[:BODY_CHARS]
    if path:
        body += f"\n{settings.PIFARM_SITE_URL.rstrip('/')}{path}"
    return sum(queue(target, title, body) for target in _wanted(event))


def _wanted(event: str) -> list[NotificationTarget]:
    """The enabled targets that want event (a few rows: their events are read here)."""
    return [t for t in NotificationTarget.objects.filter(enabled=True) if t.wants(event)]


def queue(target: NotificationTarget, title: str, body: str) -> bool:
    """One message's delivery job, retried with backoff; False when Redis cannot take it."""
    try:
        django_rq.get_queue(QUEUE, commit_mode="auto").enqueue(
            deliver,
            target.pk,
            title,
            body,
            retry=Retry(max=len(RETRY_INTERVALS_S), interval=RETRY_INTERVALS_S),
            description=f"notify {target.name}",
            job_timeout=60,
        )
    except RedisError as exc:
        log.error("notification to %s not queued (Redis: %s): %s", target.name, exc, title)
        return False
    return True


def deliver(target_pk: int, title: str, body: str) -> str:
    """The RQ job of one message to one target."""
    target = NotificationTarget.objects.filter(pk=target_pk, enabled=True).first()
    if target is None:
        return "the target was removed or disabled since"
    sender = apprise.Apprise()
    if not sender.add(target.url()):  # checked when saved; an apprise upgrade may differ
        _failed(target, "apprise does not understand the target's URL any more")
        return "not sent: the URL is not one apprise understands"
    # As text: apprise would pass markup through to an HTML e-mail or a Slack message, and
    # names and reasons are anyone's words (a board's kernel string, a campaign's name).
    if not sender.notify(title=title, body=body, body_format=apprise.NotifyFormat.TEXT):
        _failed(target, f"apprise could not deliver “{title[:60]}”; it is tried again")
        raise Undelivered(f"{target.name}: not delivered")
    NotificationTarget.objects.filter(pk=target.pk).update(last_sent=timezone.now(), last_error="")
    return "sent"


def _failed(target: NotificationTarget, words: str) -> None:
    log.warning("notification to %s failed: %s", target.name, words)
    NotificationTarget.objects.filter(pk=target.pk).update(last_error=words[:300])


# ---- what each event says (receivers of benchmarks.events and devices.events) ----------


def campaign_finished(sender, campaign: Campaign, **kwargs) -> None:
    if canaries.board_of(campaign) is not None:
        return  # a canary tells of itself: when it drifted or failed
    if not _wanted(Event.CAMPAIGN_FINISHED):
        return  # the answer below is a comparison's work: not done for nobody
    counts = campaign.runs.order_by("state").values_list("state").annotate(n=Count("pk"))
    words = ", ".join(f"{count} {state}" for state, count in counts)
    body = f"Its runs: {words or 'none'}."
    if campaign.spec.get("question"):
        body += f"\n{answers.answer(campaign).sentence}"
    tell(
        Event.CAMPAIGN_FINISHED,
        f"pifarm: {campaign.name} finished",
        body,
        campaign.get_absolute_url(),
    )


def board_needs_attention(sender, board_id: int, reason: str, **kwargs) -> None:
    board = Board.objects.get(pk=board_id)
    tell(
        Event.BOARD_ATTENTION,
        f"pifarm: {board.name} needs attention",
        f"{board.name} needs attention: {reason}",
        board.get_absolute_url(),
    )


def board_drifted(sender, drift: Drift, **kwargs) -> None:
    since = timezone.localtime(drift.since)
    changed = "; ".join(
        f"{item['what']} {item['before']} → {item['after']}" for item in drift.changed
    )
    tell(
        Event.BOARD_DRIFTED,
        f"pifarm: {drift.board.name} drifted",
        f"{drift.board.name} drifted since {since:%Y-%m-%d %H:%M}: its canary's "
        f"{drift.benchmark} {drift.metric} changed {drift.change} "
        f"({drift.reference_mean:.4g} → {drift.mean_since:.4g} {drift.unit}). "
        + (f"Changed then: {changed}." if changed else "Nothing pifarm records changed then."),
        drift.board.get_absolute_url(),
    )


def canary_failed(sender, board: Board, campaign: Campaign, **kwargs) -> None:
    failed = campaign.runs.filter(state__in=[Run.State.FAILED, Run.State.SKIPPED])
    first = failed.order_by("sequence").first()
    if first is None:
        return
    tell(
        Event.CANARY_FAILED,
        f"pifarm: the canary of {board.name} failed",
        f"{failed.count()} of {campaign.runs.count()} runs of the canary of {board.name} did "
        f"not finish: {first.reason}",
        campaign.get_absolute_url(),
    )
