from django.urls import path

from devices import views

app_name = "devices"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("boards/new/", views.register, name="register"),
    path("boards/check/", views.check_all, name="check_all"),
    path("boards/<uuid:code>/", views.board_detail, name="board"),
    path("boards/<uuid:code>/live/", views.board_live, name="board_live"),
    path("boards/<uuid:code>/confirm/", views.confirm, name="confirm"),
    path("boards/<uuid:code>/confirm/decide/", views.confirm_decision, name="confirm_decision"),
    path("boards/<uuid:code>/confirm/retry/", views.retry_host_key, name="retry_host_key"),
    path("boards/<uuid:code>/tasks/<str:kind>/", views.start_task, name="start_task"),
    path("boards/<uuid:code>/snapshots/<int:pk>/", views.snapshot_detail, name="snapshot"),
    path("tasks/<uuid:code>/", views.task_status, name="task_status"),
]
