import json
import sys
import time

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from benchmarks import campaigns, plans, progress, results, spec_files, specs
from benchmarks.catalog.spec import shown
from benchmarks.models import Campaign, Run
from devices import roles

START_PERMISSION = "benchmarks.run_campaign"  # what the builder page and Start require
POLL_S = 1.0
BAR_WIDTH = 30
REFUSED, NOT_ALL_DONE = 2, 1  # exit statuses; 0 is every run done


class Command(BaseCommand):
    help = (
        "Start a campaign from a JSON or YAML spec and follow it, or show or cancel one. "
        "Exit status: 0 no run failed (all done, once followed to the end), 1 a run failed, "
        "was skipped or cancelled, 2 the spec or the command was refused."
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

    def handle(self, *args, action: str, **options):
        if action == "start":
            campaign = campaigns_start(options["spec"], options.get("user"))
            runs = campaign.runs.count()
            self.stderr.write(f"started {campaign.name} ({campaign.code}): {runs} runs")
            for warning in plans.warnings(specs.check(campaign.spec)):  # the preview's
                self.stderr.write(f"warning: {warning}")
            for note in specs.lengthened(campaign.spec):
                self.stderr.write(f"lengthened: {note}")
        else:
            campaign = find(options["code"])
            if action == "cancel":
                count = campaigns.cancel(campaign)
                if count is None:
                    self.stderr.write(campaigns.why_not_cancelled(campaign))
                else:
                    self.stderr.write(f"cancelled {campaign.name}: {count} runs stopped or dropped")
        if options["follow"]:
            self.follow(campaign)
        if options["json"]:
            self.stdout.write(json.dumps(results.as_json(campaign), indent=2, default=str))
        elif not options["follow"]:
            self.stdout.write(summary(campaign))
        ended_badly = campaign.runs.filter(
            state__in=[Run.State.FAILED, Run.State.SKIPPED, Run.State.CANCELLED]
        )
        if ended_badly.exists():
            raise CommandError(
                f"not every run is done: {summary(campaign)}", returncode=NOT_ALL_DONE
            )

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
        self.stderr.write(summary(campaign))


def campaigns_start(path: str, username: str | None) -> Campaign:
    try:
        spec = spec_files.read(path)
    except spec_files.SpecFileError as exc:
        raise CommandError(f"{path} {exc}", returncode=REFUSED) from None
    user = None
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"there is no user {shown(username)}", returncode=REFUSED)
        _refuse_unless_starter(user)
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


def bar(campaign: Campaign) -> str:
    now = progress.of(campaign)
    filled = round(BAR_WIDTH * now.ended / now.total) if now.total else BAR_WIDTH
    eta = f", {progress.duration_words(now.eta_s)} left" if now.eta_s else ""
    steps = "; ".join(
        f"{lane.lane.board.name}: {lane.lane.step}" for lane in now.lanes if lane.lane.step
    )
    return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {now.ended}/{now.total} runs{eta}" + (
        f" | {steps}" if steps else ""
    )


def summary(campaign: Campaign) -> str:
    counts = progress.of(campaign).counts
    words = ", ".join(f"{count} {state}" for state, count in counts.items() if count)
    return f"{campaign.name}: {words or 'no runs'}"
