"""Campaigns on a schedule: a spec with a "schedule" is started again and again.

    "schedule": {"cron": "0 3 * * *"}   five cron fields, in the site's time zone (TIME_ZONE)
    "schedule": {"every": "15m"}        seconds (a number, or "90s"), minutes, hours or days;
                                        the first start is at once

RQ's scheduler delivers each start: the workers run it (`rqworker --with-scheduler`), and a
schedule's next start is one job queued for its time (Queue.enqueue_at); that start queues the
one after. The database is the truth. `rearm` makes again, from the rows, any job Redis does
not hold (Redis restarted empty, a job lost): the worker does it as it starts, and so does
each healthcheck round. A start that comes due while the schedule's last campaign is still
running starts nothing and says so; one whose boards are busy waits as any campaign does.
"""

import logging
import re
from datetime import datetime, timedelta

import django_rq
from croniter import CroniterError, croniter
from django.db import IntegrityError, transaction
from django.utils import timezone
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from benchmarks import campaigns, double_posts, specs
from benchmarks.catalog.spec import shown
from benchmarks.models import Campaign, Schedule, ScheduledStart
from benchmarks.specs import SpecError

log = logging.getLogger(__name__)

QUEUE = "default"
MIN_EVERY_S = 30  # a short canary (the demo's) at most twice a minute
MAX_EVERY_S = 366 * 24 * 3600
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_ALIVE = {JobStatus.SCHEDULED, JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED}
_EVERY = re.compile(r" *([0-9]{1,9}) *([smhd]) *", re.ASCII)
# A standard cron field: numbers or three-letter names (JAN, MON), * , - and /.
_CRON_VALUE = r"(?:[0-9]{1,2}|[A-Za-z]{3})"
_CRON_ITEM = rf"(?:\*|{_CRON_VALUE}(?:-{_CRON_VALUE})?)(?:/[0-9]{{1,2}})?"
_CRON_FIELD = rf"{_CRON_ITEM}(?:,{_CRON_ITEM})*"
_CRON_FIELDS = re.compile(rf"[ \t]*{_CRON_FIELD}(?:[ \t]+{_CRON_FIELD}){{4}}[ \t]*", re.ASCII)


def split(spec) -> tuple[dict, dict | None]:
    """(the campaign spec without its schedule, the schedule checked), or None when it has
    none. SpecError names what is wrong with the schedule."""
    if not isinstance(spec, dict) or "schedule" not in spec:
        return spec, None
    rest = {key: value for key, value in spec.items() if key != "schedule"}
    return rest, check_timing(spec["schedule"])


def check_timing(value) -> dict:
    """{"cron": "..."} or {"every_s": seconds}: the one the schedule gives."""
    if not isinstance(value, dict) or len(value) != 1 or not {"cron", "every"} >= set(value):
        raise SpecError(
            'a schedule is {"cron": "0 3 * * *"} or {"every": "15m"}, one of the two',
            "schedule",
        )
    if "cron" in value:
        cron = value["cron"]
        if not isinstance(cron, str) or len(cron) > 120 or len(cron.split()) != 5:
            raise SpecError(
                f"cron is five fields (minute hour day month weekday), not {shown(cron)}",
                "schedule.cron",
            )
        # Five standard fields: numbers, names, * , - /; croniter's own extensions (R, L, W,
        # #, ?) are not cron's, and a random minute would move at each computation.
        if not _CRON_FIELDS.fullmatch(cron) or not croniter.is_valid(cron):
            raise SpecError(f"{shown(cron)} is not a cron schedule", "schedule.cron")
        try:
            croniter(cron, timezone.now()).get_next(datetime)
        except CroniterError:  # "0 0 31 2 *": valid, but no day ever matches
            raise SpecError(f"{shown(cron)} never comes due", "schedule.cron") from None
        return {"cron": " ".join(cron.split())}
    return {"every_s": _seconds(value["every"])}


def _seconds(value) -> int:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int | float):
        seconds = value
    elif isinstance(value, str) and (match := _EVERY.fullmatch(value)):
        seconds = int(match[1]) * _UNITS[match[2]]
    else:
        raise SpecError(
            f'every is a time such as "90s", "15m", "6h" or "1d", not {shown(value)}',
            "schedule.every",
        )
    if not MIN_EVERY_S <= seconds <= MAX_EVERY_S or seconds != int(seconds):
        raise SpecError(
            f"every is whole seconds from {MIN_EVERY_S} s to {MAX_EVERY_S // 86400} days, "
            f"not {shown(value)}",
            "schedule.every",
        )
    return int(seconds)


def timing_words(schedule: Schedule) -> str:
    if schedule.cron:
        return f"cron “{schedule.cron}” ({timezone.get_current_timezone_name()})"
    return f"every {_duration(schedule.every_s)}"


def _duration(seconds: int) -> str:
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if unit == 'day' and count != 1 else ''}"
    return f"{seconds} s"


def next_after(schedule: Schedule, after: datetime) -> datetime:
    if schedule.cron:  # in the site's time zone: "0 3 * * *" is 03:00 where the lab is
        return croniter(schedule.cron, timezone.localtime(after)).get_next(datetime)
    return after + timedelta(seconds=schedule.every_s)


def _first_at(schedule: Schedule, now: datetime) -> datetime:
    return next_after(schedule, now) if schedule.cron else now


def first_starts(timing: dict, count: int = 3) -> tuple[str, list[datetime]]:
    """A spec's schedule in words and its first starts, were it made now (a preview)."""
    checked = check_timing(timing)
    schedule = Schedule(cron=checked.get("cron", ""), every_s=checked.get("every_s"))
    starts = [_first_at(schedule, timezone.now())]
    while len(starts) < count:
        starts.append(next_after(schedule, starts[-1]))
    return timing_words(schedule), starts


def create_once(spec, user) -> tuple[Schedule, bool]:
    """(create(spec, user), True), unless the user made the same schedule within
    double_posts.WINDOW (a form posted twice): (that one, False)."""
    campaign_spec, timing = split(spec)
    return double_posts.made_once(
        user,
        Schedule.objects.filter(created_by=user, canary_of=None),
        lambda found: (
            found.spec == campaign_spec
            and (found.cron, found.every_s) == (timing.get("cron", ""), timing.get("every_s"))
        ),
        lambda: create(spec, user),
    )


def create(spec, user=None) -> Schedule:
    """A schedule from a spec with one; its campaign spec is checked now as a start would check
    it (SpecError). Its first start is queued once the transaction commits."""
    campaign_spec, timing = split(spec)
    if timing is None:
        raise SpecError('a schedule needs "schedule": {"cron": ...} or {"every": ...}', "schedule")
    checked = specs.check(campaign_spec)
    schedule = Schedule(
        name=checked.spec["name"],
        spec=campaign_spec,
        cron=timing.get("cron", ""),
        every_s=timing.get("every_s"),
        created_by=user,
    )
    schedule.next_at = _first_at(schedule, timezone.now())
    with transaction.atomic():
        schedule.save()
        arm(schedule)
    return schedule


def arm(schedule: Schedule) -> None:
    """Queue the job of the schedule's next start, once the transaction commits. Without Redis
    nothing is lost: the row keeps next_at, and rearm queues it later."""

    def send():
        due = schedule.next_at
        try:
            job = django_rq.get_queue(QUEUE, commit_mode="auto").enqueue_at(
                due,
                fire,
                schedule.pk,
                due.isoformat(),
                job_id=f"pifarm-schedule-{schedule.code}-{int(due.timestamp())}",
                description=f"scheduled start of {schedule.name}",
                job_timeout=600,
            )
        except RedisError as exc:
            log.error("could not queue the next start of %s: %s", schedule, exc)
            return
        Schedule.objects.filter(pk=schedule.pk, next_at=due).update(job_id=job.id)

    transaction.on_commit(send)


def _job_alive(job_id: str) -> bool:
    if not job_id:
        return False
    try:
        job = Job.fetch(job_id, connection=django_rq.get_connection(QUEUE))
    except NoSuchJobError:
        return False
    return job.get_status(refresh=False) in _ALIVE


def rearm(now: datetime | None = None) -> int:
    """Queue again each running schedule's next start that Redis does not hold; how many. A
    start missed while nothing ran (no worker, no Redis) is made once, at once, not once per
    time it was missed."""
    rearmed = 0
    for schedule in Schedule.objects.filter(paused=False):
        try:
            if _job_alive(schedule.job_id):
                continue
        except RedisError as exc:
            log.warning("could not look for the schedules' jobs: %s", exc)
            return rearmed
        if schedule.next_at is None:
            schedule.next_at = _first_at(schedule, now or timezone.now())
            schedule.save(update_fields=["next_at"])
        arm(schedule)
        rearmed += 1
    return rearmed


def fire(schedule_pk: int, due: str) -> str:
    """The RQ job of one start: a campaign, or a start skipped with its reason; then the next
    start is queued. A job for a time the schedule no longer has (paused, changed, delivered
    twice) does nothing."""
    due_at = datetime.fromisoformat(due)
    with transaction.atomic():
        schedule = (
            Schedule.objects.select_for_update(of=("self",))
            .select_related("canary_of", "created_by")
            .filter(pk=schedule_pk)
            .first()
        )
        if schedule is None or schedule.paused or schedule.next_at != due_at:
            return "not due: the schedule was paused, changed or removed since"
        previous = (
            Campaign.objects.filter(scheduled_start__schedule=schedule).order_by("-created").first()
        )
        try:
            with transaction.atomic():
                start = ScheduledStart.objects.create(schedule=schedule, due=due_at)
        except IntegrityError:
            return "already started"
        board = schedule.canary_of
        if board is not None and board.retired is not None:
            # A retired board's canary stops, saying so, rather than failing every start.
            start.skipped = (
                f"{board.name} was retired, so its canary is paused (restore the board, then "
                "resume it)"
            )
            schedule.paused, schedule.next_at = True, None
        elif previous is not None and previous.finished is None:
            start.skipped = (
                f"the last one, {previous.name} of {_when(previous.created)}, is still running"
            )
        elif refusal := _starter_refused(schedule.created_by):
            start.skipped = refusal
        else:
            try:
                start.campaign = campaigns.start(_spec_now(schedule), schedule.created_by)
            except SpecError as exc:  # a board retired or renamed since, a preset removed
                start.skipped = f"the spec was refused: {exc}"
        start.save()
        if not schedule.paused:
            schedule.next_at = next_after(schedule, max(due_at, timezone.now()))
            arm(schedule)
        schedule.save(update_fields=["next_at", "paused"])
    return start.skipped or f"started campaign {start.campaign.code}"


def _spec_now(schedule: Schedule) -> dict:
    """The spec a start checks: a canary's names its board as the board is called now (a
    board renamed since is the same board; a new one given its old name is not)."""
    board = schedule.canary_of
    if board is None:
        return schedule.spec
    return {**schedule.spec, "name": f"canary of {board.name}", "boards": [board.name]}


def _starter_refused(user) -> str:
    """Why the user a schedule starts campaigns for may not start one now, or ""."""
    if user is None or (user.is_active and user.has_perm("benchmarks.run_campaign")):
        return ""
    return (
        f"{user.get_username()} may no longer start campaigns; an operator can pause this "
        "schedule and make it again"
    )


def _when(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"


def pause(schedule: Schedule) -> bool:
    """Stop starting it (the campaign under way goes on); False if it was paused already."""
    with transaction.atomic():
        locked = Schedule.objects.select_for_update().get(pk=schedule.pk)
        was_running = not locked.paused
        if was_running:
            locked.paused, locked.next_at = True, None
            locked.save(update_fields=["paused", "next_at"])
            # Under the row's lock: a resume that follows queues its job after this commits,
            # so this never drops the job a resume has just queued (they share its id).
            _drop_job(locked.job_id)
    schedule.refresh_from_db()
    return was_running


def resume(schedule: Schedule) -> bool:
    """Start it again, from its next time (an every-schedule: at once); False if it ran."""
    with transaction.atomic():
        locked = Schedule.objects.select_for_update().get(pk=schedule.pk)
        if not locked.paused:
            return False
        locked.paused = False
        locked.next_at = _first_at(locked, timezone.now())
        locked.save(update_fields=["paused", "next_at"])
        arm(locked)
    schedule.refresh_from_db()
    return True


def drop(schedule: Schedule) -> None:
    """Before a schedule is deleted: its queued start goes too (were it left, it would find no
    schedule and do nothing)."""
    _drop_job(schedule.job_id)


def _drop_job(job_id: str) -> None:
    """Best effort: a job left behind finds the schedule paused and does nothing."""
    if not job_id:
        return
    try:
        Job.fetch(job_id, connection=django_rq.get_connection(QUEUE)).delete()
    except (NoSuchJobError, RedisError):
        pass
