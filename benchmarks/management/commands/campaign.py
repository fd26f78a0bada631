import json
import os
import re
import sys
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.utils import timezone

from benchmarks import (
    answers,
    campaigns,
    comparisons,
    plans,
    progress,
    results,
    schedules,
    spec_files,
    specs,
)
from benchmarks.catalog.spec import shown
from benchmarks.models import Campaign, Run, Schedule
from benchmarks.templatetags.campaign_tags import number
from devices import roles

START_PERMISSION = "benchmarks.run_campaign"  # what the builder page and Start require
POLL_S = 1.0
BAR_WIDTH = 30
REFUSED, NOT_ALL_DONE = 2, 1  # exit statuses; 0 is every run done


class Command(BaseCommand):
    help = (
        "Start a campaign from a JSON or YAML spec and follow it, or show or cancel one; a spec "
        "with a schedule makes a schedule, which `schedule` lists, shows, pauses and resumes. "
        "Exit status: 0 no run failed (all done, once followed to the end), 1 a run failed, "
        "was skipped or cancelled (after `cancel`, only failed or skipped), 2 the spec or the "
        "command was refused."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        start = actions.add_parser("start", help="start a campaign from a spec file ('-': stdin)")
        start.add_argument("spec")
        start.add_argument("--follow", action="store_true", help="show progress until it ends")
        start.add_argument("--user", help="whom the campaign is started for (a user name)")
        start.add_argument("--json", action="store_true", help="print the results as JSON")
        for name, words in (("status", "show how a campaign stands"), ("cancel", "cancel it")):
            one = actions.add_parser(name, help=words)
            one.add_argument("code", help="the campaign's code (from its page's address)")
            one.add_argument("--json", action="store_true", help="print the results as JSON")
            one.add_argument("--follow", action="store_true", help="show progress until it ends")
        scheduled = actions.add_parser(
            "schedule", help="list schedules, or show, pause or resume one"
        )
        scheduled.add_argument("verb", choices=["list", "show", "pause", "resume"])
        scheduled.add_argument("code", nargs="?", help="the schedule's code (show, pause, resume)")

    def handle(self, *args, action: str, **options):
        # Django writes all of stderr in the error style: progress and news are not errors.
        # Colour says what a line means, on a terminal, unless NO_COLOR is set (no-color.org).
        self.stderr.style_func = None
        if os.environ.get("NO_COLOR"):
            self.style = no_style()
        # Django decides colour from standard output; each stream's own is what counts.
        self.err_style = self.style if self.stderr.isatty() else no_style()
        if action == "schedule":
            self.schedule(options["verb"], options.get("code"))
            return
        if action == "start":
            spec, user = read_spec(options["spec"]), user_named(options.get("user"))
            if isinstance(spec, dict) and "schedule" in spec:
                if options["follow"]:
                    raise CommandError(
                        "a spec with a schedule makes a schedule, whose campaigns start later: "
                        "there is no one campaign to --follow",
                        returncode=REFUSED,
                    )
                self.schedule_spec(spec, user, options["json"])
                return
            campaign = start(spec, user)
            runs = campaign.runs.count()
            self.stderr.write(plain(f"started {campaign.name} ({campaign.code}): {runs} runs"))
            for warning in plans.warnings(specs.check(campaign.spec), started=campaign):
                self.stderr.write(plain(f"warning: {warning}"), self.err_style.WARNING)
            for note in specs.lengthened(campaign.spec):
                self.stderr.write(plain(f"lengthened: {note}"))
        else:
            campaign = find(options["code"])
            if action == "cancel":
                cancelled = campaigns.cancel(campaign)
                if cancelled is None:
                    self.stderr.write(campaigns.why_not_cancelled(campaign))
                else:
                    self.stderr.write(f"cancelled {campaign.name}: {cancelled.words}")
        if options["follow"]:
            self.follow(campaign)
        # Runs cancelled are what a cancel asked for, not a failure of it.
        bad = [Run.State.FAILED, Run.State.SKIPPED]
        if action != "cancel":
            bad.append(Run.State.CANCELLED)
        ended_badly = campaign.runs.filter(state__in=bad).exists()
        said = "ERROR" if ended_badly else "SUCCESS"
        if options["json"]:  # standard output is the script's JSON alone
            self.stdout.write(json.dumps(results.as_json(campaign), indent=2, default=str))
            self.stderr.write(summary(campaign), getattr(self.err_style, said))
        else:
            self.stdout.write(summary(campaign), getattr(self.style, said))
            for line in outcome_lines(campaign):
                self.stdout.write(line)
        if ended_badly:
            raise CommandError(
                f"not every run is done: {summary(campaign)}", returncode=NOT_ALL_DONE
            )

    def schedule_spec(self, spec: dict, user, as_json: bool) -> None:
        try:
            schedule = schedules.create(spec, user)
        except specs.SpecError as exc:
            raise CommandError(f"the spec was refused: {exc}", returncode=REFUSED) from None
        if as_json:  # standard output is the script's JSON alone
            found = {
                "schedule": str(schedule.code),
                "name": schedule.name,
                "timing": schedules.timing_words(schedule),
                "next_at": schedule.next_at.isoformat(),
            }
            self.stdout.write(json.dumps(found, indent=2))
            return
        self.stdout.write(plain(f"scheduled {schedule.name} ({schedule.code})"))
        self.stdout.write(schedule_lines(schedule)[1])

    def schedule(self, verb: str, code: str | None) -> None:
        if verb == "list":
            for schedule in Schedule.objects.all():
                self.stdout.write(" | ".join(schedule_lines(schedule)[:2]))
            return
        schedule = find_schedule(code)
        if verb == "pause" and not schedules.pause(schedule):
            self.stderr.write(f"{plain(schedule.name)} was paused already")
        if verb == "resume" and not schedules.resume(schedule):
            self.stderr.write(f"{plain(schedule.name)} was not paused")
        for line in schedule_lines(schedule, starts=10 if verb == "show" else 0):
            self.stdout.write(line)

    def follow(self, campaign: Campaign) -> None:
        tty = sys.stderr.isatty()
        drawn = ""
        while True:
            line = bar(campaign)
            if line != drawn:  # a terminal redraws one line; a log gets a line per change
                if tty:
                    self.stderr.write("\r" + line.ljust(len(drawn)), ending="")
                else:
                    self.stderr.write(line)
                drawn = line
            # The campaign's end, not its runs': an adaptive trial is added after the one
            # before it is done, and in between no run is queued or running.
            if Campaign.objects.filter(pk=campaign.pk, finished__isnull=False).exists():
                break
            time.sleep(POLL_S)
        if tty:
            self.stderr.write("")


def read_spec(path: str):
    try:
        return spec_files.read(path)
    except spec_files.SpecFileError as exc:
        raise CommandError(f"{path} {exc}", returncode=REFUSED) from None


def user_named(username: str | None):
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"there is no user {shown(username)}", returncode=REFUSED)
    _refuse_unless_starter(user)
    return user


def start(spec, user) -> Campaign:
    try:
        return campaigns.start(spec, user)
    except specs.SpecError as exc:
        raise CommandError(f"the spec was refused: {exc}", returncode=REFUSED) from None


def _refuse_unless_starter(user) -> None:
    """A campaign started for a user is theirs: only one who may start campaigns on the pages,
    refused in the 403 page's words."""
    if user.has_perm(START_PERMISSION):
        return
    needed = roles.role_for(START_PERMISSION)
    current = roles.role_of(user)
    if not user.is_active:
        has = "an inactive account"
    elif current:
        has = f"the {current.name} role"
    else:
        has = "no role yet"
    name = user.get_username()  # a user found by it: at most 150 characters, no control
    raise CommandError(
        f"{name} may not start campaigns: this needs the {needed.name} role (a pifarm "
        f"{needed.name} {needed.summary}); {name} has {has}.",
        returncode=REFUSED,
    )


def find(code: str) -> Campaign:
    try:
        campaign = Campaign.objects.filter(code=code).first()
    except ValidationError:
        campaign = None
    if campaign is None:
        raise CommandError(f"there is no campaign {shown(code)}", returncode=REFUSED)
    return campaign


def find_schedule(code: str | None) -> Schedule:
    try:
        schedule = Schedule.objects.filter(code=code).first() if code else None
    except ValidationError:
        schedule = None
    if schedule is None:
        raise CommandError(f"there is no schedule {shown(code or '')}", returncode=REFUSED)
    return schedule


def schedule_lines(schedule: Schedule, starts: int = 0) -> list[str]:
    """Its name and code; its timing and when it starts next; then its latest starts."""
    if schedule.paused:
        state = "paused"
    else:
        state = f"next start {timezone.localtime(schedule.next_at):%Y-%m-%d %H:%M:%S %Z}"
    lines = [f"{schedule.name} ({schedule.code})", f"{schedules.timing_words(schedule)}, {state}"]
    for start in schedule.starts.select_related("campaign")[:starts]:
        due = f"{timezone.localtime(start.due):%Y-%m-%d %H:%M}"
        if start.campaign:
            done = f"campaign {start.campaign.code}"
        else:
            done = (
                f"skipped: {start.skipped}" if start.skipped else "its campaign was deleted since"
            )
        lines.append(f"  {due}  {done}")
    return [plain(line) for line in lines]


def bar(campaign: Campaign) -> str:
    now = progress.of(campaign)
    filled = round(BAR_WIDTH * now.ended / now.total) if now.total else BAR_WIDTH
    eta = f", {progress.duration_words(now.eta_s)} left" if now.eta_s else ""
    steps = "; ".join(
        f"{lane.lane.board.name}: {lane.lane.step}" for lane in now.lanes if lane.lane.step
    )
    line = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {now.ended}/{now.total} runs{eta}"
    return plain(line + (f" | {steps}" if steps else ""))


def summary(campaign: Campaign) -> str:
    counts = progress.of(campaign).counts
    words = ", ".join(f"{count} {state}" for state, count in counts.items() if count)
    return plain(f"{campaign.name}: {words or 'no runs'}")


def outcome_lines(campaign: Campaign) -> list[str]:
    """What the campaign found: its question's answer, then each metric's groups (by preset)
    with n and the mean's 95 % CI, each against the first; last, its page."""
    lines = []
    if campaign.spec.get("question"):
        lines += ["", f"answer: {answers.answer(campaign).sentence}"]
    runs = comparisons.runs_selected([campaign.pk])
    for benchmark, metric, unit in comparisons.metric_choices(runs):
        settings_run = {json.dumps(p, sort_keys=True) for p in _params_of(runs, benchmark)}
        if len(settings_run) > 1:  # by preset alone would pool, say, both directions of iperf3
            lines += [
                "",
                f"{benchmark} {metric} [{unit}]: its runs ran with different "
                "parameters; the campaign's page compares them setting by setting",
            ]
            continue
        try:
            found = comparisons.compare(runs, benchmark, metric, "preset")
        except comparisons.ComparisonError:
            continue
        lines += ["", f"{benchmark} {metric} [{unit}], by preset:"]
        width = max(len(group.key) for group in found.groups)
        for group, against in found.table:
            spread = group.description
            half = f" ± {number((spread.ci_high - spread.ci_low) / 2)}" if spread.ci_low else ""
            verdict = against.verdict if against else "the baseline"
            lines.append(
                f"  {group.key:<{width}}  n={spread.n:<3} {number(spread.mean)}{half}  {verdict}"
            )
    page = settings.PIFARM_SITE_URL.rstrip("/") + campaign.get_absolute_url()
    return [plain(line) for line in [*lines, "", f"page: {page}"]]


def _params_of(runs, benchmark: str):
    return runs.filter(benchmark=benchmark).order_by().values_list("params", flat=True).distinct()


# Control characters (ESC, BEL, C1) in a name would reach the terminal as commands: shown as
# their escapes instead. Names from specs refuse them; an admin's board or preset may hold one.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    return _CONTROLS.sub(lambda found: f"\\x{ord(found[0]):02x}", text)
