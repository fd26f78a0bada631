from django.contrib import admin, messages

from devices import presets, retire, ssh
from devices.admin_users import RoleUserAdmin  # noqa: F401 - registers itself for users
from devices.forms import BoardAdminForm
from devices.forms_presets import PresetAdminForm
from devices.models import Application, Board, BoardTask, FactSnapshot, Preset, PresetVersion


class ReadOnly:
    """History shown to whoever may view it: nobody adds, changes or deletes it here (results
    and later records point at it). A mixin for model admins and inlines alike."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    """Every field shown, none editable."""

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]


class SinceFilter(admin.SimpleListFilter):
    """Rows whose `field` (a moment: retired, archived) is not set yet, or is. A subclass
    names the field, and each choice as (its value in the URL, its words)."""

    field = ""
    unset = set_ = ("", "")

    def lookups(self, request, model_admin):
        return [self.unset, self.set_]

    def queryset(self, request, queryset):
        if self.value() in (self.unset[0], self.set_[0]):
            return queryset.filter(**{f"{self.field}__isnull": self.value() == self.unset[0]})
        return queryset


class InServiceFilter(SinceFilter):
    title = parameter_name = "service"
    field = "retired"
    unset, set_ = ("in", "in service"), ("retired", "retired")


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    form = BoardAdminForm
    # credential_ciphertext is not editable and never listed: secrets stay out of the admin.
    list_display = ["name", "host", "port", "username", "status", "queue", "last_seen", "retired"]
    list_filter = [InServiceFilter, "status", "queue", "auth_method"]
    actions = ["retire_boards", "restore_boards"]
    search_fields = ["name", "host", "tags"]
    fields = [
        "name",
        "host",
        "port",
        "username",
        "auth_method_label",
        "host_key_fingerprint",
        "tags",
        "queue",
        "status",
        "status_reason",
        "last_seen",
        "created_by",
        "retired",
        "retired_by",
    ]
    # Host and port change through the board's "Edit connection" page, which re-confirms the
    # host key; the credential only through that page too.
    readonly_fields = [
        "host",
        "port",
        "auth_method_label",
        "host_key_fingerprint",
        "last_seen",
        "created_by",
        "retired",
        "retired_by",
    ]

    def has_add_permission(self, request):
        return False  # boards are registered through the fingerprint check, not here

    def has_delete_permission(self, request, obj=None):
        return False  # a board's history stays: the "retire" action takes it out of service

    @admin.action(description="Retire selected boards (keeps their history)")
    def retire_boards(self, request, queryset):
        retired = 0
        for board in queryset.in_service():
            try:
                if retire.remove(board, request.user):
                    retired += 1
                else:
                    self.message_user(request, f"{board.name} was never registered; forgot it.")
            except retire.StillWorking as busy:
                self.message_user(request, retire.still_working_message(busy), messages.ERROR)
        self.message_user(request, f"Retired {retired} board(s).")

    @admin.action(description="Restore selected boards to service")
    def restore_boards(self, request, queryset):
        restored = 0
        for board in queryset.retired():
            try:
                retire.restore(board)
                restored += 1
            except retire.NameTaken as exc:
                self.message_user(request, str(exc), messages.ERROR)
        self.message_user(request, f"Restored {restored} board(s).")

    @admin.display(description="Logs in with")
    def auth_method_label(self, board):
        return board.get_auth_method_display()

    @admin.display(description="Pinned host key")
    def host_key_fingerprint(self, board):
        return ssh.fingerprint(board.host_key) if board.host_key else "not confirmed"


@admin.register(FactSnapshot)
class FactSnapshotAdmin(ReadOnlyAdmin):
    """History: results and tasks point at snapshots."""

    list_display = ["board", "taken_at", "model", "kernel_bits", "userland_bits", "os_name"]
    list_filter = ["board"]


@admin.register(BoardTask)
class BoardTaskAdmin(ReadOnlyAdmin):
    """The record of what ran on a board stays."""

    list_display = ["board", "kind", "state", "created", "finished"]
    list_filter = ["kind", "state"]


class PresetVersionInline(admin.TabularInline):
    model = PresetVersion
    fk_name = "preset"
    fields = ["number", "options_text", "governor", "acknowledge_warranty", "acknowledge_boot"]
    fields += ["note", "author"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-number"]

    def has_add_permission(self, request, obj=None):
        return False  # versions come from saving the preset form above

    @admin.display(description="config.txt lines")
    def options_text(self, version):
        return "\n".join(f"{key}={value}" for key, value in version.options.items())


@admin.register(Preset)
class PresetAdmin(admin.ModelAdmin):
    form = PresetAdminForm
    list_display = ["name", "latest_version", "created"]
    search_fields = ["name", "description"]
    inlines = [PresetVersionInline]

    @admin.display(description="latest")
    def latest_version(self, preset):
        latest = preset.latest
        return f"v{latest.number}" if latest else "–"

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        # Editing never changes a version: a changed content becomes the next version.
        fields = form.version_fields()
        if not presets.same_content(obj.latest, **fields):
            presets.new_version(obj, author=request.user, **fields)


@admin.register(Application)
class ApplicationAdmin(ReadOnlyAdmin):
    list_display = ["board", "version", "mode", "state", "created", "finished"]
    list_filter = ["state", "mode"]
    # backup_text is a board's config.txt: fine to show; no credential is in this model.
    # The record of what was done to a board stays.
