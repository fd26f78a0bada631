"""The API's endpoints: read-only lists and details, and campaigns started and cancelled.

Every endpoint needs the permission its page needs (permissions.HasRolePermission); lists are
paged (settings.REST_FRAMEWORK) and filtered by query parameters, each checked: a filter that
cannot match (a code that is no UUID, an unknown state) is a 400 that says so, not an empty
page.
"""

import uuid

from django.db.models import Count, F, OuterRef, Prefetch, Q, Subquery
from django.db.models.fields.json import KT, KeyTransform
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework import serializers as drf_serializers
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from benchmarks import campaigns, comparisons, exports, progress, specs
from benchmarks.api import serializers
from benchmarks.api.authentication import sees_addresses
from benchmarks.api.permissions import HasRolePermission
from benchmarks.api.redact import Redactor, ShowAll
from benchmarks.models import Campaign, Comparison, Measurement, Run
from devices.models import Board, FactSnapshot, Preset, PresetVersion

UUID_PATTERN = "[0-9a-fA-F-]{32,36}"
# What no run shows here: its output (up to 256 KiB), a sample a second from each end, the
# whole probe of the board; read for each run, they would make a page of runs slow.
RUN_LEAVES_OUT = ("raw_output", "telemetry", "peer_telemetry", "snapshot__facts", "campaign__spec")


def _param(name: str, description: str, kind=str, enum=None) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.QUERY, description=description, enum=enum)


BOARD_PARAM = _param("board", "A board's code, or its name (retired boards of that name too).")
CAMPAIGN_PARAM = _param("campaign", "A campaign's code.", uuid.UUID)
BENCHMARK_PARAM = _param("benchmark", "A benchmark's name, e.g. sha1sum.")
RUN_FILTERS = [CAMPAIGN_PARAM, BOARD_PARAM, BENCHMARK_PARAM]  # ApiViewSet.run_filters


class ApiViewSet(viewsets.GenericViewSet):
    permission_classes = [HasRolePermission]
    lookup_field = "code"
    lookup_value_regex = UUID_PATTERN
    write_permission = ""  # read-only unless a view says otherwise

    def get_serializer_context(self):
        sees = sees_addresses(self.request)
        redactor = ShowAll() if sees else Redactor()
        return {**super().get_serializer_context(), "sees_addresses": sees, "redactor": redactor}

    def code_param(self, name: str) -> uuid.UUID | None:
        raw = self.request.query_params.get(name)
        if raw is None:
            return None
        try:
            return uuid.UUID(raw)
        except ValueError:
            raise ValidationError({name: f"{raw[:60]!r} is not a code (a UUID)."}) from None

    def run_filters(self, queryset, prefix: str = ""):
        """queryset narrowed by RUN_FILTERS: runs themselves, or rows of runs (prefix "run__")."""
        if (campaign := self.code_param("campaign")) is not None:
            queryset = queryset.filter(**{f"{prefix}campaign__code": campaign})
        if (benchmark := self.request.query_params.get("benchmark")) is not None:
            queryset = queryset.filter(**{f"{prefix}benchmark": benchmark})
        raw = self.request.query_params.get("board")
        if raw is None:
            return queryset
        try:
            return queryset.filter(**{f"{prefix}board__code": uuid.UUID(raw)})
        except ValueError:
            return queryset.filter(**{f"{prefix}board__name": raw})

    def yes_no_param(self, name: str) -> bool | None:
        raw = self.request.query_params.get(name)
        if raw is None:
            return None
        if raw.lower() not in ("true", "false"):
            raise ValidationError({name: "true or false."})
        return raw.lower() == "true"


@extend_schema_view(
    list=extend_schema(
        parameters=[_param("in_service", "true: boards in service; false: retired ones.", bool)]
    )
)
class BoardViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Boards, with their latest probe. Never a credential or a host key; the host, port, user
    name, serial and the board's own host name only for a token that may see addresses."""

    serializer_class = serializers.BoardSerializer
    read_permission = "devices.view_board"

    def get_queryset(self):
        latest = FactSnapshot.objects.filter(board=OuterRef("pk")).order_by("-taken_at")
        boards = Board.objects.annotate(latest_probe_id=Subquery(latest.values("pk")[:1]))
        in_service = self.yes_no_param("in_service")
        if in_service is not None:
            boards = boards.filter(retired__isnull=in_service)
        return boards.order_by("name", "pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        data = self.get_serializer(with_latest_probes(page), many=True).data
        return self.get_paginated_response(data)

    def retrieve(self, request, *args, **kwargs):
        board = with_latest_probes([self.get_object()])[0]
        return Response(self.get_serializer(board).data)


def with_latest_probes(boards) -> list[Board]:
    """boards, each with .latest_probe: its latest snapshot's columns (one query for all)."""
    boards = list(boards)
    probes = (
        FactSnapshot.objects.defer("facts")
        .annotate(
            simulated=KeyTransform("simulated", "facts"),
            serial=KT("facts__serial"),
            hostname=KT("facts__hostname"),
        )
        .in_bulk([board.latest_probe_id for board in boards if board.latest_probe_id])
    )
    for board in boards:
        board.latest_probe = probes.get(board.latest_probe_id)
    return boards


class PresetViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Presets with every version (newest first), as a campaign spec names them."""

    serializer_class = serializers.PresetSerializer
    read_permission = "devices.view_preset"

    def get_queryset(self):
        versions = PresetVersion.objects.select_related("author", "parent").order_by("-number")
        return (
            Preset.objects.select_related("created_by")
            .prefetch_related(Prefetch("versions", queryset=versions))
            .order_by("name")
        )


class CancelledSerializer(drf_serializers.Serializer):
    detail = drf_serializers.CharField()
    dropped = drf_serializers.IntegerField(help_text="Queued runs, cancelled at once.")
    asked_to_stop = drf_serializers.IntegerField(
        help_text="Running runs their jobs stop; one whose measurement ends first is kept, done."
    )
    stopped = drf_serializers.IntegerField(help_text="dropped + asked_to_stop.")


@extend_schema_view(
    list=extend_schema(
        parameters=[_param("state", "A campaign's state.", enum=Campaign.State.values)]
    ),
    create=extend_schema(
        request={"application/json": dict},
        responses={
            201: serializers.CampaignDetailSerializer,
            200: serializers.CampaignDetailSerializer,
        },
        description="Start a campaign from a spec, as `manage.py campaign start` reads it. A "
        "refused spec is a 400 whose detail says what to change; nothing is written then. The "
        "same spec with the same seed, posted again by the same user within 10 minutes, is "
        "a 200 with the campaign it started the first time.",
    ),
)
class CampaignViewSet(mixins.ListModelMixin, ApiViewSet):
    """Campaigns, each with its runs counted by state; the detail adds its progress."""

    read_permission = "benchmarks.view_campaign"
    write_permission = "benchmarks.run_campaign"

    def get_serializer_class(self):
        return (
            serializers.CampaignSerializer
            if self.action == "list"
            else serializers.CampaignDetailSerializer
        )

    def get_queryset(self):
        counts = {f"n_{state}": Count("runs", filter=Q(runs__state=state)) for state in Run.State}
        listed = Campaign.objects.select_related("created_by").annotate(**counts)
        state = self.request.query_params.get("state")
        if state is not None:
            if state not in Campaign.State.values:
                raise ValidationError({"state": f"one of {', '.join(Campaign.State.values)}."})
            listed = listed.filter(state=state)
        return listed.order_by("-created", "-pk")

    def retrieve(self, request, *args, **kwargs):
        return Response(self.detail_of(self.get_object()))

    def create(self, request, *args, **kwargs):
        try:
            campaign, new = campaigns.start_once(request.data, request.user)
        except specs.SpecError as exc:
            refusal = {"detail": str(exc), "field": exc.field}  # field: "" for the whole spec
            return Response(refusal, status=status.HTTP_400_BAD_REQUEST)
        campaign = self.get_queryset().get(pk=campaign.pk)
        location = request.build_absolute_uri(f"{campaign.code}/")
        # 200, not 201: the same spec posted again (a retry) made nothing new.
        answer = status.HTTP_201_CREATED if new else status.HTTP_200_OK
        return Response(self.detail_of(campaign), status=answer, headers={"Location": location})

    def detail_of(self, campaign: Campaign) -> dict:
        context = {**self.get_serializer_context(), "progress": progress.of(campaign)}
        return serializers.CampaignDetailSerializer(campaign, context=context).data

    @extend_schema(request=None, responses={200: CancelledSerializer, 409: CancelledSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, code=None):
        """Queued runs end at once, running ones are stopped by their jobs. A campaign that is
        not running any more is a 409 saying why."""
        campaign = self.get_object()
        cancelled = campaigns.cancel(campaign, request.user)
        if cancelled is None:
            words = campaigns.why_not_cancelled(campaign)
            nothing = {"detail": words, "dropped": 0, "asked_to_stop": 0, "stopped": 0}
            return Response(nothing, status=status.HTTP_409_CONFLICT)
        return Response(
            {
                "detail": f"Cancelled {campaign.name}: {cancelled.words}.",
                "dropped": cancelled.dropped,
                "asked_to_stop": cancelled.asked_to_stop,
                "stopped": cancelled.dropped + cancelled.asked_to_stop,
            }
        )


@extend_schema_view(
    list=extend_schema(
        parameters=[
            *RUN_FILTERS,
            _param("state", "A run's state.", enum=Run.State.values),
            _param("suspect", "true: suspect runs only; false: the others.", bool),
        ]
    )
)
class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Runs in the order their lanes run them; the detail adds the environment."""

    read_permission = "benchmarks.view_run"

    def get_serializer_class(self):
        if self.action == "list":
            return serializers.RunSerializer
        return serializers.RunDetailSerializer

    def get_queryset(self):
        runs = (
            Run.objects.select_related("campaign", "board", "preset_version__preset", "snapshot")
            .annotate(rerun_of_code=F("rerun_of__code"), retry_of_code=F("retry_of__code"))
            # By metric alone: Measurement's own order ("run" first) joins lanes, campaigns, boards.
            .prefetch_related(Prefetch("measurements", Measurement.objects.order_by("metric")))
            .order_by("campaign_id", "board_id", "sequence")
        )
        runs = runs.defer(*RUN_LEAVES_OUT, *(["environment"] if self.action == "list" else []))
        if (state := self.request.query_params.get("state")) is not None:
            if state not in Run.State.values:
                raise ValidationError({"state": f"one of {', '.join(Run.State.values)}."})
            runs = runs.filter(state=state)
        if (suspect := self.yes_no_param("suspect")) is not None:
            runs = runs.filter(suspect=suspect)
        return self.run_filters(runs)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            *RUN_FILTERS,
            _param("run", "A run's code.", uuid.UUID),
            _param("metric", "A metric's name, e.g. throughput."),
        ]
    )
)
class MeasurementViewSet(mixins.ListModelMixin, ApiViewSet):
    """Every value measured, one per run and metric, in run order."""

    serializer_class = serializers.MeasurementSerializer
    read_permission = "benchmarks.view_run"  # as the CSV of a campaign's values

    def get_queryset(self):
        measurements = (
            Measurement.objects.select_related(
                "run__campaign", "run__board", "run__preset_version__preset"
            )
            .only(
                "metric",
                "value",
                "unit",
                "higher_is_better",
                "run__code",
                "run__benchmark",
                "run__campaign__code",
                "run__board__name",
                "run__params",
                "run__suspect",
                "run__preset_version__number",
                "run__preset_version__preset__name",
            )
            .order_by("run_id", "metric")
        )
        if (run := self.code_param("run")) is not None:
            measurements = measurements.filter(run__code=run)
        if (metric := self.request.query_params.get("metric")) is not None:
            measurements = measurements.filter(metric=metric)
        return self.run_filters(measurements, "run__")


@extend_schema_view(
    retrieve=extend_schema(
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
        description="The comparison's statistics, as its JSON download: its choices, and per "
        "group n, mean, median (null for a group of more trials than a page draws, whose "
        "figures come from sums: sample_median and sample_n then say what the trials drawn "
        "show), SD, 95 % CI, min, max, suspects left out, the ratio and "
        "percent change against the baseline with its 95 % CI, Welch's p, the Holm-adjusted "
        "p, the verdict, the environment and each board's own figures. A comparison whose "
        "runs hold no value of its metric any more is a 404 saying so.",
    )
)
class ComparisonViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Saved comparisons, newest first; the detail computes the statistics from the runs."""

    serializer_class = serializers.ComparisonSerializer
    read_permission = "benchmarks.view_run"  # as the comparison's page

    def get_queryset(self):
        return Comparison.objects.order_by("-created", "-pk")

    def retrieve(self, request, *args, **kwargs):
        comparison = self.get_object()
        try:
            result = comparisons.compare(exports.runs_of(comparison), **exports.choice(comparison))
        except comparisons.ComparisonError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        redactor = self.get_serializer_context()["redactor"]
        return Response(redactor.data(exports.as_json(comparison, result)))
