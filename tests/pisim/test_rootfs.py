"""The i386 root of the 32-bit nodes: built once into a cache, failing with a clear message."""

import fcntl
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pisim import rootfs
from pisim.util import PisimError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="debootstrap needs root")


@pytest.mark.slow
def test_an_unreachable_mirror_fails_naming_the_step_and_leaves_no_half_built_root(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(rootfs, "RETRY_PAUSE_S", 0)
    mirror = "http://127.0.0.1:9/debian"  # discard port: nothing listens
    with pytest.raises(PisimError) as caught:
        rootfs.ensure_root(tmp_path, mirror=mirror, attempts=2)
    message = str(caught.value)
    assert "debootstrap failed" in message
    assert mirror in message and "2 attempts" in message
    assert not rootfs.root_dir(tmp_path).exists()
    assert not [p.name for p in tmp_path.iterdir() if ".build-" in p.name]


@pytest.mark.slow
def test_the_cached_root_is_reused_and_a_changed_package_list_is_not_it():
    root = rootfs.ensure_root()
    stamp = (root.parent / "stamp.json").read_text()
    assert rootfs.ensure_root() == root
    assert (root.parent / "stamp.json").read_text() == stamp  # not built again
    assert json.loads(stamp)["packages"] == sorted(rootfs.PACKAGES)
    assert not rootfs.is_built(packages=(*rootfs.PACKAGES, "cowsay"))


@pytest.mark.slow
def test_a_replaced_root_is_removed_only_once_no_node_has_it_mounted(tmp_path):
    old = tmp_path / f".{rootfs.ARCH}-{rootfs.SUITE}.old-1"
    (old / "root" / "etc").mkdir(parents=True)
    mountpoint = tmp_path / "node-root"
    mountpoint.mkdir()
    # A node of another session: its own mount namespace, the old root mounted there only.
    script = f"mount --bind {old / 'root'} {mountpoint} && echo ready && exec sleep 60"
    holder = subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        rootfs._remove_leftovers(tmp_path)
        assert old.is_dir()
    finally:
        holder.kill()
        holder.wait()
    rootfs._remove_leftovers(tmp_path)
    assert not old.exists()


@pytest.mark.slow
def test_a_dead_build_is_removed_without_reaching_into_what_it_had_mounted(tmp_path):
    dead = tmp_path / f".{rootfs.ARCH}-{rootfs.SUITE}.build-1"
    (dead / "root" / "dev").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("not the build's")
    remover = f"{sys.executable} -c '{REMOVE_LEFTOVERS}' {tmp_path}"
    script = f"mount --bind {outside} {dead / 'root' / 'dev'} && {remover}"
    subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=30,
    )
    assert not dead.exists()
    assert (outside / "keep").read_text() == "not the build's"


REMOVE_LEFTOVERS = (
    "import sys, pathlib; from pisim import rootfs; "
    "rootfs._remove_leftovers(pathlib.Path(sys.argv[1]))"
)


@pytest.mark.slow
def test_a_second_session_waits_for_the_build_under_way(tmp_path, monkeypatch):
    monkeypatch.setattr(rootfs, "RETRY_PAUSE_S", 0)
    errors = []

    def second_session():
        try:
            rootfs.ensure_root(tmp_path, mirror="http://127.0.0.1:9/debian", attempts=1)
        except PisimError as exc:
            errors.append(exc)

    with open(tmp_path / f"{rootfs.ARCH}-{rootfs.SUITE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first session, building
        waiting = threading.Thread(target=second_session)
        waiting.start()
        waiting.join(timeout=2)
        assert waiting.is_alive() and not errors  # held at the lock, not building
    waiting.join(timeout=60)
    assert not waiting.is_alive() and "debootstrap failed" in str(errors[0])


def test_an_index_a_mirror_serves_mid_sync_leaves_the_root_as_installed_and_says_so(
    tmp_path, monkeypatch
):
    """apt-get update exits 100 when one suite's index does not match its Release file (a
    mirror mid-sync); the root debootstrap installed still serves, brought up to date from the
    indexes that arrived, and the reason is kept."""
    (tmp_path / "etc/apt/sources.list.d").mkdir(parents=True)
    (tmp_path / "etc/ssh").mkdir()
    steps = []

    def step(what, cmd, log):
        steps.append(what)
        if "update" in cmd:
            raise PisimError(f"{what} failed (exit 100): File has unexpected size")

    monkeypatch.setattr(rootfs, "_step", step)
    not_updated = rootfs._configure(tmp_path, [], tmp_path / "log")
    assert "unexpected size" in not_updated
    assert steps == [
        "apt-get update in the i386 root",
        "apt-get dist-upgrade in the i386 root",
        "apt-get clean in the i386 root",
    ]
