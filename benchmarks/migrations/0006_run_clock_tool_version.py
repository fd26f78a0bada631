"""Run.clock_mhz and Run.tool_version: columns of what a comparison read from the run's JSON,
filled for the runs already made by one UPDATE each, with the expressions the comparison used
(the median Arm clock under load of the telemetry summary; the first version line the parser
kept under tool_version, iperf3_version or compiler); and the index a comparison reads them
through (run_comparison)."""

from django.db import migrations, models
from django.db.models import FloatField, Q, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce, Substr

VERSION_KEYS = ("tool_version", "iperf3_version", "compiler")  # results.TOOL_VERSION_KEYS then


def fill(apps, schema_editor):
    Run = apps.get_model("benchmarks", "Run")
    summary = KeyTransform("arm_mhz_under_load", KeyTransform("telemetry", "environment"))
    clock = Cast(KeyTextTransform("median", summary), FloatField())
    Run.objects.filter(environment__telemetry__arm_mhz_under_load__median__isnull=False).update(
        clock_mhz=clock
    )
    version = Coalesce(*(KeyTextTransform(key, "details") for key in VERSION_KEYS), Value(""))
    version = Substr(version, 1, 200)  # Run.VERSION_CHARS
    found = Q()
    for key in VERSION_KEYS:
        found |= Q(**{f"details__{key}__isnull": False})
    Run.objects.filter(found).update(tool_version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0005_share_links"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="clock_mhz",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="run",
            name="tool_version",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["campaign", "state", "benchmark", "suspect", "board", "clock_mhz",
                        "snapshot", "preset_version", "tool_version"],
                name="run_comparison",
            ),
        ),
    ]
