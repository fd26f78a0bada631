"""python -m pisim up / status / down / build-root."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pisim import cgroup, rootfs
from pisim.pytest_plugin import FACTORY_SUBNETS

from .sshutil import out

pytestmark = pytest.mark.pisim

PKG_PARENT = Path(__file__).resolve().parents[2]


def pisim(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "pisim", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PKG_PARENT,
        check=False,
    )


class CliNode:
    """Just enough of pisim.Node for the ssh helpers, built from `up --json` output."""

    def __init__(self, doc):
        self.host, self.port, self.user = doc["host"], doc["port"], doc["user"]
        self.password = doc["password"]
        self.private_key_pem = Path(doc["private_key_path"]).read_text()
        self.host_key_public = doc["host_key_public"]


def test_up_status_down():
    if os.geteuid() != 0:
        pytest.skip("pisim needs root")
    k = next(k for k in FACTORY_SUBNETS if not Path(f"/sys/class/net/psbr{k}").exists())
    name = f"cli{k}"
    try:
        up = pisim("up", "--nodes", "3", "--name", name, "--subnet-index", str(k), "--json")
        assert up.returncode == 0, up.stderr
        doc = json.loads(up.stdout)
        profiles = [n["profile"] for n in doc["nodes"]]
        assert profiles == ["pi3b-legacy", "pi4b-bookworm", "pi3b-legacy"]
        assert json.loads(Path(f"/run/pisim/{name}/farm.json").read_text()) == doc
        first = doc["nodes"][0]
        assert first["host"] == f"10.213.{k}.11" and first["host_key_fingerprint"].startswith(
            "SHA256:"
        )
        # The supervisor outlived `up`: the nodes answer.
        assert out(CliNode(doc["nodes"][2]), "hostname").strip() == "node3"
        status = pisim("status", "--name", name)
        assert status.returncode == 0
        assert status.stdout.count("ssh ok") == 3 and "boot_count=1" in status.stdout
        mode = cgroup.detect().mode  # each node's simulated CPU share, in both outputs
        assert [n["cpu_quota"] for n in doc["nodes"]] == [mode] * 3
        assert status.stdout.count(f"cpu quota {mode}") == 3
    finally:
        down = pisim("down", "--name", name)
    assert down.returncode == 0, down.stderr
    assert not Path(f"/run/pisim/{name}").exists()
    assert not Path(f"/sys/class/net/psbr{k}").exists()


def test_build_root_says_where_the_32_bit_root_is():
    if os.geteuid() != 0:
        pytest.skip("building the i386 root needs root (debootstrap)")
    proc = pisim("build-root", timeout=1800)  # built once per machine, then from the cache
    assert proc.returncode == 0, proc.stderr
    root = rootfs.root_dir()
    assert proc.stdout.strip().splitlines()[-1].endswith(f": {root}")
    assert (root / "usr/sbin/sshd").is_file()
