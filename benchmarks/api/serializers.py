"""The API's JSON: what each object shows, and what it never shows.

No serializer has a credential, a host key or a probe's whole facts. A board's host, port,
user name, serial and own host name are added only for a token that may see addresses (the
view puts "redactor" in the context: benchmarks.api.redact), and text from boards goes
through that redactor.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmarks import results
from benchmarks.models import Campaign, Comparison, Lane, Measurement, Run
from devices.models import Board, Preset, PresetVersion


class RedactedText(serializers.CharField):
    """Text from a board or from SSH: addresses in it are hidden unless the token sees them."""

    def to_representation(self, value):
        return self.context["redactor"].text(super().to_representation(value))


class RedactedJSON(serializers.JSONField):
    def to_representation(self, value):
        return self.context["redactor"].data(value)


class LatestProbeSerializer(serializers.Serializer):
    """The board's latest probe, as the dashboard shows it (the snapshot's own columns)."""

    taken_at = serializers.DateTimeField()
    model = serializers.CharField()
    revision = serializers.CharField()
    simulated = serializers.BooleanField(allow_null=True)
    kernel_bits = serializers.IntegerField(allow_null=True)
    userland_bits = serializers.IntegerField(allow_null=True)
    os_name = serializers.CharField()
    temperature_c = serializers.FloatField(allow_null=True)
    throttled = serializers.IntegerField(allow_null=True)


class BoardSerializer(serializers.ModelSerializer):
    status_reason = RedactedText()
    tags = serializers.ListField(source="tag_list", child=serializers.CharField())
    host_key_confirmed = serializers.SerializerMethodField()
    latest_probe = serializers.SerializerMethodField()
    # Only for a token that may see addresses; absent otherwise.
    host = serializers.CharField(required=False)
    port = serializers.IntegerField(required=False)
    username = serializers.CharField(required=False)
    serial = serializers.SerializerMethodField(required=False)
    hostname = serializers.SerializerMethodField(required=False)

    ADDRESS_FIELDS = ("host", "port", "username", "serial", "hostname")

    class Meta:
        model = Board
        fields = [
            "code",
            "name",
            "status",
            "status_reason",
            "last_seen",
            "tags",
            "queue",
            "created",
            "retired",
            "host_key_confirmed",
            "latest_probe",
            "host",
            "port",
            "username",
            "serial",
            "hostname",
        ]

    def to_representation(self, board):
        data = super().to_representation(board)
        if not self.context["sees_addresses"]:
            for name in self.ADDRESS_FIELDS:
                data.pop(name)
        return data

    def get_host_key_confirmed(self, board) -> bool:
        return bool(board.host_key)

    @extend_schema_field(LatestProbeSerializer(allow_null=True))
    def get_latest_probe(self, board):
        probe = board.latest_probe
        return LatestProbeSerializer(probe).data if probe else None

    def get_serial(self, board) -> str | None:
        return board.latest_probe.serial if board.latest_probe else None

    def get_hostname(self, board) -> str | None:
        return board.latest_probe.hostname if board.latest_probe else None


class PresetVersionSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField(allow_null=True)  # null: no author, or one deleted
    parent = serializers.SerializerMethodField()
    spec_name = serializers.SerializerMethodField()

    class Meta:
        model = PresetVersion
        fields = [
            "number",
            "spec_name",
            "options",
            "governor",
            "acknowledge_warranty",
            "acknowledge_boot",
            "note",
            "author",
            "parent",
            "created",
        ]

    def get_parent(self, version) -> int | None:
        """The number of the version it was made from (within the preset it was cloned in)."""
        return version.parent.number if version.parent_id else None

    def get_spec_name(self, version) -> str:
        """How a campaign spec names this version."""
        return f"{version.preset.name}@{version.number}"


class PresetSerializer(serializers.ModelSerializer):
    created_by = serializers.StringRelatedField(allow_null=True)  # null: made by no user
    versions = serializers.SerializerMethodField()

    class Meta:
        model = Preset
        fields = ["code", "name", "description", "families", "created_by", "created", "versions"]

    @extend_schema_field(PresetVersionSerializer(many=True))
    def get_versions(self, preset):
        return PresetVersionSerializer(preset.versions.all(), many=True, context=self.context).data


class CampaignSerializer(serializers.ModelSerializer):
    name = RedactedText()  # its maker's words, which may name a board's host
    spec = RedactedJSON()  # which holds the name too
    created_by = serializers.StringRelatedField(allow_null=True)  # null: made by no user
    run_counts = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = [
            "code",
            "name",
            "state",
            "spec",
            "created_by",
            "created",
            "finished",
            "estimated_s",
            "run_counts",
        ]

    def get_run_counts(self, campaign) -> dict[str, int]:
        """Runs by state, every state present."""
        return {state: getattr(campaign, f"n_{state}") for state in Run.State.values}


ETA_HELP = (
    "Seconds left, from the runs measured so far; null when no run is left, or when every "
    "run left is past its expected length (then finishing is true)."
)
FINISHING_HELP = "Runs are left, each past its expected length: how long they take is unknown."


class LaneSerializer(serializers.ModelSerializer):
    """One board's part of a campaign, as the campaign's page shows it."""

    board = serializers.CharField(source="board.name")
    board_code = serializers.UUIDField(source="board.code")
    peer = serializers.CharField(source="peer_name")
    step = RedactedText()
    log_tail = RedactedText()
    error = RedactedText(source="reason")  # why the lane ended failed
    runs_total = serializers.IntegerField()
    runs_ended = serializers.IntegerField()
    eta_s = serializers.FloatField(allow_null=True, help_text=ETA_HELP)
    finishing = serializers.BooleanField(help_text=FINISHING_HELP)

    class Meta:
        model = Lane
        fields = [
            "board",
            "board_code",
            "peer",
            "state",
            "step",
            "log_tail",
            "error",
            "started",
            "finished",
            "runs_total",
            "runs_ended",
            "eta_s",
            "finishing",
        ]


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    ended = serializers.IntegerField()
    percent = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())
    eta_s = serializers.SerializerMethodField(help_text=ETA_HELP)
    finishing = serializers.BooleanField(help_text=FINISHING_HELP)
    lanes = serializers.SerializerMethodField()

    def get_eta_s(self, state) -> float | None:
        return None if state.finishing else state.eta_s

    @extend_schema_field(LaneSerializer(many=True))
    def get_lanes(self, state):
        lanes = []
        for item in state.lanes:
            lane = item.lane
            lane.runs_total, lane.runs_ended = item.total, item.ended
            lane.eta_s = None if item.finishing else item.eta_s
            lane.finishing = item.finishing
            lanes.append(lane)
        return LaneSerializer(lanes, many=True, context=self.context).data


class CampaignDetailSerializer(CampaignSerializer):
    progress = serializers.SerializerMethodField()

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "progress"]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, campaign):
        return ProgressSerializer(self.context["progress"], context=self.context).data


class ValueSerializer(serializers.Serializer):
    value = serializers.FloatField()
    unit = serializers.CharField()
    higher_is_better = serializers.BooleanField()


class PresetVersionRefSerializer(serializers.Serializer):
    preset = serializers.UUIDField()
    number = serializers.IntegerField()


class RunSerializer(serializers.ModelSerializer):
    campaign = serializers.UUIDField(source="campaign.code")
    board = serializers.CharField(source="board.name")
    board_code = serializers.UUIDField(source="board.code")
    preset = serializers.CharField(source="preset_label")
    preset_version = serializers.SerializerMethodField()
    step = RedactedText()
    reason = RedactedText()
    suspect_reasons = RedactedJSON()
    rerun_of = serializers.UUIDField(source="rerun_of_code", allow_null=True)
    retry_of = serializers.UUIDField(source="retry_of_code", allow_null=True)
    kernel_bits = serializers.SerializerMethodField()
    userland_bits = serializers.SerializerMethodField()
    os = serializers.SerializerMethodField()
    tool_version = serializers.SerializerMethodField()
    values = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "code",
            "campaign",
            "board",
            "board_code",
            "sequence",
            "preset",
            "preset_version",
            "benchmark",
            "definition_version",
            "params",
            "repetition",
            "state",
            "step",
            "reason",
            "suspect",
            "suspect_reasons",
            "rerun_of",
            "retry_of",
            "peer",
            "kernel_bits",
            "userland_bits",
            "os",
            "tool_version",
            "created",
            "started",
            "finished",
            "measure_s",
            "values",
        ]

    @extend_schema_field(PresetVersionRefSerializer(allow_null=True))
    def get_preset_version(self, run):
        """{"preset": code, "number": n}, or null for "as the board is"."""
        version = run.preset_version
        return {"preset": version.preset.code, "number": version.number} if version else None

    def get_kernel_bits(self, run) -> int | None:
        return results.bits(run)[0]

    def get_userland_bits(self, run) -> int | None:
        return results.bits(run)[1]

    def get_os(self, run) -> str:
        return self.context["redactor"].text(run.snapshot.os_name if run.snapshot else "")

    def get_tool_version(self, run) -> str:
        return self.context["redactor"].text(results.tool_version(run))

    @extend_schema_field(serializers.DictField(child=ValueSerializer()))
    def get_values(self, run):
        return {
            m.metric: {"value": m.value, "unit": m.unit, "higher_is_better": m.higher_is_better}
            for m in run.measurements.all()
        }


class RunDetailSerializer(RunSerializer):
    """A run with what the table leaves out: its environment and what the parser kept."""

    environment = serializers.SerializerMethodField()
    details = RedactedJSON()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "environment", "details", "raw_truncated"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_environment(self, run):
        """Tool versions, offloads, the quiet wait, the peer (its host and address only for a
        token that sees addresses)."""
        environment = dict(run.environment)
        peer = environment.get("peer_identity")
        if isinstance(peer, dict) and not self.context["sees_addresses"]:
            environment["peer_identity"] = {"name": peer.get("name", "")}
        return self.context["redactor"].data(environment)


class MeasurementSerializer(serializers.ModelSerializer):
    """A value with what its run ran: the preset, the benchmark's parameters, and whether the
    telemetry made the run suspect (a comparison leaves those out unless asked)."""

    run = serializers.UUIDField(source="run.code")
    campaign = serializers.UUIDField(source="run.campaign.code")
    board = serializers.CharField(source="run.board.name")
    benchmark = serializers.CharField(source="run.benchmark")
    preset = serializers.CharField(source="run.preset_label")
    params = serializers.JSONField(source="run.params")
    suspect = serializers.BooleanField(source="run.suspect")

    class Meta:
        model = Measurement
        fields = [
            "run",
            "campaign",
            "board",
            "benchmark",
            "preset",
            "params",
            "suspect",
            "metric",
            "value",
            "unit",
            "higher_is_better",
        ]


class ComparisonSerializer(serializers.ModelSerializer):
    """A saved comparison's choices; its detail is its statistics (benchmarks.exports.as_json).

    The name is its saver's words, which may name a board's host: redacted like board text."""

    name = RedactedText()

    class Meta:
        model = Comparison
        fields = ["code", "name", "benchmark", "metric", "group_by", "created"]
