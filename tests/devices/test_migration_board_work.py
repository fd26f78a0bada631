"""Migrations devices 0012 and benchmarks 0008 (BoardWork) keep every record and its words: a
task's error or a prepare task's outcome, an application's outcome and a lane's error become
their reason; and back again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("devices", "0011_task_prepare"), ("benchmarks", "0007_what_ran")]
AFTER = [("devices", "0012_board_work"), ("benchmarks", "0008_lane_board_work")]


def migrated_to(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def test_every_record_keeps_its_words_as_its_reason():
    old = migrated_to(BEFORE)
    Board, BoardTask, Preset, PresetVersion, Application = (
        old.get_model("devices", name)
        for name in ("Board", "BoardTask", "Preset", "PresetVersion", "Application")
    )
    Campaign, Lane = (old.get_model("benchmarks", name) for name in ("Campaign", "Lane"))
    board = Board.objects.create(
        name="old-a", host="10.213.9.9", auth_method="password", credential_ciphertext="-"
    )
    failed = BoardTask.objects.create(board=board, kind="probe", state="failed", error="refused")
    prepared = BoardTask.objects.create(
        board=board, kind="prepare", state="done", outcome="installed sysbench"
    )
    queued = BoardTask.objects.create(board=board, kind="health")
    version = PresetVersion.objects.create(
        preset=Preset.objects.create(name="p"), number=1, options={}
    )
    applied = Application.objects.create(
        board=board, version=version, state="verified", outcome="Applied and verified."
    )
    campaign = Campaign.objects.create(name="before", spec={})
    lane = Lane.objects.create(campaign=campaign, board=board, state="failed", error="busy")
    try:
        new = migrated_to(AFTER)
        tasks = dict(new.get_model("devices", "BoardTask").objects.values_list("pk", "reason"))
        assert tasks == {failed.pk: "refused", prepared.pk: "installed sysbench", queued.pk: ""}
        application = new.get_model("devices", "Application").objects.get(pk=applied.pk)
        assert (application.state, application.reason) == ("verified", "Applied and verified.")
        assert new.get_model("benchmarks", "Lane").objects.get(pk=lane.pk).reason == "busy"

        back = migrated_to(BEFORE)
        tasks = back.get_model("devices", "BoardTask").objects
        assert dict(tasks.values_list("pk", "error")) == {
            failed.pk: "refused",
            prepared.pk: "",
            queued.pk: "",
        }
        assert tasks.get(pk=prepared.pk).outcome == "installed sysbench"
        assert back.get_model("benchmarks", "Lane").objects.get(pk=lane.pk).error == "busy"
    finally:
        MigrationExecutor(connection).migrate(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
