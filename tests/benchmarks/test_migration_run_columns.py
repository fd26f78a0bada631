"""Migration 0006 fills Run.clock_mhz and Run.tool_version of the runs made before it."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = ("benchmarks", "0004_comparisons")
AFTER = ("benchmarks", "0006_run_clock_tool_version")


def migrated_to(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor.loader.project_state([target]).apps


def test_existing_runs_get_their_clock_and_version_from_their_json():
    old = migrated_to(BEFORE)
    Board = old.get_model("devices", "Board")
    Campaign, Lane, Run = (
        old.get_model("benchmarks", name) for name in ("Campaign", "Lane", "Run")
    )
    board = Board.objects.create(
        name="old-a",
        host="10.213.9.9",
        auth_method="password",
        credential_ciphertext="not read here",
    )
    campaign = Campaign.objects.create(name="before", spec={})
    lane = Lane.objects.create(campaign=campaign, board=board)

    def run(sequence, **fields):
        return Run.objects.create(
            campaign=campaign,
            lane=lane,
            board=board,
            sequence=sequence,
            benchmark="iperf3-tcp",
            definition_version=1,
            repetition=1,
            **fields,
        ).pk

    clocked = run(
        1,
        environment={"telemetry": {"arm_mhz_under_load": {"median": 1450.5}}},
        details={"iperf3_version": "iperf 3.12", "seconds": 2},
    )
    unread = run(
        2,
        environment={"telemetry": {"arm_mhz_under_load": None}},
        details={"tool_version": "x" * 300},
    )
    bare = run(3)
    try:
        new = migrated_to(AFTER).get_model("benchmarks", "Run")
        found = dict(new.objects.values_list("pk", "clock_mhz").order_by())
        assert found == {clocked: 1450.5, unread: None, bare: None}
        versions = dict(new.objects.values_list("pk", "tool_version"))
        assert versions == {clocked: "iperf 3.12", unread: "x" * 200, bare: ""}
    finally:
        MigrationExecutor(connection).migrate(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
