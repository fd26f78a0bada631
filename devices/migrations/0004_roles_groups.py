from django.db import migrations

from devices import roles


def remove_groups(apps, schema_editor):
    group_names = [role.group for role in roles.ROLES.values()]
    apps.get_model("auth", "Group").objects.filter(name__in=group_names).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("django_rq", "0003_alter_dashboard_permission_names"),
        ("devices", "0003_roles"),
    ]

    operations = [migrations.RunPython(roles.make_groups_in_migration, remove_groups)]
