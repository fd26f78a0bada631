import pytest
from django.contrib.auth.models import Group, Permission

from devices import roles

pytestmark = pytest.mark.django_db


def group_permissions(name: str) -> set[str]:
    group = Group.objects.get(name=name)
    return {
        f"{permission.content_type.app_label}.{permission.codename}"
        for permission in group.permissions.select_related("content_type")
    }


def test_the_migration_made_a_group_per_role_with_exactly_its_permissions():
    # The test database is built by running the migrations: these groups come from the last step of
    # the benchmarks schema migration.
    for role in roles.ROLES.values():
        assert group_permissions(role.group) == role.permissions


def test_every_permission_a_role_names_exists():
    roles.sync_groups(Group, Permission, strict=True)  # raises LookupError on a typo


def test_a_permission_that_does_not_exist_is_an_error(monkeypatch):
    typo = roles.Role("viewer", "viewers", "", frozenset({"devices.veiw_board"}), staff=False)
    monkeypatch.setitem(roles.ROLES, "viewer", typo)
    with pytest.raises(LookupError, match="devices.veiw_board"):
        roles.sync_groups(Group, Permission)


def test_syncing_puts_back_a_group_edited_by_hand():
    admins = Group.objects.get(name="admins")
    admins.permissions.remove(Permission.objects.get(codename="delete_board"))
    Group.objects.get(name="viewers").permissions.add(Permission.objects.get(codename="add_board"))
    roles.sync_groups(Group, Permission)
    assert group_permissions("admins") == roles.ADMIN.permissions
    assert group_permissions("viewers") == roles.VIEWER.permissions


def test_each_role_may_do_what_the_one_below_may():
    assert roles.VIEWER.permissions < roles.OPERATOR.permissions < roles.ADMIN.permissions


def test_no_role_may_delete_history_or_rewrite_the_roles():
    for permission in ("delete_factsnapshot", "delete_boardtask", "delete_application"):
        assert roles.role_for(f"devices.{permission}") is None
    assert roles.role_for("auth.change_group") is None


def test_the_lowest_role_that_grants_a_permission_is_named():
    assert roles.role_for("devices.view_board") == roles.VIEWER
    assert roles.role_for("devices.apply_preset") == roles.OPERATOR
    assert roles.role_for("devices.delete_board") == roles.ADMIN


def test_assigning_a_role_replaces_the_previous_one(user):
    roles.assign(user, roles.VIEWER)
    user.refresh_from_db()
    assert roles.role_of(user) == roles.VIEWER
    assert list(user.groups.values_list("name", flat=True)) == ["viewers"]
    assert not user.is_staff
