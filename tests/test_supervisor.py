"""The demo's supervisor, with real processes: manage.py rqworker, the embedded Redis."""

import os
import signal
import sys
import time
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from rq import Queue, Worker

from pifarm import embedded_redis, supervisor
from pifarm.supervisor import EmbeddedRedis, Process, Stopped, Supervisor

WORKER = [sys.executable, "manage.py", "rqworker", "--with-scheduler", "default"]
CRASH = [sys.executable, "-c", "raise SystemExit(3)"]


@pytest.fixture
def said():
    return []


@pytest.fixture
def parts(said, tmp_path):
    """A supervisor whose parts log to a file, and are stopped whatever the test did."""
    with open(tmp_path / "demo.log", "ab") as log:
        watcher = Supervisor(said.append)
        yield watcher, log
        watcher.stop()


def process(name, command, log, restart=True):
    return Process(name, command, cwd=settings.BASE_DIR, log=log, restart=restart)


def wait_until(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def registered(pid, connection):
    return any(worker.pid == pid for worker in Worker.all(connection=connection))


@pytest.mark.slow
def test_a_worker_killed_with_sigkill_is_restarted_and_it_says_so(parts, said, redis_queue):
    watcher, log = parts
    worker = watcher.add(process("worker 1", WORKER, log))
    first = worker.popen.pid
    wait_until(lambda: registered(first, redis_queue.connection))
    os.kill(first, signal.SIGKILL)
    worker.popen.wait()
    watcher.poll()
    assert said == ["worker 1 stopped (killed by signal 9); restarting it"]
    assert worker.popen.pid != first and worker.alive()
    wait_until(lambda: registered(worker.popen.pid, redis_queue.connection))
    watcher.poll()  # alive: nothing to do
    assert len(said) == 1


@pytest.mark.slow
def test_a_crash_loop_ends_with_the_reason(parts, said):
    watcher, log = parts
    watcher.max_restarts = 2
    crasher = watcher.add(process("the health-check loop", CRASH, log))
    with pytest.raises(Stopped) as stopped:
        for _ in range(3):
            crasher.popen.wait()
            watcher.poll()
    assert str(stopped.value) == (
        "the health-check loop stopped (exit code 3) after 2 restarts within 60 s: "
        "it keeps crashing, so the demo stops instead"
    )
    assert len(said) == 2


@pytest.mark.slow
def test_restarts_older_than_the_window_are_forgiven(parts, said):
    watcher, log = parts
    now = [0.0]
    watcher.clock, watcher.max_restarts = (lambda: now[0]), 1
    crasher = watcher.add(process("worker 1", CRASH, log))
    for _ in range(3):
        crasher.popen.wait()
        watcher.poll()
        now[0] += 61
    assert len(said) == 3


@pytest.mark.slow
def test_the_web_server_dying_stops_the_demo_with_a_clear_message(parts, said):
    watcher, log = parts
    web = watcher.add(process("the web server", CRASH, log, restart=False))
    web.popen.wait()
    with pytest.raises(Stopped, match=r"^the web server stopped \(exit code 3\); the demo cannot"):
        watcher.poll()
    assert said == []


@pytest.mark.slow
def test_stopping_leaves_no_process_even_one_that_ignores_term(parts, monkeypatch):
    watcher, log = parts
    monkeypatch.setattr(supervisor, "STOP_GRACE_S", 0.5)
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    polite = watcher.add(process("worker 1", WORKER, log))
    deaf = watcher.add(process("worker 2", [sys.executable, "-c", stubborn], log))
    time.sleep(0.2)  # let the stubborn one install its handler
    watcher.stop()
    assert polite.popen.returncode is not None
    assert deaf.popen.returncode == -signal.SIGKILL


@pytest.fixture
def own_redis(tmp_path):
    """An embedded Redis of this test's own: it gets killed."""
    yield EmbeddedRedis(tmp_path)
    embedded_redis.stop(tmp_path)


def redis_pid(data_dir):
    return int((data_dir / embedded_redis.PID_NAME).read_text())


@pytest.mark.slow
def test_the_embedded_redis_killed_is_started_again_and_the_loss_is_said(parts, said, own_redis):
    watcher, _ = parts
    watcher.add(own_redis)
    client = redis.Redis(unix_socket_path=str(embedded_redis.socket_path(own_redis.data_dir)))
    client.set("queued-job", "1")
    os.kill(redis_pid(own_redis.data_dir), signal.SIGKILL)
    wait_until(lambda: not own_redis.alive(), timeout=5)
    watcher.poll()
    assert said == [
        "the embedded Redis stopped (its process is gone); restarting it; the jobs it held are "
        "lost (queued, scheduled or running); the health check ends their records"
    ]
    assert client.ping() and client.get("queued-job") is None


@pytest.mark.slow
def test_a_busy_redis_is_not_restarted_beside_itself(parts, said, own_redis):
    watcher, _ = parts
    watcher.add(own_redis)
    pid = redis_pid(own_redis.data_dir)
    os.kill(pid, signal.SIGSTOP)  # alive, but answers nothing
    try:
        watcher.poll()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert said == [] and redis_pid(own_redis.data_dir) == pid


@pytest.mark.slow
def test_workers_start_again_after_a_redis_restart_and_deliver_scheduled_jobs(
    parts, said, own_redis, monkeypatch
):
    # Kept, they would be unknown to the new server (no worker on the queue dashboard), and
    # their scheduler dies if it touches the dead one: a busy board's next try would never come.
    watcher, log = parts
    watcher.add(own_redis)
    monkeypatch.setenv("REDIS_URL", embedded_redis.url(own_redis.data_dir))
    worker = watcher.add(process("worker 1", WORKER, log), restart_after=own_redis)
    client = redis.Redis(unix_socket_path=str(embedded_redis.socket_path(own_redis.data_dir)))
    wait_until(lambda: registered(worker.popen.pid, client))
    os.kill(redis_pid(own_redis.data_dir), signal.SIGKILL)
    wait_until(lambda: not own_redis.alive(), timeout=5)
    first = worker.popen.pid

    def back_on_the_new_server():
        watcher.poll()
        return worker.popen.pid != first and registered(worker.popen.pid, client)

    wait_until(back_on_the_new_server)
    assert said[1] == "asking worker 1 to stop after the current job and start again with it"
    # How it stops depends on where the lost connection caught it (exit code 0 or 1, or the
    # TERM itself): restarted all the same.
    assert said[2].startswith("worker 1 stopped (") and len(said) == 3
    job = Queue("default", connection=client).enqueue_in(timedelta(seconds=0.5), "os.getpid")
    wait_until(lambda: job.get_status(refresh=True) == "finished")


@pytest.mark.slow
def test_a_part_killed_after_its_grace_takes_what_it_started_with_it(parts, tmp_path, monkeypatch):
    """As an RQ worker's work horse: it outlived a worker killed after its grace, and went on
    with its job against a farm the demo had taken down."""
    watcher, log = parts
    monkeypatch.setattr(supervisor, "STOP_GRACE_S", 0.5)
    child_pid = tmp_path / "child.pid"
    deaf_parent = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "child = subprocess.Popen(['sleep', '60']); "
        f"open({str(child_pid)!r}, 'w').write(str(child.pid)); time.sleep(60)"
    )
    watcher.add(process("worker 1", [sys.executable, "-c", deaf_parent], log))
    wait_until(lambda: child_pid.exists() and child_pid.read_text())
    child = int(child_pid.read_text())
    watcher.stop()
    wait_until(lambda: not alive(child), timeout=5)


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for whoever adopted it to reap it."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
