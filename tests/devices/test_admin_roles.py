"""The Django admin under the roles: admins use it, viewers and operators never get in."""

import pytest
from django.contrib import admin
from django.urls import reverse

from devices.models import Preset

from ..conftest import PASSWORD
from .factories import make_board

pytestmark = pytest.mark.django_db

CHANGELISTS = sorted(
    f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
    for model in admin.site._registry
)


@pytest.fixture
def queues_if_needed(request, name):
    if name == "admin:django_rq_dashboard_changelist":  # the queue dashboard reads Redis
        request.getfixturevalue("redis_queue")


@pytest.mark.parametrize("name", CHANGELISTS)
def test_admins_open_every_page_of_the_admin(name, client, user, queues_if_needed):
    client.force_login(user)
    assert client.get(reverse("admin:index")).status_code == 200
    assert client.get(reverse(name)).status_code == 200


@pytest.mark.parametrize("name", ["admin:index", *CHANGELISTS])
@pytest.mark.parametrize("role", [None, "viewer", "operator"])
def test_the_others_are_sent_to_the_admin_login(name, role, client, request):
    if role:
        client.force_login(request.getfixturevalue(role))
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_an_admin_edits_a_board_and_writes_a_preset_in_the_admin(client, user):
    client.force_login(user)
    board = make_board()
    change = {"name": "bench-9", "username": "pi", "tags": "", "queue": "default"}
    url = reverse("admin:devices_board_change", args=[board.pk])
    assert client.post(url, {**change, "status": "maintenance"}).status_code == 302
    board.refresh_from_db()
    assert board.name == "bench-9"
    preset = {
        "name": "admin-made",
        "description": "",
        "families": ["pi4"],
        "options": "arm_freq=1700\n",
        "governor": "",
        "note": "",
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
    }
    assert client.post(reverse("admin:devices_preset_add"), preset).status_code == 302
    assert Preset.objects.get(name="admin-made").latest.options == {"arm_freq": "1700"}


def test_an_admin_gives_roles_but_not_superuser_or_single_permissions(client, user, viewer):
    client.force_login(user)
    url = reverse("admin:auth_user_change", args=[viewer.pk])
    page = client.get(url).content.decode()
    assert 'name="groups"' in page
    assert 'name="is_superuser"' not in page and 'name="user_permissions"' not in page
    form = {"username": "vera", "is_active": "on", "is_superuser": "on", "groups": []}
    form["date_joined_0"], form["date_joined_1"] = "2026-01-01", "00:00:00"
    assert client.post(url, form).status_code == 302
    viewer.refresh_from_db()
    assert not viewer.is_superuser


def test_an_admin_cannot_touch_a_superuser(client, user, staff):
    client.force_login(user)
    assert client.get(reverse("admin:auth_user_change", args=[staff.pk])).status_code == 200
    password_url = reverse("admin:auth_user_password_change", args=[staff.pk])
    new = {"password1": "an0ther long secret", "password2": "an0ther long secret"}
    assert client.post(password_url, new).status_code == 403
    assert (
        client.post(reverse("admin:auth_user_delete", args=[staff.pk]), {"post": "yes"}).status_code
        == 403
    )
    staff.refresh_from_db()
    assert staff.check_password(PASSWORD)


def test_a_superuser_still_may(client, staff, user):
    client.force_login(staff)
    page = client.get(reverse("admin:auth_user_change", args=[user.pk])).content.decode()
    assert 'name="is_superuser"' in page
