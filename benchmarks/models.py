"""Campaigns, the runs they expand into, and what each run measured.

A campaign is split into lanes, one per board: a lane's runs go in sequence on its board, and
lanes run in parallel on as many workers as exist. The rows are the truth about what ran;
Redis only carries the lane's next job (see benchmarks.engine).
"""

import secrets
import unicodedata
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone

from benchmarks.catalog.built_in import BUILT_IN
from benchmarks.catalog.custom_rules import params_problem, pattern_problem
from devices import credentials
from devices.models import CONTROLLER, Application, Board, BoardWork, FactSnapshot, PresetVersion


class Campaign(models.Model):
    class Order(models.TextChoices):
        GROUPED = "grouped", "grouped: each benchmark's repetitions together"
        INTERLEAVED = "interleaved", "interleaved: repetition 1 of each, then 2, ..."
        SHUFFLED = "shuffled", "shuffled: a random order per preset, to spread drift"

    class State(models.TextChoices):
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=120)
    # The spec as it was accepted, defaults filled in: what `campaign start` and the builder
    # submitted, kept so a campaign can be repeated and its settings read later.
    spec = models.JSONField()
    order = models.CharField(max_length=12, choices=Order.choices, default=Order.GROUPED)
    seed = models.PositiveIntegerField(default=0)  # of the shuffled order, to reproduce it
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)
    estimated_s = models.FloatField(null=True, blank=True)  # before it started
    # Put away by an admin (benchmarks.retention): out of the lists, its shares answer 410.
    archived = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created"]
        permissions = [("run_campaign", "Can start, cancel and retry campaigns")]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("benchmarks:campaign", args=[self.code])


class Lane(BoardWork):
    """One board's part of a campaign, and the RQ job that drives it now."""

    # A lane whose job has not written its heartbeat for this long, and whose RQ job is gone,
    # lost its worker. While fresh, the lane is left alone whatever Redis says (Redis may have
    # restarted under a live job).
    HEARTBEAT_STALE_S = 60
    TIME_LIMITED = False  # it may rightly run for days: its heartbeat says it lives
    WORK_KIND = "lane"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="lanes")
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="lanes")
    # The other end of network benchmarks: another board, or the controller (peer_board null
    # and peer_is_controller set), or none.
    peer_board = models.ForeignKey(
        Board, null=True, blank=True, on_delete=models.PROTECT, related_name="peer_lanes"
    )
    peer_is_controller = models.BooleanField(default=False)
    log_tail = models.TextField(blank=True)  # the current measurement's latest output
    # Written by the job every few seconds while it works: the sweep leaves a lane alone
    # while it is fresh, whatever Redis says (Redis may have restarted under a live job).
    heartbeat = models.DateTimeField(null=True, blank=True)
    # The board's state before the lane first applied a preset: {"version_id": the preset
    # version it last verified, or None for none, "words": the same for a page}. "As is" runs
    # and the lane's end put it back (benchmarks.board_state.before).
    before = models.JSONField(default=dict, blank=True)
    left = models.TextField(blank=True)  # how the lane left the board, in words

    class Meta:
        ordering = ["campaign", "board__name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "board"], name="lane_one_per_board"),
        ]
        indexes = [
            # the sweep: unfinished lanes
            models.Index(fields=["state"], name="lane_state"),
        ]

    def __str__(self):
        return f"{self.campaign} on {self.board}"

    BUSY_RELATED = ("campaign",)

    def busy_words(self) -> str:
        return f"campaign {self.campaign.name}"

    def busy_url(self) -> str:
        return self.campaign.get_absolute_url()

    @classmethod
    def sweepable(cls, older_than, now):
        fresh = models.Q(
            state=cls.State.RUNNING, heartbeat__gt=now - timedelta(seconds=cls.HEARTBEAT_STALE_S)
        )
        unfinished = cls.objects.filter(state__in=cls.UNFINISHED, campaign__created__lt=older_than)
        return unfinished.exclude(fresh)

    @property
    def peer_name(self) -> str:
        if self.peer_board_id:
            return self.peer_board.name
        return CONTROLLER if self.peer_is_controller else ""


# The lookups of a run that a Tally row has under the same name (benchmarks.tallies): a choice
# of runs made only of these is a choice of tallies too.
_TALLIED_LOOKUPS = (
    "campaign",
    "benchmark",
    "params",
    "suspect",
    "board",
    "preset_version",
    "state",
)


class RunQuerySet(models.QuerySet):
    """Runs, and where they were chosen by campaign (comparisons.runs_selected) and filtered
    since only by what a tally has too, that choice as a filter of Tally rows (tally_filter):
    a comparison then reads the runs' sums instead of every run. None where it cannot."""

    tally_filter: models.Q | None = None

    def _clone(self):
        clone = super()._clone()
        clone.tally_filter = self.tally_filter
        return clone

    def filter(self, *args, **kwargs):
        found = super().filter(*args, **kwargs)
        if self.tally_filter is not None:
            tallied = not args and all(
                lookup.split("__")[0].removesuffix("_id") in _TALLIED_LOOKUPS
                or lookup == "measurements__metric"
                for lookup in kwargs
            )
            # A state but done (state__in, say) is no tally's: every tallied run is done.
            states = [lookup for lookup in kwargs if lookup.startswith("state")]
            if states and (states != ["state"] or kwargs["state"] != Run.State.DONE):
                tallied = False
            found.tally_filter = (
                self.tally_filter
                & models.Q(
                    **{
                        lookup.removeprefix("measurements__"): value
                        for lookup, value in kwargs.items()
                        if lookup not in states
                    }
                )
                if tallied
                else None
            )
        return found

    # Whatever else narrows the runs, or joins them with others, leaves the tallies out.
    def _untallied(self, found):
        found.tally_filter = None
        return found

    def exclude(self, *args, **kwargs):
        return self._untallied(super().exclude(*args, **kwargs))

    def none(self):
        return self._untallied(super().none())

    def complex_filter(self, filter_obj):
        return self._untallied(super().complex_filter(filter_obj))

    def extra(self, *args, **kwargs):
        return self._untallied(super().extra(*args, **kwargs))

    def union(self, *others, **kwargs):
        return self._untallied(super().union(*others, **kwargs))

    def intersection(self, *others):
        return self._untallied(super().intersection(*others))

    def difference(self, *others):
        return self._untallied(super().difference(*others))

    def __and__(self, other):
        return self._untallied(super().__and__(other))

    def __or__(self, other):
        return self._untallied(super().__or__(other))

    def __xor__(self, other):
        return self._untallied(super().__xor__(other))

    def __getitem__(self, k):
        found = super().__getitem__(k)
        return self._untallied(found) if isinstance(found, RunQuerySet) else found

    def chosen_by_campaign(self, campaign_ids) -> "RunQuerySet":
        """These runs, known to be the done runs of these campaigns."""
        clone = self._clone()
        clone.tally_filter = models.Q(campaign_id__in=list(campaign_ids))
        return clone


class Run(models.Model):
    """One repetition of one benchmark with one preset version on one board."""

    VERSION_CHARS = 200  # a tool's version line, cut: it is in an index

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"
        SKIPPED = "skipped", "skipped"

    UNFINISHED = (State.QUEUED, State.RUNNING)
    ENDED = (State.DONE, State.FAILED, State.CANCELLED, State.SKIPPED)

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    lane = models.ForeignKey(Lane, on_delete=models.CASCADE, related_name="runs")
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="runs")
    sequence = models.PositiveIntegerField()  # order within the lane
    # None: "as the board is", nothing applied.
    preset_version = models.ForeignKey(
        PresetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    benchmark = models.CharField(max_length=64)
    definition_version = models.PositiveIntegerField()
    params = models.JSONField(default=dict)
    repetition = models.PositiveIntegerField()
    # A suspect run done again once; both are kept.
    rerun_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns"
    )
    # Added by the adaptive repetitions, or by a retry of a failed run.
    retry_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    step = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)  # why it failed, was skipped or cancelled
    cancel_requested = models.BooleanField(default=False)
    suspect = models.BooleanField(default=False)
    suspect_reasons = models.JSONField(default=list, blank=True)
    # The board at run time (its latest probe after any application), and the application
    # that set the preset.
    snapshot = models.ForeignKey(
        FactSnapshot, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    application = models.ForeignKey(
        Application, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    peer = models.CharField(max_length=64, blank=True)  # board name, "controller" or ""
    # Tool versions, offload states, the quiet wait, the peer's identity and CPU use...
    environment = models.JSONField(default=dict, blank=True)
    details = models.JSONField(default=dict, blank=True)  # what the parser kept besides values
    raw_output = models.TextField(blank=True)  # capped (benchmarks.trial.OUTPUT_CAP)
    raw_truncated = models.BooleanField(default=False)
    # Two figures of the JSON above, in columns of their own because a comparison reads them
    # for every one of tens of thousands of runs (a JSON extraction per row costs more than
    # the rest of its query): the median Arm clock under load of the board's telemetry
    # summary, and the version line the parser kept (benchmarks.results.main_tool_version).
    clock_mhz = models.FloatField(null=True, blank=True)
    tool_version = models.CharField(max_length=VERSION_CHARS, blank=True)
    # What the board ran (benchmarks.effective.fingerprint): runs with the same one ran the
    # same config.txt and governor under the same OS, whatever preset they were filed under.
    config_fingerprint = models.CharField(max_length=16, blank=True)
    telemetry = models.JSONField(default=list, blank=True)  # the board's samples
    peer_telemetry = models.JSONField(default=list, blank=True)
    # When the retention removed both (PIFARM_TELEMETRY_DAYS); the measurements stay.
    telemetry_removed = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    measure_s = models.FloatField(null=True, blank=True)
    # When its values were added to its campaign's tallies (benchmarks.tallies).
    tallied = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["lane", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["lane", "sequence"], name="run_sequence_in_lane"),
        ]
        indexes = [
            # the engine: a lane's next queued run
            models.Index(fields=["lane", "state", "sequence"], name="run_lane_next"),
            # the campaign page: its runs
            models.Index(fields=["campaign", "board", "sequence"], name="run_campaign"),
            # the tallies' catch-up, each health-check round: the done runs in no tally (few)
            models.Index(
                fields=["id"],
                condition=models.Q(state="done", tallied__isnull=True),
                name="run_untallied",
            ),
            # the engine: a board's failed runs, among which any that left work behind, read
            # before each run (a board's history grows by thousands of done runs a year)
            models.Index(
                fields=["board"], condition=models.Q(state="failed"), name="run_failed_on_board"
            ),
            # a comparison: the done runs of a benchmark in campaigns (those not in their
            # campaign's tallies yet, too: few), and every column of theirs that
            # benchmarks.comparisons.compare() reads but a parameter, so that it never reads
            # the runs' rows, wide with their JSON
            models.Index(
                fields=[
                    "campaign",
                    "state",
                    "tallied",
                    "benchmark",
                    "suspect",
                    "board",
                    "clock_mhz",
                    "snapshot",
                    "preset_version",
                    "tool_version",
                    "config_fingerprint",
                ],
                name="run_comparison",
            ),
        ]

    def __str__(self):
        preset = self.preset_version or "as is"
        return f"{self.benchmark} #{self.repetition} with {preset} on {self.board}"

    @property
    def preset_label(self) -> str:
        return str(self.preset_version) if self.preset_version_id else "as the board is"

    @property
    def duration_s(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None


class Measurement(models.Model):
    """One metric's value from one run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="measurements")
    metric = models.CharField(max_length=64)
    value = models.FloatField()
    unit = models.CharField(max_length=32)
    higher_is_better = models.BooleanField()

    class Meta:
        ordering = ["run", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["run", "metric"], name="measurement_one_per_metric"),
        ]

    def __str__(self):
        return f"{self.metric} = {self.value:g} {self.unit}"


class Tally(models.Model):
    """The values of one metric of a campaign's done runs that share everything a comparison
    groups or filters them by, summed up as each run ends (benchmarks.tallies): a comparison
    reads these few rows, not every run."""

    # What the runs share, hashed (benchmarks.tallies.cell_of): one row each.
    cell = models.CharField(max_length=64, unique=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    benchmark = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    metric = models.CharField(max_length=64)
    unit = models.CharField(max_length=32)
    higher_is_better = models.BooleanField()
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="+")
    suspect = models.BooleanField()
    snapshot = models.ForeignKey(
        FactSnapshot, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    preset_version = models.ForeignKey(
        PresetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    tool_version = models.CharField(max_length=Run.VERSION_CHARS, blank=True)
    config_fingerprint = models.CharField(max_length=16, blank=True)
    link = models.JSONField(null=True, blank=True)  # the runs' link (network benchmarks)
    # The values: how many, their sums around a reference value (the first one) and of the
    # squares of those, the least and the greatest (benchmarks.summaries).
    n = models.PositiveIntegerField()
    reference = models.FloatField()
    shifted = models.FloatField()
    squares = models.FloatField()
    low = models.FloatField()
    high = models.FloatField()
    # The runs' Arm clocks under load, where measured.
    clocks = models.PositiveIntegerField(default=0)
    clock_low = models.FloatField(null=True, blank=True)
    clock_high = models.FloatField(null=True, blank=True)
    first_run = models.PositiveBigIntegerField()  # its lowest run id: one that ran it
    # A uniform sample of its trials, [value, clock, run id] each (reservoir sampling): all of
    # them up to benchmarks.tallies.KEPT.
    drawn = models.JSONField(default=list)

    class Meta:
        indexes = [models.Index(fields=["campaign", "benchmark", "metric"], name="tally_choice")]

    def __str__(self):
        return f"{self.benchmark} {self.metric}: {self.n} values"


# What a name or title must not hold, by Unicode category: controls (Cc: NUL, tab, line
# breaks, C1 controls such as NEXT LINE), format characters (Cf: bidi overrides and isolates,
# which reorder the text around them, zero-width spaces and marks) and line and paragraph
# separators (Zl, Zp). A page, a CSV file or a terminal would show such a name as another.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def hidden_character(text: str) -> str:
    """The first character of text in HIDDEN_CATEGORIES, as "U+202E RIGHT-TO-LEFT OVERRIDE"
    (controls have no name: "U+0085"); "" when there is none."""
    for character in text:
        if unicodedata.category(character) in HIDDEN_CATEGORIES:
            return " ".join(
                filter(None, [f"U+{ord(character):04X}", unicodedata.name(character, "")])
            )
    return ""


def validate_shown_name(value: str) -> None:
    """A campaign's name, a custom benchmark's title or unit: shown as written, or refused."""
    if found := hidden_character(value):
        raise ValidationError(
            f"This holds a control or invisible character ({found}); remove it.",
            code="hidden_character",
        )


slug_validator = RegexValidator(
    r"^[a-z][a-z0-9_-]{0,47}$", "Lower-case letters, digits, '-' and '_', starting with a letter."
)


class CustomBenchmark(models.Model):
    """A benchmark an admin defined: a command, and a parser for its output.

    Parameters reach the command as environment variables (PIFARM_<NAME>), each one a single
    word whatever it holds; the command itself is staff-written shell.
    """

    class Parser(models.TextChoices):
        REGEX = "regex", "regular expression with a named group 'value'"
        JSON = "json", "JSON path (dot-separated keys and list indexes)"

    name = models.CharField(max_length=48, unique=True, validators=[slug_validator])
    title = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    command = models.TextField(
        help_text="Run with sh -c on the board. Parameters arrive as "
        '$PIFARM_<NAME> (upper-case), e.g. "$PIFARM_SIZE".'
    )
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text='Parameter names and their defaults, e.g. {"size": "64M"}.',
    )
    parser = models.CharField(max_length=8, choices=Parser.choices, default=Parser.REGEX)
    pattern = models.CharField(
        max_length=500,
        help_text="regex: must have a group (?P<value>...); JSON: a path such as end.sum.bps",
    )
    metric = models.CharField(max_length=64, default="value", validators=[slug_validator])
    unit = models.CharField(max_length=32)
    higher_is_better = models.BooleanField(default=True)
    tools = models.CharField(
        max_length=200, blank=True, help_text="Commands it needs, space-separated."
    )
    repetitions = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(1000)]
    )
    timeout_s = models.PositiveIntegerField(
        default=120,
        validators=[MinValueValidator(1), MaxValueValidator(3600)],
        help_text="Seconds the command may run (1 to 3600); it is stopped then.",
    )
    # Bumped whenever the command or the parser changes, so results of different definitions
    # are told apart.
    version = models.PositiveIntegerField(default=1, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    changed = models.DateTimeField(auto_now=True)

    DEFINITION = ("command", "params", "parser", "pattern", "metric", "unit", "higher_is_better")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.title or self.name

    def clean(self):
        if self.name in BUILT_IN:
            raise ValidationError({"name": "A built-in benchmark has this name."})
        # Here, not as field validators: those would need a migration of their own.
        for field in ("title", "unit"):
            try:
                validate_shown_name(getattr(self, field))
            except ValidationError as refused:
                raise ValidationError({field: refused}) from None
        if self.parser == self.Parser.REGEX and (problem := pattern_problem(self.pattern)):
            raise ValidationError({"pattern": f"This pattern cannot be used: {problem}."})
        if problem := params_problem(self.params):
            raise ValidationError({"params": f"{problem}."})

    def save(self, *args, **kwargs):
        if self.pk is not None:
            old = CustomBenchmark.objects.filter(pk=self.pk).values(*self.DEFINITION).first()
            if old and any(old[name] != getattr(self, name) for name in self.DEFINITION):
                self.version += 1
        super().save(*args, **kwargs)


class ApiToken(models.Model):
    """A person's key to the JSON API (benchmarks.api): it acts with its owner's role.

    Only a SHA-256 of the token is kept: the token itself is shown once, when it is made, and
    a copy of the database opens nothing. A revoked token stays listed, refused."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=80, help_text="What it is for, e.g. “nightly CI job”.")
    # The hex SHA-256 of the token; its unique index finds the token of each API request.
    digest = models.CharField(max_length=64, unique=True, editable=False)
    sees_addresses = models.BooleanField(
        default=False,
        help_text="Show boards' host names, addresses, ports, user names and serials.",
    )
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.name} ({self.owner})"


class Comparison(models.Model):
    """A comparison someone saved: what was selected and how it is grouped, not its figures,
    which benchmarks.comparisons computes again from the runs each time it is shown."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    name = models.CharField(max_length=120)
    created = models.DateTimeField(auto_now_add=True)
    # The selection: every done run of these campaigns, and these runs.
    campaigns = models.ManyToManyField(Campaign, blank=True, related_name="+")
    runs = models.ManyToManyField(Run, blank=True, related_name="+")
    benchmark = models.CharField(max_length=64)
    metric = models.CharField(max_length=64)
    group_by = models.CharField(max_length=48)  # a key of comparisons.group_by_choices
    baseline = models.CharField(max_length=200, blank=True)  # a group's key; empty: the first
    include_suspects = models.BooleanField(default=False)
    # Why it was withdrawn, with when ("" while it stands): a campaign it showed was deleted
    # (benchmarks.retention), so what is left is not what was saved and its share links
    # answer 410 with these words.
    withdrawn = models.CharField(max_length=300, blank=True, editable=False)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("benchmarks:comparison", args=[self.code])


def share_token() -> str:
    """192 random bits, URL-safe: the only thing that opens a shared comparison."""
    return secrets.token_urlsafe(24)


class ShareLink(models.Model):
    """A read-only page of a comparison for anyone with its URL (benchmarks.sharing).

    The token is kept as it is, not as a digest like ApiToken's: its owner copies the URL from
    the comparison's page again later. A revoked or expired link stays listed and answers 410."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="shares")
    token = models.CharField(max_length=64, unique=True, default=share_token, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True, editable=False)
    show_board_names = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self):
        return f"share of {self.comparison}"

    def get_absolute_url(self):
        return reverse("benchmarks:share", args=[self.token])

    def expired(self, now=None) -> bool:
        return self.expires is not None and self.expires <= (now or timezone.now())

    def live(self, now=None) -> bool:
        return self.revoked is None and not self.expired(now)


class Schedule(models.Model):
    """A campaign spec started again and again (benchmarks.schedules): on a cron string, in
    the site's time zone, or every so many seconds. RQ's scheduler delivers each start; the
    row is the truth, and a job lost with Redis is made again from it."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=120)
    # The campaign spec as given, without its schedule: each start is checked again (a board
    # retired since is said then) and draws its own seed unless the spec names one.
    spec = models.JSONField()
    cron = models.CharField(max_length=120, blank=True)
    every_s = models.PositiveIntegerField(null=True, blank=True)
    paused = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    next_at = models.DateTimeField(null=True, blank=True)  # the next start; None while paused
    job_id = models.CharField(max_length=64, blank=True)  # of the RQ job that delivers it
    # A board's canary (benchmarks.canaries): its results are judged against the board's own.
    canary_of = models.OneToOneField(
        Board, null=True, blank=True, on_delete=models.CASCADE, related_name="canary"
    )

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(cron="", every_s__isnull=False)
                    | (~models.Q(cron="") & models.Q(every_s__isnull=True))
                ),
                name="schedule_cron_or_every",
            )
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("benchmarks:schedule", args=[self.code])


class ScheduledStart(models.Model):
    """One time a schedule came due: the campaign it started, or why it started none."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="starts")
    due = models.DateTimeField()
    at = models.DateTimeField(auto_now_add=True)
    campaign = models.OneToOneField(
        Campaign,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="scheduled_start",
    )
    skipped = models.TextField(blank=True)  # why no campaign started

    class Meta:
        ordering = ["-due", "-pk"]
        # A job delivered twice (a worker killed after starting it) starts one campaign.
        constraints = [
            models.UniqueConstraint(fields=["schedule", "due"], name="one_start_per_due_time")
        ]


class Drift(models.Model):
    """A board's canary found it is not the board it was (benchmarks.canaries): from `since`,
    one metric of it moved beyond its own history's noise. Open until a person accepts the
    board as it is now (cleared): the series then starts again from the change."""

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="drifts")
    benchmark = models.CharField(max_length=64)
    metric = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    # The preset the canary ran at (None: the board as it was): a series of its own.
    preset_version = models.ForeignKey(
        PresetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    unit = models.CharField(max_length=32)
    kind = models.CharField(max_length=8)  # benchmarks.drift.JUMP or SLIDE
    since = models.DateTimeField()  # when the first canary that differs ran
    since_campaign = models.ForeignKey(
        Campaign, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    found_campaign = models.ForeignKey(
        Campaign, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    reference_mean = models.FloatField()  # the board as it was
    mean_since = models.FloatField()
    # What pifarm recorded that changed at the time: [{"what", "before", "after"}].
    changed = models.JSONField(default=list, blank=True)
    found = models.DateTimeField(auto_now_add=True)
    cleared = models.DateTimeField(null=True, blank=True)
    cleared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-found", "-pk"]

    def __str__(self):
        return f"{self.board}: {self.benchmark} {self.metric} {self.change}"

    @property
    def change(self) -> str:
        """ "-12.3 %", or "from 0 to 1.5 segments" where the board used to measure 0 (no
        percent of it)."""
        if self.reference_mean:
            return f"{(self.mean_since / self.reference_mean - 1) * 100:+.1f} %"
        return f"from 0 to {self.mean_since:.4g} {self.unit}"


class NotificationTarget(models.Model):
    """Where pifarm tells people of an event (benchmarks.notify): an apprise URL (e-mail,
    webhooks, Matrix, Slack...), which an admin sets and nobody reads back. It often holds a
    token or a password, so it is encrypted at rest (devices.credentials) and never shown."""

    class Event(models.TextChoices):
        CAMPAIGN_FINISHED = "campaign_finished", "a campaign finished"
        BOARD_ATTENTION = "board_attention", "a board needs attention"
        BOARD_DRIFTED = "board_drifted", "a board drifted (its canary)"
        CANARY_FAILED = "canary_failed", "a canary had failed runs"

    name = models.CharField(max_length=80, unique=True)
    url_encrypted = models.TextField(editable=False)
    events = models.JSONField(default=list)  # Event values
    enabled = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)
    last_sent = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.CharField(max_length=300, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def set_url(self, url: str) -> None:
        self.url_encrypted = credentials.encrypt(url)

    def url(self) -> str:
        return credentials.decrypt(self.url_encrypted)

    def wants(self, event: str) -> bool:
        return self.enabled and event in self.events
