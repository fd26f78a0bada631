"""The admin: custom benchmarks are edited here (admins); campaigns and runs are history,
shown read-only and never deleted (results point at them)."""

from django import forms
from django.contrib import admin

from benchmarks.catalog import custom_rules
from benchmarks.models import Campaign, CustomBenchmark, Lane, Measurement, Run
from devices.admin import ReadOnly, ReadOnlyAdmin


class CustomBenchmarkForm(forms.ModelForm):
    class Meta:
        model = CustomBenchmark
        fields = "__all__"
        # Said here, not on the model field: a help text there needs a migration.
        help_texts = {
            "params": 'Parameter names and their defaults, each one text in quotes, e.g. {"size": '
            f'"64M", "count": "8"}}; at most {custom_rules.MAX_PARAM_LENGTH} characters a value.'
        }


@admin.register(CustomBenchmark)
class CustomBenchmarkAdmin(admin.ModelAdmin):
    form = CustomBenchmarkForm
    list_display = ["name", "title", "metric", "unit", "version", "changed"]
    search_fields = ["name", "title", "description"]
    readonly_fields = ["version", "created", "changed"]


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    """The rows of a run or campaign, visible with it: the roles grant no permission on these
    models of their own (their parent's view permission is the one that counts)."""

    extra = 0
    can_delete = False
    parent_permission = ""

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm(self.parent_permission)


class LaneInline(ReadOnlyInline):
    model = Lane
    fields = ["board", "peer_board", "peer_is_controller", "state", "step", "reason", "finished"]
    readonly_fields = fields
    parent_permission = "benchmarks.view_campaign"


class MeasurementInline(ReadOnlyInline):
    model = Measurement
    fields = ["metric", "value", "unit", "higher_is_better"]
    readonly_fields = fields
    parent_permission = "benchmarks.view_run"


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyAdmin):
    list_display = ["name", "state", "created_by", "created", "finished"]
    list_filter = ["state", "order"]
    search_fields = ["name"]
    inlines = [LaneInline]


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["benchmark", "board", "preset_version", "repetition", "state", "suspect"]
    list_filter = ["state", "suspect", "benchmark"]
    list_select_related = ["board", "preset_version__preset"]
    search_fields = ["benchmark", "board__name", "campaign__name"]
    inlines = [MeasurementInline]
