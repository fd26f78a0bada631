"""Campaigns under way: started (written, then each lane queued after commit), cancelled,
retried, and finished once no run is left. The spec is checked by benchmarks.specs and its runs
planned by benchmarks.plans; each lane runs as board work (benchmarks.lanes, devices.work).
"""

import json
import time
from dataclasses import dataclass

import django_rq
from django.db import transaction
from django.db.models import Max
from django.template.defaultfilters import pluralize
from django.utils import timezone
from redis.exceptions import RedisError

from benchmarks import double_posts, events, plans
from benchmarks.models import CONTROLLER, Campaign, Lane, Run
from benchmarks.specs import check
from devices import work
from devices.events import send
from devices.models import Board

RETRY_BATCH = 500  # runs a retry copies in one transaction (a fraction of a second's lock)


# Between two batches: SQLite's busy handler polls a waiting writer's lock every 100 ms once it
# has waited a while, and would find batch after batch holding it.
RETRY_PAUSE_S = 0.1


# What a retry copies from the run it retries: the trial itself, where it runs.
_RETRIED_FIELDS = (
    "lane_id",
    "board_id",
    "preset_version_id",
    "benchmark",
    "definition_version",
    "params",
    "repetition",
)


def start(spec, user=None) -> Campaign:
    """Check, write the campaign with its lanes and runs, and queue every lane after commit."""
    checked = check(spec)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=checked.spec["name"],
            spec=checked.spec,
            order=checked.order,
            seed=checked.seed,
            created_by=user,
            estimated_s=plans.estimate_s(checked),
        )
        peer = checked.peer
        lanes = {}
        for board in checked.boards:
            lanes[board.pk] = Lane.objects.create(
                campaign=campaign,
                board=board,
                peer_board=peer if isinstance(peer, Board) else None,
                peer_is_controller=peer == CONTROLLER,
            )
        Run.objects.bulk_create(plans.expand(checked, campaign, lanes), batch_size=1000)
        for lane in lanes.values():
            work.queue(lane)
    return campaign


def start_once(spec, user) -> tuple[Campaign, bool]:
    """(start(spec), True), unless this user started this very spec (its seed included: the
    builder draws one with the form) a moment ago: then (that campaign, False)."""
    accepted = check(spec).spec
    return double_posts.made_once(
        user,
        Campaign.objects.filter(created_by=user),
        lambda campaign: campaign.spec == accepted,
        lambda: start(spec, user),
    )


def cancel_run(run: Run, user=None) -> bool:
    """A queued run ends at once; a running one is stopped by its job (remote processes too).
    False when the run had ended, or was being stopped already: nothing changed."""
    who = f" by {user}" if user else ""
    now = timezone.now()
    if Run.objects.filter(pk=run.pk, state=Run.State.QUEUED).update(
        state=Run.State.CANCELLED, reason=f"cancelled{who} before it started", finished=now
    ):
        finish_if_done(run.campaign_id)
        return True
    running = Run.objects.filter(pk=run.pk, state=Run.State.RUNNING, cancel_requested=False)
    return bool(running.update(cancel_requested=True))


@dataclass(frozen=True)
class Cancelled:
    """What a campaign's cancel did to its runs."""

    dropped: int  # queued: cancelled at once
    asked_to_stop: int  # running: their jobs stop them, but a measurement that ends first is kept
    stopping: int = 0  # running, and being stopped already (each run's own cancel)

    @property
    def words(self) -> str:
        parts = []
        if self.dropped:
            parts.append(f"{self.dropped} queued run{pluralize(self.dropped)} dropped")
        if self.asked_to_stop:
            count = self.asked_to_stop
            parts.append(
                f"{count} running run{pluralize(count)} asked to stop (a measurement that ends "
                "first is kept)"
            )
        if self.stopping:
            count = self.stopping
            parts.append(f"{count} running run{pluralize(count)} already being stopped")
        return "; ".join(parts) or "no run was queued or running"


def cancel(campaign: Campaign, user=None) -> Cancelled | None:
    """Its queued runs end at once, its running ones are stopped by their jobs. None when the
    campaign was not running any more (cancelled already, or finished): nothing changed
    (why_not_cancelled says why)."""
    who = f" by {user}" if user else ""
    now = timezone.now()
    with transaction.atomic():
        # First, so that of two cancels at once only one finds it running; and it locks the
        # campaign's row, under which adaptive trials are added (adaptive._add).
        if not Campaign.objects.filter(pk=campaign.pk, state=Campaign.State.RUNNING).update(
            state=Campaign.State.CANCELLED
        ):
            return None
        queued = campaign.runs.filter(state=Run.State.QUEUED).update(
            state=Run.State.CANCELLED, reason=f"the campaign was cancelled{who}", finished=now
        )
        # A run whose own cancel came first is being stopped already: not asked again.
        running = campaign.runs.filter(state=Run.State.RUNNING)
        stopping = running.filter(cancel_requested=True).count()
        asked = running.filter(cancel_requested=False).update(cancel_requested=True)
    finish_if_done(campaign.pk)
    return Cancelled(queued, asked, stopping)


def why_not_cancelled(campaign: Campaign) -> str:
    """What to tell whoever cancels a campaign that cancel() found no longer running."""
    stopping = campaign.runs.filter(state=Run.State.RUNNING).count()
    if stopping:
        return (
            f"{campaign.name} is already being cancelled: "
            f"{stopping} run{pluralize(stopping)} {pluralize(stopping, 'is,are')} still stopping."
        )
    state = Campaign.objects.values_list("state", flat=True).get(pk=campaign.pk)
    if state == Campaign.State.CANCELLED:
        return f"{campaign.name} was already cancelled and has ended: there is nothing to cancel."
    return f"{campaign.name} had already finished: there is nothing to cancel."


def why_run_not_cancelled(run: Run) -> str:
    """What to tell whoever cancels a run that cancel_run() left as it was."""
    run.refresh_from_db(fields=["state"])
    if run.state == Run.State.RUNNING:
        return f"{run} is already being stopped."
    return f"{run} has already ended ({run.get_state_display()}): there is nothing to cancel."


RETRY_JOB_TIMEOUT_S = 3600
_AGAIN = (Run.State.FAILED, Run.State.CANCELLED, Run.State.SKIPPED)


def _retry_key(campaign: Campaign) -> str:
    return f"pifarm:retrying:{campaign.code}"


def retryable(campaign: Campaign) -> int:
    """Runs a retry would run again: failed, cancelled or skipped, and not retried yet."""
    return campaign.runs.filter(state__in=_AGAIN, retries__isnull=True).count()


def start_retry(campaign: Campaign) -> tuple[int, bool]:
    """(runs to retry, whether a job does it). Up to RETRY_BATCH are retried at once, here; more
    (12,000 took 7 s inside the request) by a job, whose progress retrying() reads. A retry
    already under way is not started twice."""
    pending = retryable(campaign)
    if pending <= RETRY_BATCH:
        return retry_failed(campaign), False
    started = json.dumps({"done": 0, "total": pending})
    try:
        connection = django_rq.get_connection()
        if connection.set(_retry_key(campaign), started, nx=True, ex=RETRY_JOB_TIMEOUT_S):
            django_rq.get_queue("default").enqueue(
                retry_in_job, campaign.pk, job_timeout=RETRY_JOB_TIMEOUT_S
            )
    except RedisError:  # no job queue to hand it to: done here, however long it takes
        return retry_failed(campaign), False
    return pending, True


def retrying(campaign: Campaign) -> dict | None:
    """{"done": runs queued again so far, "total"} while a retry job works, else None."""
    try:
        found = django_rq.get_connection().get(_retry_key(campaign))
    except RedisError:
        return None
    return json.loads(found) if found else None


def retry_in_job(campaign_pk: int) -> int:
    """The RQ job of a large retry: retry_failed, saying how far it is after each batch."""
    campaign = Campaign.objects.get(pk=campaign_pk)
    connection, key = django_rq.get_connection(), _retry_key(campaign)
    total = json.loads(connection.get(key) or "{}").get("total", 0)
    try:
        return retry_failed(
            campaign,
            on_batch=lambda done: connection.set(
                key, json.dumps({"done": done, "total": total}), xx=True
            ),
        )
    finally:
        connection.delete(key)


def retry_failed(campaign: Campaign, on_batch=None) -> int:
    """A new queued run for each failed, cancelled or skipped one (kept as they are), at the
    end of its lane; lanes that had finished start again. 0 when none is left to retry:
    nothing changed, a finished campaign stays finished.

    RETRY_BATCH runs a transaction, each in a few statements (bulk_create): on SQLite a
    transaction holds the database's only write lock, and a retry of thousands of runs in one,
    a query or two per run, kept every other lane's writes waiting past the lock's timeout.
    Each batch re-reads its runs, so a retry cut short is finished by the next one."""
    pending = list(
        campaign.runs.filter(state__in=_AGAIN, retries__isnull=True)
        .order_by("lane", "sequence")
        .values_list("pk", flat=True)
    )
    copied = 0
    for start in range(0, len(pending), RETRY_BATCH):
        if start:
            time.sleep(RETRY_PAUSE_S)
        copied += _retry_batch(campaign, pending[start : start + RETRY_BATCH])
        if on_batch is not None:
            on_batch(copied)
    return copied


def _retry_batch(campaign: Campaign, run_pks: list[int]) -> int:
    """Retry those of run_pks that no retry has copied yet (another post of the button may
    have); queue their lanes again if they had ended."""
    with transaction.atomic():
        # One batch at a time per campaign, so two retries at once cannot both copy a run.
        list(Campaign.objects.select_for_update().filter(pk=campaign.pk).values("pk"))
        failed = list(
            Run.objects.filter(pk__in=run_pks, retries__isnull=True)
            .order_by("lane", "sequence")
            .values("pk", *_RETRIED_FIELDS)
        )
        if not failed:
            return 0
        lanes = {run["lane_id"] for run in failed}
        last = dict(
            Run.objects.filter(lane__in=lanes)
            .values("lane")
            .annotate(last=Max("sequence"))
            .values_list("lane", "last")
        )
        retries = []
        for run in failed:
            last[run["lane_id"]] += plans.REPETITION_GAP
            fields = {name: run[name] for name in _RETRIED_FIELDS}
            retries.append(
                Run(
                    campaign=campaign,
                    sequence=last[run["lane_id"]],
                    retry_of_id=run["pk"],
                    **fields,
                )
            )
        Run.objects.bulk_create(retries)
        Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.RUNNING, finished=None)
        # A lane may have run the batch before and ended again: each batch looks anew.
        ended = list(
            Lane.objects.filter(pk__in=lanes)
            .exclude(state__in=Lane.UNFINISHED)
            .select_related("board")
        )
        Lane.objects.filter(pk__in=[lane.pk for lane in ended]).update(
            state=Lane.State.QUEUED, finished=None, reason="", job_id=""
        )
        for lane in ended:
            work.queue(lane)
    return len(failed)


def finish_if_done(campaign_id: int) -> None:
    """A campaign is finished once no run is queued or running."""
    if Run.objects.filter(campaign_id=campaign_id, state__in=Run.UNFINISHED).exists():
        return
    ended = Campaign.objects.filter(pk=campaign_id, finished__isnull=True).update(
        finished=timezone.now()
    )
    Campaign.objects.filter(pk=campaign_id, state=Campaign.State.RUNNING).update(
        state=Campaign.State.FINISHED
    )
    if ended:  # once: of two lanes ending together, one finds it unfinished
        transaction.on_commit(lambda: _say_finished(campaign_id))


def _say_finished(campaign_id: int) -> None:
    send(events.campaign_finished, Campaign, campaign=Campaign.objects.get(pk=campaign_id))
