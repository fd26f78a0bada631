from django.db import migrations

from devices import roles


class Migration(migrations.Migration):
    """Admins by role unlock logins: the groups again, now that axes' permissions exist."""

    dependencies = [
        ("axes", "0010_accessattemptexpiration"),
        ("devices", "0005_board_retired"),
    ]

    operations = [migrations.RunPython(roles.make_groups_in_migration, migrations.RunPython.noop)]
