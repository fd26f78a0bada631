"""The devices schema as one migration: it replaces the 12 migrations up to 0012_board_work.

A database that had applied all of them takes this one as applied; a new database runs it. One
that stopped part-way needs the pifarm before the squash to finish them first: see "Upgrading"
in docs/operations.md.
"""

import devices.models
import django.core.validators
import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('devices', '0001_initial'),
        ('devices', '0002_presets'),
        ('devices', '0003_roles'),
        ('devices', '0004_roles_groups'),
        ('devices', '0005_board_retired'),
        ('devices', '0006_roles_axes'),
        ('devices', '0007_task_waiting'),
        ('devices', '0008_preset_boot_options'),
        ('devices', '0009_job_ids'),
        ('devices', '0010_roles_campaigns'),
        ('devices', '0011_task_prepare'),
        ('devices', '0012_board_work'),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Board',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('name', models.CharField(max_length=64)),
                ('host', models.CharField(max_length=253, validators=[devices.models.host_validator])),
                ('port', models.PositiveIntegerField(default=22, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(65535)])),
                ('username', models.CharField(default='pi', max_length=32, validators=[django.core.validators.RegexValidator('^[a-z_][a-z0-9_-]{0,31}$', "Enter a Linux user name (lower-case letters, digits, '_' and '-', not starting with a digit or '-').")])),
                ('auth_method', models.CharField(choices=[('key', 'SSH private key'), ('password', 'password')], max_length=16)),
                ('credential_ciphertext', models.TextField(editable=False)),
                ('host_key', models.TextField(blank=True, editable=False)),
                ('offered_host_key', models.TextField(blank=True, editable=False)),
                ('tags', models.CharField(blank=True, help_text='Comma-separated labels.', max_length=200)),
                ('queue', models.CharField(default='default', help_text='The worker queue whose workers can reach this board.', max_length=64, validators=[django.core.validators.RegexValidator('^[a-z0-9][a-z0-9_-]{0,63}$', 'Enter a queue name.')])),
                ('status', models.CharField(choices=[('new', 'new'), ('online', 'online'), ('offline', 'offline'), ('busy', 'busy'), ('maintenance', 'maintenance'), ('needs_attention', 'needs attention')], default='new', max_length=20)),
                ('status_reason', models.CharField(blank=True, max_length=500)),
                ('last_seen', models.DateTimeField(blank=True, null=True)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('retired', models.DateTimeField(blank=True, editable=False, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('retired_by', models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='FactSnapshot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('taken_at', models.DateTimeField(auto_now_add=True)),
                ('boot_id', models.CharField(blank=True, max_length=64)),
                ('model', models.CharField(blank=True, max_length=120)),
                ('revision', models.CharField(blank=True, max_length=16)),
                ('kernel_bits', models.PositiveSmallIntegerField(null=True)),
                ('userland_bits', models.PositiveSmallIntegerField(null=True)),
                ('os_name', models.CharField(blank=True, max_length=120)),
                ('temperature_c', models.FloatField(null=True)),
                ('throttled', models.PositiveBigIntegerField(null=True)),
                ('facts', models.JSONField()),
                ('board', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='snapshots', to='devices.board')),
            ],
            options={
                'ordering': ['-taken_at'],
            },
        ),
        migrations.CreateModel(
            name='BoardTask',
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
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('kind', models.CharField(choices=[('fetch_host_key', 'fetch host key'), ('probe', 'probe'), ('health', 'health check'), ('prepare', 'prepare for benchmarks')], max_length=20)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('benchmarks', models.JSONField(blank=True, default=list)),
                ('log_tail', models.TextField(blank=True)),
                ('board', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='tasks', to='devices.board')),
                ('snapshot', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, to='devices.factsnapshot')),
            ],
            options={
                'ordering': ['-created'],
                'permissions': [('probe_board', 'Can probe and health-check boards')],
            },
        ),
        migrations.CreateModel(
            name='Preset',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('name', models.CharField(max_length=80, unique=True)),
                ('description', models.TextField(blank=True)),
                ('families', models.JSONField(blank=True, default=list)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='PresetVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('options', models.JSONField()),
                ('governor', models.CharField(blank=True, choices=[('ondemand', 'ondemand'), ('performance', 'performance'), ('powersave', 'powersave'), ('conservative', 'conservative'), ('schedutil', 'schedutil')], max_length=16)),
                ('acknowledge_warranty', models.BooleanField(default=False, help_text="I know these settings set the board's permanent warranty (overclock) bit.")),
                ('acknowledge_boot', models.BooleanField(default=False, help_text='I know these settings change what the board boots (kernel, device tree...).')),
                ('note', models.CharField(blank=True, max_length=300)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('author', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='children', to='devices.presetversion')),
                ('preset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='versions', to='devices.preset')),
            ],
            options={
                'ordering': ['preset', '-number'],
            },
        ),
        migrations.CreateModel(
            name='Application',
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
                ('code', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ('mode', models.CharField(choices=[('trial', 'trial boot first (tryboot)'), ('direct', 'write config.txt and reboot')], default='trial', max_length=10)),
                ('verification', models.JSONField(blank=True, default=dict)),
                ('governor_method', models.CharField(blank=True, max_length=120)),
                ('backup_path', models.CharField(blank=True, max_length=300)),
                ('backup_text', models.TextField(blank=True)),
                ('config_path', models.CharField(blank=True, max_length=300)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('board', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='applications', to='devices.board')),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='applications', to='devices.presetversion')),
            ],
            options={
                'ordering': ['-created'],
                'permissions': [('apply_preset', 'Can apply preset versions to boards')],
            },
        ),
        migrations.AddConstraint(
            model_name='board',
            constraint=models.UniqueConstraint(condition=models.Q(('retired__isnull', True)), fields=('name',), name='board_name_unique_in_service', violation_error_code='unique', violation_error_message='A board in service already has this name.'),
        ),
        migrations.AddConstraint(
            model_name='board',
            constraint=models.CheckConstraint(condition=models.Q(('port__gte', 1), ('port__lte', 65535)), name='board_port_in_range'),
        ),
        migrations.AddConstraint(
            model_name='board',
            constraint=models.CheckConstraint(condition=models.Q(('auth_method__in', ['key', 'password'])), name='board_auth_method_known'),
        ),
        migrations.AddIndex(
            model_name='factsnapshot',
            index=models.Index(fields=['board', '-taken_at'], name='snapshot_board_recent'),
        ),
        migrations.AddIndex(
            model_name='boardtask',
            index=models.Index(fields=['board', '-created'], name='task_board_recent'),
        ),
        migrations.AddConstraint(
            model_name='presetversion',
            constraint=models.UniqueConstraint(fields=('preset', 'number'), name='preset_version_number'),
        ),
        migrations.AddIndex(
            model_name='application',
            index=models.Index(fields=['board', '-created'], name='application_board_recent'),
        ),
        migrations.AddConstraint(
            model_name='application',
            constraint=models.UniqueConstraint(condition=models.Q(('state__in', ['queued', 'waiting', 'running'])), fields=('board',), name='application_one_unfinished_per_board'),
        ),
    ]
