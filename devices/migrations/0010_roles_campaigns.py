from django.db import migrations

from devices import roles


class Migration(migrations.Migration):
    """Operators run campaigns, admins define custom benchmarks: the groups again."""

    dependencies = [
        ("benchmarks", "0001_campaigns"),
        ("devices", "0009_job_ids"),
    ]

    operations = [migrations.RunPython(roles.make_groups_in_migration, migrations.RunPython.noop)]
