import ipaddress
import re
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone

from devices import credentials

# DNS labels of 1-63 letters, digits, '_' or '-', neither starting nor ending with '-': nothing a
# user types can be taken for an option by ssh or a shell, or crash the resolver.
_HOSTNAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
    r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?"
)


def host_validator(value: str) -> None:
    try:
        ipaddress.ip_address(value)
        return
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(value):
        raise ValidationError(
            "Enter a host name (labels of letters, digits and '-', separated by dots) "
            "or an IP address."
        )


username_validator = RegexValidator(
    r"^[a-z_][a-z0-9_-]{0,31}$",
    "Enter a Linux user name (lower-case letters, digits, '_' and '-', not starting with a digit "
    "or '-').",
)
queue_validator = RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,63}$", "Enter a queue name.")
# What a campaign's spec calls the worker's own host as a network benchmark's peer: no board may
# be named so (in any case), or it could never be chosen as a peer itself.
CONTROLLER = "controller"


class BoardQuerySet(models.QuerySet):
    def in_service(self):
        """Boards that are not retired: the only ones shown on the dashboard or given work."""
        return self.filter(retired__isnull=True)

    def retired(self):
        return self.filter(retired__isnull=False)


class Board(models.Model):
    class Status(models.TextChoices):
        NEW = "new", "new"
        ONLINE = "online", "online"
        OFFLINE = "offline", "offline"
        BUSY = "busy", "busy"
        MAINTENANCE = "maintenance", "maintenance"
        NEEDS_ATTENTION = "needs_attention", "needs attention"

    class AuthMethod(models.TextChoices):
        KEY = "key", "SSH private key"
        PASSWORD = "password", "password"  # noqa: S105 - a label, not a password

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=64)
    host = models.CharField(max_length=253, validators=[host_validator])
    port = models.PositiveIntegerField(
        default=22, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    username = models.CharField(max_length=32, default="pi", validators=[username_validator])
    auth_method = models.CharField(max_length=16, choices=AuthMethod.choices)
    # Fernet token; see devices.credentials. Never rendered, never exported.
    credential_ciphertext = models.TextField(editable=False)
    # The host key the user confirmed ("ssh-ed25519 AAAA..."); empty until confirmed.
    host_key = models.TextField(blank=True, editable=False)
    # The key the board offered at registration, waiting for the user's confirmation.
    offered_host_key = models.TextField(blank=True, editable=False)
    tags = models.CharField(max_length=200, blank=True, help_text="Comma-separated labels.")
    queue = models.CharField(
        max_length=64,
        default="default",
        validators=[queue_validator],
        help_text="The worker queue whose workers can reach this board.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEW)
    status_reason = models.CharField(max_length=500, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)
    # Removing a board retires it: it leaves service and keeps its history; see devices.retire.
    retired = models.DateTimeField(null=True, blank=True, editable=False)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    objects = BoardQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            # A replacement board may take the name of a retired one (the lab's label on the
            # bench); among boards in service a name is unique. Its index serves register_board
            # --replace (a board in service, by name).
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(retired__isnull=True),
                name="board_name_unique_in_service",
                violation_error_message="A board in service already has this name.",
                violation_error_code="unique",  # shown on the name field of forms
            ),
            models.CheckConstraint(
                condition=models.Q(port__gte=1, port__lte=65535), name="board_port_in_range"
            ),
            models.CheckConstraint(
                condition=models.Q(auth_method__in=["key", "password"]),
                name="board_auth_method_known",
            ),
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("devices:board", args=[self.code])

    def validate_constraints(self, exclude=None):
        # No form edits `retired`, yet it decides whether the name must be unique: without
        # this, forms skip that constraint and a clash ends as an IntegrityError.
        super().validate_constraints(exclude=set(exclude or ()) - {"retired"})

    def clean(self):
        if self.name.strip().casefold() == CONTROLLER:
            raise ValidationError(
                {
                    "name": f"“{CONTROLLER}” is what a campaign calls the worker's own host (a "
                    "network benchmark's peer), so a board cannot be named so. Choose another "
                    "name."
                }
            )

    def set_credential(self, kind: str, secret: str) -> None:
        self.auth_method = kind
        self.credential_ciphertext = credentials.encrypt(secret)

    def credential(self) -> credentials.Credential:
        return credentials.Credential(
            self.auth_method, credentials.decrypt(self.credential_ciphertext)
        )

    @property
    def tag_list(self) -> list[str]:
        return [tag.strip() for tag in self.tags.split(",") if tag.strip()]

    @property
    def latest_snapshot(self):
        return self.snapshots.order_by("-taken_at").first()

    @staticmethod
    def latest_snapshots(boards) -> dict:
        """{board id: its latest snapshot} of boards, in one query (a page of many boards)."""
        latest = FactSnapshot.objects.filter(board=models.OuterRef("board")).order_by("-taken_at")
        newest = FactSnapshot.objects.filter(
            board__in=boards, pk=models.Subquery(latest.values("pk")[:1])
        )
        return {snapshot.board_id: snapshot for snapshot in newest}

    @property
    def current_application(self):
        """The last preset applied and verified here: what the board runs now."""
        return self.applications.filter(state="verified").order_by("-finished").first()


class FactSnapshot(models.Model):
    """What one probe found on a board. Kept as history; never edited."""

    # History stays: a board with snapshots, tasks or applications is retired, never deleted.
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="snapshots")
    taken_at = models.DateTimeField(auto_now_add=True)
    boot_id = models.CharField(max_length=64, blank=True)
    # Columns for the dashboard; the whole probe result is in `facts`.
    model = models.CharField(max_length=120, blank=True)
    revision = models.CharField(max_length=16, blank=True)
    kernel_bits = models.PositiveSmallIntegerField(null=True)
    userland_bits = models.PositiveSmallIntegerField(null=True)
    os_name = models.CharField(max_length=120, blank=True)
    temperature_c = models.FloatField(null=True)
    throttled = models.PositiveBigIntegerField(null=True)  # a 32-bit mask
    facts = models.JSONField()

    class Meta:
        ordering = ["-taken_at"]
        indexes = [
            # board page: a board's snapshot history, newest first
            models.Index(fields=["board", "-taken_at"], name="snapshot_board_recent"),
        ]

    def __str__(self):
        return f"{self.board} at {self.taken_at:%Y-%m-%d %H:%M}"


class BoardWork(models.Model):
    """Work that drives one board through an RQ job: a task, a preset application, a lane.

    The row is the truth about the work, for the page that shows its progress; Redis only
    carries its job. How every kind is queued, claimed, waits, ends and is swept:
    devices.work. Each kind ends in its own END_STATES.
    """

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        WAITING = "waiting", "waiting for the board"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        VERIFIED = "verified", "applied and verified"
        ROLLED_BACK = "rolled_back", "verification failed, old config restored"
        NEEDS_ATTENTION = "needs_attention", "needs attention"

    UNFINISHED = (State.QUEUED, State.WAITING, State.RUNNING)
    END_STATES: tuple[str, ...] = (State.DONE, State.FAILED)
    # The sweep's time limits apply (devices.work): its rows say when they were created.
    TIME_LIMITED = True
    WORK_KIND = ""  # the name of its kind of work (devices.work.Kind), for a model of one kind
    KIND_FIELD = ""  # for a model of several: the field that names each row's kind

    state = models.CharField(max_length=20, choices=State.choices, default=State.QUEUED)
    step = models.CharField(max_length=200, blank=True)  # what it is doing now, for the page
    reason = models.TextField(blank=True)  # why it ended as it did, in words
    started = models.DateTimeField(null=True, blank=True)
    # While another job drives the board: since when this one waits, and when it tries again.
    waiting_since = models.DateTimeField(null=True, blank=True)
    next_try = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # The RQ job carrying it now (its latest try): the stale sweep asks Redis whether it lives.
    job_id = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        abstract = True

    @classmethod
    def sweepable(cls, older_than, now):
        """The unfinished rows whose job the sweep asks Redis about: those past the grace
        that a new row's job gets to be queued, with a job to ask about (the time limits see
        to the others)."""
        unfinished = cls.objects.filter(state__in=cls.UNFINISHED, created__lt=older_than)
        return unfinished.exclude(job_id="")

    @property
    def work_kind(self) -> str:
        """Its kind of work's name (devices.work.KINDS)."""
        return self.WORK_KIND

    @property
    def is_finished(self) -> bool:
        return self.state not in self.UNFINISHED

    # What busy_words and busy_url read beyond the row (select_related): the dashboard lists
    # every board's work in progress in one query a kind.
    BUSY_RELATED: tuple[str, ...] = ()

    def busy_words(self) -> str:
        """What it is, as the dashboard names a board's work in progress."""
        return str(self)

    def busy_url(self) -> str:
        return self.board.get_absolute_url()

    @property
    def waiting_words(self) -> str:
        if self.state != self.State.WAITING:
            return ""
        when = ""
        if self.next_try:
            when = f"; next try at {timezone.localtime(self.next_try):%H:%M:%S}"
        return f"waiting for {self.board.name}: another job is driving it{when}"


class BoardTask(BoardWork):
    """One piece of background work on a board (fetch host key, probe, health check, prepare).

    The row is the source of truth for the page that shows its progress; Redis only
    carries the work.
    """

    class Kind(models.TextChoices):
        FETCH_HOST_KEY = "fetch_host_key", "fetch host key"
        PROBE = "probe", "probe"
        HEALTH = "health", "health check"
        PREPARE = "prepare", "prepare for benchmarks"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="tasks")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    snapshot = models.ForeignKey(FactSnapshot, null=True, blank=True, on_delete=models.PROTECT)
    created = models.DateTimeField(auto_now_add=True)
    # A prepare task: the benchmarks it was asked for (names) and the tail of apt's output
    # (benchmarks.prepare caps it); its reason says what it did, in words, once done.
    benchmarks = models.JSONField(default=list, blank=True)
    log_tail = models.TextField(blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [
            # board page: the latest tasks of a board
            models.Index(fields=["board", "-created"], name="task_board_recent"),
        ]
        # Operators start probes, health checks and prepare tasks (devices.roles): installing
        # the packages of our own catalog is routine work, like probing; host-key fetches are
        # part of changing a board's connection.
        permissions = [("probe_board", "Can probe and health-check boards")]

    def __str__(self):
        return f"{self.get_kind_display()} of {self.board} ({self.state})"

    def busy_words(self) -> str:
        return self.get_kind_display()

    KIND_FIELD = "kind"  # each kind of task is its own kind of work

    @property
    def work_kind(self) -> str:
        return self.kind

    @property
    def duration_s(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None


class Preset(models.Model):
    """A named config.txt overclock preset; its content lives in immutable versions."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    # Board families it is meant for (keys of the firmware reference: pi1, pi3, pi4, pi5...).
    families = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("devices:preset", args=[self.code])

    @property
    def latest(self):
        return self.versions.order_by("-number").first()


class PresetVersionQuerySet(models.QuerySet):
    """Versions are only ever added: no bulk update or delete either."""

    def update(self, **kwargs):
        raise ValueError("preset versions are immutable: make a new version instead")

    def delete(self):
        raise ValueError("preset versions are kept: delete the preset if none was applied")


class PresetVersion(models.Model):
    """One immutable state of a preset. Results and applications point here."""

    class Governor(models.TextChoices):
        # raspberry-pi.yaml: governor.available
        ONDEMAND = "ondemand", "ondemand"
        PERFORMANCE = "performance", "performance"
        POWERSAVE = "powersave", "powersave"
        CONSERVATIVE = "conservative", "conservative"
        SCHEDUTIL = "schedutil", "schedutil"

    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    # {"arm_freq": "900", ...}: the lines of the managed block, as config.txt spells them.
    options = models.JSONField()
    governor = models.CharField(max_length=16, choices=Governor.choices, blank=True)
    acknowledge_warranty = models.BooleanField(
        default=False,
        help_text="I know these settings set the board's permanent warranty (overclock) bit.",
    )
    # Set only by a staff user: the preset changes what the board boots (kernel, cmdline...).
    acknowledge_boot = models.BooleanField(
        default=False,
        help_text="I know these settings change what the board boots (kernel, device tree...).",
    )
    note = models.CharField(max_length=300, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = PresetVersionQuerySet.as_manager()

    class Meta:
        ordering = ["preset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["preset", "number"], name="preset_version_number"),
        ]

    def __str__(self):
        return f"{self.preset.name} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("a preset version is immutable: save a new version instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("preset versions are kept: delete the preset if none was applied")

    def get_absolute_url(self):
        return reverse("devices:preset_version", args=[self.preset.code, self.number])


class Application(BoardWork):
    """Applying one preset version to one board: the record of what happened."""

    WORK_KIND = "apply"

    class Mode(models.TextChoices):
        TRIAL = "trial", "trial boot first (tryboot)"
        DIRECT = "direct", "write config.txt and reboot"

    END_STATES = (
        BoardWork.State.VERIFIED,
        BoardWork.State.ROLLED_BACK,
        BoardWork.State.FAILED,
        BoardWork.State.NEEDS_ATTENTION,
    )

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="applications")
    version = models.ForeignKey(
        PresetVersion, on_delete=models.PROTECT, related_name="applications"
    )
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.TRIAL)
    # {"arm_freq": {"wanted": "900", "got": "900", "ok": true}, "governor": ..., ...}
    verification = models.JSONField(default=dict, blank=True)
    governor_method = models.CharField(max_length=120, blank=True)
    backup_path = models.CharField(max_length=300, blank=True)
    backup_text = models.TextField(blank=True)
    config_path = models.CharField(max_length=300, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        indexes = [
            # board page: what runs on the board now (its latest application)
            models.Index(fields=["board", "-created"], name="application_board_recent"),
        ]
        permissions = [("apply_preset", "Can apply preset versions to boards")]
        constraints = [
            # A form posted twice must not apply (and reboot) twice: one unfinished
            # application per board, whichever process tries to add a second.
            models.UniqueConstraint(
                fields=["board"],
                condition=models.Q(state__in=["queued", "waiting", "running"]),
                name="application_one_unfinished_per_board",
            ),
        ]

    def __str__(self):
        return f"{self.version} on {self.board} ({self.state})"

    BUSY_RELATED = ("version__preset",)

    def busy_words(self) -> str:
        return f"applying {self.version}"

    def busy_url(self) -> str:
        return self.get_absolute_url()

    def get_absolute_url(self):
        return reverse("devices:application", args=[self.code])
