"""Probing simulated Pis end to end: a real RQ worker, real Redis, real sshd."""

import pytest
from django.core.management import call_command

from devices import tasks
from devices.models import Board, BoardTask

from .simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def probe(board, run_jobs) -> BoardTask:
    task = tasks.start(board, BoardTask.Kind.PROBE)
    run_jobs()
    task.refresh_from_db()
    return task


def test_a_pi4_on_bookworm_is_probed_right(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    task = probe(board, run_jobs)
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert facts["model"] == "Raspberry Pi 4 Model B Rev 1.4"
    assert facts["revision"]["code"] == "c03114"
    assert facts["revision"]["memory_mb"] == 4096
    assert facts["revision"]["soc"] == "BCM2711"
    assert facts["config_path"] == "/boot/firmware/config.txt"
    assert facts["config_txt"] == node.read_file("/boot/firmware/config.txt").decode()
    assert "bookworm" in facts["os_pretty_name"].lower()
    assert facts["governor"] == "ondemand"
    assert facts["throttled"] == 0
    assert facts["arm_clock_hz"] > 0
    assert facts["boot_id"] == node.boot_id
    assert facts["tools"]["iperf3"] is True
    # One rule with the run's check: 7-Zip as Debian 12 installs it (7zz), ethtool in sbin.
    assert facts["tools"]["7zz|7z"] is True and facts["tools"]["ethtool"] is True
    assert facts["simulated"] is True  # pisim's own word, which no real Pi gives
    board.refresh_from_db()
    assert board.status == Board.Status.ONLINE
    assert board.last_seen is not None


def test_a_pi3_on_an_older_os_keeps_config_txt_in_boot(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi3"]
    task = probe(register_node(node), run_jobs)
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert facts["model"] == "Raspberry Pi 3 Model B Rev 1.2"
    assert facts["revision"]["code"] == "a02082"
    assert facts["revision"]["board_type"] == "3B"
    assert facts["config_path"] == "/boot/config.txt"
    assert facts["config_txt"] == node.read_file("/boot/config.txt").decode()
    assert "bullseye" in facts["os_pretty_name"].lower()


def test_kernel_and_userland_bitness_are_recorded_separately(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi4"]
    task = probe(register_node(node), run_jobs)
    snapshot = task.snapshot
    uname = node.run_as_root(["uname", "-m"]).stdout.decode().strip()
    long_bit = node.run_as_root(["getconf", "LONG_BIT"]).stdout.decode().strip()
    assert snapshot.facts["kernel_arch"] == uname
    assert snapshot.userland_bits == int(long_bit)
    assert snapshot.facts["dpkg_arch"]


def test_every_probe_is_kept_as_history(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi3"])
    probe(board, run_jobs)
    probe(board, run_jobs)
    assert board.snapshots.count() == 2


def test_an_unreachable_board_is_marked_offline_with_the_reason(
    pisim_node_factory, run_jobs, settings
):
    settings.SSH_CONNECT_TIMEOUT = 2
    node = pisim_node_factory()
    board = register_node(node)
    node.set_unreachable(True)
    task = probe(board, run_jobs)
    board.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert "did not answer within 2 s" in task.reason
    assert board.status == Board.Status.OFFLINE
    assert "did not answer" in board.status_reason


def test_a_changed_host_key_needs_attention_and_runs_nothing(pisim_node_factory, run_jobs):
    node = pisim_node_factory()
    board = register_node(node)
    node.change_host_key()
    task = probe(board, run_jobs)
    board.refresh_from_db()
    assert task.state == BoardTask.State.FAILED
    assert "host key" in task.reason and "changed" in task.reason
    assert board.status == Board.Status.NEEDS_ATTENTION
    assert not board.snapshots.exists()


def test_health_check_marks_boards_online_and_offline(pisim_node_factory, run_jobs, settings):
    settings.SSH_CONNECT_TIMEOUT = 2
    node = pisim_node_factory()
    board = register_node(node)
    tasks.start(board, BoardTask.Kind.HEALTH)
    run_jobs()
    board.refresh_from_db()
    assert board.status == Board.Status.ONLINE
    node.set_unreachable(True)
    tasks.start(board, BoardTask.Kind.HEALTH)
    run_jobs()
    board.refresh_from_db()
    assert board.status == Board.Status.OFFLINE


def needs_attention(board, reason="applying fast v1 stopped unexpectedly; check config.txt"):
    Board.objects.filter(pk=board.pk).update(
        status=Board.Status.NEEDS_ATTENTION, status_reason=reason
    )


@pytest.mark.parametrize("fault", ["none", "unreachable", "host key changed"])
def test_a_health_check_never_clears_needs_attention_nor_its_reason(
    pisim_node_factory, run_jobs, settings, fault
):
    """Only a probe may: that a board answers says nothing about the config.txt to check, and
    a later failure (a changed key needs attention too) must not hide why."""
    settings.SSH_CONNECT_TIMEOUT = 2
    node = pisim_node_factory()
    board = register_node(node)
    needs_attention(board)
    node.set_unreachable(fault == "unreachable")
    if fault == "host key changed":
        node.change_host_key()

    call_command("healthcheck")  # the loop leaves it to the person
    assert not board.tasks.exists()
    task = tasks.start(board, BoardTask.Kind.HEALTH)  # a check queued before it needed attention
    run_jobs()

    task.refresh_from_db()
    board.refresh_from_db()
    assert task.state == (BoardTask.State.DONE if fault == "none" else BoardTask.State.FAILED)
    assert board.status == Board.Status.NEEDS_ATTENTION
    assert board.status_reason == "applying fast v1 stopped unexpectedly; check config.txt"


def test_a_probe_that_succeeds_clears_needs_attention(pisim_node_factory, run_jobs):
    board = register_node(pisim_node_factory())
    needs_attention(board)
    assert probe(board, run_jobs).state == BoardTask.State.DONE
    board.refresh_from_db()
    assert board.status == Board.Status.ONLINE
    assert board.status_reason == ""


def test_a_pi5_is_probed_right(pisim_node_factory, run_jobs):
    node = pisim_node_factory(profile="pi5-bookworm")
    task = probe(register_node(node), run_jobs)
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert facts["model"].startswith("Raspberry Pi 5")
    assert facts["revision"]["soc"] == "BCM2712"
    assert facts["config_path"] == "/boot/firmware/config.txt"


def test_a_board_that_came_back_throttled_says_so_in_words(pisim_node_factory, run_jobs, logged_in):
    from pisim import Faults

    node = pisim_node_factory(faults=Faults(throttled_after_boot=0x50005))
    node.power_cycle()
    node.wait_ssh(timeout=15)
    board = register_node(node)
    task = probe(board, run_jobs)
    assert task.snapshot.throttled == 0x50005
    page = logged_in.get(board.get_absolute_url()).content.decode()
    for words in ("under-voltage detected now", "throttled now", "throttling has occurred"):
        assert words in page
