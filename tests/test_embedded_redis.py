import os

import pytest
from redis.connection import UnixDomainSocketConnection

from pifarm import embedded_redis


def test_a_stale_pid_file_naming_another_program_is_no_running_redis(tmp_path):
    # The pid of a killed Redis may be reused by anything, e.g. this test's own process.
    (tmp_path / embedded_redis.PID_NAME).write_text(f"{os.getpid()}\n")
    assert not embedded_redis.is_running(tmp_path)


@pytest.mark.slow  # starts a Redis server
def test_it_stops_at_once(tmp_path, monkeypatch):
    # redis-py's default retries once took 4 s to notice that SHUTDOWN had worked: each retry
    # dials the socket again, after a backoff. So stop() is counted in connections: one to see
    # that the server answers, one to shut it down, no third.
    embedded_redis.ensure_running(tmp_path)
    dials = []
    dial = UnixDomainSocketConnection._connect

    def counted(connection):
        dials.append(connection.path)
        return dial(connection)

    monkeypatch.setattr(UnixDomainSocketConnection, "_connect", counted)
    embedded_redis.stop(tmp_path)
    assert len(dials) == 2
    assert not embedded_redis.is_running(tmp_path)
