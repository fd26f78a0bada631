"""The "prepare board" job on simulated Pis that lack tools, with a real RQ worker: it installs
what a benchmark lacks (pisim's simulated apt-get) so that its runs then work, does nothing
when nothing lacks, and fails with apt's or sudo's own words."""

import dataclasses

import pytest

from benchmarks import campaigns, catalog
from benchmarks.models import Run
from devices import tasks
from devices.locks import board_lock
from devices.models import BoardTask
from pisim import Faults
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]
NOPASSWD = "/etc/sudoers.d/010_pi-nopasswd"  # pisim's; without it sudo wants pi's password


def prepare(board, run_jobs, *benchmarks: str) -> BoardTask:
    task = tasks.start(board, BoardTask.Kind.PREPARE, benchmarks=benchmarks)
    run_jobs()
    task.refresh_from_db()
    return task


def found(node, tool: str) -> bool:
    return node.run_as_root(["sh", "-c", 'command -v "$1"', "sh", tool]).returncode == 0


def sudo_wants_a_password(node) -> None:
    node.run_as_root(["rm", "-f", "--", NOPASSWD], check=True)


def test_prepare_installs_what_a_benchmark_lacks_and_its_run_then_works(
    pisim_node_factory, run_jobs
):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    board = register_node(node)
    task = prepare(board, run_jobs, "sysbench-cpu", "sha1sum")
    assert task.state == BoardTask.State.DONE, task.reason
    assert task.reason == "installed sysbench; every tool of sysbench-cpu, sha1sum is there now"
    assert "Setting up sysbench" in task.log_tail
    assert found(node, "sysbench")
    assert task.snapshot.facts["tools"]["sysbench"] is True  # the board's page shows it now
    campaign = campaigns.start(
        {
            "name": "after prepare",
            "boards": [board.name],
            "benchmarks": [{"name": "sysbench-cpu", "params": {"seconds": 1, "max_prime": 100}}],
            "min_trial_s": 0,
            "repetitions": 1,
            "quiet": False,
        }
    )
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason


def test_nothing_missing_ends_done_at_once_without_apt(pisim_node_factory, run_jobs):
    node = pisim_node_factory()
    sudo_wants_a_password(node)  # so apt, had it run, would have failed the task
    task = prepare(register_node(node), run_jobs, "sysbench-cpu")
    assert task.state == BoardTask.State.DONE, task.reason
    assert task.reason == "nothing to install: every tool of sysbench-cpu is there"
    assert task.log_tail == ""


def test_a_package_apt_cannot_find_fails_with_apts_words(pisim_node_factory, run_jobs, monkeypatch):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    unknown = dataclasses.replace(catalog.BUILT_IN["sysbench-cpu"], packages=("no-such-pkg",))
    monkeypatch.setitem(catalog.BUILT_IN, "sysbench-cpu", unknown)
    task = prepare(register_node(node), run_jobs, "sysbench-cpu")
    assert task.state == BoardTask.State.FAILED
    assert "apt-get failed (exit status 100)" in task.reason
    assert "E: Unable to locate package no-such-pkg" in task.reason
    assert not found(node, "sysbench")


def test_a_catalog_package_that_is_no_package_name_never_reaches_apt(
    pisim_node_factory, run_jobs, monkeypatch
):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    option = dataclasses.replace(catalog.BUILT_IN["sysbench-cpu"], packages=("--reinstall",))
    monkeypatch.setitem(catalog.BUILT_IN, "sysbench-cpu", option)
    task = prepare(register_node(node), run_jobs, "sysbench-cpu")
    assert task.state == BoardTask.State.FAILED
    assert task.reason == "not a Debian package name: '--reinstall'"
    assert task.log_tail == ""


def test_a_sudo_that_wants_a_password_fails_with_its_words(pisim_node_factory, run_jobs):
    node = pisim_node_factory(faults=Faults(missing_tools=("sysbench",)))
    sudo_wants_a_password(node)
    task = prepare(register_node(node), run_jobs, "sysbench-cpu")
    assert task.state == BoardTask.State.FAILED
    assert "sudo: a password is required" in task.reason
    assert "sudo: a password is required" in task.log_tail


def test_prepare_of_a_busy_board_waits_for_it(pisim_node_factory, run_jobs):
    board = register_node(pisim_node_factory(faults=Faults(missing_tools=("sysbench",))))
    task = tasks.start(board, BoardTask.Kind.PREPARE, benchmarks=["sysbench-cpu"])
    with board_lock(board.pk, ttl=60):  # another job drives the board
        run_jobs()
    task.refresh_from_db()
    assert task.state == BoardTask.State.WAITING
    assert task.benchmarks == ["sysbench-cpu"]
