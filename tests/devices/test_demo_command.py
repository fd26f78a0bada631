import pytest
from django.contrib.auth import get_user_model

from devices import roles
from devices.management.commands.demo import Command

pytestmark = pytest.mark.django_db


def test_the_demo_user_is_an_admin_by_role(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.delenv("PIFARM_DEMO_PASSWORD", raising=False)
    get_user_model().objects.create_superuser("demo")  # as older demos made it
    password = Command()._demo_user()
    demo = get_user_model().objects.get(username="demo")
    assert demo.check_password(password)
    assert roles.role_of(demo) == roles.ADMIN
    assert demo.is_staff and not demo.is_superuser
    assert demo.has_perm("devices.delete_board")
