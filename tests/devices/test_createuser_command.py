import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from devices import roles
from devices.management.commands import createuser

pytestmark = pytest.mark.django_db

PASSWORD = "a long lab passphrase"  # noqa: S105 - a test user's


def create(*args, **options) -> str:
    out = io.StringIO()
    call_command("createuser", *args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def test_it_makes_a_member_of_the_role_with_the_password_from_a_file(tmp_path):
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    out = create("oscar", role="operator", email="oscar@lab.example", password_file=secret)
    oscar = get_user_model().objects.get(username="oscar")
    assert oscar.check_password(PASSWORD)
    assert oscar.email == "oscar@lab.example"
    assert list(oscar.groups.values_list("name", flat=True)) == ["operators"]
    assert oscar.has_perm("devices.apply_preset")
    assert not oscar.has_perm("devices.add_preset")
    assert not oscar.is_staff and not oscar.is_superuser
    assert PASSWORD not in out


def test_an_admin_may_open_the_django_admin(tmp_path):
    create("ada", role="admin", no_input=True)
    ada = get_user_model().objects.get(username="ada")
    assert ada.is_staff and not ada.is_superuser
    assert ada.has_perm("devices.delete_board") and ada.has_perm("auth.change_user")


def test_without_a_terminal_it_generates_a_password_and_prints_it_once():
    out = create("vera", role="viewer")
    password = out.rsplit(": ", 1)[1].strip()
    assert len(password) >= 20
    vera = get_user_model().objects.get(username="vera")
    assert vera.check_password(password)
    assert vera.has_perm("devices.view_board") and not vera.has_perm("devices.probe_board")


def test_at_a_terminal_it_asks_twice_and_asks_again_when_they_differ(monkeypatch):
    answers = iter(["first try", "a typo", PASSWORD, PASSWORD])
    monkeypatch.setattr(createuser.getpass, "getpass", lambda prompt: next(answers))
    monkeypatch.setattr(createuser.sys.stdin, "isatty", lambda: True, raising=False)
    out = create("tess", role="viewer")
    assert get_user_model().objects.get(username="tess").check_password(PASSWORD)
    assert "password" not in out.lower()  # nothing generated, nothing printed


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (["bad name!"], {"role": "viewer"}, "Enter a valid username"),
        (["vera"], {"role": "viewer", "email": "not-an-address"}, "Enter a valid email"),
        (["vera"], {"role": "viewer", "password_file": Path("/nonexistent/pw")}, "cannot read"),
    ],
)
def test_bad_input_is_a_clear_error_and_makes_nobody(args, options, message):
    with pytest.raises(CommandError, match=message):
        create(*args, **options)
    assert not get_user_model().objects.exists()


def test_a_weak_password_from_a_file_is_refused(tmp_path):
    secret = tmp_path / "password"
    secret.write_text("pifarm\n")
    with pytest.raises(CommandError, match="too short"):
        create("vera", role="viewer", password_file=secret)
    assert not get_user_model().objects.exists()


def test_an_existing_user_is_left_as_it_is(user):
    with pytest.raises(CommandError, match="already exists"):
        create("alice", role="viewer")
    assert roles.role_of(user) == roles.ADMIN


def test_an_unknown_role_is_refused():
    with pytest.raises(CommandError, match="invalid choice"):
        create("vera", role="owner")


def test_a_password_on_the_command_line_is_refused_without_repeating_it():
    with pytest.raises(CommandError, match="visible to every user") as refused:
        create("vera", "--role", "viewer", "--password", PASSWORD)
    assert PASSWORD not in str(refused.value)
    assert not get_user_model().objects.exists()
