"""The admin: custom benchmarks and notification targets are edited here (admins); campaigns
and runs are history, shown read-only, but for a finished campaign's archive or deletion with
its runs (benchmarks.retention)."""

import apprise
from django import forms
from django.contrib import admin, messages
from django.contrib.admin import actions as admin_actions

from benchmarks import notify, retention, schedules
from benchmarks.catalog import custom_rules
from benchmarks.models import (
    Campaign,
    CustomBenchmark,
    Lane,
    Measurement,
    NotificationTarget,
    Run,
    Schedule,
)
from devices.admin import ReadOnly, ReadOnlyAdmin, SinceFilter


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


class ArchivedFilter(SinceFilter):
    title = parameter_name = field = "archived"
    unset, set_ = ("no", "not archived"), ("yes", "archived")


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyAdmin):
    """Read only, but for an admin's archive, restore and delete of finished campaigns
    (benchmarks.retention): the delete page counts what goes with one before it asks."""

    list_display = ["name", "state", "created_by", "created", "finished", "archived"]
    list_filter = ["state", ArchivedFilter, "order"]
    search_fields = ["name"]
    inlines = [LaneInline]
    actions = ["archive", "restore", "delete_selected"]

    def has_delete_permission(self, request, obj=None):
        allowed = request.user.has_perm("benchmarks.delete_campaign")
        return allowed and (obj is None or obj.finished is not None)

    @admin.action(permissions=["delete"], description="Delete the chosen finished campaigns")
    def delete_selected(self, request, queryset):
        """Django's own (its page counts what goes, then asks, and posts back to this name), of
        the finished ones only; the unfinished ones are left, and said so."""
        running = queryset.filter(finished__isnull=True).count()
        if running:
            self.message_user(
                request,
                f"{running} of the chosen campaigns have not finished: they are left as they "
                "are (cancel one first to delete it).",
                messages.WARNING,
            )
        finished = queryset.filter(finished__isnull=False)
        if finished.exists():
            return admin_actions.delete_selected(self, request, finished)
        return None

    def get_deleted_objects(self, objs, request):
        """What a deletion takes, counted: Django would list every run and measurement (a
        campaign may have tens of thousands) on the page that asks."""
        # Its lanes, runs and measurements are the campaign's own (their admins are read-only,
        # which Django would take for a missing permission): delete_campaign is the one asked.
        deleted, counts, _, protected = super().get_deleted_objects(objs, request)
        shown = [str(obj) for obj in objs]
        withdrawn = retention.comparisons_showing(objs)
        if withdrawn.exists():
            shown.append(
                f"{withdrawn.count()} saved comparison(s) that show them are kept but marked "
                "withdrawn: their share links answer 410 from then on"
            )
        return shown, counts, set(), protected

    @admin.action(permissions=["delete"], description="Archive the chosen finished campaigns")
    def archive(self, request, queryset):
        count = retention.archive(queryset)
        self.message_user(
            request,
            f"Archived {count} campaign(s): out of the lists; shares of comparisons that show "
            "them answer 410 until they are restored. Unfinished ones were left as they were.",
        )

    @admin.action(
        permissions=["delete"], description="Restore the chosen campaigns from the archive"
    )
    def restore(self, request, queryset):
        self.message_user(request, f"Restored {retention.restore(queryset)} campaign(s).")


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["benchmark", "board", "preset_version", "repetition", "state", "suspect"]
    list_filter = ["state", "suspect", "benchmark"]
    list_select_related = ["board", "preset_version__preset"]
    search_fields = ["benchmark", "board__name", "campaign__name"]
    inlines = [MeasurementInline]


class NotificationTargetForm(forms.ModelForm):
    """The URL is written, never shown: it often holds a token or a password. Left empty on a
    change, the URL stays as it was."""

    url = forms.CharField(
        label="apprise URL",
        required=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="e.g. json://receiver.lab:8080/pifarm, mailto://user:password@example.com or "
        "slack://T.../B.../token (see apprise's list of services). Stored encrypted and never "
        "shown again; leave it empty to keep the one saved.",
    )
    events = forms.MultipleChoiceField(
        choices=NotificationTarget.Event.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = NotificationTarget
        fields = ["name", "url", "events", "enabled"]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"].strip()
        if not url and not self.instance.pk:
            raise forms.ValidationError("A new target needs its URL.")
        if url and not apprise.Apprise().add(url):
            raise forms.ValidationError(
                "apprise does not understand this URL (a scheme it knows, then its address)."
            )
        return url

    def save(self, commit=True):
        if self.cleaned_data["url"]:
            self.instance.set_url(self.cleaned_data["url"])
        return super().save(commit)


@admin.register(NotificationTarget)
class NotificationTargetAdmin(admin.ModelAdmin):
    form = NotificationTargetForm
    list_display = ["name", "events_shown", "enabled", "last_sent", "last_error"]
    readonly_fields = ["last_sent", "last_error"]
    actions = ["send_test"]

    @admin.display(description="events")
    def events_shown(self, target: NotificationTarget) -> str:
        names = dict(NotificationTarget.Event.choices)
        return "; ".join(names.get(event, event) for event in target.events)

    @admin.action(description="Send a test message to the chosen targets")
    def send_test(self, request, queryset):
        for target in queryset:
            notify.queue(
                target, "pifarm: a test message", "A test of this target, sent from the admin."
            )
        self.message_user(
            request, f"Queued a test message to {queryset.count()} target(s); see last sent."
        )


@admin.register(Schedule)
class ScheduleAdmin(ReadOnlyAdmin):
    """Schedules are made from specs and paused on their pages; here an admin removes one (its
    starts go with it; the campaigns they started stay)."""

    list_display = ["name", "cron", "every_s", "paused", "next_at", "canary_of", "created_by"]
    list_filter = ["paused"]
    search_fields = ["name"]

    def has_delete_permission(self, request, obj=None):
        return request.user.has_perm("benchmarks.delete_schedule")

    def delete_model(self, request, obj):
        schedules.drop(obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for schedule in queryset:
            schedules.drop(schedule)
        super().delete_queryset(request, queryset)
