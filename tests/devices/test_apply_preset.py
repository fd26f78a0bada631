"""Applying presets to simulated Pis end to end: real RQ workers, Redis, sshd and reboots."""

import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from rq.job import Job
from rq.registry import FinishedJobRegistry

from devices import apply, apply_steps, presets, ssh, tasks
from devices.locks import board_lock
from devices.models import Application, Board, BoardTask, Preset, PresetVersion
from pisim import Faults
from tests.workers import wait_until

from .factories import make_board
from .simfarm import exists, register_node

pytestmark = pytest.mark.django_db(transaction=True)
pisim = pytest.mark.pisim

ROOT = Path(__file__).resolve().parent.parent.parent
PI4_CONFIG = "/boot/firmware/config.txt"
PI3_CONFIG = "/boot/config.txt"
State = Application.State


def make_version(options: dict, governor: str = "", name: str = "overclock"):
    preset, _ = Preset.objects.get_or_create(name=name)
    return presets.new_version(preset, options=options, governor=governor)


def apply_now(board, version, mode, run_jobs) -> Application:
    application = presets.start_application(board, version, mode)
    run_jobs()
    application.refresh_from_db()
    board.refresh_from_db()
    return application


def assert_all_ok(checks: dict) -> None:
    failed = {name: check for name, check in checks.items() if not check["ok"]}
    assert not failed, failed


@pisim
def test_a_trial_boot_is_verified_then_committed(pisim_node_factory, run_jobs, fast):
    node = pisim_node_factory()
    board = register_node(node)
    old, boots = node.read_file(PI4_CONFIG), node.boot_count
    version = make_version({"arm_freq": "1900", "arm_freq_min": "700"}, governor="performance")

    application = apply_now(board, version, Application.Mode.TRIAL, run_jobs)

    assert application.state == State.VERIFIED, application.reason
    checks = application.verification
    assert_all_ok(checks)
    assert {"arm_freq", "arm_freq_min", "governor", "arm_clock_mhz", "throttled"} <= set(checks)
    assert checks["trial boot (tryboot flag)"]["got"] == 1
    assert checks["arm_clock_mhz"] == {**checks["arm_clock_mhz"], "wanted": 1900, "got": 1900}
    assert checks["governor"]["got"] == "performance"
    assert node.boot_count == boots + 1  # the trial boot only: committing needs no reboot
    assert node.read_file(PI4_CONFIG) == presets.render_config(old, version)
    assert not exists(node, "/boot/firmware/tryboot.txt")
    assert node.read_file(application.backup_path) == old
    assert application.backup_text == old.decode()
    assert application.config_path == PI4_CONFIG
    assert node.read_file("/etc/default/cpu_governor") == b"CPU_DEFAULT_GOVERNOR=performance\n"
    assert "raspi-config" in application.governor_method
    assert application.started < application.finished
    assert "after a trial boot that passed every check" in application.reason
    assert board.status == Board.Status.ONLINE
    assert board.applications.filter(state=State.VERIFIED).latest("finished") == application

    node.power_cycle()  # committed for good: a normal boot keeps the settings and governor
    node.wait_state("up", timeout=15)
    assert node.booted["config_file"] == "config.txt"
    assert node.booted_config["arm_freq"] == 1900
    assert node.booted["governor"] == "performance"


@pisim
def test_direct_mode_writes_config_txt_reboots_once_and_verifies(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory(profile="pi3b-legacy")
    board = register_node(node)
    old, boots = node.read_file(PI3_CONFIG), node.boot_count
    version = make_version({"arm_freq": "1300"})

    application = apply_now(board, version, Application.Mode.DIRECT, run_jobs)

    assert application.state == State.VERIFIED, application.reason
    assert_all_ok(application.verification)
    assert set(application.verification) == {"arm_freq", "arm_clock_mhz", "throttled"}
    assert application.verification["arm_freq"] == {"wanted": "1300", "got": "1300", "ok": True}
    assert node.boot_count == boots + 1
    assert node.booted_config["arm_freq"] == 1300
    assert node.read_file(PI3_CONFIG) == presets.render_config(old, version)
    assert node.read_file(application.backup_path) == old
    assert application.governor_method == ""  # the version leaves the governor alone
    assert not exists(node, "/etc/default/cpu_governor")
    assert board.status == Board.Status.ONLINE


@pisim
def test_a_preset_the_board_cannot_boot_needs_attention_within_the_deadline(
    pisim_node_factory, run_jobs, fast
):
    fast.PIFARM_REBOOT_DEADLINE = 6
    node = pisim_node_factory(faults=Faults(max_boot_arm_freq=1800))
    board = register_node(node)
    version = make_version({"arm_freq": "2000"})

    started = time.monotonic()
    application = apply_now(board, version, Application.Mode.DIRECT, run_jobs)

    assert time.monotonic() - started < 6 + 15  # the deadline, one last connect, probe, write
    assert application.state == State.NEEDS_ATTENTION, application.reason
    assert node.state == "hung"
    outcome = application.reason
    assert "did not come back within 6 s" in outcome
    assert "power-cycle" in outcome
    assert application.backup_path and application.backup_path in outcome
    assert application.finished is not None
    assert board.status == Board.Status.NEEDS_ATTENTION
    assert "did not come back" in board.status_reason
    assert application.backup_path in board.status_reason
    with board_lock(board.pk, ttl=5):
        pass  # released


@pisim
def test_a_trial_boot_that_hangs_without_a_watchdog_says_a_power_cycle_is_enough(
    pisim_node_factory, run_jobs, fast
):
    fast.PIFARM_REBOOT_DEADLINE = 5
    node = pisim_node_factory(faults=Faults(max_boot_arm_freq=1800, watchdog=False))
    board = register_node(node)
    old = node.read_file(PI4_CONFIG)

    application = apply_now(board, make_version({"arm_freq": "2000"}), "trial", run_jobs)

    assert application.state == State.NEEDS_ATTENTION, application.reason
    assert "did not come back within 5 s from a trial boot" in application.reason
    assert "power-cycle the board: it then starts with its old config.txt" in application.reason
    assert "/boot/firmware/tryboot.txt" in application.reason
    assert board.status == Board.Status.NEEDS_ATTENTION
    assert node.read_file(PI4_CONFIG) == old  # untouched by a trial
    node.power_cycle()  # what the person does
    node.wait_state("up", timeout=15)
    assert node.booted["config_file"] == "config.txt"
    assert node.booted_config["arm_freq"] == 1800


@pisim
def test_the_trial_boot_recovers_the_same_preset_by_itself(pisim_node_factory, run_jobs, fast):
    node = pisim_node_factory(faults=Faults(max_boot_arm_freq=1800, watchdog_timeout=2.0))
    board = register_node(node)
    old = node.read_file(PI4_CONFIG)
    version = make_version({"arm_freq": "2000"}, governor="performance")

    application = apply_now(board, version, Application.Mode.TRIAL, run_jobs)

    assert application.state == State.ROLLED_BACK, application.reason
    assert "booted its old config.txt by itself" in application.reason
    checks = application.verification
    assert checks["trial boot (tryboot flag)"]["ok"] is False
    assert_all_ok({name: c for name, c in checks.items() if name.startswith("after restore")})
    assert node.read_file(PI4_CONFIG) == old
    assert not exists(node, "/boot/firmware/tryboot.txt")
    assert not exists(node, "/etc/default/cpu_governor")  # a failed trial leaves nothing
    assert node.booted_config["arm_freq"] == 1800
    assert board.status == Board.Status.ONLINE


@pisim
def test_a_board_that_comes_back_throttled_is_rolled_back_to_the_identical_file(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory()
    board = register_node(node)
    node.set_faults(Faults(throttled_after_boot=0x50005))  # from the next boot on
    old, boots = node.read_file(PI4_CONFIG), node.boot_count
    version = make_version({"arm_freq": "1900"}, governor="performance")

    application = apply_now(board, version, Application.Mode.DIRECT, run_jobs)

    assert application.state == State.ROLLED_BACK, application.reason
    checks = application.verification
    assert checks["throttled"] == {
        "wanted": "0x0",
        "got": "0x50005",
        "ok": False,
        "note": checks["throttled"]["note"],
    }
    assert "under-voltage detected now" in checks["throttled"]["note"]
    assert checks["arm_freq"]["ok"]  # the setting itself took
    assert_all_ok({name: c for name, c in checks.items() if name.startswith("after restore")})
    assert node.read_file(PI4_CONFIG) == old  # byte-identical
    assert not exists(node, "/etc/default/cpu_governor")  # it did not exist before
    assert node.boot_count == boots + 2
    assert node.booted_config["arm_freq"] == 1800
    assert node.booted["governor"] == "ondemand"
    outcome = application.reason
    assert "did not pass verification" in outcome and "throttled" in outcome
    assert "byte-identical" in outcome and "still reports throttling" in outcome
    assert board.status == Board.Status.ONLINE


@pisim
def test_a_trial_with_a_setting_the_firmware_does_not_honour_falls_back(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory()
    board = register_node(node)
    old, boots = node.read_file(PI4_CONFIG), node.boot_count
    version = make_version({"temp_limit": "90"})  # a warning only; the firmware clamps to 85

    application = apply_now(board, version, Application.Mode.TRIAL, run_jobs)

    assert application.state == State.ROLLED_BACK, application.reason
    checks = application.verification
    assert checks["temp_limit"] == {"wanted": "90", "got": "85", "ok": False}
    assert checks["after restore: config.txt sha256"]["ok"]
    assert node.read_file(PI4_CONFIG) == old
    assert not exists(node, "/boot/firmware/tryboot.txt")
    assert node.boot_count == boots + 2  # the trial, then a normal boot to leave it
    assert node.booted["tryboot"] is False
    assert "config.txt was never changed" in application.reason
    assert board.status == Board.Status.ONLINE


@pisim
def test_stock_removes_pifarms_block_through_the_same_write_reboot_verify_and_roll_back(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory()
    board = register_node(node)
    own = node.read_file(PI4_CONFIG)
    fast_version = make_version({"arm_freq": "1900"}, governor="performance")
    assert apply_now(board, fast_version, "trial", run_jobs).state == State.VERIFIED
    overclocked = node.read_file(PI4_CONFIG)
    stock = presets.stock_version()

    # A failed verification puts the overclocked file back, byte for byte.
    node.set_faults(Faults(throttled_after_boot=0x50005))
    refused = apply_now(board, stock, Application.Mode.DIRECT, run_jobs)
    assert refused.state == State.ROLLED_BACK, refused.reason
    assert node.read_file(PI4_CONFIG) == overclocked
    assert node.booted["governor"] == "performance"
    assert_all_ok({name: c for name, c in refused.verification.items() if "restore" in name})

    node.set_faults(Faults())
    node.power_cycle()  # a good power supply again
    node.wait_state("up", timeout=15)
    node.wait_ssh(timeout=15)
    application = apply_now(board, stock, Application.Mode.TRIAL, run_jobs)

    assert application.state == State.VERIFIED, application.reason
    assert_all_ok(application.verification)
    assert set(application.verification) == {
        "trial boot (tryboot flag)",
        "governor",
        "arm_clock_mhz",
        "throttled",
    }
    assert application.verification["governor"]["got"] == "ondemand"
    assert application.verification["arm_clock_mhz"]["got"] == 1800  # the board's own arm_boost
    assert node.read_file(PI4_CONFIG) == own  # no block left, the image's own file
    assert node.read_file("/etc/default/cpu_governor") == b"CPU_DEFAULT_GOVERNOR=ondemand\n"
    assert presets.is_at_stock(board)[0], presets.is_at_stock(board)[1]


@contextmanager
def sshd_killed_when(node, directory: Path, on_look=None):
    """Kill the node's sshd as soon as pifarm's temp file appears in directory (a write is
    under way), watching from the host while the block runs; fail if it never appeared."""
    killed, done = threading.Event(), threading.Event()

    def watch():  # no sleep: a small file's write is over in a few milliseconds
        while not done.is_set():
            if on_look is not None:
                on_look()
            elif killed.is_set():
                return
            if not killed.is_set() and any(directory.glob(".pifarm-tmp.*")):
                node.kill_sshd()
                killed.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
    assert killed.is_set(), "the write never started, so sshd was never killed"


@pisim
def test_sshd_killed_during_the_write_leaves_the_old_or_the_new_file(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory(profile="pi3b-legacy")  # 100 Mbit/s: a write takes a while
    board = register_node(node)
    padding = b"".join(b"# padding line %06d to make the write slow\n" % i for i in range(1300))
    old = node.read_file(PI3_CONFIG) + padding  # about 60 kB, near the 64 KiB limit
    node.write_file(PI3_CONFIG, old)
    version = make_version({"arm_freq": "1300"})
    new = presets.render_config(old, version)
    boot_dir = node.dir / "boot"  # the node's /boot, seen from the host
    seen = set()
    with sshd_killed_when(node, boot_dir, on_look=lambda: seen.add(node.read_file(PI3_CONFIG))):
        application = apply_now(board, version, Application.Mode.DIRECT, run_jobs)

    assert seen <= {old, new}
    assert node.read_file(PI3_CONFIG) == old
    assert not list(boot_dir.glob(".pifarm-tmp.*"))
    assert application.state == State.FAILED, application.reason
    assert application.reason.startswith("Nothing was changed")
    assert "byte for byte" in application.reason
    assert board.status == Board.Status.ONLINE


@pisim
def test_sshd_killed_after_config_txt_was_replaced_puts_everything_back(
    pisim_node_factory, run_jobs, fast, monkeypatch
):
    node = pisim_node_factory()
    board = register_node(node)
    old = node.read_file(PI4_CONFIG)
    version = make_version({"arm_freq": "1900"}, governor="performance")
    defaults = node.dir / "etc" / "default"  # the node's /etc/default, seen from the host
    # config.txt is written first, then the governor's file: sshd dies as that write starts.
    # (Watched for from the host, the write's temp file, there for a few milliseconds, was
    # missed about once in five CI runs.) The jobs run in this process (run_jobs).
    write, cut = ssh.Session.write_file_atomic, []

    def governor_write_cut_off(session, path, data, **options):
        if path == apply_steps.GOVERNOR_FILE and not cut:
            node.kill_sshd()
            cut.append(path)
            wait_until(lambda: not session._transport.is_active(), "the connection to drop")
        return write(session, path, data, **options)

    monkeypatch.setattr(ssh.Session, "write_file_atomic", governor_write_cut_off)
    application = apply_now(board, version, Application.Mode.DIRECT, run_jobs)
    assert cut, "the governor's file was never written"

    assert application.state == State.FAILED, application.reason
    assert application.reason.startswith("Nothing was changed")
    assert application.backup_path  # config.txt had been replaced before the kill
    assert node.read_file(PI4_CONFIG) == old
    assert not exists(node, "/etc/default/cpu_governor")
    assert not list(defaults.glob(".pifarm-tmp.*"))
    live = node.run_as_root(["cat", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"])
    assert live.stdout.decode().strip() == "ondemand"
    assert board.status == Board.Status.ONLINE


def worker_process(env: dict, log: Path) -> subprocess.Popen:
    """A real worker with RQ's scheduler, which delivers a busy board's next try."""
    with log.open("wb") as output:
        return subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "rqworker",
                "default",
                "--with-scheduler",
                "--worker-class",
                "rq.SimpleWorker",
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def two_workers(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
        "REDIS_URL": django_settings.REDIS_URL,
        "PIFARM_SSH_CONNECT_TIMEOUT": "2",
        "PIFARM_REBOOT_DEADLINE": "15",
        "PIFARM_REBOOT_POLL": "1",
        "PIFARM_BUSY_RETRY": "1",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
    workers = [worker_process(env, log) for log in logs]
    try:
        yield
    finally:
        for worker in workers:
            worker.terminate()  # a warm shutdown: each finishes its job first
        for worker, log in zip(workers, logs, strict=True):
            assert worker.wait(timeout=30) == 0, log.read_text(errors="replace")[-2000:]


@pisim
def test_work_for_a_busy_board_waits_without_holding_a_worker(
    pisim_node_factory, redis_queue, tmp_path
):
    busy_node, idle_node = pisim_node_factory(), pisim_node_factory()
    busy, idle = register_node(busy_node), register_node(idle_node)
    boots = busy_node.boot_count
    application = presets.start_application(
        busy, make_version({"arm_freq": "1700"}), Application.Mode.TRIAL
    )
    seen_waiting, deadline = "", time.monotonic() + 120
    with two_workers(tmp_path):
        while application.step in ("", apply.WAITING) and time.monotonic() < deadline:
            application.refresh_from_db()  # until it drives the board
            time.sleep(0.02)
        probe_busy = tasks.start(busy, BoardTask.Kind.PROBE)  # worker 2 finds it busy...
        probe_idle = tasks.start(idle, BoardTask.Kind.PROBE)  # ...and is free for this one
        while time.monotonic() < deadline:
            records = [application, probe_busy, probe_idle]
            for record in records:
                record.refresh_from_db()
            if probe_busy.state == "waiting":
                seen_waiting = probe_busy.waiting_words
            if all(record.is_finished for record in records):
                break
            time.sleep(0.05)

    assert application.state == State.VERIFIED, application.reason
    assert probe_idle.state == probe_busy.state == BoardTask.State.DONE
    assert probe_idle.finished < application.finished  # it did not wait behind the busy board
    assert (probe_idle.finished - probe_idle.created).total_seconds() < 5
    assert seen_waiting.startswith(f"waiting for {busy.name}: another job is driving it")
    assert probe_busy.started > application.finished  # it ran once the board was free
    assert busy_node.boot_count == boots + 1
    registry = FinishedJobRegistry(queue=redis_queue)
    jobs = Job.fetch_many(registry.get_job_ids(), connection=redis_queue.connection)
    assert len({job.worker_name for job in jobs}) == 2


@pisim
def test_a_preset_that_does_not_suit_the_board_changes_nothing(pisim_farm, run_jobs, fast):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    old, boots = node.read_file(PI4_CONFIG), node.boot_count
    # the range is -16..8: pifarm no longer saves such a version, an older one could have
    preset = Preset.objects.create(name="stored before checks")
    version = PresetVersion.objects.create(preset=preset, number=1, options={"over_voltage": "12"})

    application = apply_now(board, version, Application.Mode.TRIAL, run_jobs)

    assert application.state == State.FAILED
    assert application.reason.startswith("Nothing was changed")
    assert "does not suit this board" in application.reason
    assert application.backup_path == ""
    assert node.read_file(PI4_CONFIG) == old
    assert node.boot_count == boots
    assert board.status == Board.Status.ONLINE


@pisim
def test_an_unreachable_board_fails_and_is_marked_offline(pisim_node_factory, run_jobs, fast):
    node = pisim_node_factory()
    board = register_node(node)
    node.set_unreachable(True)

    application = apply_now(board, make_version({"arm_freq": "1700"}), "trial", run_jobs)

    assert application.state == State.FAILED
    assert "Nothing was changed" in application.reason
    assert "did not answer within 2 s" in application.reason
    assert board.status == Board.Status.OFFLINE


def test_a_job_that_crashes_after_writing_ends_its_application_needing_attention(
    redis_queue, run_jobs, monkeypatch
):
    def crash_while_writing(self):
        self.step("writing config.txt")
        Board.objects.filter(pk=self.board.pk).update(status=Board.Status.BUSY)
        raise RuntimeError("bug")

    monkeypatch.setattr(apply._Applying, "run", crash_while_writing)
    board = make_board(status=Board.Status.ONLINE)
    application = apply_now(board, make_version({"arm_freq": "1700"}), "trial", run_jobs)

    assert application.state == State.NEEDS_ATTENTION  # it was past the steps that change nothing
    assert "failed unexpectedly (RuntimeError while writing config.txt)" in application.reason
    assert "It may have changed the board" in application.reason
    assert application.finished is not None
    assert board.status == Board.Status.NEEDS_ATTENTION


def test_an_application_runs_once(redis_queue, monkeypatch):
    board = make_board()
    application = Application.objects.create(
        board=board, version=make_version({"arm_freq": "1700"}), state=State.VERIFIED
    )
    monkeypatch.setattr(apply.work, "hold", pytest.fail)

    apply.work.perform("apply", application.pk)  # a second delivery of a finished job does nothing

    application.refresh_from_db()
    assert application.state == State.VERIFIED
