"""The i386 root of the 32-bit nodes: built once into a cache, failing with a clear message."""

import json
import os

import pytest

from pisim import rootfs
from pisim.util import PisimError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="debootstrap needs root")


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


def test_the_cached_root_is_reused_and_a_changed_package_list_is_not_it():
    root = rootfs.ensure_root()
    stamp = (root.parent / "stamp.json").read_text()
    assert rootfs.ensure_root() == root
    assert (root.parent / "stamp.json").read_text() == stamp  # not built again
    assert json.loads(stamp)["packages"] == sorted(rootfs.PACKAGES)
    assert not rootfs.is_built(packages=(*rootfs.PACKAGES, "cowsay"))
