from django.urls import path

from devices.views import boards, connection

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
    path("boards/<uuid:code>/confirm/", connection.confirm, name="confirm"),
    path(
        "boards/<uuid:code>/confirm/decide/", connection.confirm_decision, name="confirm_decision"
    ),
    path("boards/<uuid:code>/host-key/", connection.fetch_host_key, name="fetch_host_key"),
    path("boards/<uuid:code>/tasks/<str:kind>/", boards.start_task, name="start_task"),
    path("boards/<uuid:code>/snapshots/<int:pk>/", boards.snapshot_detail, name="snapshot"),
    path("tasks/<uuid:code>/", boards.task_status, name="task_status"),
]
