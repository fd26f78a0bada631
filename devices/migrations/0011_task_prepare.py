# The "prepare board" task: its kind, the benchmarks it was asked for, its progress.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("devices", "0010_roles_campaigns"),
    ]

    operations = [
        migrations.AddField(
            model_name="boardtask",
            name="benchmarks",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="boardtask",
            name="log_tail",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="boardtask",
            name="outcome",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="boardtask",
            name="step",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AlterField(
            model_name="boardtask",
            name="kind",
            field=models.CharField(
                choices=[
                    ("fetch_host_key", "fetch host key"),
                    ("probe", "probe"),
                    ("health", "health check"),
                    ("prepare", "prepare for benchmarks"),
                ],
                max_length=20,
            ),
        ),
    ]
