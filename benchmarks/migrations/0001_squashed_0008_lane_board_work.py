"""The benchmarks schema as one migration: it replaces the 8 migrations up to 0008_lane_board_work.

A database that had applied all of them takes this one as applied; a new database runs it. One
that stopped part-way needs the pifarm before the squash to finish them first: see "Upgrading"
in docs/operations.md.
"""

import benchmarks.models
import django.core.validators
import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models

from devices import roles


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('benchmarks', '0001_campaigns'),
        ('benchmarks', '0002_custom_limits'),
        ('benchmarks', '0003_api_tokens'),
        ('benchmarks', '0004_comparisons'),
        ('benchmarks', '0005_share_links'),
        ('benchmarks', '0006_run_clock_tool_version'),
        ('benchmarks', '0007_what_ran'),
        ('benchmarks', '0008_lane_board_work'),
    ]

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('axes', '0010_accessattemptexpiration'),
        ('django_rq', '0003_alter_dashboard_permission_names'),
        ('devices', '0001_squashed_0012_board_work'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='CustomBenchmark',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=48, unique=True, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9_-]{0,47}$', "Lower-case letters, digits, '-' and '_', starting with a letter.")])),
                ('title', models.CharField(max_length=120)),
                ('description', models.TextField(blank=True)),
                ('command', models.TextField(help_text='Run with sh -c on the board. Parameters arrive as $PIFARM_<NAME> (upper-case), e.g. "$PIFARM_SIZE".')),
                ('params', models.JSONField(blank=True, default=dict, help_text='Parameter names and their defaults, e.g. {"size": "64M"}.')),
                ('parser', models.CharField(choices=[('regex', "regular expression with a named group 'value'"), ('json', 'JSON path (dot-separated keys and list indexes)')], default='regex', max_length=8)),
                ('pattern', models.CharField(help_text='regex: must have a group (?P<value>...); JSON: a path such as end.sum.bps', max_length=500)),
                ('metric', models.CharField(default='value', max_length=64, validators=[django.core.validators.RegexValidator('^[a-z][a-z0-9_-]{0,47}$', "Lower-case letters, digits, '-' and '_', starting with a letter.")])),
                ('unit', models.CharField(max_length=32)),
                ('higher_is_better', models.BooleanField(default=True)),
                ('tools', models.CharField(blank=True, help_text='Commands it needs, space-separated.', max_length=200)),
                ('repetitions', models.PositiveSmallIntegerField(default=3, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(1000)])),
                ('timeout_s', models.PositiveIntegerField(default=120, help_text='Seconds the command may run (1 to 3600); it is stopped then.', validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(3600)])),
                ('version', models.PositiveIntegerField(default=1, editable=False)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('changed', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('name', models.CharField(help_text='What it is for, e.g. “nightly CI job”.', max_length=80)),
                ('digest', models.CharField(editable=False, max_length=64, unique=True)),
                ('sees_addresses', models.BooleanField(default=False, help_text="Show boards' host names, addresses, ports, user names and serials.")),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('last_used', models.DateTimeField(blank=True, editable=False, null=True)),
                ('revoked', models.DateTimeField(blank=True, editable=False, null=True)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created'],
            },
        ),
        migrations.CreateModel(
            name='Campaign',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('name', models.CharField(max_length=120)),
                ('spec', models.JSONField()),
                ('order', models.CharField(choices=[('grouped', "grouped: each benchmark's repetitions together"), ('interleaved', 'interleaved: repetition 1 of each, then 2, ...'), ('shuffled', 'shuffled: a random order per preset, to spread drift')], default='grouped', max_length=12)),
                ('seed', models.PositiveIntegerField(default=0)),
                ('state', models.CharField(choices=[('running', 'running'), ('finished', 'finished'), ('cancelled', 'cancelled')], default='running', max_length=10)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('estimated_s', models.FloatField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created'],
                'permissions': [('run_campaign', 'Can start, cancel and retry campaigns')],
            },
        ),
        migrations.CreateModel(
            name='Lane',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('state', models.CharField(choices=[('queued', 'queued'), ('waiting', 'waiting for the board'), ('running', 'running'), ('done', 'done'), ('failed', 'failed'), ('verified', 'applied and verified'), ('rolled_back', 'verification failed, old config restored'), ('needs_attention', 'needs attention')], default='queued', max_length=20)),
                ('step', models.CharField(blank=True, max_length=200)),
                ('reason', models.TextField(blank=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
                ('waiting_since', models.DateTimeField(blank=True, null=True)),
                ('next_try', models.DateTimeField(blank=True, null=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('job_id', models.CharField(blank=True, editable=False, max_length=64)),
                ('peer_is_controller', models.BooleanField(default=False)),
                ('log_tail', models.TextField(blank=True)),
                ('heartbeat', models.DateTimeField(blank=True, null=True)),
                ('before', models.JSONField(blank=True, default=dict)),
                ('left', models.TextField(blank=True)),
                ('board', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='lanes', to='devices.board')),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lanes', to='benchmarks.campaign')),
                ('peer_board', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='peer_lanes', to='devices.board')),
            ],
            options={
                'ordering': ['campaign', 'board__name'],
            },
        ),
        migrations.CreateModel(
            name='Run',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('sequence', models.PositiveIntegerField()),
                ('benchmark', models.CharField(max_length=64)),
                ('definition_version', models.PositiveIntegerField()),
                ('params', models.JSONField(default=dict)),
                ('repetition', models.PositiveIntegerField()),
                ('state', models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed'), ('cancelled', 'cancelled'), ('skipped', 'skipped')], default='queued', max_length=10)),
                ('step', models.CharField(blank=True, max_length=200)),
                ('reason', models.TextField(blank=True)),
                ('cancel_requested', models.BooleanField(default=False)),
                ('suspect', models.BooleanField(default=False)),
                ('suspect_reasons', models.JSONField(blank=True, default=list)),
                ('peer', models.CharField(blank=True, max_length=64)),
                ('environment', models.JSONField(blank=True, default=dict)),
                ('details', models.JSONField(blank=True, default=dict)),
                ('raw_output', models.TextField(blank=True)),
                ('raw_truncated', models.BooleanField(default=False)),
                ('clock_mhz', models.FloatField(blank=True, null=True)),
                ('tool_version', models.CharField(blank=True, max_length=200)),
                ('config_fingerprint', models.CharField(blank=True, max_length=16)),
                ('telemetry', models.JSONField(blank=True, default=list)),
                ('peer_telemetry', models.JSONField(blank=True, default=list)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('measure_s', models.FloatField(blank=True, null=True)),
                ('application', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='devices.application')),
                ('board', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='devices.board')),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='benchmarks.campaign')),
                ('lane', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='benchmarks.lane')),
                ('preset_version', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='devices.presetversion')),
                ('rerun_of', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='reruns', to='benchmarks.run')),
                ('retry_of', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='retries', to='benchmarks.run')),
                ('snapshot', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='devices.factsnapshot')),
            ],
            options={
                'ordering': ['lane', 'sequence'],
            },
        ),
        migrations.CreateModel(
            name='Measurement',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('metric', models.CharField(max_length=64)),
                ('value', models.FloatField()),
                ('unit', models.CharField(max_length=32)),
                ('higher_is_better', models.BooleanField()),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='measurements', to='benchmarks.run')),
            ],
            options={
                'ordering': ['run', 'metric'],
            },
        ),
        migrations.CreateModel(
            name='Comparison',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('name', models.CharField(max_length=120)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('benchmark', models.CharField(max_length=64)),
                ('metric', models.CharField(max_length=64)),
                ('group_by', models.CharField(max_length=48)),
                ('baseline', models.CharField(blank=True, max_length=200)),
                ('include_suspects', models.BooleanField(default=False)),
                ('campaigns', models.ManyToManyField(blank=True, related_name='+', to='benchmarks.campaign')),
                ('owner', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('runs', models.ManyToManyField(blank=True, related_name='+', to='benchmarks.run')),
            ],
            options={
                'ordering': ['-created'],
            },
        ),
        migrations.CreateModel(
            name='ShareLink',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=benchmarks.models.share_token, editable=False, max_length=64, unique=True)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('expires', models.DateTimeField(blank=True, null=True)),
                ('revoked', models.DateTimeField(blank=True, editable=False, null=True)),
                ('show_board_names', models.BooleanField(default=False)),
                ('comparison', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='shares', to='benchmarks.comparison')),
                ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created', '-pk'],
            },
        ),
        migrations.AddIndex(
            model_name='lane',
            index=models.Index(fields=['state'], name='lane_state'),
        ),
        migrations.AddConstraint(
            model_name='lane',
            constraint=models.UniqueConstraint(fields=('campaign', 'board'), name='lane_one_per_board'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['lane', 'state', 'sequence'], name='run_lane_next'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['campaign', 'board', 'sequence'], name='run_campaign'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['campaign', 'state', 'benchmark', 'suspect', 'board', 'clock_mhz', 'snapshot', 'preset_version', 'tool_version', 'config_fingerprint'], name='run_comparison'),
        ),
        migrations.AddConstraint(
            model_name='run',
            constraint=models.UniqueConstraint(fields=('lane', 'sequence'), name='run_sequence_in_lane'),
        ),
        migrations.AddConstraint(
            model_name='measurement',
            constraint=models.UniqueConstraint(fields=('run', 'metric'), name='measurement_one_per_metric'),
        ),
        # the role groups, now that every model they grant is here (devices.roles)
        migrations.RunPython(roles.make_groups_in_migration, roles.remove_groups_in_migration),
    ]
