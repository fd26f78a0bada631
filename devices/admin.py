from django.contrib import admin

from devices import presets, ssh
from devices.forms_presets import PresetAdminForm
from devices.models import Application, Board, BoardTask, FactSnapshot, Preset, PresetVersion


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    # credential_ciphertext is not editable and never listed: secrets stay out of the admin.
    list_display = ["name", "host", "port", "username", "status", "queue", "last_seen"]
    list_filter = ["status", "queue", "auth_method"]
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
    ]

    def has_add_permission(self, request):
        return False  # boards are registered through the fingerprint check, not here

    @admin.display(description="Logs in with")
    def auth_method_label(self, board):
        return board.get_auth_method_display()

    @admin.display(description="Pinned host key")
    def host_key_fingerprint(self, board):
        return ssh.fingerprint(board.host_key) if board.host_key else "not confirmed"


@admin.register(FactSnapshot)
class FactSnapshotAdmin(admin.ModelAdmin):
    list_display = ["board", "taken_at", "model", "kernel_bits", "userland_bits", "os_name"]
    list_filter = ["board"]
    readonly_fields = [field.name for field in FactSnapshot._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(BoardTask)
class BoardTaskAdmin(admin.ModelAdmin):
    list_display = ["board", "kind", "state", "created", "finished"]
    list_filter = ["kind", "state"]
    readonly_fields = [field.name for field in BoardTask._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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
class ApplicationAdmin(admin.ModelAdmin):
    list_display = ["board", "version", "mode", "state", "created", "finished"]
    list_filter = ["state", "mode"]
    # backup_text is a board's config.txt: fine to show; no credential is in this model.
    readonly_fields = [field.name for field in Application._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # the record of what was done to a board stays
