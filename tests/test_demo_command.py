import signal
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from benchmarks.models import Campaign
from devices import roles
from pifarm.management.commands import demo
from pifarm.management.commands.demo import STOP_SIGNALS, Command
from pifarm.supervisor import Process, Supervisor
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


def test_the_demo_user_is_an_admin_by_role(settings, tmp_path, monkeypatch):
    settings.DATA_DIR = tmp_path
    monkeypatch.delenv("PIFARM_DEMO_PASSWORD", raising=False)
    get_user_model().objects.create_superuser("demo")  # as older demos made it
    password = Command()._demo_user()
    demo = get_user_model().objects.get(username="demo")
    assert demo.check_password(password)
    assert roles.role_of(demo) == roles.ADMIN
    assert demo.is_staff and not demo.is_superuser
    assert demo.has_perm("devices.delete_board")


@pytest.fixture
def stop_signal_handlers():
    """The demo's wait loop takes over Ctrl-C and TERM; the test run gets them back."""
    saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.mark.slow
def test_a_dead_web_server_ends_the_demo_with_the_reason(tmp_path, stop_signal_handlers):
    log_path = tmp_path / "demo.log"
    with open(log_path, "ab") as log:
        supervisor = Supervisor(print)
        web = [sys.executable, "-c", "raise SystemExit(3)"]
        supervisor.add(Process("the web server", web, cwd=tmp_path, log=log, restart=False))
        with pytest.raises(CommandError) as stopped:
            Command()._wait(supervisor, log_path)
        supervisor.stop()
    assert str(stopped.value) == (
        f"the web server stopped (exit code 3); the demo cannot go on without it; see {log_path}"
    )


def test_the_demo_answers_the_network_question_on_its_100_mbit_pis_once(redis_queue, capsys):
    for name in ("sim-node1", "sim-node2", "sim-node3"):
        make_board(name, host=f"10.213.9.{10 + int(name[-1])}")
    get_user_model().objects.create_user("demo")
    profiles = dict(zip(("node1", "node2", "node3"), demo.DEMO_PROFILES, strict=True))
    farm = [{"name": name, "profile": profile} for name, profile in profiles.items()]
    started = Command()._question_campaign(farm)
    assert started.spec["question"] == "network"
    assert started.spec["boards"] == ["sim-node1"]  # the Pi 1 B; the Pi 4s have gigabit
    assert started.created_by.username == "demo"
    assert started.runs.count() == 1 * 3 * 2 * 3  # boards, entries, presets, repetitions
    assert Command()._question_campaign(farm) == started  # a restart: no second campaign
    started.state = Campaign.State.CANCELLED
    started.save()
    assert Command()._question_campaign(farm) != started
    assert Campaign.objects.count() == 2


def test_a_demo_that_finds_the_farm_in_use_leaves_it_running(monkeypatch, tmp_path):
    """Another demo's farm on this machine: this one refuses, and its clean-up does not take
    that farm down (it did: `pisim down` ran whatever happened)."""
    ran = []
    monkeypatch.setattr(demo, "farm_in_use", lambda rundir: rundir.name == demo.DEMO_FARM)

    def run(command, **options):
        ran.append(command)
        return demo.subprocess.CompletedProcess(command, 1, "", "no room for a farm")

    monkeypatch.setattr(demo.subprocess, "run", run)
    command = Command()
    with pytest.raises(CommandError, match="in use by another demo"):
        command._start_farm(3)
    command._stop(Supervisor(print))
    assert ran == []
    monkeypatch.setattr(demo, "farm_in_use", lambda rundir: False)
    with pytest.raises(CommandError, match="no room for a farm"):  # ours, if half up: down
        command._start_farm(3)
    command._stop(Supervisor(print))
    assert ran[-1][-3:] == ["down", "--name", demo.DEMO_FARM]


def test_a_second_demo_of_one_checkout_refuses_before_it_touches_redis(
    settings, tmp_path, monkeypatch
):
    """Two demos share a checkout's data (its embedded Redis in var/): the second one stopped
    the first one's Redis on its way out. It now refuses before it adopts anything."""
    settings.DATA_DIR = tmp_path

    def adopted(*args):
        raise AssertionError("the second demo adopted the first one's Redis")

    monkeypatch.setattr(demo, "EmbeddedRedis", adopted)
    first = Command()
    first._hold_the_checkout()  # as a running demo does
    with pytest.raises(CommandError, match="another demo runs from this checkout"):
        Command().handle(nodes=1, port=1, workers=1)


def test_a_demo_that_finds_the_farm_in_use_refuses_before_it_touches_redis(
    settings, tmp_path, monkeypatch
):
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(demo, "farm_in_use", lambda rundir: True)

    def adopted(*args):
        raise AssertionError("the demo adopted Redis before it found the farm in use")

    monkeypatch.setattr(demo, "EmbeddedRedis", adopted)
    with pytest.raises(CommandError, match="in use by another demo"):
        Command().handle(nodes=1, port=1, workers=1)
