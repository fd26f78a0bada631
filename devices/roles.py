"""Who may do what: pifarm's three roles and the Django permissions each one grants.

This is the one list. The last step of the benchmarks schema migration and `manage.py
createuser` make a group per role from it, and the views check the permissions it names. A
change here needs a new migration whose RunPython is `make_groups_in_migration`, so that
existing databases follow.
"""

from dataclasses import dataclass

from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied


@dataclass(frozen=True)
class Role:
    name: str
    group: str  # the Django group that carries its permissions
    summary: str
    permissions: frozenset[str]  # "app_label.codename", the lower roles' included
    staff: bool  # may open the Django admin


_READ = {
    "devices.view_board",
    "devices.view_factsnapshot",
    "devices.view_boardtask",
    "devices.view_preset",
    "devices.view_presetversion",
    "devices.view_application",
    "benchmarks.view_campaign",
    "benchmarks.view_run",
    "benchmarks.view_custombenchmark",
    "benchmarks.view_schedule",
}
# Sharing a comparison publishes it beyond the login (benchmarks.sharing): operators share any
# comparison; a viewer only the ones they saved.
_OPERATE = _READ | {
    "devices.probe_board",
    "devices.apply_preset",
    "benchmarks.run_campaign",
    "benchmarks.add_sharelink",
}
# No delete of snapshots, tasks or applications: the history of a board is kept. Groups are
# not editable either, so that a role stays what this file says.
_ADMINISTER = _OPERATE | {
    "devices.add_board",
    "devices.change_board",
    "devices.delete_board",
    "devices.add_preset",
    "devices.change_preset",
    "devices.delete_preset",
    "benchmarks.add_custombenchmark",
    "benchmarks.change_custombenchmark",
    "benchmarks.delete_custombenchmark",
    "benchmarks.delete_schedule",
    "benchmarks.delete_campaign",  # a finished one (benchmarks.retention), in the admin
    "benchmarks.view_notificationtarget",
    "benchmarks.add_notificationtarget",
    "benchmarks.change_notificationtarget",
    "benchmarks.delete_notificationtarget",
    "auth.view_user",
    "auth.add_user",
    "auth.change_user",
    "auth.delete_user",
    "auth.view_group",
    "django_rq.admin",  # the queue dashboard inside the admin
    # django-axes: see who was locked out, and unlock them by deleting the attempts
    "axes.view_accessattempt",
    "axes.delete_accessattempt",
    "axes.view_accesslog",
    "axes.view_accessfailurelog",
}

VIEWER = Role("viewer", "viewers", "reads everything", frozenset(_READ), staff=False)
OPERATOR = Role(
    "operator",
    "operators",
    "probes boards, applies presets and runs campaigns",
    frozenset(_OPERATE),
    staff=False,
)
ADMIN = Role(
    "admin",
    "admins",
    "manages boards, presets, custom benchmarks and users",
    frozenset(_ADMINISTER),
    staff=True,
)
ROLES = {role.name: role for role in (VIEWER, OPERATOR, ADMIN)}  # lowest first


def role_for(permission: str) -> Role | None:
    """The lowest role that grants permission; None if only a superuser has it."""
    return next((role for role in ROLES.values() if permission in role.permissions), None)


def role_of(user) -> Role | None:
    """The highest role whose group user belongs to."""
    groups = set(user.groups.values_list("name", flat=True))
    return next((role for role in reversed(ROLES.values()) if role.group in groups), None)


class RoleRequired(PermissionDenied):
    """A view needs a permission the user lacks; the 403 page names the role that grants it."""

    def __init__(self, permission: str):
        self.permission = permission
        self.role = role_for(permission)
        super().__init__(f"needs {permission}")


def sync_groups(group_model, permission_model, *, strict: bool = True) -> None:
    """Give each role's group exactly the permissions listed above.

    Takes the models so that a migration can pass its historical ones. strict=False skips
    permissions that do not exist yet: replaying an old migration on a new database runs before
    later migrations create their models (and so their permissions).
    """
    for role in ROLES.values():
        permissions = _permissions(permission_model, role.permissions)
        missing = role.permissions - set(permissions)
        if missing and strict:
            raise LookupError(f"no such permission: {', '.join(sorted(missing))}")
        group, _ = group_model.objects.get_or_create(name=role.group)
        group.permissions.set(permissions.values())


def make_groups_in_migration(apps, schema_editor):
    """RunPython for the migrations that (re)make the groups from this list."""
    # Django creates permissions after the last migration (post_migrate); on a new database
    # they do not exist yet, so make them now, for the models as they are at this point.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0, using=schema_editor.connection.alias, apps=apps)
        app_config.models_module = None
    sync_groups(apps.get_model("auth", "Group"), apps.get_model("auth", "Permission"), strict=False)


def remove_groups_in_migration(apps, schema_editor):
    """The reverse of make_groups_in_migration: the role groups go, the users stay."""
    group_names = [role.group for role in ROLES.values()]
    apps.get_model("auth", "Group").objects.filter(name__in=group_names).delete()


def _permissions(permission_model, names) -> dict:
    wanted = {tuple(name.split(".", 1)) for name in names}
    rows = permission_model.objects.filter(
        content_type__app_label__in={app for app, _ in wanted},
        codename__in={codename for _, codename in wanted},
    ).select_related("content_type")
    found = {f"{row.content_type.app_label}.{row.codename}": row for row in rows}
    return {name: row for name, row in found.items() if name in names}


def assign(user, role: Role) -> None:
    """Make user a member of role alone (and staff exactly when the role opens the admin)."""
    sync_groups(Group, Permission)
    user.is_staff = role.staff
    user.save(update_fields=["is_staff"])
    user.groups.set([Group.objects.get(name=role.group)])
