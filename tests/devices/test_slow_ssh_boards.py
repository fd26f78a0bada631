"""Boards whose SSH server is slow or strange after a boot (pisim's banner faults): TCP is
accepted but the banner comes late, or the server hangs up right after its banner.

Applications wait that out like any board that is not up yet; probes, host-key fetches and
health checks fail cleanly (the board offline, the task saying why) and succeed once the
board answers. Nothing ends "failed unexpectedly".
"""

import time

import pytest

from devices import presets, tasks
from devices.models import Application, Board, BoardTask, Preset
from pisim import Faults

from ..pisim.sshutil import run, wait_for
from .simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]
State = Application.State
PI4_CONFIG = "/boot/firmware/config.txt"

FAULTS = {
    "banner_delay": "accepted the connection but sent no SSH banner within 1 s",
    "close_after_banner": "closed the connection during the SSH key exchange",
}


@pytest.fixture
def fast(fast):
    """The suite's short deadlines (tests/conftest.py), with a reboot that may take a slow
    banner's while, and connections given up after 1 s: the tries during a fault are quick."""
    fast.PIFARM_REBOOT_DEADLINE = 20
    fast.SSH_CONNECT_TIMEOUT = 1
    return fast


def reboot_with(node, faults: Faults) -> float:
    """Reboot the node into a boot with these faults; returns when it booted (epoch s)."""
    node.set_faults(faults)
    before = node.boot_id
    run(node, "sudo reboot")
    wait_for(lambda: node.boot_id != before and node.state == "up", what="reboot")
    node.wait_ssh()
    return node.booted["booted_at"]


def run_task(board, kind, run_jobs) -> BoardTask:
    task = tasks.start(board, kind)
    run_jobs()
    task.refresh_from_db()
    board.refresh_from_db()
    return task


# measures: verification reads the Arm clock under load, which the simulated governor raises
# only if the node gets its CPU share; with the host overloaded, it read 600 MHz (CI).
@pytest.mark.measures
@pytest.mark.parametrize("mode", [Application.Mode.DIRECT, Application.Mode.TRIAL])
@pytest.mark.parametrize("fault", FAULTS)
def test_an_application_waits_out_a_slow_ssh_server_after_its_reboot(
    pisim_node_factory, run_jobs, fast, fault, mode
):
    node = pisim_node_factory(downtime=0.3)
    board = register_node(node)
    old = node.read_file(PI4_CONFIG)
    node.set_faults(Faults(**{fault: 4.0}))  # from the application's reboot on
    preset = Preset.objects.create(name="overclock")
    version = presets.new_version(preset, options={"arm_freq": "1900"}, governor="")

    application = presets.start_application(board, version, mode)
    run_jobs()
    application.refresh_from_db()
    board.refresh_from_db()

    assert application.state == State.VERIFIED, application.reason
    assert node.booted[fault] == 4.0  # the boot that was verified had the fault
    assert node.booted_config["arm_freq"] == 1900
    assert node.read_file(PI4_CONFIG) == presets.render_config(old, version)
    assert board.status == Board.Status.ONLINE


@pytest.mark.parametrize(("fault", "words"), FAULTS.items())
def test_board_tasks_fail_cleanly_while_ssh_does_not_answer_then_succeed(
    pisim_node_factory, run_jobs, fast, fault, words
):
    node = pisim_node_factory(downtime=0.3)
    board = register_node(node)
    window_s = 8.0
    booted_at = reboot_with(node, Faults(**{fault: window_s}))

    for kind in (BoardTask.Kind.FETCH_HOST_KEY, BoardTask.Kind.PROBE, BoardTask.Kind.HEALTH):
        task = run_task(board, kind, run_jobs)
        assert task.state == BoardTask.State.FAILED
        assert f"{node.host}:{node.port} {words}" in task.reason, task.reason
        assert board.status == Board.Status.OFFLINE
        assert words in board.status_reason
    assert time.time() < booted_at + window_s  # all of that happened during the fault

    wait_for(lambda: time.time() > booted_at + window_s + 0.2, timeout=15, what="the fault's end")
    # The board answers again: judged at the usual deadline, not the 1 s that made the tries
    # during the fault quick (through the banner gate's relay, on a loaded host, opening a
    # channel took longer than 1 s).
    fast.SSH_CONNECT_TIMEOUT = 10
    task = run_task(board, BoardTask.Kind.PROBE, run_jobs)
    assert task.state == BoardTask.State.DONE, task.reason
    assert board.status == Board.Status.ONLINE
