"""The web server as `make demo` and the team set-up start it: gunicorn, with gunicorn.conf.py."""

import http.client
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

from benchmarks.forms_comparisons import CAMPAIGNS_MAX, RUN_CODES_MAX
from pifarm import embedded_redis
from pifarm.supervisor import listening
from tests.processes import inherited_environment

ROOT = Path(__file__).resolve().parent.parent
CODE = "0b9e8a4c-3f55-4d2e-9c61-2a7d5e8f1b30"


@pytest.fixture
def web_server(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gunicorn = Path(sys.executable).with_name("gunicorn")
    env = {**inherited_environment(), "PIFARM_DATA_DIR": str(tmp_path)}
    server = subprocess.Popen(
        [str(gunicorn), "pifarm.wsgi", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        listening(port, 30)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)
        embedded_redis.stop(tmp_path)  # the server's own, which outlives it by design


def status_of(port: int, path: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    return connection.getresponse().status


@pytest.mark.slow  # a gunicorn of its own
def test_the_largest_selection_the_builder_takes_reaches_it(web_server):
    # As a browser sends the form: the run codes one a line, a baseline of 200 characters of
    # 3 bytes each (9 percent-encoded), every other field set.
    query = urlencode(
        {
            "campaigns": [CODE] * CAMPAIGNS_MAX,
            "runs": "\r\n".join([CODE] * RUN_CODES_MAX),
            "metric": "openssl_speed:throughput_16384",
            "group_by": "param:cipher",
            "baseline": "界" * 200,
            "include_suspects": "on",
        },
        doseq=True,
    )
    path = f"/comparisons/new/?{query}"
    assert len(f"GET {path} HTTP/1.1") > 4094  # gunicorn's default limit
    assert status_of(web_server, path) == 302  # to the login page: not 414, too long
