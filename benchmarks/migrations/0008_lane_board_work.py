"""Lane derives from devices.models.BoardWork: its error is its reason."""

from django.db import migrations, models


STATE = models.CharField(
    choices=[("queued", "queued"), ("waiting", "waiting for the board"), ("running", "running"),
             ("done", "done"), ("failed", "failed"), ("verified", "applied and verified"),
             ("rolled_back", "verification failed, old config restored"),
             ("needs_attention", "needs attention")],
    default="queued",
    max_length=20,
)  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0007_what_ran"), ("devices", "0012_board_work")]

    operations = [
        migrations.RenameField("lane", "error", "reason"),
        migrations.AlterField("lane", "state", STATE),
    ]
