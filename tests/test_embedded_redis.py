import os
import time

from pifarm import embedded_redis


def test_a_stale_pid_file_naming_another_program_is_no_running_redis(tmp_path):
    # The pid of a killed Redis may be reused by anything, e.g. this test's own process.
    (tmp_path / embedded_redis.PID_NAME).write_text(f"{os.getpid()}\n")
    assert not embedded_redis.is_running(tmp_path)


def test_it_stops_at_once(tmp_path):
    # redis-py's default retries once took 4 s to notice that SHUTDOWN had worked.
    embedded_redis.ensure_running(tmp_path)
    started = time.monotonic()
    embedded_redis.stop(tmp_path)
    assert time.monotonic() - started < 1
    assert not embedded_redis.is_running(tmp_path)
