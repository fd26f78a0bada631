from django.urls import path

from devices.views import boards, connection, presets

app_name = "devices"

urlpatterns = [
    path("", boards.dashboard, name="dashboard"),
    path("boards/status/", boards.board_statuses, name="board_statuses"),
    path("boards/new/", connection.register, name="register"),
    path("boards/check/", boards.check_all, name="check_all"),
    path("boards/<uuid:code>/", boards.board_detail, name="board"),
    path("boards/<uuid:code>/live/", boards.board_live, name="board_live"),
    path("boards/<uuid:code>/edit/", connection.edit, name="edit"),
    path("boards/<uuid:code>/remove/", connection.remove, name="remove"),
    path("boards/<uuid:code>/restore/", connection.restore, name="restore"),
    path("boards/<uuid:code>/confirm/", connection.confirm, name="confirm"),
    path(
        "boards/<uuid:code>/confirm/decide/", connection.confirm_decision, name="confirm_decision"
    ),
    path("boards/<uuid:code>/host-key/", connection.fetch_host_key, name="fetch_host_key"),
    path("boards/<uuid:code>/tasks/<str:kind>/", boards.start_task, name="start_task"),
    path("boards/<uuid:code>/restore-stock/", boards.restore_stock, name="restore_stock"),
    path("boards/<uuid:code>/snapshots/<int:pk>/", boards.snapshot_detail, name="snapshot"),
    path("tasks/<uuid:code>/", boards.task_status, name="task_status"),
    path(
        "boards/<uuid:code>/preset-from-config/",
        presets.preset_from_board,
        name="preset_from_board",
    ),
    path("presets/", presets.preset_list, name="presets"),
    path("presets/new/", presets.preset_new, name="preset_new"),
    path("presets/<uuid:code>/", presets.preset_detail, name="preset"),
    path("presets/<uuid:code>/edit/", presets.preset_edit, name="preset_edit"),
    path("presets/<uuid:code>/v<int:number>/", presets.version_detail, name="preset_version"),
    path("presets/<uuid:code>/v<int:number>/clone/", presets.preset_clone, name="preset_clone"),
    path("presets/<uuid:code>/v<int:number>/apply/", presets.apply, name="apply"),
    path("applications/", presets.application_list, name="applications"),
    path("applications/<uuid:code>/", presets.application_detail, name="application"),
    path(
        "applications/<uuid:code>/status/",
        presets.application_status,
        name="application_status",
    ),
]
