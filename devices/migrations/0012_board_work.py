"""BoardTask and Application derive from devices.models.BoardWork: one state set and one
reason field. A task's error and a prepare task's outcome become its reason (a task had one
or the other: an error when it failed, an outcome when it was done); an application's
outcome becomes its reason."""

from django.db import migrations, models
from django.db.models import F


def outcome_into_reason(apps, schema_editor):
    BoardTask = apps.get_model("devices", "BoardTask")
    BoardTask.objects.filter(reason="").exclude(outcome="").update(reason=F("outcome"))


def reason_into_outcome(apps, schema_editor):
    BoardTask = apps.get_model("devices", "BoardTask")
    BoardTask.objects.filter(state="done").update(outcome=F("reason"), reason="")


STATE = models.CharField(
    choices=[("queued", "queued"), ("waiting", "waiting for the board"), ("running", "running"),
             ("done", "done"), ("failed", "failed"), ("verified", "applied and verified"),
             ("rolled_back", "verification failed, old config restored"),
             ("needs_attention", "needs attention")],
    default="queued",
    max_length=20,
)  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [("devices", "0011_task_prepare")]

    operations = [
        migrations.RenameField("boardtask", "error", "reason"),
        migrations.RunPython(outcome_into_reason, reason_into_outcome),
        migrations.RemoveField("boardtask", "outcome"),
        migrations.RenameField("application", "outcome", "reason"),
        migrations.AlterField("boardtask", "state", STATE),
        migrations.AlterField("application", "state", STATE),
        migrations.AlterField("application", "step", models.CharField(blank=True, max_length=200)),
    ]
