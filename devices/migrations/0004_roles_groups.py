from django.contrib.auth.management import create_permissions
from django.db import migrations

from devices import roles


def make_groups(apps, schema_editor):
    # Django creates permissions after the last migration (post_migrate); on a new database
    # they do not exist yet, so make them now, for the models as they are at this point.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0, using=schema_editor.connection.alias, apps=apps)
        app_config.models_module = None
    roles.sync_groups(
        apps.get_model("auth", "Group"), apps.get_model("auth", "Permission"), strict=False
    )


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

    operations = [migrations.RunPython(make_groups, remove_groups)]
