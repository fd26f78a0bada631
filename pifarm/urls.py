from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path


def favicon(request):
    """Browsers ask every page's origin for /favicon.ico, the admin's pages too."""
    return redirect(static("favicon.svg"))


urlpatterns = [
    path("", include("devices.urls")),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
]
