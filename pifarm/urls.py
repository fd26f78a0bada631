from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

# A refused request says which limit it broke (a 3 MB form used to get a bare "Bad Request").
handler400 = "devices.views.errors.bad_request"

urlpatterns = [
    path("", include("devices.urls")),
    path("", include("benchmarks.urls")),
    path("api/v1/", include("benchmarks.api.urls")),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]

handler403 = "devices.views.access.permission_denied"
